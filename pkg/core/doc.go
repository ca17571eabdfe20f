// Package core holds acc's coordination rules. Every surface (the CLI, the
// hook runner, the MCP server, the ACP relay) calls these operations; none of
// them implements a rule of its own.
//
// # Abstractions
//
//   - A [Room] is one workspace opened for one command: the discovered
//     [Workspace], its [storage.Store], a clock and a process probe.
//   - A session is one client conversation. Its generation is the secret that
//     proves ownership: every mutation presents a [Caller] (session id and
//     generation) that must match the session's current open record, or it is
//     refused with stale_generation (exit 5).
//   - Presence (online, stale, offline) is computed on read from heartbeats,
//     the client's pid and its start time; reading presence never writes.
//   - A message is recorded with one queued receipt per recipient in one
//     transaction before anything tries to deliver it. Receipts move forward
//     only: queued → offered → retrieved → acknowledged.
//
// # Lazy materialisation
//
// A lone session leaves no durable history: its participant, session and
// intent live in the store's ephemeral area. The second open session, or the
// first durable object (a message or a claim), materialises the room in the
// same transaction (docs/protocol.md#lazy-materialisation).
package core
