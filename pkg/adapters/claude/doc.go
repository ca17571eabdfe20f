// Package claude is acc's adapter for Claude Code: its hook event names,
// payload normalisation, the answers it accepts (context, denial), its
// file-writing and shell tools, and the capability evidence proven against
// real captures, embedded from evidence/ (docs/adapters.md#claude-code,
// docs/decisions.md#6-measured-capabilities).
package claude

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "claude"

// DisplayName is the client's product name.
const DisplayName = "Claude Code"
