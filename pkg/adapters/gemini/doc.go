// Package gemini is acc's adapter for Gemini CLI: its hook event names,
// payload normalisation, the answers it accepts (context, denial), its
// file-writing and shell tools, and the capability evidence proven against
// real captures, embedded from evidence/ (docs/adapters.md#gemini-cli,
// docs/decisions.md#6-measured-capabilities).
package gemini

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "gemini"

// DisplayName is the client's product name.
const DisplayName = "Gemini CLI"
