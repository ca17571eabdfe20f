// Package grok is acc's adapter for Grok (Grok Build): its hook event
// names, payload normalisation, the answers its hook runner reads, its
// file-writing and shell tools, and its install plan. All of it follows
// Grok Build's public source at the commit docs/adapters.md ("Grok")
// cites; no Grok binary has run here, so it claims no capability and a
// Grok session counts as advisory
// (docs/adapters.md#capabilities-and-their-evidence).
package grok

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "grok"

// DisplayName is the client's product name.
const DisplayName = "Grok"
