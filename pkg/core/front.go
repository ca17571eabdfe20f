package core

// Front is the interface a caller reaches core through. Core's rules are the
// same for every front; only the words of a refusal differ, so that a
// refusal names the flag a CLI user typed or the argument an MCP client
// sent (reference/mcp-acp.md A6: "arguments.<field> …").
type Front int

const (
	// FrontCLI words refusals with the acc command's flags (--type).
	FrontCLI Front = iota
	// FrontMCP words refusals with acc-mcp tool arguments (arguments.kind).
	FrontMCP
)

// cliFlags maps a query field's neutral name (the MCP argument name) to the
// CLI flag that carries it, where the two differ.
var cliFlags = map[string]string{
	"kind":            "--type",
	"messageId":       "--message",
	"clientMessageId": "--client-message-id",
}

// Field names a query field as this front spells it: "kind" is "--type" on
// the CLI and "arguments.kind" in acc-mcp; a field with no special flag
// becomes "--<name>".
func (f Front) Field(name string) string {
	if f == FrontMCP {
		return "arguments." + name
	}
	if flag, ok := cliFlags[name]; ok {
		return flag
	}
	return "--" + name
}

// Fields spells several fields, joined for a message: "--type, --cursor or
// --limit".
func (f Front) Fields(conj string, names ...string) string {
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " " + conj + " "
		default:
			out += ", "
		}
		out += f.Field(n)
	}
	return out
}

// Value spells a field set to a value: "--scope history" on the CLI,
// `arguments.scope "history"` in acc-mcp.
func (f Front) Value(name, value string) string {
	if f == FrontMCP {
		return f.Field(name) + ` "` + value + `"`
	}
	return f.Field(name) + " " + value
}

// Cmd picks the words for a next step: cli names the acc command, mcp the
// acc-mcp tool call.
func (f Front) Cmd(cli, mcp string) string {
	if f == FrontMCP {
		return mcp
	}
	return cli
}
