// Package droid is acc's adapter for Factory Droid: its hook event names,
// payload normalisation (Claude Code's shapes with Droid's own tools:
// Create, Edit, ApplyPatch, Execute), the answers it reads (Claude Code's
// context, denial and stop hold), its MCP tool naming
// (<server>___<tool>), the install plan, and the capability evidence
// embedded from evidence/ (docs/adapters.md#factory-droid). The behaviour
// follows Droid 0.225.2 (npm @factory/cli) run offline against a loopback
// model.
package droid

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "droid"

// DisplayName is the client's product name.
const DisplayName = "Factory Droid"
