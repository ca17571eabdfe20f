package grok

import (
	"bytes"
	"encoding/json"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// spec is Grok's hook surface as its source defines it
// (docs/adapters.md#grok): acc-hook is given the PascalCase names a hook file
// keys its events by, while the payload on stdin is one camelCase envelope
// (hookEventName in snake_case, sessionId, cwd, workspaceRoot, …) with the
// event's own fields flattened into it. Grok never sends snake_case keys
// to a command hook, so none are read.
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "PostToolUseFailure", Kind: adapter.AfterTool},
		{Name: "PermissionDenied", Kind: adapter.Other},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "StopFailure", Kind: adapter.TurnEnd},
		{Name: "StopCancelled", Kind: adapter.TurnEnd},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "PostCompact", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	// The envelope's hookEventName is the event's snake_case display name
	// (SubagentEnd is sent as subagent_stop).
	PayloadEvents: map[string]string{
		"session_start":         "SessionStart",
		"user_prompt_submit":    "UserPromptSubmit",
		"pre_tool_use":          "PreToolUse",
		"post_tool_use":         "PostToolUse",
		"post_tool_use_failure": "PostToolUseFailure",
		"permission_denied":     "PermissionDenied",
		"stop":                  "Stop",
		"stop_failure":          "StopFailure",
		"stop_cancelled":        "StopCancelled",
		"notification":          "Notification",
		"subagent_start":        "SubagentStart",
		"subagent_stop":         "SubagentStop",
		"pre_compact":           "PreCompact",
		"post_compact":          "PostCompact",
		"session_end":           "SessionEnd",
	},
	EventKeys:   []string{"hookEventName"},
	SessionKeys: []string{"sessionId"},
	CwdKeys:     []string{"cwd"},
	ModelKeys:   []string{"modelId"},
	SourceKeys:  []string{"source"},
	// SessionEnd and Stop both carry reason: why the session ended, and
	// end_turn for a turn's end (another value on the Stop Grok fires as
	// the session closes).
	EndReasonKeys:  []string{"reason"},
	StopActiveKeys: []string{"stopHookActive"},
	ToolKeys:       []string{"toolName"},
	InputKeys:      []string{"toolInput"},
	// The file-writing tools of Grok's tool sets, each naming its file in
	// file_path: search_replace (also creates a file), hashline_edit and
	// write.
	FileTools: map[string][]string{
		"search_replace": {"file_path"},
		"hashline_edit":  {"file_path"},
		"write":          {"file_path"},
	},
	// The shell tool: Grok's bash tool under its model-facing name.
	ShellTools: map[string][]string{"run_terminal_command": {"command"}},
	// A call of an MCP server's tool names the resolved <server>__<tool>.
	MCP: adapter.MCPServerDoubleUnderscore,
}

// contextEvents are the events whose hook output Grok gives the model:
// only the stop gates read hookSpecificOutput.additionalContext, and it
// keeps the agent working for another round (docs/adapters.md#grok).
// SessionStart and UserPromptSubmit are observe-only (output ignored) and
// a PreToolUse answer has no context field.
var contextEvents = []string{"Stop", "SubagentStop"}

type client struct{}

// New returns the Grok adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: Grok installs its binary as $GROK_HOME/bin/grok and runs
// hooks from that process (its agent runs in-process unless the opt-in
// leader mode is on), so the hook's ancestor is named grok
// (docs/adapters.md#grok).
func (client) ClientCommand() string { return "grok" }

// SessionEnvVars: Grok exports GROK_SESSION_ID, the session's own id, to
// its tool commands and MCP servers as well as to hooks
// (docs/adapters.md#grok).
func (client) SessionEnvVars() []string { return []string{"GROK_SESSION_ID"} }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject renders context only where Grok reads it, on a stop gate, as
// {"hookSpecificOutput":{"hookEventName":<event>,"additionalContext":<text>}}
// on stdout, exit 0; Grok then keeps the agent working and feeds the text
// to the model. A Stop Grok fires as its session closes (reason other than
// end_turn) is read and discarded, so it gets Allow. Every other event
// renders Allow: acc offers nothing there (docs/adapters.md#grok).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	if ev.Name == "Stop" && ev.EndReason != "end_turn" {
		return hookio.Allow()
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints {"decision":"deny","reason":<reason>} and exits 0 on
// PreToolUse, the answer Grok's tool gate reads as a denial whose reason
// the model is shown (docs/adapters.md#grok). Any other event renders
// Allow. Not yet seen working on a real Grok: no capability rests on it.
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.DecisionDeny(reason)
}

// Allow prints nothing and exits 0: Grok's gates read an empty answer as
// proceed, and observe-only events ignore output.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// Grok's stop gate feeds the reason back to the model for another round
// (docs/adapters.md#grok; docs/hooks.md#turn-delivery). Only a Stop
// whose reason is end_turn is held: Grok also fires Stop as the session
// closes, with another reason, and discards the answer then. StopFailure,
// StopCancelled and every other event render Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" || ev.EndReason != "end_turn" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Evidence: none. acc's Grok payloads are derived from its source, not
// captured, so Grok claims nothing until a real run proves something
// (docs/adapters.md#capabilities-and-their-evidence).
func (client) Evidence() []adapter.Evidence { return nil }

// HookRunnerVars are the variables Grok's hook runner sets on every hook
// process and no hook configuration can override: the event's snake_case
// name and the hook's name. Grok sets them nowhere else (its tool commands
// and MCP servers get GROK_SESSION_ID only), so together they say a
// process is one of Grok's hooks (docs/adapters.md#grok).
var HookRunnerVars = []string{"GROK_HOOK_EVENT", "GROK_HOOK_NAME"}

// InHookRunner reports whether getenv shows a process started by Grok's
// hook runner: every HookRunnerVars variable set and not empty. A process
// started from inside a Grok hook inherits them too, so this alone does
// not say whose payload a hook was given: FromHookRunner does.
func InHookRunner(getenv func(string) string) bool {
	if getenv == nil {
		return false
	}
	for _, v := range HookRunnerVars {
		if getenv(v) == "" {
			return false
		}
	}
	return true
}

// FromHookRunner reports whether payload, a hook's stdin, came from Grok's
// hook runner: InHookRunner(getenv), and the payload is a JSON object
// whose top-level hookEventName is the GROK_HOOK_EVENT value, which Grok
// sets from that same field of the envelope it sends. A Claude Code
// started inside a Grok hook inherits the variables, but its own hooks
// are given Claude Code's payload (hook_event_name, no hookEventName), so
// it is not taken for Grok
// (docs/hooks.md#grok-running-claude-codes-hooks). Only the top-level keys up
// to hookEventName are read, which Grok sends first, so a payload cut short
// after it still answers.
func FromHookRunner(getenv func(string) string, payload []byte) bool {
	if !InHookRunner(getenv) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		if key != "hookEventName" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
			continue
		}
		var name string
		return dec.Decode(&name) == nil && name == getenv("GROK_HOOK_EVENT")
	}
	return false
}
