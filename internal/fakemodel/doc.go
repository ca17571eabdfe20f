// Package fakemodel is a scripted language model on the loopback interface.
//
// It lets a real AI coding client — Claude Code, Codex, Gemini CLI, or one
// of the clients that speak OpenAI Chat Completions — run a
// whole headless session with no network: the client is pointed at the
// server's URL with a fake key, and every model call it makes is answered from
// a script the caller wrote. acc's real-client tests and `acc certify` use it
// (docs/decisions.md#23-the-fake-model).
//
// # Wire protocols
//
// One server speaks four APIs at once, told apart by the request path:
//
//   - Anthropic Messages: POST /v1/messages (streaming SSE when the body says
//     "stream": true, one JSON message otherwise), POST
//     /v1/messages/count_tokens, and the HEAD / probe Claude Code sends first.
//   - OpenAI Responses: POST /v1/responses, streaming or not (Codex streams).
//   - Gemini: POST /v1beta/models/{model}:streamGenerateContent (SSE with
//     ?alt=sse, a JSON array without), :generateContent and :countTokens.
//   - OpenAI Chat Completions: POST …/chat/completions under any base path,
//     streamed (chunks, a usage chunk when stream_options.include_usage
//     asks, then data: [DONE]) or not.
//
// # Scripts
//
// A Script is the ordered list of replies the model gives. Each model call
// that offers tools takes the next Reply: plain text, or one or more tool
// calls (a shell command, a file write, or any named tool), which the server
// spells in the tool-call format of the API that asked — Bash, Write for
// Anthropic; exec_command, apply_patch for Responses; run_shell_command,
// write_file for Gemini; for Chat Completions the first shell or write
// tool the request offers among the known clients' names (bash,
// run_shell_command, Execute; create, write_file, Create, write), with
// the argument names its schema gives. A conversation turn with one tool
// call is therefore two replies: the call, then the text the model says
// after the tool result.
// A Reply may instead be built from the request it answers (Reply.Build), for
// a model that has to quote something it was shown, such as a message id.
//
// An Agenda (Server.Play) is one long turn of many tool calls, PacedSteps
// spaced in time, that a React function can interrupt when a request shows
// something to act on, such as a peer's question arriving between two tool
// calls; the interrupted step follows.
//
// A model call that offers no tools (a title or classification side call) is
// answered with short text and does not consume the script; a JSON-mode
// Gemini call gets a small JSON object.
//
// # Records
//
// Every request is kept with its decoded body, whether or not it was a model
// call, so a test can assert what the model was shown: Request.Contains
// searches the strings of the body after JSON decoding, Request.ToolResults
// lists the tool results the client sent back, in any of the four shapes.
// Server.Verify reports a script that was not used up or ran out, a reply
// that could not be built, and requests the server refused (unreadable or
// oversized bodies, too many requests). Unknown paths are answered 404 and
// kept, but are not errors.
//
// # Safety
//
// The server only binds a loopback IP address (127.0.0.1 by default, on a
// free port), refuses connections from anywhere else, caps request bodies
// (MaxBodyBytes) and the number of requests kept, and Close stops it and
// waits for the requests in flight. It never reaches the network itself.
package fakemodel
