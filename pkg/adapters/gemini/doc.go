// Package gemini is acc's adapter for Gemini CLI: its hook event names, payload
// normalisation, responses, write tools and the capability evidence proven
// against real captures (reference/adapters.md). It is filled in by the
// native-client work; for now it only names the client.
package gemini

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter (SPEC decision 14).
const ID = "gemini"

// DisplayName is the client's product name.
const DisplayName = "Gemini CLI"
