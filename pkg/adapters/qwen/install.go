package qwen

import (
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Qwen Code is started as qwen.
func (client) Binary() string { return "qwen" }

// ConfigDir is ~/.qwen, where Qwen Code keeps its user settings.json
// (docs/adapters.md#what-acc-install-writes).
func (client) ConfigDir(env adapter.InstallEnv) string { return env.Dir("", ".qwen") }

// hookEvents are the events acc wires, as for Claude Code.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

// InstallPlan wires Qwen Code through its user settings.json, in Claude
// Code's layout (one matcher group per event under hooks.<Event>, timeout
// in seconds); the tool events match write_file, edit, run_shell_command
// and the MCP tools that write files (adapter.GuardMatcher). The skill
// goes to skills/acc/SKILL.md.
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
			if ev == "PreToolUse" || ev == "PostToolUse" {
				return matcher
			}
			return ""
		},
		func(ev string) map[string]any {
			return map[string]any{"type": "command", "command": env.HookCommand(ID, ev), "timeout": 10}
		})
	arts = append(arts, adapter.Artifact{Kind: adapter.ArtifactFile, Path: filepath.Join(dir, "skills", "acc", "SKILL.md"), Content: env.Skill})
	return adapter.InstallPlan{Artifacts: arts, Notes: []string{"restart Qwen Code: hooks load when a session starts"}}
}
