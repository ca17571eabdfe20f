// Package acp is `acc acp -- <agent…>`: a transparent relay between an
// editor and an Agent Client Protocol agent (docs/acp.md) that puts the
// agent's sessions in the room.
//
// The editor launches acc acp where it launched the agent; the relay
// starts the agent as its child and forwards newline-delimited JSON-RPC
// both ways, concurrently and byte for byte: ids stay raw JSON in two
// separate id spaces, extension methods pass, lines may be any length, the
// agent's stderr is passed through, signals are forwarded and the agent's
// exit status is the relay's. It never stores a frame.
//
// Beside the stream it drives acc, failing open: a successful session/new,
// session/load or session/resume attaches an acc session (adapter "acp",
// bound to the ACP session id, the agent process as presence); a
// session/prompt gains one text block holding exactly the projection a
// hook would print (pkg/core Project), and the projected messages become
// offered once the line was written to the agent; an agent→editor
// fs/write_text_file into another live session's guarded claim is
// answered with a JSON-RPC error naming the holder instead of being
// forwarded; session/close, end of input and the agent's exit detach.
package acp
