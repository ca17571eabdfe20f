// Package codex is acc's adapter for Codex: its hook event names, payload
// normalisation, the answers it accepts (context, denial), its patch and
// shell tools, and the capability evidence proven against real captures,
// embedded from evidence/ (docs/adapters.md#codex,
// docs/decisions.md#6-measured-capabilities).
package codex

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "codex"

// DisplayName is the client's product name.
const DisplayName = "Codex"
