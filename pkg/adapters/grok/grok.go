package grok

import (
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// spec is Grok's documented hook surface (reference/adapters.md §2.6): the
// hook file keys are Claude-style PascalCase names, which is what acc-hook
// is given, while payloads carry camelCase keys and a snake_case
// hookEventName. snake_case keys and PascalCase event values are accepted
// too (Claude-compatible leakage, §2.6).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "PostToolUseFailure", Kind: adapter.AfterTool},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "StopFailure", Kind: adapter.TurnEnd},
		{Name: "StopCancelled", Kind: adapter.TurnEnd},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "PostCompact", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "PermissionDenied", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	PayloadEvents: map[string]string{
		"session_start":         "SessionStart",
		"user_prompt_submit":    "UserPromptSubmit",
		"pre_tool_use":          "PreToolUse",
		"post_tool_use":         "PostToolUse",
		"post_tool_use_failure": "PostToolUseFailure",
		"stop":                  "Stop",
		"stop_failure":          "StopFailure",
		"stop_cancelled":        "StopCancelled",
		"subagent_start":        "SubagentStart",
		"subagent_stop":         "SubagentStop",
		"pre_compact":           "PreCompact",
		"post_compact":          "PostCompact",
		"notification":          "Notification",
		"permission_denied":     "PermissionDenied",
		"session_end":           "SessionEnd",
	},
	EventKeys:     []string{"hookEventName", "hook_event_name"},
	SessionKeys:   []string{"sessionId", "session_id"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	// Stop carries stopHookActive (its public source, the Stop event).
	StopActiveKeys: []string{"stopHookActive", "stop_hook_active"},
	ToolKeys:       []string{"toolName", "tool_name"},
	InputKeys:      []string{"toolInput", "tool_input"},
	// §2.6, §5.1: write and search_replace name their file in file_path;
	// the shell tool is run_terminal_command.
	FileTools: map[string][]string{
		"write":          {"file_path"},
		"search_replace": {"file_path"},
	},
	// How Grok names MCP tools in a hook payload is not established; the
	// mcp__<server>__<tool> form of the Claude-style clients it follows is
	// read (docs/hooks.md, "MCP tools").
	MCP:        adapter.MCPDoubleUnderscore,
	ShellTools: map[string][]string{"run_terminal_command": {"command"}},
}

// contextEvents: Grok 1.0.13 discards UserPromptSubmit output, but its
// PreToolUse context does reach the model after the tool call (1.0.24
// observation, reference/adapters.md §2.6), which is how an owner header
// gets through; the envelope is kept for all three so a client that
// unwraps it gets clean text.
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse"}

type client struct{}

// New returns the Grok adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: Grok 1.0.x is a native binary named grok
// (reference/adapters.md §2.6).
func (client) ClientCommand() string { return "grok" }

// SessionEnvVars: none known; no capture recorded Grok's hook environment.
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints Claude's {"hookSpecificOutput":{"hookEventName":<event>,
// "additionalContext":<text>}} and exits 0 (reference/adapters.md §2.1:
// discarded by 1.0.13 on UserPromptSubmit; never proven to reach a model).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints {"decision":"deny","reason":<reason>} and exits 0, the shape
// Grok's documentation gives (reference/adapters.md §2.1: documented only,
// never captured denying). No capability rests on it.
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.DecisionDeny(reason)
}

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// Grok's hook dispatcher reads a Stop answer's block decision and feeds
// the reason back to the model for another round (its public source,
// xai-org/grok-build, crates xai-grok-hooks; docs/hooks.md, "Turn
// delivery"). Only a Stop whose reason is end_turn is held: Grok also
// fires Stop as the session closes, with another reason, and discards the
// answer then. StopFailure, StopCancelled and every other event render
// Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" || ev.EndReason != "end_turn" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Evidence: none. The Grok payloads acc has were built from documentation,
// not captured (fixtures/upstream/README.md), so Grok claims nothing until
// a real capture proves something (SPEC decision 12).
func (client) Evidence() []adapter.Evidence { return nil }
