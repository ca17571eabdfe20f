package kimi

import (
	"embed"
	"slices"
	"strings"
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

// spec is Kimi Code's hook surface: the twenty events its hook loader
// accepts in config.toml (2.1.0 fires them as
// docs/adapters.md#kimi-code, describes; 0.36.1 named the same), with the
// payload keys of both versions. Kimi is the only client with a timer event
// (SessionHeartbeat, every 60 s), which acc does not subscribe (install.go says
// why).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "PostToolUseFailure", Kind: adapter.AfterTool},
		{Name: "PermissionRequest", Kind: adapter.Other},
		{Name: "PermissionResult", Kind: adapter.Other},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "UserPromptQueued", Kind: adapter.Other},
		{Name: "TurnStarted", Kind: adapter.Other},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "StopFailure", Kind: adapter.TurnEnd},
		{Name: "Interrupt", Kind: adapter.Other},
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
		{Name: "SessionHeartbeat", Kind: adapter.Heartbeat},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "TaskStarted", Kind: adapter.Other},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "PostCompact", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	// UserPromptSubmit's prompt is an array of content parts in 2.1.0
	// (a string in TurnStarted); hookio reads either
	// (docs/adapters.md#kimi-code).
	PromptKeys: []string{"prompt"},
	// Stop carries stop_hook_active, as Claude Code's does: false in every
	// 2.1.0 run; never yet seen true after a held stop
	// (docs/hooks.md#turn-delivery).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	// Write and Edit name their file in path (not file_path); the shell
	// tool is Bash (both versions, docs/adapters.md#kimi-code).
	FileTools: map[string][]string{
		"Write": {"path"},
		"Edit":  {"path"},
	},
	// Kimi Code names MCP tools mcp__<server>__<tool> (its MCP docs; 2.1.0
	// lists mcp__* among a subagent's tools); no hook payload of an MCP
	// call has been recorded yet (docs/hooks.md#mcp-tools).
	MCP:        adapter.MCPDoubleUnderscore,
	ShellTools: map[string][]string{"Bash": {"command"}},
}

// contextEvents are the events on which acc prints context: only
// UserPromptSubmit. Kimi Code 2.1.0 hands that hook's stdout to the model
// (wrapped in <hook_result hook_event="UserPromptSubmit">, and shows it to
// the user too); what a SessionStart hook prints reaches no model request,
// so acc prints nothing there and the hook records nothing offered.
// PostToolUse and PostToolUseFailure are started without being awaited,
// so nothing printed there can reach the model and mid-turn delivery can
// never be proven for Kimi Code (docs/adapters.md#kimi-code).
var contextEvents = []string{"UserPromptSubmit"}

type client struct{}

// New returns the Kimi Code adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: kimi-code. Kimi Code 2.1.0 is a Node program started as
// kimi that names its own process kimi-code, the name found among a
// hook's ancestors (docs/adapters.md#kimi-code).
func (client) ClientCommand() string { return "kimi-code" }

// SessionEnvVars: none. Kimi Code 2.1.0 gives its hooks no variable naming
// the session; the id is in the payload only
// (docs/adapters.md#kimi-code).
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints the context as plain text, without a trailing newline,
// and exits 0, on UserPromptSubmit only (contextEvents); every other event
// renders Allow. Kimi wraps hook stdout in <hook_result hook_event="…"> for
// the model; a hookSpecificOutput envelope would be shown verbatim, JSON
// and all (docs/adapters.md#kimi-code).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	return adapter.Output{Stdout: []byte(context)}
}

// Deny prints Claude's {"hookSpecificOutput":{"hookEventName":"PreToolUse",
// "permissionDecision":"deny","permissionDecisionReason":<reason>}} and
// exits 0. In 2.1.0 it stops Bash and Write, the model reads the reason
// as the failed call's error, and PostToolUseFailure fires (not awaited);
// exit 2 with the reason on stderr does the same, and 0.36.1 measured the
// JSON form too (docs/adapters.md#kimi-code).
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.PermissionDeny(reason)
}

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold exits 2 with the reason on stderr on Stop: Kimi Code 2.1.0 then asks
// the model again with the reason as a user message, and does not run the
// stop hook again in that turn ({"decision":"block"} on stdout is ignored;
// docs/hooks.md#turn-delivery; evidence/2.1.0). Every other event,
// StopFailure included, renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" {
		return c.Allow(ev)
	}
	if strings.TrimSpace(reason) == "" {
		reason = hookio.DefaultHoldReason
	}
	return hookio.ExitTwoDeny(reason)
}

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
