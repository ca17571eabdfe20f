// Package kilo is acc's adapter for Kilo Code's CLI (kilo), a fork of
// OpenCode that loads plugins as OpenCode 1.18 does: acc installs the same
// plugin (pkg/adapters/adapter/jsplugin) into Kilo's configuration
// directory, and the payloads and answers are the same
// (docs/adapters.md#kilo-code). This package holds what differs: the id,
// the install location, the variable naming Kilo's pid, its plugin
// package, and the evidence embedded from evidence/.
package kilo

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "kilo"

// DisplayName is the client's product name.
const DisplayName = "Kilo Code"
