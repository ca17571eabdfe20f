// Package copilot is acc's adapter for GitHub Copilot CLI: its hook event
// names, payload normalisation, the answers it reads (context as a
// top-level additionalContext, Claude Code's denial and stop hold), its
// file-writing and shell tools, the install plan, and the capability
// evidence embedded from evidence/ (docs/adapters.md#github-copilot-cli).
// The behaviour follows Copilot CLI 1.0.102 run offline against acc's
// loopback fake model.
package copilot

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "copilot"

// DisplayName is the client's product name.
const DisplayName = "GitHub Copilot CLI"
