// Package storage is acc's durable store: one interface ([Store]) over typed
// records and an append-only event log, and its SQLite implementation
// ([OpenSQLite]).
//
// # Guarantees
//
//   - Every mutation runs in one transaction ([Store.Update]) that either
//     commits all of its records and events or none of them. On SQLite the
//     transaction starts with BEGIN IMMEDIATE, the database runs in WAL mode
//     with synchronous=FULL, so a commit that returned survives a crash or a
//     power loss.
//   - Event sequences are gap-free: each committed event gets the next
//     integer after the last committed one, rendered as 16 digits.
//   - Concurrent processes never lose a write: writers queue on SQLite's
//     write lock; a caller's context deadline bounds the wait, and running
//     out is a store_busy error (exit 3).
//   - A database whose schema version or workspace identity differs from
//     what the caller expects is refused before anything is written
//     (store_version_unknown, store_foreign_workspace; exit 4).
//   - Files are created 0600 and directories 0700.
//
// # Areas
//
// Participants, sessions and intents exist in two areas: [Durable] (with
// events) and [Ephemeral] (before the workspace is materialised; no events).
// Both live in the same database so that materialisation is one transaction
// (docs/protocol.md#lazy-materialisation,
// docs/decisions.md#15-storage-layout).
package storage
