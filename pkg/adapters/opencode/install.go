package opencode

import (
	_ "embed"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// pluginSource is acc's plugin, with __CLIENT__, __SHIM__, __DISPLAY__ and
// __PIDVAR__ to fill in (Plugin).
//
//go:embed plugin.js
var pluginSource string

// Binary is the program a person runs: opencode (kilo for Kilo).
func (c Client) Binary() string { return c.binary }

// ConfigDir is the client's global configuration directory:
// $XDG_CONFIG_HOME/opencode, else ~/.config/opencode (Kilo: …/kilo).
// OpenCode loads plugins from its plugin/ directory and skills from its
// skills/ directory (docs/adapters.md#what-acc-install-writes).
func (c Client) ConfigDir(env adapter.InstallEnv) string {
	return filepath.Join(env.Dir("XDG_CONFIG_HOME", ".config"), c.configDir)
}

// PluginFile is where acc installs its plugin for c:
// <ConfigDir>/plugin/acc.js.
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
		"__CLIENT__", lit(c.id), "__SHIM__", lit(shim),
		"__DISPLAY__", c.display, "__PIDVAR__", c.pidEnv,
	).Replace(pluginSource))
}

// InstallPlan writes acc's plugin, PluginFile, and the skill in
// skills/acc/ (docs/adapters.md#what-acc-install-writes). OpenCode loads
// every plugin of that directory at start; the plugin runs acc-hook for
// session.created, chat.message, tool.execute.before and .after,
// session.idle, session.deleted, and once per session at the process's
// exit. Nothing else of OpenCode's configuration is touched.
func (c Client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: c.PluginFile(env), Content: c.Plugin(env.Shim)},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(c.ConfigDir(env), "skills", "acc", "SKILL.md"), Content: env.Skill},
	}, Notes: []string{
		"restart " + c.display + ": plugins load when it starts",
		"at its first start with a plugin, " + c.display + " installs " + c.pluginPackage + " into " + c.ConfigDir(env) +
			" from npm; offline it waits about 80 s for that each start unless the package is there (docs/adapters.md#opencode)",
	}}
}
