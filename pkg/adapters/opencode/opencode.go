package opencode

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

// Spec is what acc's plugin sends acc-hook (plugin.js): one JSON object
// with hook_event_name, session_id and cwd, plus prompt on chat.message,
// tool_name and tool_input on the tool hooks, source on a session's start
// and reason on its end. The event names are OpenCode's own hook and event
// names, and two of the plugin's: session.resumed, before the first
// prompt of a session the process did not create (run --continue), and
// process.exit, once per session as the OpenCode process exits; tool names and inputs are OpenCode's: write and edit name their
// file in filePath, bash its command in command (testdata/1.18.33;
// docs/adapters.md#opencode). Kilo's plugin is the same file.
var Spec = hookio.Spec{
	Adapter: ID,
	Events: []hookio.EventKind{
		{Name: "session.created", Kind: adapter.SessionStart},
		{Name: "session.resumed", Kind: adapter.SessionStart},
		{Name: "chat.message", Kind: adapter.BeforeTurn},
		{Name: "tool.execute.before", Kind: adapter.BeforeTool},
		{Name: "tool.execute.after", Kind: adapter.AfterTool},
		{Name: "session.idle", Kind: adapter.TurnEnd},
		{Name: "session.deleted", Kind: adapter.SessionEnd},
		{Name: "process.exit", Kind: adapter.SessionEnd},
	},
	EventKeys:     []string{"hook_event_name"},
	SessionKeys:   []string{"session_id"},
	CwdKeys:       []string{"cwd"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	PromptKeys:    []string{"prompt"},
	ToolKeys:      []string{"tool_name"},
	InputKeys:     []string{"tool_input"},
	// edit replaces text in one file; write writes one whole. Both name it
	// in filePath, absolute in 1.18.33.
	FileTools: map[string][]string{
		"write": {"filePath"},
		"edit":  {"filePath"},
	},
	ShellTools: map[string][]string{"bash": {"command"}},
	// An MCP server's tool is <server>_<tool>, its arguments the tool's
	// input (docs/hooks.md#mcp-tools).
	MCP: adapter.MCPServerUnderscore,
}

// Client is the adapter of a client that runs acc's plugin (plugin.js):
// OpenCode, and Kilo, its fork. Only the identity, the install location
// and the evidence differ.
type Client struct {
	id, display string
	spec        *hookio.Spec
	evidence    func() ([]adapter.Evidence, error)
	// binary is the program a person runs; pidEnv the variable the client
	// sets to its own pid; configDir its configuration directory under
	// $XDG_CONFIG_HOME (or ~/.config); pluginPackage the npm package it
	// installs into that directory when it finds a plugin there.
	binary, pidEnv, configDir, pluginPackage string
}

var spec = Spec

// New returns the OpenCode adapter.
func New() adapter.Adapter {
	return Client{id: ID, display: DisplayName, spec: &spec, evidence: loadEvidence,
		binary: "opencode", pidEnv: "OPENCODE_PID", configDir: "opencode", pluginPackage: "@opencode-ai/plugin"}
}

// NewFork returns the adapter of a fork of OpenCode that loads plugins as
// OpenCode 1.18 does (Kilo): its id and name, its evidence, the program a
// person runs, the variable holding its pid, its directory under
// ~/.config and its plugin package. spec is Spec with the fork's id.
func NewFork(id, display string, spec *hookio.Spec, evidence func() ([]adapter.Evidence, error), binary, pidEnv, configDir, pluginPackage string) adapter.Adapter {
	return Client{id: id, display: display, spec: spec, evidence: evidence,
		binary: binary, pidEnv: pidEnv, configDir: configDir, pluginPackage: pluginPackage}
}

func (c Client) ID() string          { return c.id }
func (c Client) DisplayName() string { return c.display }

// ClientCommand is the program's name. OpenCode's process is its native
// binary itself, named as it was started: opencode from PATH, opencode.exe
// by the package's own path; acc finds it by ClientPIDEnv first.
func (c Client) ClientCommand() string { return c.binary }

// ClientPIDEnv: OpenCode sets OPENCODE_PID (Kilo KILO_PID) to its own pid
// in its environment once running, and acc's plugin passes that
// environment to acc-hook, a child of the client's process.
func (c Client) ClientPIDEnv() string { return c.pidEnv }

// SessionEnvVars: none; the session is in the payload only.
func (Client) SessionEnvVars() []string { return nil }

func (c Client) Events() []string { return c.spec.EventNames() }

func (c Client) Normalize(event string, payload []byte) (*adapter.Event, error) {
	return c.spec.Normalize(event, payload)
}

// contextEvents are the hooks whose {"context"} the plugin puts before the
// model: chat.message as a text part of the user's message, and
// tool.execute.after appended to the tool's result (plugin.js).
var contextEvents = []string{"chat.message", "tool.execute.after"}

// Inject prints {"context":<text>} and exits 0 on chat.message and
// tool.execute.after; acc's plugin adds the text to what the model reads
// next (docs/adapters.md#opencode). Elsewhere it renders Allow: on
// session.created the plugin has no message to add it to.
func (c Client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return adapter.Output{Stdout: hookio.JSONLine(map[string]string{"context": context})}
}

// Deny prints {"deny":<reason>} and exits 0 on tool.execute.before: the
// plugin throws an Error with the reason, the tool does not run, and the
// model's tool result is exactly the reason (measured on 1.18.33,
// docs/adapters.md#opencode).
func (c Client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return adapter.Output{Stdout: hookio.JSONLine(map[string]string{"deny": hookio.Reason(reason)})}
}

// Hold renders Allow: nothing the plugin can do on session.idle keeps the
// turn going (a headless run exits right after it), so end-of-turn
// delivery is not offered.
func (c Client) Hold(ev *adapter.Event, _ string) adapter.Output { return c.Allow(ev) }

// Allow prints nothing and exits 0.
func (Client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (the module's tests make sure they do).
func (c Client) Evidence() []adapter.Evidence {
	evidence, _ := c.evidence()
	return slices.Clone(evidence)
}
