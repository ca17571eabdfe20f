// Package protocol is acc's contract: the shapes of every durable record, the
// identifiers and timestamps inside them, the validation rules every record
// passes on write and on read, the receipt state machine, and the one table of
// exit codes and reason codes that every surface (CLI, hook runner, MCP server)
// reports.
//
// It imports nothing of acc's own and performs no I/O.
//
// # Records
//
// Each durable record kind (workspace, participant, session, intent, claim,
// message, receipt, event) is a closed Go type. Decoding refuses unknown
// fields; [Validate] methods apply the field rules of
// docs/protocol.md#identifiers-and-text-fields and the semantic message rules
// of docs/protocol.md#message-rules. Text limits count Unicode code points
// (docs/decisions.md#5-text-limits); byte budgets count UTF-8 bytes of [MarshalIndent].
//
// # Text
//
// [CheckLine], [CheckProse], [CheckPath] and [CheckResource] are the door:
// what a field may hold at all, on every surface. [CheckJSONText] refuses,
// in raw JSON, the invalid UTF-8 and lone surrogates that decoding would
// silently turn into U+FFFD. [EscapeText] is the way out: the one rule by
// which text acc did not write is shown to a person or a model
// (docs/concepts.md#peer-text-on-the-screen).
//
// # Errors
//
// An [*Error] carries an [ExitCode] and a stable snake_case reason code
// (docs/decisions.md#3-exit-codes, docs/decisions.md#17-reason-codes). [Reasons] lists every reason code with its exit
// code and meaning; it is the single source for help text and docs.
//
// A refusal names the fields it is about and the next steps it suggests as
// slots ([Field], [FieldValue], [FieldList], [Step]) rather than as any
// surface's words; each surface renders them with its [Speller] through
// [Render] (docs/cli.md#refusal-details).
package protocol
