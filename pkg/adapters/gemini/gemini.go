package gemini

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

// spec is Gemini CLI's hook surface (docs/adapters.md#gemini-cli),
// including the per-model-call events the 0.61.0 capture fired (BeforeModel,
// BeforeToolSelection, AfterModel; testdata/captured-0.61.0/observations.json).
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "SessionStart", Kind: adapter.SessionStart},
		{Name: "BeforeAgent", Kind: adapter.BeforeTurn},
		{Name: "BeforeModel", Kind: adapter.Other},
		{Name: "BeforeToolSelection", Kind: adapter.Other},
		{Name: "AfterModel", Kind: adapter.Other},
		{Name: "BeforeTool", Kind: adapter.BeforeTool},
		{Name: "AfterTool", Kind: adapter.AfterTool},
		{Name: "AfterAgent", Kind: adapter.TurnEnd},
		{Name: "PreCompress", Kind: adapter.Other},
		{Name: "Notification", Kind: adapter.Other},
		{Name: "SessionEnd", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	// BeforeAgent's prompt is the turn's text (with -p, SessionStart's
	// context in front of it); after a held stop it is the hold's reason
	// (docs/delivery.md#end-of-turn).
	PromptKeys: []string{"prompt"},
	// AfterAgent carries stop_hook_active (evidence/0.61.0/payloads/AfterAgent-endOfTurn.json).
	StopActiveKeys: []string{"stop_hook_active"},
	ToolKeys:       []string{"tool_name"},
	InputKeys:      []string{"tool_input"},
	// write_file and replace name their file in file_path; the
	// shell tool is run_shell_command.
	FileTools: map[string][]string{
		"write_file": {"file_path"},
		"replace":    {"file_path"},
	},
	// 0.61 names an MCP tool mcp_<server>_<tool> (characters outside
	// [A-Za-z0-9_.:-] replaced, names over 63 characters shortened) and
	// adds mcp_context with the server's own server_name and tool_name,
	// which is read first (docs/hooks.md#mcp-tools).
	MCP:            adapter.MCPSingleUnderscore,
	MCPContextKeys: []string{"mcp_context"},
	ShellTools:     map[string][]string{"run_shell_command": {"command"}},
}

// contextEvents are the events whose additionalContext reached the model
// in the 0.61.0 capture (testdata/captured-0.61.0/observations.json;
// docs/adapters.md#gemini-cli).
var contextEvents = []string{"SessionStart", "BeforeAgent", "AfterTool"}

type client struct{}

// New returns the Gemini CLI adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand: "" — Gemini CLI is a Node script, so its process is named
// node and cannot be told apart by name (docs/adapters.md#gemini-cli).
func (client) ClientCommand() string { return "" }

// SessionEnvVars: every hook of the 0.61.0 capture had GEMINI_SESSION_ID
// equal to the payload's session_id (evidence/0.61.0/env.json).
func (client) SessionEnvVars() []string { return []string{"GEMINI_SESSION_ID"} }

func (client) Events() []string { return spec.EventNames() }

func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints {"hookSpecificOutput":{"hookEventName":<event>,
// "additionalContext":<text>}} and exits 0: in 0.61.0 the client put each
// context in the next request inside <hook_context>…</hook_context>, the
// BeforeAgent one as its own part of the user turn
// (testdata/captured-0.61.0/observations.json; docs/adapters.md#gemini-cli).
func (client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return hookio.Allow()
	}
	return hookio.AdditionalContext(ev.Name, context)
}

// Deny prints {"decision":"deny","reason":<reason>} and exits 0: in 0.61.0
// the shell call did not run and the model got {"error":"Tool execution
// blocked: <reason>"} (testdata/captured-0.61.0/observations.json; exit 2
// did the same). Gemini ignores Claude's hookSpecificOutput denial
// (docs/adapters.md#gemini-cli), so that shape is never used here;
// {"decision":"block"}, measured denying on older versions, was not
// tried on 0.61.0.
func (client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return hookio.Allow()
	}
	return hookio.DecisionDeny(reason)
}

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Hold prints {"decision":"block","reason":<reason>} on AfterAgent and
// exits 0: Gemini CLI documents that a blocking AfterAgent answer rejects
// the agent's reply and has it try again with the reason as feedback
// (docs/hooks.md#turn-delivery). Every other event renders Allow.
func (c client) Hold(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Name != "AfterAgent" {
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
