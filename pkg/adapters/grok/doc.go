// Package grok is acc's adapter for Grok: its hook event names, payload
// normalisation, the answers its documentation describes, its file-writing
// and shell tools. No real capture exists, so it claims no capability and
// a Grok session counts as advisory (reference/adapters.md §2.6, SPEC
// decision 12).
package grok

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter (SPEC decision 14).
const ID = "grok"

// DisplayName is the client's product name.
const DisplayName = "Grok"
