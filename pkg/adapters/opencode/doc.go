// Package opencode is acc's adapter for OpenCode: the plugin acc installs
// into it, the payloads that plugin sends acc-hook, the answers it reads,
// the install plan, and the capability evidence embedded from evidence/
// (docs/adapters.md#opencode). The behaviour follows OpenCode 1.18.33 run
// offline against acc's loopback fake model.
//
// OpenCode has no command hooks: it loads JavaScript plugins into its own
// process. acc's plugin (pkg/adapters/adapter/jsplugin, written by acc
// install) runs acc-hook for a few of OpenCode's hooks and events and does
// what it answers, so the payload and the answer are acc's own small
// protocol, shared with Kilo Code, not a shape OpenCode defines.
package opencode

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "opencode"

// DisplayName is the client's product name.
const DisplayName = "OpenCode"
