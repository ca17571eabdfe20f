package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A refusal's rule is the same on every surface; only its words differ. A
// CLI user typed --type, an MCP client sent arguments.kind; the next step is
// `acc inbox` on a terminal and acc_inbox for a model. So core never writes
// a flag, a tool name or a command line into a refusal: it passes slots — a
// [Field], a [FieldValue], a [FieldList] or a [Step] — as arguments of
// [Errorf], and each surface renders the message with its own [Speller]
// through [Render] (docs/cli.md#refusal-details, docs/mcp.md#refusal-details).
//
// Until a surface renders it, the message spells each slot in a marked
// neutral form ("{field kind}", "{step inbox}") that [Unrendered] finds, and
// the details carry the slots as data: "fields" lists the neutral field ids
// the refusal is about, "nextSteps" the steps it suggests.

// Speller is one surface's words for the slots of a refusal.
type Speller interface {
	// Field spells a query field given by its neutral id ("kind",
	// "messageId"): "--type" on the CLI, "arguments.kind" in acc-mcp.
	Field(name string) string
	// Value spells a field set to a value: "--scope history" on the CLI,
	// `arguments.scope "history"` in acc-mcp.
	Value(name, value string) string
	// Step words a suggested next step as this surface's command, tool
	// call or instruction.
	Step(s Step) string
}

// Slot is a part of a refusal message that each surface words itself. Only
// this package's types are slots.
type Slot interface {
	neutral() string
	render(Speller) string
}

// Field is a slot naming one query field by its neutral id, the acc-mcp
// argument name ("kind", "messageId", "cursor"); see [FieldIDs].
type Field string

func (f Field) neutral() string         { return "{field " + string(f) + "}" }
func (f Field) render(s Speller) string { return s.Field(string(f)) }

// FieldValue is a slot naming a field set to one value.
type FieldValue struct{ Name, Value string }

func (v FieldValue) neutral() string         { return "{field " + v.Name + "=" + v.Value + "}" }
func (v FieldValue) render(s Speller) string { return s.Value(v.Name, v.Value) }

// FieldList is a slot naming several fields joined for a sentence: "a, b or
// c" with Conj "or".
type FieldList struct {
	Conj  string
	Names []string
}

func (l FieldList) neutral() string {
	return "{fields " + l.join(func(n string) string { return n }) + "}"
}
func (l FieldList) render(s Speller) string {
	return l.join(s.Field)
}

func (l FieldList) join(spell func(string) string) string {
	var b strings.Builder
	for i, n := range l.Names {
		switch {
		case i == 0:
		case i == len(l.Names)-1:
			b.WriteString(" " + l.Conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(spell(n))
	}
	return b.String()
}

// Step is a slot suggesting what to do next, as data: Command is one of
// [StepCommands] and Args fill it (neutral field ids to values). In a
// failure envelope it appears under details.nextSteps as
// {"command":"message","args":{"to":"bob"}}.
type Step struct {
	Command string            `json:"command"`
	Args    map[string]string `json:"args,omitempty"`
}

func (st Step) neutral() string         { return "{step " + st.Command + "}" }
func (st Step) render(s Speller) string { return s.Step(st) }

// The next steps a refusal can suggest. Every surface's [Speller] words
// each of them.
const (
	// StepInbox lists the caller's pending messages.
	StepInbox = "inbox"
	// StepStatus shows the room: its sessions and live claims; Args "all"
	// = "true" includes the sessions that are gone.
	StepStatus = "status"
	// StepHistory lists the workspace's messages; Args "kind" narrows the
	// list to one kind.
	StepHistory = "history"
	// StepReply answers a message; Args "messageId" names it (left out,
	// the step names the reply command in general).
	StepReply = "reply"
	// StepFinish ends the session with a handoff.
	StepFinish = "finish"
	// StepMessage sends a new message; Args "to" names the recipient.
	StepMessage = "message"
	// StepReattach opens a new session for a caller whose session is
	// closed or gone.
	StepReattach = "reattach"
	// StepRepeatFinish repeats a finish with its clientMessageId to get
	// its handoff back after the session closed.
	StepRepeatFinish = "repeat-finish"
	// StepWaitRelease waits until a claim is released; Args "resource" is
	// the resource as the caller spelled it and "flags" the shell-quoted
	// selection flags the CLI passed (ClaimInput.WaitFlags in pkg/core).
	StepWaitRelease = "wait-release"
	// StepForceRelease says who may release another session's claim and
	// how.
	StepForceRelease = "force-release"
	// StepReleaseAsHuman is the release a person runs at a terminal to
	// force another session's claim free; Args "claimId" names the claim.
	StepReleaseAsHuman = "release-as-human"
	// StepAttach opens a session; Args "participant" is a placeholder or
	// name for the participant to attach as.
	StepAttach = "attach"
	// StepTrustedLine names the line a client's hook gives the session
	// each turn, which carries its session and generation; Args "session"
	// fills in the session id.
	StepTrustedLine = "trusted-line"
	// StepSync reads the room (its events since a cursor).
	StepSync = "sync"
	// StepDoctor checks the store and names what is damaged.
	StepDoctor = "doctor"
	// StepStartInDirectory starts acc again from a directory that exists;
	// Args "variable", when set, names the environment variable that chose
	// the start directory (ACC_WORKSPACE_ROOT), which is then to be checked
	// too. Without it, the working directory itself could not be resolved.
	StepStartInDirectory = "start-in-directory"
	// StepRunInProject runs acc inside a project (a Git work tree or a
	// directory with acc.workspace.json); Args "variable", when set, names
	// the environment variable that chose the directory and overrides the
	// working directory (ACC_WORKSPACE_ROOT).
	StepRunInProject = "run-in-project"
	// StepConfigInit writes an acc.workspace.json into a project's
	// directory.
	StepConfigInit = "config-init"
	// StepCloseSessions closes the sessions a refusal lists (each detaches
	// or finishes).
	StepCloseSessions = "close-sessions"
)

// StepCommands lists every Step command, for the renderers' tests.
var StepCommands = []string{
	StepInbox, StepStatus, StepHistory, StepReply, StepFinish, StepMessage,
	StepReattach, StepRepeatFinish, StepWaitRelease, StepForceRelease,
	StepReleaseAsHuman, StepAttach, StepTrustedLine, StepSync, StepDoctor,
	StepStartInDirectory, StepRunInProject, StepConfigInit, StepCloseSessions,
}

// FieldIDs lists the neutral ids of every field a refusal may name in a
// [Field], [FieldValue] or [FieldList] slot, for the renderers' tests.
var FieldIDs = []string{
	"answer", "authority", "claim", "clientMessageId", "current", "cursor",
	"cwd", "force", "from", "generation", "kind", "limit", "messageId", "participant",
	"query", "reason", "scope", "session", "since", "supersedes", "thread", "to", "until", "withdraws",
	"workspace",
}

// neutral returns args with each Slot in its neutral form.
func neutral(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(Slot); ok {
			out[i] = s.neutral()
		} else {
			out[i] = a
		}
	}
	return out
}

// withSlots finishes an Error built from format and args: when any arg is a
// Slot, the message spells it in its neutral form, the error keeps the
// slots for Render, and the details gain "fields" (neutral field ids, in
// order, each once) and "nextSteps".
func (e *Error) withSlots(format string, args []any) *Error {
	var fields []string
	var steps []Step
	addField := func(n string) {
		if !slices.Contains(fields, n) {
			fields = append(fields, n)
		}
	}
	for _, a := range args {
		switch s := a.(type) {
		case Field:
			addField(string(s))
		case FieldValue:
			addField(s.Name)
		case FieldList:
			for _, n := range s.Names {
				addField(n)
			}
		case Step:
			steps = append(steps, s)
		case error:
			// A refusal quoted inside another keeps its slots, so that
			// rendering the outer one words the inner one too.
			var inner *Error
			if errors.As(s, &inner) && inner != nil {
				e.slots = append(e.slots, inner.slots...)
			}
			continue
		default:
			continue
		}
		e.slots = append(e.slots, a.(Slot))
	}
	if e.slots == nil {
		return e
	}
	e.Message = fmt.Sprintf(format, neutral(args)...)
	if fields != nil {
		e.With("fields", fields)
	}
	if steps != nil {
		e.With("nextSteps", steps)
	}
	return e
}

// Render returns err with its message in s's words when err is, or wraps, an
// [*Error] built with slots; any other err is returned as it is. The
// rendered error is a copy: err itself keeps its neutral message. Each
// slot's neutral form is replaced wherever it appears, so text a caller
// added around the message (a copy with more advice) is kept.
func Render(err error, s Speller) error {
	var pe *Error
	if !errors.As(err, &pe) || pe == nil || pe.slots == nil {
		return err
	}
	cp := *pe
	for _, sl := range pe.slots {
		cp.Message = strings.ReplaceAll(cp.Message, sl.neutral(), sl.render(s))
	}
	cp.slots = nil
	return &cp
}

// Unrendered reports whether msg still holds a slot in its neutral form:
// a refusal that reached a caller without its surface's words.
func Unrendered(msg string) bool {
	return strings.Contains(msg, "{field ") || strings.Contains(msg, "{fields ") || strings.Contains(msg, "{step ")
}
