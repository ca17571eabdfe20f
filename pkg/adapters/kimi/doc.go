// Package kimi is acc's adapter for Kimi Code: its hook event names,
// payload normalisation, the answers it accepts (context on
// UserPromptSubmit only, denial), its file-writing and shell tools, the
// install plan, and the capability evidence embedded from evidence/
// (docs/adapters.md#kimi-code). The
// behaviour follows Kimi Code 2.1.0 as run offline against a stand-in
// model; the 0.36.1 evidence rests on upstream captures.
package kimi

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "kimi"

// DisplayName is the client's product name.
const DisplayName = "Kimi Code"
