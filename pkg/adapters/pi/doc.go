// Package pi is acc's adapter for Pi (the coding agent of the npm package
// @mariozechner/pi-coding-agent): the events its acc extension reports,
// payload normalisation, the answers the extension acts on, Pi's
// file-writing and shell tools, the install plan, and the capability
// evidence embedded from evidence/ (docs/adapters.md#pi).
//
// Pi runs no hook commands of its own: it loads TypeScript extensions. acc
// install writes one, extension/acc.ts, which runs acc-hook for six of Pi's
// events with a Claude-like JSON payload and reads back {"context":…},
// {"deny":…} or nothing. The behaviour follows Pi 0.73.1 run offline
// against a loopback Chat Completions stand-in.
package pi

// ID is the client id used everywhere: the session's harness, acc-hook's
// first argument, --to by client name and install --adapter
// (docs/decisions.md#14-client-ids).
const ID = "pi"

// DisplayName is the client's product name.
const DisplayName = "Pi"
