package core

// Front says which surface opened the room, for the two workspace-discovery
// refusals that still word their fix per surface (Discover's unresolvable
// working directory and the no_room refusal). Every other refusal in core is
// surface-neutral: it names fields and next steps as protocol slots that the
// surface renders (docs/cli.md#refusal-details). These two follow once
// workspace discovery has its own package.
type Front int

const (
	// FrontCLI is the acc command (and acc-hook).
	FrontCLI Front = iota
	// FrontMCP is acc-mcp.
	FrontMCP
)

// Cmd picks the words for a next step: cli for the acc command, mcp for
// acc-mcp.
func (f Front) Cmd(cli, mcp string) string {
	if f == FrontMCP {
		return mcp
	}
	return cli
}
