package claude

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

// loadEvidence decodes the embedded records when first asked, not at
// start-up: most acc-hook calls never need them, and every process paid
// for the decoding before.
var loadEvidence = sync.OnceValues(func() ([]adapter.Evidence, error) { return adapter.LoadEvidence(files) })

// spec is Claude Code's hook surface (docs/adapters.md#claude-code; payload
// keys as in evidence/*/payloads and testdata/upstream-2.1.233).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "Setup", Kind: adapter.Other},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "UserPromptExpansion", Kind: adapter.Other},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PermissionRequest", Kind: adapter.Other},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "PostCompact", Kind: adapter.Other},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	// Stop carries stop_hook_active (evidence/2.1.332/payloads/Stop-endOfTurn.json).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	// The edit tools name their file in file_path, NotebookEdit in
	// notebook_path; Read and the other tools write nothing.
	FileTools: map[string][]string{
		"Write":        {"file_path"},
		"Edit":         {"file_path"},
		"MultiEdit":    {"file_path"},
		"NotebookEdit": {"notebook_path"},
	},
	ShellTools: map[string][]string{"Bash": {"command"}},
	// MCP servers' tools arrive as mcp__<server>__<tool>, the tool's
	// arguments in tool_input (docs/hooks.md#mcp-tools).
	MCP: adapter.MCPDoubleUnderscore,
}

// contextEvents are the events whose additionalContext reached the model
// in the 2.1.197 capture (evidence/2.1.197/observations.json;
// docs/adapters.md#claude-code).
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse"}

type client struct{}

// New returns the Claude Code adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: Claude Code runs as its own native binary, started as
// "claude" (the npm 2.1.197 package links bin/claude.exe under that name;
// docs/adapters.md#claude-code), so the process is named claude.
func (client) ClientCommand() string { return "claude" }

// SessionEnvVars: every hook of the 2.1.197 capture had
// CLAUDE_CODE_SESSION_ID equal to the payload's session_id
// (evidence/2.1.197/env.json).
func (client) SessionEnvVars() []string { return []string{"CLAUDE_CODE_SESSION_ID"} }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints {"hookSpecificOutput":{"hookEventName":<event>,
// "additionalContext":<text>}} and exits 0: on SessionStart and
// UserPromptSubmit the text reached the next model request as a system
// message, on PostToolUse inside the tool result
// (evidence/2.1.197/observations.json; docs/adapters.md#claude-code).
func (c client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints {"hookSpecificOutput":{"hookEventName":"PreToolUse",
// "permissionDecision":"deny","permissionDecisionReason":<reason>}} and
// exits 0: the Bash call did not run and the model's tool_result was
// exactly the reason (evidence/2.1.197/observations.json;
// docs/adapters.md#claude-code). Exit 2 also blocks, but the model then sees
// the hook's command line around the reason, so it is not used.
func (c client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PermissionDeny(reason)
}

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// Claude Code documents that such a Stop answer keeps Claude working with
// the reason as what to do next, and marks the following Stop of the turn
// with stop_hook_active (docs/hooks.md#turn-delivery). Every other
// event renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Allow prints an empty JSON object: Claude Code reads a hook's stdout as
// JSON when it is an object, and one with no fields decides nothing, so the
// call proceeds; a reader of the hook's output can still tell an explicit
// "nothing to add" from a missing answer.
func (client) Allow(*adapter.Event) adapter.Output {
	return adapter.Output{Stdout: []byte("{}\n")}
}

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
