package qwen

import (
	"embed"
	"slices"
	"sync"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// files holds the evidence records and the payloads they rest on.
//
//go:embed evidence
var files embed.FS

// loadEvidence decodes the embedded records when first asked.
var loadEvidence = sync.OnceValues(func() ([]adapter.Evidence, error) { return adapter.LoadEvidence(files) })

// spec is Qwen Code's hook surface: Claude Code's event names and
// snake_case payloads (hook_event_name, session_id, cwd, tool_name,
// tool_input), with the tools Qwen Code took over from Gemini CLI:
// write_file and edit name their file in file_path, run_shell_command its
// command in command (testdata/0.24.4; docs/adapters.md#qwen-code).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PermissionRequest", Kind: adapter.Other},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "PostToolUseFailure", Kind: adapter.AfterTool},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	// Stop carries stop_hook_active (false on a turn's first Stop in
	// 0.24.4; 0.15.10 said true there).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	FileTools: map[string][]string{
		"write_file": {"file_path"},
		"edit":       {"file_path"},
	},
	ShellTools: map[string][]string{"run_shell_command": {"command"}},
	// MCP tools are mcp__<server>__<tool> in the hook payload
	// (testdata/0.24.4/PreToolUse-mcp.json).
	MCP: adapter.MCPDoubleUnderscore,
}

// contextEvents are the events whose hookSpecificOutput.additionalContext
// reached the model in 0.24.4 (docs/adapters.md#qwen-code).
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse"}

type client struct{}

// New returns the Qwen Code adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: none. Qwen Code is a Node program; its process is node.
func (client) ClientCommand() string { return "" }

// ClientPIDEnv: every hook of 0.24.4 inherits QWEN_CODE_LAUNCHER_PID, the
// pid of the node process started as qwen, which lives until the client
// exits (its relaunched child and the hooks are below it). Headless, 0.24.4
// fires no SessionEnd, so this pid is what tells acc the session is gone.
func (client) ClientPIDEnv() string { return "QWEN_CODE_LAUNCHER_PID" }

// SessionEnvVars: every hook of 0.24.4 gets QWEN_CODE_SESSION_ID equal to
// the payload's session_id (measured by hand, docs/adapters.md#qwen-code).
func (client) SessionEnvVars() []string { return []string{"QWEN_CODE_SESSION_ID"} }

func (client) Events() []string { return spec.EventNames() }

// Normalize reads a payload as Claude Code's, with one rule of Qwen
// Code's own: within a turn it fires UserPromptSubmit again, with an empty
// prompt, after every tool result. Such a call starts no turn: it is
// Other, so acc prints the room once per turn, on the prompt the person
// typed (docs/adapters.md#qwen-code); what arrives between tool calls
// reaches the model through PostToolUse.
func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	ev, err := spec.Normalize(event, payload)
	if err != nil {
		return nil, err
	}
	if ev.Name == "UserPromptSubmit" && Continuation(payload) {
		ev.Kind = adapter.Other
	}
	return ev, nil
}

// Continuation reports whether a UserPromptSubmit payload is Qwen Code's
// repeat within a turn: its prompt is present and empty.
func Continuation(payload []byte) bool {
	obj, err := hookio.Parse(payload)
	if err != nil {
		return false
	}
	p, present, err := obj.Str("prompt")
	return err == nil && present && p == ""
}

// Inject prints Claude Code's {"hookSpecificOutput":{"hookEventName":
// <event>,"additionalContext":<text>}} and exits 0 on SessionStart,
// UserPromptSubmit and PostToolUse (contextEvents); a continuation's
// UserPromptSubmit is Other and gets nothing.
func (c client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || ev.Kind == adapter.Other || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints Claude Code's permissionDecision deny and exits 0: in 0.24.4
// the call does not run and the model's tool result is exactly the reason
// (docs/adapters.md#qwen-code).
func (c client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PermissionDeny(reason)
}

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0,
// Claude Code's form, which Qwen Code's Stop documents too; it is not
// measured on 0.24.4 yet, and acc holds a stop only where the evidence
// proves endOfTurn. Every other event renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
