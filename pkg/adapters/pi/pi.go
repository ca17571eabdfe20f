package pi

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

// spec is the payload acc's Pi extension writes (extension/acc.ts): Pi's
// own event names under Claude Code's keys (hook_event_name, session_id,
// cwd; source on session_start, prompt on before_agent_start, tool_name
// and tool_input on the tool events, reason on session_shutdown), with
// Pi's tools as they reach an extension: write and edit name their file in
// path, bash its command in command (testdata/0.73.1;
// docs/adapters.md#pi). Pi has no MCP, so no tool is read as an MCP one.
var spec = &hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "session_start", Kind: adapter.SessionStart},
		{Name: "before_agent_start", Kind: adapter.BeforeTurn},
		{Name: "tool_call", Kind: adapter.BeforeTool},
		{Name: "tool_result", Kind: adapter.AfterTool},
		{Name: "agent_end", Kind: adapter.TurnEnd},
		{Name: "session_shutdown", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	ToolKeys:      []string{"tool_name"},
	InputKeys:     []string{"tool_input"},
	FileTools: map[string][]string{
		"write": {"path"},
		"edit":  {"path"},
	},
	ShellTools: map[string][]string{"bash": {"command"}},
}

// contextEvents are the events whose context the extension hands to the
// model: before_agent_start as a message after the prompt, tool_result
// appended to the tool's result (docs/adapters.md#pi). session_start has
// no way to the model.
var contextEvents = []string{"before_agent_start", "tool_result"}

type client struct{}

// New returns the Pi adapter.
func New() adapter.Adapter { return client{} }

func (client) ID() string          { return ID }
func (client) DisplayName() string { return DisplayName }

// ClientCommand is pi: Pi's Node process renames itself (process.title),
// so its comm is pi, and the hook's sh is its direct child (measured on
// 0.73.1, docs/adapters.md#pi).
func (client) ClientCommand() string { return "pi" }

// SessionEnvVars: none. Pi sets PI_CODING_AGENT=true for its children and
// names neither its session nor its pid; the session id is in the payload
// only.
func (client) SessionEnvVars() []string { return nil }

func (client) Events() []string { return spec.EventNames() }

// Normalize reads one payload of acc's Pi extension; it refuses what
// hookio.Spec.Normalize refuses (an unknown event, a payload that is not
// one JSON object or names another event, no session id or cwd).
func (client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return spec.Normalize(event, payload)
}

// Inject prints {"context":<text>} and exits 0 on before_agent_start and
// tool_result (contextEvents); elsewhere, and for empty text, it renders
// Allow.
func (c client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return hookio.PluginContext(context)
}

// Deny prints {"deny":<reason>} (the default reason when blank) and exits
// 0 on tool_call: the extension returns {block: true, reason} to Pi, which
// does not run the tool and gives the model exactly the reason as its
// result (docs/adapters.md#pi). Any other event renders Allow.
func (c client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PluginDeny(reason)
}

// Hold renders Allow on every event: nothing an extension does at
// agent_end makes Pi 0.73.1 ask the model again in a -p run
// (docs/adapters.md#pi).
func (c client) Hold(ev *adapter.Event, _ string) adapter.Output { return c.Allow(ev) }

// Allow prints nothing and exits 0.
func (client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (client) Evidence() []adapter.Evidence {
	evidence, _ := loadEvidence()
	return slices.Clone(evidence)
}
