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

// spec is Kimi Code's hook surface: the twenty events its config schema
// names (reference/adapters.md §2.5), payload keys as in
// fixtures/upstream/kimi. Kimi is the only client with a timer event
// (SessionHeartbeat, every 60 s).
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
	// Stop carries stop_hook_active, as Claude Code's does (docs/hooks.md, "Turn delivery"; not proven on a real Kimi Code).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	// §2.5, §5.1: Write and Edit name their file in path (not file_path);
	// the shell tool is Bash.
	FileTools: map[string][]string{
		"Write": {"path"},
		"Edit":  {"path"},
	},
	// Kimi Code names MCP tools mcp__<server>__<tool> (its MCP docs; the
	// 2.1.0 capture lists mcp__* among a subagent's tools); no captured
	// hook payload of an MCP call yet (docs/hooks.md, "MCP tools").
	MCP:        adapter.MCPDoubleUnderscore,
	ShellTools: map[string][]string{"Bash": {"command"}},
}

// contextEvents are the events on which acc prints context. Plain text
// from UserPromptSubmit was measured reaching the model (reference/
// adapters.md §2.1); SessionStart output is handled by the same hook
// runner in the client, but no capture shows it.
var contextEvents = []string{"SessionStart", "UserPromptSubmit"}

type client struct{}

// New returns the Kimi Code adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: kimi. Kimi Code is a Python tool whose launcher is a
// script named kimi run directly by its interpreter, so the process keeps
// that name (unverified by a capture: reference §1.6 doubted it for an
// npm install).
func (client) ClientCommand() string { return "kimi" }

// SessionEnvVars: none known; no capture recorded Kimi's hook environment.
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints the context as plain text, without a trailing newline,
// and exits 0. Kimi wraps hook stdout in <hook_result hook_event="…"> for
// the model; a hookSpecificOutput envelope would be shown verbatim, JSON
// and all (reference/adapters.md §2.1 and §12 item 14).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	return adapter.Output{Stdout: []byte(context)}
}

// Deny prints Claude's {"hookSpecificOutput":{"hookEventName":"PreToolUse",
// "permissionDecision":"deny","permissionDecisionReason":<reason>}} and
// exits 0: upstream measured it stopping Write and Bash, the reason
// reaching the model as the failed call's error and PostToolUseFailure
// firing (reference/adapters.md §2.1, §2.5; the PostToolUseFailure payloads
// in evidence/0.36.1). {"decision":"block"}, {"permission":"deny"} and exit
// 1 were measured ignored.
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.PermissionDeny(reason)
}

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold exits 2 with the reason on stderr on Stop: Kimi Code documents exit
// code 2 as the one blocking answer of every hook, its stderr the reason
// (docs/hooks.md, "Turn delivery"; not captured holding a stop). Every
// other event, StopFailure included, renders Allow.
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
