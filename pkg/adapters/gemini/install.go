package gemini

import (
	"encoding/json"
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Gemini CLI is started as gemini (its process is node).
func (client) Binary() string { return "gemini" }

// ConfigDir is ~/.gemini (docs/adapters.md#gemini-cli).
func (client) ConfigDir(env adapter.InstallEnv) string { return env.Dir("", ".gemini") }

var hookEvents = []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"}

// InstallPlan wires Gemini CLI through its user settings.json (0.61 runs
// hooks from there with no feature flag; docs/adapters.md#gemini-cli): one
// matcher group per event, each handler named acc-<Event>, timeout in
// milliseconds; tool events match the file tools, run_shell_command and
// the MCP tools that write files (adapter.GuardMatcher: 0.61 tests the
// matcher as a regular expression against the tool name).
// The instructions ride in an extension whose context file Gemini CLI
// loads into every session (docs/adapters.md#gemini-cli; the extension ships no hooks.json, which
// Gemini would load a second time).
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	var tools []string
	for t := range spec.FileTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	matcher := adapter.GuardMatcher(spec.MCP, tools...)
	arts := adapter.JSONHookArtifacts(filepath.Join(dir, "settings.json"), hookEvents,
		func(ev string) string {
			if ev == "BeforeTool" || ev == "AfterTool" {
				return matcher
			}
			return ""
		},
		func(ev string) map[string]any {
			return map[string]any{"name": "acc-" + ev, "type": "command", "command": env.HookCommand(ID, ev), "timeout": 10000}
		})
	ext := filepath.Join(dir, "extensions", "agents-can-communicate")
	manifest, _ := json.MarshalIndent(map[string]any{
		"name": "agents-can-communicate", "version": env.AccVersion,
		"description":     "acc: see the other coding sessions in this repository, claim files, and exchange messages",
		"contextFileName": "ACC.md",
	}, "", "  ")
	arts = append(arts,
		adapter.Artifact{Kind: adapter.ArtifactFile, Path: filepath.Join(ext, "gemini-extension.json"), Content: append(manifest, '\n')},
		adapter.Artifact{Kind: adapter.ArtifactFile, Path: filepath.Join(ext, "ACC.md"), Content: env.Skill})
	return adapter.InstallPlan{Artifacts: arts, Notes: []string{
		"restart Gemini CLI: hooks and extensions load when a session starts",
		"Gemini CLI runs no hook in a folder it does not trust; trust your repositories (/permissions) or the guard never fires",
	}}
}
