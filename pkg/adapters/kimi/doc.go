// Package kimi is acc's adapter for Kimi Code: its hook event names,
// payload normalisation, the answers it accepts (context, denial), its
// file-writing and shell tools, and the capability evidence resting on the
// upstream captures of Kimi Code 0.36.1, embedded from evidence/
// (reference/adapters.md §2.5, SPEC decision 12).
package kimi

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter (SPEC decision 14).
const ID = "kimi"

// DisplayName is the client's product name.
const DisplayName = "Kimi Code"
