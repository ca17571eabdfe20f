package copilot

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

// spec is Copilot CLI's hook surface when its hook file names events as
// Claude Code does (PascalCase): it then sends Claude's snake_case payloads
// (hook_event_name, session_id, cwd, tool_name, tool_input), but with its
// own tool inputs: Write and Edit name their file in path, Bash its
// command in command (testdata/1.0.102; docs/adapters.md#github-copilot-cli).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PermissionRequest", Kind: adapter.Other},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "ErrorOccurred", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	// Stop carries stop_hook_active: true on the Stop that follows a held
	// one (testdata/1.0.102/Stop-held.json).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	// The model's create and edit tools reach the hook as Write and Edit,
	// the file in path; its bash tool as Bash.
	FileTools: map[string][]string{
		"Write": {"path"},
		"Edit":  {"path"},
	},
	ShellTools: map[string][]string{"Bash": {"command"}},
	// An MCP server's tool is <server>-<tool> to the model and in the hook
	// payload, its arguments in tool_input (docs/hooks.md#mcp-tools).
	MCP: adapter.MCPServerDash,
}

// contextEvents are the events whose additionalContext reached the model
// in 1.0.102: SessionStart and UserPromptSubmit before the turn's first
// request, PostToolUse in the request after the tool's result
// (docs/adapters.md#github-copilot-cli).
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse"}

type client struct{}

// New returns the GitHub Copilot CLI adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: none. Copilot CLI 1.0.102 starts as a Node loader
// (copilot) that runs a native binary, whose main thread renames itself
// MainThread, a name no hook can tell from another program's
// (docs/adapters.md#github-copilot-cli).
func (client) ClientCommand() string { return "" }

// SessionEnvVars: none. The hooks of 1.0.102 get COPILOT_CLI,
// COPILOT_PROJECT_DIR and COPILOT_HOOK_DIR, but no variable naming the
// session; its id is in the payload only.
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints {"additionalContext":<text>} and exits 0 on SessionStart,
// UserPromptSubmit and PostToolUse (contextEvents). Copilot CLI reads the
// key at the top level; Claude Code's hookSpecificOutput wrapping is
// ignored (docs/adapters.md#github-copilot-cli).
func (c client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return adapter.Output{Stdout: hookio.JSONLine(map[string]any{"additionalContext": context})}
}

// Deny prints Claude Code's {"hookSpecificOutput":{"hookEventName":
// "PreToolUse","permissionDecision":"deny","permissionDecisionReason":
// <reason>}} and exits 0: in 1.0.102 the call does not run and the model's
// tool result is "Denied by preToolUse hook: <reason>"
// (docs/adapters.md#github-copilot-cli).
func (c client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PermissionDeny(reason)
}

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// 1.0.102 then asks the model again with the reason, and marks the next
// Stop of the turn with stop_hook_active (docs/hooks.md#turn-delivery).
// Every other event renders Allow.
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
