// Package qwen is acc's adapter for Qwen Code: its hook event names,
// payload normalisation (Claude Code's shapes with Gemini CLI's tool
// names), the answers it reads, the install plan, and the capability
// evidence embedded from evidence/ (docs/adapters.md#qwen-code). The
// behaviour follows Qwen Code 0.24.4 run offline against acc's loopback
// fake model.
package qwen

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "qwen"

// DisplayName is the client's product name.
const DisplayName = "Qwen Code"
