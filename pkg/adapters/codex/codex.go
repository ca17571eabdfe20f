package codex

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

// spec is Codex's hook surface (docs/adapters.md#codex: the event enum of
// the binary, the payload keys and their documented aliases; keys as in
// evidence/0.171.0/payloads, testdata/captured-0.171.0 and
// testdata/upstream-0.147.0).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "UserPromptSubmit", Kind: adapter.BeforeTurn},
		{Name: "PreToolUse", Kind: adapter.BeforeTool},
		{Name: "PermissionRequest", Kind: adapter.Other},
		{Name: "PostToolUse", Kind: adapter.AfterTool},
		{Name: "PreCompact", Kind: adapter.Other},
		{Name: "PostCompact", Kind: adapter.Other},
		{Name: "SubagentStart", Kind: adapter.Other},
		{Name: "SubagentStop", Kind: adapter.Other},
		{Name: "Stop", Kind: adapter.TurnEnd},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name", "eventName", "event_name"},
	SessionKeys:   []string{"session_id", "sessionId", "thread_id", "threadId"},
	CwdKeys:       []string{"cwd", "working_directory", "workspace_root"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	// Stop carries stop_hook_active (evidence/0.171.0/payloads/Stop-endOfTurn.json).
	StopActiveKeys: []string{"stop_hook_active"},
	PromptKeys:     []string{"prompt"},
	ToolKeys:       []string{"tool_name", "toolName", "tool"},
	InputKeys:      []string{"tool_input"},
	// docs/adapters.md#codex: file edits arrive as apply_patch with the patch body in
	// command (patch or input tolerated); shell commands as Bash (older
	// builds: shell) with command or input. exec_command is the name the
	// model calls the shell by (docs/adapters.md#codex); 0.171.0 hooks
	// see it as Bash, but the raw name is read the same way in case a build
	// passes it through.
	PatchTools: map[string][]string{"apply_patch": {"command", "patch", "input"}},
	ShellTools: map[string][]string{
		"Bash":         {"command", "input"},
		"shell":        {"command", "input"},
		"exec_command": {"cmd", "command"},
	},
	// Since 0.124 the pre-tool hook also runs for MCP tools, named as the
	// model sees them, mcp__<server>__<tool>, with the raw arguments as
	// tool_input (docs/hooks.md#mcp-tools).
	MCP:          adapter.MCPDoubleUnderscore,
	ShellPatches: true,
}

// contextEvents are the events whose additionalContext reached the model
// in the 0.171.0 capture (testdata/captured-0.171.0/observations.json;
// docs/adapters.md#codex).
var contextEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse"}

type client struct{}

// New returns the Codex adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: the npm launcher starts the native binary named codex
// (docs/adapters.md#codex), which is the process hooks descend from.
func (client) ClientCommand() string { return "codex" }

// SessionEnvVars: none. The 0.171.0 hook environment carries no session id
// (evidence/0.171.0/env.json: no variable holds it).
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints {"hookSpecificOutput":{"hookEventName":<event>,
// "additionalContext":<text>}} and exits 0: in 0.171.0 each such context
// became its own developer-role input item, text unchanged
// (testdata/captured-0.171.0/observations.json). Plain text was measured
// on older versions; the JSON shape is the one our capture proves
// (docs/adapters.md#codex).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints nothing on stdout, the reason on stderr, and exits 2. In
// 0.171.0 this stopped the shell call and the model got "Command blocked by
// PreToolUse hook: <reason>. …" (testdata/captured-0.171.0/observations.json;
// the JSON permissionDecision shape did the same there). Exit 2 is the
// shape measured stopping apply_patch too (docs/adapters.md#codex). Codex needs a non-empty reason; a blank one gets the default.
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.ExitTwoDeny(reason)
}

// Allow prints nothing and exits 0 (docs/adapters.md#what-each-client-is-told).
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold prints {"decision":"block","reason":<reason>} on Stop and exits 0:
// Codex's Stop output schema takes decision "block" with a required
// reason, and runs the model again with that reason as its prompt
// (docs/hooks.md#turn-delivery). Every other event renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "Stop" {
		return c.Allow(ev)
	}
	return hookio.DecisionBlock(reason)
}

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
