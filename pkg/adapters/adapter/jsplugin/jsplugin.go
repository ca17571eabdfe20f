// Package jsplugin is what the adapters of clients that load acc's
// JavaScript plugin share (OpenCode, and Kilo Code, its fork): the plugin
// itself (plugin.js), the payload it sends acc-hook, the answers it reads,
// and the install plan that writes it (docs/adapters.md#opencode).
//
// Such a client runs no hook commands. The plugin runs in the client's
// own process, calls `sh <shim> <client> <event>` synchronously for the
// events acc needs, and acts on at most one JSON object on stdout:
// {"context": T} adds T to what the model reads next, {"deny": R} stops a
// tool call with R as its result. So the payload and the answers are
// acc's own small protocol, not a shape the client defines.
package jsplugin

import (
	_ "embed"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// pluginSource is acc's plugin, with __CLIENT__, __SHIM__, __DISPLAY__ and
// __PIDVAR__ to fill in (Client.Plugin).
//
//go:embed plugin.js
var pluginSource string

// Spec returns what the plugin sends acc-hook, for client id: one JSON
// object with hook_event_name, session_id and cwd, plus prompt on
// chat.message, tool_name and tool_input on the tool hooks, source on a
// session's start and reason on its end. The event names are OpenCode's
// own hook and event names, and two of the plugin's: session.resumed,
// before the first prompt of a session the process did not create (run
// --continue), and process.exit, once per session as the client's process
// exits. Tool names and inputs are OpenCode's: write and edit name their
// file in filePath, apply_patch carries a patch in patchText, bash its
// command in command (docs/adapters.md#opencode).
func Spec(id string) *hookio.Spec {
	return &hookio.Spec{
		Adapter: id,
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
		// edit replaces text in one file; write writes one whole. Both
		// name it in filePath, absolute in OpenCode 1.18.33.
		FileTools: map[string][]string{
			"write": {"filePath"},
			"edit":  {"filePath"},
		},
		// apply_patch, which OpenCode offers some models in place of edit
		// and write, carries a patch in Codex's envelope in patchText.
		PatchTools: map[string][]string{"apply_patch": {"patchText"}},
		ShellTools: map[string][]string{"bash": {"command"}},
		// An MCP server's tool is <server>_<tool>, its arguments the
		// tool's input (docs/hooks.md#mcp-tools).
		MCP: adapter.MCPServerUnderscore,
	}
}

// Config is what differs between the clients that run the plugin.
type Config struct {
	// ID and Display are the client id and product name.
	ID, Display string
	// Binary is the program a person runs; PIDEnv the variable the client
	// sets to its own pid; ConfigDir its directory under
	// $XDG_CONFIG_HOME (or ~/.config); PluginPackage the npm package it
	// fetches into that directory at start when it is missing.
	Binary, PIDEnv, ConfigDir, PluginPackage string
	// VersionEnv is the variable the client sets to its own version in
	// the environment the plugin passes on, "" for none (OpenCode).
	VersionEnv string
	// Evidence loads the client's embedded evidence records.
	Evidence func() ([]adapter.Evidence, error)
}

// Client implements adapter.Adapter, adapter.Installer,
// adapter.ClientPIDNamer and adapter.ClientVersionNamer for a client that
// runs the plugin. An adapter
// package embeds it in a type of its own.
type Client struct {
	cfg  Config
	spec *hookio.Spec
}

// New returns the Client of cfg.
func New(cfg Config) Client { return Client{cfg: cfg, spec: Spec(cfg.ID)} }

func (c Client) ID() string          { return c.cfg.ID }
func (c Client) DisplayName() string { return c.cfg.Display }

// ClientCommand is the program's name. OpenCode's process is its native
// binary itself, named as it was started (opencode from PATH, opencode.exe
// by the package's path); acc finds it by ClientPIDEnv first.
func (c Client) ClientCommand() string { return c.cfg.Binary }

// ClientPIDEnv: OpenCode sets OPENCODE_PID (Kilo KILO_PID) to its own pid
// in its environment once running, and the plugin passes that environment
// to acc-hook, a child of the client's process.
func (c Client) ClientPIDEnv() string { return c.cfg.PIDEnv }

// ClientVersionEnv: Kilo sets KILOCODE_VERSION in its environment, which
// the plugin passes to acc-hook (adapter.ClientVersionNamer); "" for
// OpenCode, whose version acc-hook reads from its npm package.
func (c Client) ClientVersionEnv() string { return c.cfg.VersionEnv }

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
// tool.execute.after; the plugin adds the text to what the model reads
// next (docs/adapters.md#opencode). Elsewhere it renders Allow: on a
// session's start the plugin has no message to add it to.
func (c Client) Inject(ev *adapter.Event, context string) adapter.Output {
	if ev == nil || context == "" || !hookio.Has(contextEvents, ev.Name) {
		return c.Allow(ev)
	}
	return hookio.PluginContext(context)
}

// Deny prints {"deny":<reason>} and exits 0 on tool.execute.before: the
// plugin throws an Error with the reason, the tool does not run, and the
// model's tool result is exactly the reason (measured on OpenCode 1.18.33,
// docs/adapters.md#opencode).
func (c Client) Deny(ev *adapter.Event, reason string) adapter.Output {
	if ev == nil || ev.Kind != adapter.BeforeTool {
		return c.Allow(ev)
	}
	return hookio.PluginDeny(reason)
}

// Hold renders Allow: nothing the plugin can do on session.idle keeps the
// turn going (a headless run exits right after it).
func (c Client) Hold(ev *adapter.Event, _ string) adapter.Output { return c.Allow(ev) }

// Allow prints nothing and exits 0.
func (Client) Allow(*adapter.Event) adapter.Output { return hookio.Allow() }

// Evidence returns the embedded records, lowest version first; none if
// they fail to load (each module's tests make sure they do).
func (c Client) Evidence() []adapter.Evidence {
	if c.cfg.Evidence == nil {
		return nil
	}
	evidence, _ := c.cfg.Evidence()
	return slices.Clone(evidence)
}

// Binary is the program a person runs.
func (c Client) Binary() string { return c.cfg.Binary }

// ConfigDir is the client's global configuration directory:
// $XDG_CONFIG_HOME/<dir>, else ~/.config/<dir>. The client loads plugins
// from its plugin/ directory and skills from its skills/ directory
// (docs/adapters.md#what-acc-install-writes).
func (c Client) ConfigDir(env adapter.InstallEnv) string {
	return filepath.Join(env.Dir("XDG_CONFIG_HOME", ".config"), c.cfg.ConfigDir)
}

// PluginFile is where acc installs its plugin: <ConfigDir>/plugin/acc.js.
func (c Client) PluginFile(env adapter.InstallEnv) string {
	return filepath.Join(c.ConfigDir(env), "plugin", "acc.js")
}

// Plugin is acc's plugin for c, calling the hook shim at shim: plugin.js
// with the client id and the shim's path as JavaScript string literals
// (JSON strings, so no path can end the literal early).
func (c Client) Plugin(shim string) []byte {
	lit := func(s string) string {
		b, _ := json.Marshal(s) // a string always marshals
		return string(b)
	}
	return []byte(strings.NewReplacer(
		"__CLIENT__", lit(c.cfg.ID), "__SHIM__", lit(shim),
		"__DISPLAY__", c.cfg.Display, "__PIDVAR__", c.cfg.PIDEnv,
	).Replace(pluginSource))
}

// InstallPlan writes acc's plugin, PluginFile, and the skill in
// skills/acc/ (docs/adapters.md#what-acc-install-writes). The client loads
// every plugin of that directory at start; the plugin runs acc-hook for
// session.created, chat.message, tool.execute.before and .after,
// session.idle, session.deleted, and once per session at the process's
// exit. Nothing else of the client's configuration is touched.
func (c Client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: c.PluginFile(env), Content: c.Plugin(env.Shim)},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(c.ConfigDir(env), "skills", "acc", "SKILL.md"), Content: env.Skill},
	}, Notes: []string{
		"restart " + c.cfg.Display + ": plugins load when it starts",
		"at start " + c.cfg.Display + " fetches " + c.cfg.PluginPackage + " from npm into " + c.ConfigDir(env) +
			" when it is missing there (about 30 s once; with no registry it waits about 80 s at every start; docs/adapters.md#opencode)",
	}}
}
