package protocol

import (
	"errors"
	"fmt"
	"sort"
)

// ExitCode is a process exit status with a stable meaning (docs/decisions.md#3-exit-codes,
// docs/exit-codes.md#exit-codes).
type ExitCode int

// The stable exit codes.
const (
	ExitOK       ExitCode = 0 // success, also "recorded, delivery fell back"
	ExitInternal ExitCode = 1 // an unexpected internal failure: a bug
	ExitUsage    ExitCode = 2 // bad arguments or an impossible request shape
	ExitTimeout  ExitCode = 3 // a deadline ran out (store busy, wait)
	ExitData     ExitCode = 4 // invalid data, unknown recipient, corrupt or foreign store
	ExitConflict ExitCode = 5 // claim overlap, stale generation, reused key, obligation owed
	ExitReserved ExitCode = 6 // reserved for "attention required"; no command returns it yet
)

// ExitCodeInfo describes one exit code for help text and docs.
type ExitCodeInfo struct {
	Code    ExitCode
	Name    string
	Meaning string
}

// ExitCodes lists every exit code in ascending order.
var ExitCodes = []ExitCodeInfo{
	{ExitOK, "ok", "success, including a message recorded whose delivery fell back to the inbox"},
	{ExitInternal, "internal", "an unexpected internal failure (a bug; please report it)"},
	{ExitUsage, "usage", "bad arguments, an impossible request shape, or a caller that cannot be identified"},
	{ExitTimeout, "timeout", "a deadline ran out: the store stayed busy, or a wait ended"},
	{ExitData, "data", "invalid data, an unknown recipient, or a corrupt, foreign or newer store"},
	{ExitConflict, "conflict", "a claim overlap, a stale generation, a reused clientMessageId, or an obligation still owed"},
	{ExitReserved, "reserved", "reserved for \"attention required\"; no command returns it yet"},
}

// Name returns the short name of the exit code ("usage", "conflict", ...).
func (c ExitCode) Name() string {
	for _, e := range ExitCodes {
		if e.Code == c {
			return e.Name
		}
	}
	return "unknown"
}

// Reason codes: every refusal carries one (docs/decisions.md#17-reason-codes). Each is listed
// in Reasons with its exit code and meaning.
const (
	ReasonInternal = "internal_error"

	ReasonUsage                    = "usage"
	ReasonSearchQueryInvalid       = "search_query_invalid"
	ReasonUnknownCommand           = "unknown_command"
	ReasonUnknownFlag              = "unknown_flag"
	ReasonUnknownTool              = "unknown_tool"
	ReasonUnknownArgument          = "unknown_argument"
	ReasonMissingArgument          = "missing_argument"
	ReasonInvalidArgument          = "invalid_argument"
	ReasonArgumentShape            = "argument_shape"
	ReasonMissingFlag              = "missing_flag"
	ReasonInvalidFlagValue         = "invalid_flag_value"
	ReasonUnexpectedArgument       = "unexpected_argument"
	ReasonCallerIdentityUnresolved = "caller_identity_unresolved"
	ReasonCallerIdentityAmbiguous  = "caller_identity_ambiguous"
	ReasonGenerationRequired       = "generation_required"
	ReasonAuthorityNeedsPerson     = "authority_needs_a_person"
	ReasonDuplicateRecipient       = "duplicate_recipient"
	ReasonAmbiguousRecipient       = "ambiguous_recipient"
	ReasonInvalidCursor            = "invalid_cursor"
	ReasonInvalidLimit             = "invalid_limit"
	ReasonKindNotAllowed           = "kind_not_allowed"
	ReasonWorkspaceUnresolvable    = "workspace_unresolvable"
	ReasonPathNotAbsolute          = "path_not_absolute"
	ReasonRuntimeInsideWorkspace   = "runtime_inside_workspace"
	ReasonNoRoom                   = "no_room"
	ReasonDataHomeUnusable         = "data_home_unusable"
	ReasonHomeMissing              = "home_missing"
	ReasonUnknownAdapter           = "unknown_adapter"
	ReasonHomeNotDirectory         = "home_not_directory"
	ReasonPathOutsideWorkspace     = "path_outside_workspace"
	ReasonResourceSpelling         = "resource_spelling"
	ReasonConfirmationRequired     = "confirmation_required"
	ReasonEnvInvalid               = "env_invalid"
	ReasonDirectoryUnwritable      = "directory_unwritable"
	ReasonDecisionChangeUsage      = "decision_change_usage"
	ReasonSyncUsage                = "sync_usage"

	ReasonStoreBusy        = "store_busy"
	ReasonStoreUnreachable = "store_unreachable"

	ReasonInvalidInput           = "invalid_input"
	ReasonInvalidRecord          = "invalid_record"
	ReasonUnknownRecipient       = "unknown_recipient"
	ReasonUnknownMessage         = "unknown_message"
	ReasonStoreForeignWorkspace  = "store_foreign_workspace"
	ReasonStoreVersionUnknown    = "store_version_unknown"
	ReasonStoreCorrupt           = "store_corrupt"
	ReasonStoreUnwritable        = "store_unwritable"
	ReasonStoreFull              = "store_full"
	ReasonStoreIOError           = "store_io_error"
	ReasonStoreAccessDenied      = "store_access_denied"
	ReasonStoreServerUnsupported = "store_server_unsupported"
	ReasonStoreNotEmpty          = "store_not_empty"
	ReasonStoreSessionsLive      = "store_sessions_live"
	ReasonPageBudgetExceeded     = "page_budget_exceeded"
	ReasonDecisionTargets        = "decision_targets_invalid"
	ReasonConfigInvalid          = "config_invalid"
	ReasonConfigUnknownKey       = "config_unknown_key"
	ReasonStoreURLHasPassword    = "store_url_has_password"
	ReasonStoreNeedsConfig       = "store_needs_config"
	ReasonClientConfigInvalid    = "client_config_invalid"
	ReasonInstallRecordInvalid   = "install_record_invalid"
	ReasonInstallFailed          = "install_failed"
	ReasonInstallConflict        = "install_conflict"
	ReasonInstallBusy            = "install_busy"
	ReasonWaitTimeout            = "wait_timeout"
	ReasonNotCertified           = "not_certified"
	ReasonStoreUnhealthy         = "store_unhealthy"
	ReasonOutcomeUnknown         = "outcome_unknown"

	ReasonStaleGeneration            = "stale_generation"
	ReasonSessionNotOpen             = "session_not_open"
	ReasonSessionLive                = "session_live"
	ReasonSessionParticipantMismatch = "session_participant_mismatch"
	ReasonCallerWorkspaceMismatch    = "caller_workspace_mismatch"
	ReasonClaimConflict              = "claim_conflict"
	ReasonClaimNotFound              = "claim_not_found"
	ReasonClaimNotOwner              = "claim_not_owner"
	ReasonForceReleaseAuthority      = "force_release_authority"
	ReasonClientMessageIDConflict    = "client_message_id_conflict"
	ReasonReplyRequired              = "reply_required"
	ReasonNotAddressed               = "not_addressed"
	ReasonNotRecoverable             = "not_recoverable"
	ReasonIllegalReceiptTransition   = "illegal_receipt_transition"
	ReasonConfigExists               = "config_exists"
	ReasonConfigSessionsAttached     = "config_sessions_attached"

	// Reasons acc-hook names on its fail-open line (it always exits 0).
	ReasonPayloadTooLarge    = "payload_too_large"
	ReasonHookBudgetExceeded = "hook_budget_exceeded"
)

// ReasonInfo is one row of the reason table.
type ReasonInfo struct {
	Reason  string
	Code    ExitCode
	Meaning string
}

// Reasons is the single table of reason codes: their exit code and meaning.
// Help output and docs/exit-codes.md are rendered from it.
var Reasons = []ReasonInfo{
	{ReasonInternal, ExitInternal, "an unexpected failure inside acc; nothing it reported is wrong, but the command did not finish"},

	{ReasonUsage, ExitUsage, "the command line is malformed"},
	{ReasonSearchQueryInvalid, ExitUsage, "a search query uses something its language does not have; the message shows what it does have, with an example"},
	{ReasonUnknownCommand, ExitUsage, "no such command; `acc help` lists them"},
	{ReasonUnknownFlag, ExitUsage, "the command has no such flag; `acc <command> --help` lists them"},
	{ReasonUnknownTool, ExitUsage, "acc-mcp has no such tool; `tools/list` lists them"},
	{ReasonUnknownArgument, ExitUsage, "an acc-mcp tool call carries a field its input schema does not declare"},
	{ReasonMissingArgument, ExitUsage, "an acc-mcp tool call lacks a field its input schema requires"},
	{ReasonInvalidArgument, ExitUsage, "an acc-mcp tool argument has the wrong type, is not one of the allowed values, or is out of range"},
	{ReasonArgumentShape, ExitUsage, "an acc-mcp tool call combines fields that its input schema does not accept together"},
	{ReasonMissingFlag, ExitUsage, "a required flag is missing or empty"},
	{ReasonInvalidFlagValue, ExitUsage, "a flag value is not one the command accepts"},
	{ReasonUnexpectedArgument, ExitUsage, "a positional argument the command does not take"},
	{ReasonCallerIdentityUnresolved, ExitUsage, "acc cannot tell which session is calling; pass --session and --generation"},
	{ReasonCallerIdentityAmbiguous, ExitUsage, "several live sessions could be the caller; pass --session and --generation"},
	{ReasonGenerationRequired, ExitUsage, "a session id alone does not act as that session: pass its --generation too (the pair is in your hook's `acc:` line or in `acc attach`'s output)"},
	{ReasonAuthorityNeedsPerson, ExitUsage, "--authority human needs a person: acc takes it only when stdin and stdout are a terminal; an agent asks its human to run the command"},
	{ReasonDuplicateRecipient, ExitUsage, "a participant was addressed twice"},
	{ReasonAmbiguousRecipient, ExitUsage, "a client name matches several live sessions; address a participant id"},
	{ReasonInvalidCursor, ExitUsage, "the cursor is malformed or not part of this list; start again without it"},
	{ReasonInvalidLimit, ExitUsage, "a page limit outside 1..500"},
	{ReasonKindNotAllowed, ExitUsage, "this command cannot send that message kind (answers come from reply, handoffs from finish)"},
	{ReasonWorkspaceUnresolvable, ExitUsage, "the working directory or workspace root cannot be resolved"},
	{ReasonPathNotAbsolute, ExitUsage, "an environment path that must be absolute is relative"},
	{ReasonRuntimeInsideWorkspace, ExitUsage, "the data home lies inside the workspace, or the workspace inside acc's data; acc never writes its store into a repository"},
	{ReasonNoRoom, ExitUsage, "no room here: the directory is in no Git repository and under no acc.workspace.json, and holds acc's data (your home, /) or lies inside it, so it cannot be a room itself; run acc inside your project — the message names the fix"},
	{ReasonDataHomeUnusable, ExitUsage, "acc's data home, or a directory on the way to it, exists but is no usable directory (a broken symlink, a file); the message names it and the fix"},
	{ReasonHomeMissing, ExitUsage, "neither ACC_DATA_HOME nor HOME is set"},
	{ReasonUnknownAdapter, ExitUsage, "no adapter has that id; the ids are claude, codex, copilot, droid, gemini, grok, kilo, kimi, opencode, pi and qwen"},
	{ReasonHomeNotDirectory, ExitUsage, "the home acc install was given is not an existing directory"},
	{ReasonPathOutsideWorkspace, ExitUsage, "a path lies outside the workspace"},
	{ReasonResourceSpelling, ExitUsage, "a resource spelling acc does not understand; the message gives the one to use"},
	{ReasonConfirmationRequired, ExitUsage, "a command that writes a file needs --yes when stdin or stdout is not a terminal"},
	{ReasonEnvInvalid, ExitUsage, "an environment variable holds a value acc cannot use; the message names it"},
	{ReasonDirectoryUnwritable, ExitUsage, "the selected directory does not accept a new file"},
	{ReasonDecisionChangeUsage, ExitUsage, "supersedes and withdraws belong to decisions only, and one change uses one of them, never both"},
	{ReasonSyncUsage, ExitUsage, "a sync flag that does not apply to the chosen scope, or an unknown scope"},

	{ReasonStoreBusy, ExitTimeout, "the store stayed locked by other writers until the deadline"},
	{ReasonStoreUnreachable, ExitTimeout, "the room's PostgreSQL server could not be reached (down, a network fault, TLS refused, or the connection dropped before the write began); nothing was written: try again once it is up, and acc doctor checks the connection"},

	{ReasonInvalidInput, ExitData, "a field value breaks its rule (length, characters, shape)"},
	{ReasonInvalidRecord, ExitData, "a stored or submitted record breaks the record rules"},
	{ReasonUnknownRecipient, ExitData, "no participant of this workspace has that id"},
	{ReasonUnknownMessage, ExitData, "the message referred to does not exist in this workspace"},
	{ReasonStoreForeignWorkspace, ExitData, "the store belongs to a different workspace; it was not touched"},
	{ReasonStoreVersionUnknown, ExitData, "the store has a schema version this acc does not know; it was not touched"},
	{ReasonStoreCorrupt, ExitData, "the store cannot be read as an acc store: not a database, empty or truncated, a directory in its place, or a record that does not decode; the message names the file and the fix"},
	{ReasonStoreUnwritable, ExitData, "the store or its directory cannot be written (permission denied, a read-only file or file system); the message names the path and the fix"},
	{ReasonStoreFull, ExitData, "the disk holding the store is full; free space there and run the command again"},
	{ReasonStoreAccessDenied, ExitData, "the room's PostgreSQL server refused acc's role (authentication or a missing privilege); give the password through PGPASSWORD, ~/.pgpass or a service file, or grant the role what docs/configuration.md lists"},
	{ReasonStoreIOError, ExitData, "the operating system reported an I/O error reading or writing the store; check the disk, then run acc doctor"},
	{ReasonPageBudgetExceeded, ExitData, "one summary alone exceeds the page byte budget"},
	{ReasonDecisionTargets, ExitData, "a decision change must name 1 to 16 distinct, existing decisions of this workspace"},
	{ReasonConfigInvalid, ExitData, "acc.workspace.json breaks a rule"},
	{ReasonStoreServerUnsupported, ExitData, "the room's PostgreSQL server is older than acc supports (PostgreSQL 12); acc doctor names its version"},
	{ReasonStoreURLHasPassword, ExitData, "acc.workspace.json's storeUrl carries a password, and the file is committed; give the password through PGPASSWORD, ~/.pgpass, a service file or a client certificate instead"},
	{ReasonStoreNeedsConfig, ExitUsage, "ACC_STORE_URL is set but the workspace has no acc.workspace.json, so its id is derived from this machine's paths and would not match the room on other machines; run acc config init and commit the file"},
	{ReasonConfigUnknownKey, ExitData, "acc.workspace.json has a key acc does not know"},
	{ReasonClientConfigInvalid, ExitData, "a client's configuration file does not parse; acc left it untouched"},
	{ReasonInstallRecordInvalid, ExitData, "acc's install record (installs.json in the data home) does not parse or has an unknown schema version"},
	{ReasonInstallFailed, ExitData, "a write failed part way through acc install or acc uninstall; the message says what the run had done, and running the command again finishes it"},
	{ReasonOutcomeUnknown, ExitData, "the store failed while committing the write with an I/O error, so acc cannot tell whether it was recorded; the message gives the command to run again, which records it once either way or says how to check (docs/delivery.md)"},
	{ReasonStoreUnhealthy, ExitData, "acc doctor found the store corrupt (or holding a damaged record), foreign, of an unknown version, failing its integrity check, unwritable or on a full disk; the report is in details"},

	{ReasonWaitTimeout, ExitTimeout, "acc wait ran out of time before what it waited for happened; run it again or raise --timeout"},
	{ReasonNotCertified, ExitData, "acc certify could not prove every capability of a client (the table says which and why), or could not run it"},
	{ReasonInstallBusy, ExitTimeout, "another acc install or uninstall held the data home's install lock past the deadline; let it finish, then run the command again"},
	{ReasonInstallConflict, ExitConflict, "a file acc would write exists and acc did not write it, or the client already registers what acc would add"},
	{ReasonStoreNotEmpty, ExitConflict, "acc store copy found records in the target and changed nothing; copy into an empty room (drop the target, or choose another)"},
	{ReasonStoreSessionsLive, ExitConflict, "acc store copy refused: sessions of the room are live and could write after the copy; end them, or pass --force"},
	{ReasonStaleGeneration, ExitConflict, "the session generation is not the current one; use the pair from the latest attach"},
	{ReasonSessionNotOpen, ExitConflict, "the session is closed or does not exist"},
	{ReasonSessionLive, ExitConflict, "the session id is already open in a live process"},
	{ReasonSessionParticipantMismatch, ExitConflict, "the session id belongs to another participant; reattach it as that participant or open a new session"},
	{ReasonCallerWorkspaceMismatch, ExitConflict, "the named session belongs to another workspace"},
	{ReasonClaimConflict, ExitConflict, "an overlapping live claim is held by another session"},
	{ReasonClaimNotFound, ExitConflict, "the claim does not exist (released, or never made)"},
	{ReasonClaimNotOwner, ExitConflict, "only the owning session generation may renew a claim"},
	{ReasonForceReleaseAuthority, ExitConflict, "releasing another session's claim needs --authority human (a person at a terminal) or policy (only once its lease ran out) and a reason"},
	{ReasonClientMessageIDConflict, ExitConflict, "the clientMessageId was already used with different content"},
	{ReasonReplyRequired, ExitConflict, "a question or request is resolved by a reply, not an ack"},
	{ReasonNotAddressed, ExitConflict, "the message was not addressed to the calling participant"},
	{ReasonNotRecoverable, ExitConflict, "the calling participant holds no receipt for that message"},
	{ReasonIllegalReceiptTransition, ExitConflict, "receipts only move forward"},
	{ReasonConfigExists, ExitConflict, "acc.workspace.json already exists in the selected directory; acc never overwrites it"},
	{ReasonConfigSessionsAttached, ExitConflict, "sessions are attached to the current workspace and would lose it; close them or pass --force"},

	{ReasonPayloadTooLarge, ExitData, "acc-hook: the client's hook payload is over 16 MiB; acc-hook did not read it and let the client proceed (it always exits 0)"},
	{ReasonHookBudgetExceeded, ExitTimeout, "acc-hook: the hook's 5-second budget ran out before it finished (not waiting for the store); it let the client proceed (it always exits 0)"},
}

var reasonIndex = func() map[string]ReasonInfo {
	m := make(map[string]ReasonInfo, len(Reasons))
	for _, r := range Reasons {
		if _, dup := m[r.Reason]; dup {
			panic("protocol: duplicate reason " + r.Reason)
		}
		m[r.Reason] = r
	}
	return m
}()

// LookupReason returns the table row of a reason code.
func LookupReason(reason string) (ReasonInfo, bool) { r, ok := reasonIndex[reason]; return r, ok }

// ReasonsByCode returns the reason codes of one exit code, sorted.
func ReasonsByCode(c ExitCode) []string {
	var out []string
	for _, r := range Reasons {
		if r.Code == c {
			out = append(out, r.Reason)
		}
	}
	sort.Strings(out)
	return out
}

// Error is a refusal: a one-line message naming the fix, a reason code from
// Reasons (which fixes the exit code), and details safe to show callers.
type Error struct {
	Reason  string
	Message string
	Details map[string]any
	Err     error // optional cause, never shown to callers
	// slots are the slots Errorf put into Message, for Render (see
	// refusal.go).
	slots []Slot
}

// Errorf builds an *Error with a formatted message. The reason must be listed
// in Reasons; an unknown reason is a bug and reports exit 1. An argument
// that is a [Slot] (a [Field], [FieldValue], [FieldList] or [Step]) is
// worded by the surface that shows the refusal, through [Render]; it must be
// formatted with %s (docs/cli.md#refusal-details).
func Errorf(reason, format string, args ...any) *Error {
	e := &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
	return e.withSlots(format, args)
}

// With returns e with one more detail set.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Wrap records cause as e's underlying error and returns e.
func (e *Error) Wrap(cause error) *Error { e.Err = cause; return e }

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Code returns the exit code fixed by the reason.
func (e *Error) Code() ExitCode {
	if r, ok := reasonIndex[e.Reason]; ok {
		return r.Code
	}
	return ExitInternal
}

// AsError returns err as an *Error. Anything that is not one (a bug or an
// unexpected I/O failure) becomes an internal_error with exit 1 whose message
// carries err's text.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe == nil { // a typed nil *Error: a caller's bug
			return &Error{Reason: ReasonInternal, Message: "internal error: a nil *protocol.Error was returned"}
		}
		return pe
	}
	return &Error{Reason: ReasonInternal, Message: "internal error: " + err.Error(), Err: err}
}

// CodeOf returns the exit code for err (0 for nil).
func CodeOf(err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	return AsError(err).Code()
}

// IsReason reports whether err is an *Error with that reason.
func IsReason(err error, reason string) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Reason == reason
}
