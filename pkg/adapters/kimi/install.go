package kimi

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Kimi Code is started as kimi.
func (client) Binary() string { return "kimi" }

// ConfigDir is KIMI_CODE_HOME, else ~/.kimi-code
// (docs/adapters.md#what-acc-install-writes).
func (client) ConfigDir(env adapter.InstallEnv) string {
	return env.Dir("KIMI_CODE_HOME", ".kimi-code")
}

// hookEvents are the events acc subscribes in config.toml. Left out, though
// the adapter reads them (docs/adapters.md#kimi-code):
//   - SessionHeartbeat: 2.1.0 fires it every 60 s, but the stricter config
//     schema Kimi Code validates config.toml against when it rewrites the
//     file itself (kimi login, logout) does not list it, so a block naming
//     it would make those commands refuse the whole file.
//   - PostToolUse: 2.1.0 starts it without waiting for it (and missed it
//     in 2 of 8 measured tool calls), so nothing it prints reaches the
//     model; acc's post-tool hook would only refresh the heartbeat that
//     PreToolUse, matching the same tools, already refreshes.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"}

// InstallPlan wires Kimi Code as measured
// (docs/adapters.md#what-acc-install-writes): [[hooks]] tables in acc's
// managed block at the end of config.toml, with only the keys its strict
// schema accepts (event, command, matcher, timeout in seconds; the
// matcher a regular expression selecting the file tools, Bash and the MCP
// tools that write files, adapter.GuardMatcher), and a plugin carrying
// the skill, registered in plugins/installed.json. 2.1.0 loads that
// plugin: the skill is listed to the model, and its sessionStart puts the
// whole skill before the model at the session's first request (measured;
// docs/adapters.md#kimi-code).
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	tools := []string{}
	for t := range spec.FileTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	matcher := adapter.GuardMatcher(spec.MCP, tools...)
	var b strings.Builder
	for i, ev := range hookEvents {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[[hooks]]\nevent = %s\ncommand = %s\n", adapter.TOMLString(ev), adapter.TOMLString(env.HookCommand(ID, ev)))
		if ev == "PreToolUse" {
			fmt.Fprintf(&b, "matcher = %s\n", adapter.TOMLString(matcher))
		}
		b.WriteString("timeout = 10\n")
	}
	plugin := filepath.Join(dir, "plugins", "managed", "agents-can-communicate")
	manifest, _ := json.MarshalIndent(map[string]any{
		"name": "agents-can-communicate", "version": env.AccVersion,
		"description":  "acc: see the other coding sessions in this repository, claim files, and exchange messages",
		"skills":       "./skills/",
		"sessionStart": map[string]any{"skill": "acc"},
	}, "", "  ")
	// "local-path" is how Kimi Code 2.1.0 itself records a plugin installed
	// from a directory (its source values are local-path, zip-url and
	// github); it loads an entry naming another, but lists it as no source
	// it knows.
	entry, _ := json.Marshal(map[string]any{"id": "agents-can-communicate", "root": plugin, "source": "local-path", "enabled": true})
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactTOMLBlock, Path: filepath.Join(dir, "config.toml"), Content: []byte(b.String())},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(plugin, ".kimi-plugin", "plugin.json"), Content: append(manifest, '\n')},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(plugin, "skills", "acc", "SKILL.md"), Content: env.Skill},
		{Kind: adapter.ArtifactJSONEntry, Path: filepath.Join(dir, "plugins", "installed.json"), Pointer: []string{"plugins"}, Value: entry,
			Seed: json.RawMessage(`{"version": 1, "plugins": []}`), Identity: "id"},
	}, Notes: []string{"restart Kimi Code: hooks load when a session starts"}}
}
