package droid

import (
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Droid is started as droid.
func (client) Binary() string { return "droid" }

// ConfigDir is .factory in FACTORY_HOME_OVERRIDE when that names an
// absolute directory, else ~/.factory: 0.225.2 puts its user directory,
// settings.json and skills/ included, under that variable in place of the
// home directory (docs/adapters.md#factory-droid).
func (client) ConfigDir(env adapter.InstallEnv) string {
	return filepath.Join(env.Dir("FACTORY_HOME_OVERRIDE", ""), ".factory")
}

// hookEvents are the events acc wires, as for Claude Code.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

// hookTimeout is each handler's timeout in seconds (0.225.2's default is
// 60).
const hookTimeout = 10

// InstallPlan wires Droid through its user settings.json, in Claude Code's
// layout (one matcher group per event under hooks.<Event>, handlers
// {"type":"command","command":…,"timeout":<seconds>}). The tool events
// match Create, Edit, ApplyPatch, Execute and the MCP tools that write
// files or run a shell, in Droid's <server>___<tool> form
// (adapter.GuardMatcher: Droid tests a matcher as an unanchored regular
// expression over the tool name, so the anchors keep Read and the rest
// out). The skill goes to skills/acc/SKILL.md, where Droid finds personal
// skills.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	var tools []string
	for t := range spec.FileTools {
		tools = append(tools, t)
	}
	for t := range spec.PatchTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	matcher := adapter.GuardMatcher(spec.MCP, tools...)
	arts := adapter.JSONHookArtifacts(filepath.Join(dir, "settings.json"), hookEvents,
		func(ev string) string {
			if ev == "PreToolUse" || ev == "PostToolUse" {
				return matcher
			}
			return ""
		},
		func(ev string) map[string]any {
			return map[string]any{"type": "command", "command": env.HookCommand(ID, ev), "timeout": hookTimeout}
		})
	arts = append(arts, adapter.Artifact{Kind: adapter.ArtifactFile, Path: filepath.Join(dir, "skills", "acc", "SKILL.md"), Content: env.Skill})
	return adapter.InstallPlan{Artifacts: arts, Notes: []string{"restart Droid: hooks load when a session starts"}}
}
