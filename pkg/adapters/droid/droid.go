package droid

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

// spec is Droid's hook surface: Claude Code's event names and snake_case
// payloads (hook_event_name, session_id, cwd, tool_name, tool_input), with
// Droid's own tools: Create and Edit name their file in file_path,
// ApplyPatch carries a Codex-style patch envelope in input, Execute its
// command in command (testdata/0.225.2; docs/adapters.md#factory-droid).
var spec = &hookio.Spec{
	Adapter: ID,
	// The events of 0.225.2's hook settings schema, in its order of a
	// session.
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	// Stop carries stop_hook_active: true on the Stop that follows a held
	// one (testdata/0.225.2/Stop-held.json).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	FileTools: map[string][]string{
		"Create": {"file_path"},
		"Edit":   {"file_path"},
	},
	// ApplyPatch is in 0.225.2's tool table but was not offered to the
	// model measured; its input is the patch text in the envelope Codex
	// uses (read in the binary, never seen called).
	PatchTools: map[string][]string{"ApplyPatch": {"input"}},
	ShellTools: map[string][]string{"Execute": {"command"}},
	MCP:        adapter.MCPServerTripleUnderscore,
}

// contextEvents are the events whose hookSpecificOutput.additionalContext
// reached the model in 0.225.2, each as a user message of its own
// (docs/adapters.md#factory-droid).
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse"}

type client struct{}

// New returns the Factory Droid adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: Droid's program is a native binary named droid (the npm
// launcher, a Node script, starts it by that name). A hook runs under
// sh -c directly below that process (acc's hook command execs into the
// shim, so acc-hook's parent is droid itself); interactively the hook's
// droid is the worker the interface starts, also named droid
// (docs/adapters.md#factory-droid).
func (client) ClientCommand() string { return "droid" }

// SessionEnvVars: none. 0.225.2 gives each hook the payload's top-level
// fields as lower-case variables (session_id among them), which say nothing
// the payload does not, and exports no variable naming the session to the
// processes its tools start.
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints Claude Code's {"hookSpecificOutput":{"hookEventName":
// <event>,"additionalContext":<text>}} and exits 0 on SessionStart,
// UserPromptSubmit and PostToolUse (contextEvents): in 0.225.2 the text
// reached the model's next request as a user message holding exactly it.
// Every other event, and an empty context, renders Allow.
func (c client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints Claude Code's {"hookSpecificOutput":{"hookEventName":
// "PreToolUse","permissionDecision":"deny","permissionDecisionReason":
// <reason>}} and exits 0: in 0.225.2 the call does not run, no PostToolUse
// fires for it, and the model's tool result is "Error: <reason>"
// (docs/adapters.md#factory-droid). Any event but a pre-tool one renders
// Allow.
func (c client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PermissionDeny(reason)
}

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// 0.225.2 then appends the reason as a user message, asks the model again,
// and marks the next Stop with stop_hook_active (docs/hooks.md#turn-delivery).
// Every other event renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Allow prints nothing and exits 0. Not "{}": 0.225.2's hook runner takes
// a hook's stdout as context unless it is JSON naming one of its answer
// keys, and an empty object names none.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
