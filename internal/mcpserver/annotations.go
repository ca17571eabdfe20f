package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// effect is what one call of a tool does to the room, as the MCP tool
// annotations advertise it (readOnlyHint, destructiveHint, idempotentHint,
// openWorldHint; docs/mcp.md#tools). Clients may approve a read-only tool
// without asking, so readOnly is claimed only where a call changes no
// record: resolving the connection's session (attached on the first call
// of any tool, its heartbeat refreshed on later ones) is the one write
// every call makes, and it is not counted. why is said in the docs table.
type effect struct {
	// readOnly: the call changes no record of the room.
	readOnly bool
	// destructive: the call may end or replace something already recorded
	// (a claim, an intent, a session); false means it only adds records or
	// moves receipts forward.
	destructive bool
	// idempotent: repeating the call with the same arguments changes
	// nothing more than the first call did.
	idempotent bool
	why        string
}

// annotations are e as MCP tool annotations. Every tool is closed-world:
// it acts on the room's store and nothing else (openWorldHint false).
func (e effect) annotations() *mcp.ToolAnnotations {
	destructive, open := e.destructive && !e.readOnly, false
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    e.readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  e.idempotent || e.readOnly,
		OpenWorldHint:   &open,
	}
}
