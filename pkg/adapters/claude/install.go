package claude

import (
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Claude Code is started as claude.
func (client) Binary() string { return "claude" }

// ConfigDir is CLAUDE_CONFIG_DIR, else ~/.claude (docs/adapters.md#claude-code).
func (client) ConfigDir(env adapter.InstallEnv) string {
	return env.Dir("CLAUDE_CONFIG_DIR", ".claude")
}

// hookEvents are the events acc wires: attach, before-turn projection,
// the write guard, the heartbeat after tools, the end of a turn, and
// session end.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

// InstallPlan wires Claude Code through its user settings.json, which
// 2.1.x loads hooks from (docs/adapters.md#claude-code;
// docs/decisions.md#9-installer-ownership): one
// matcher group per event under hooks.<Event>, timeout in seconds; tool
// events match the file-writing tools, Bash and the MCP tools that write
// files (adapter.GuardMatcher; 2.1.332 reads a matcher with characters
// other than names and | as a regular expression). The skill goes to
// skills/acc/SKILL.md, where Claude Code finds personal skills.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	tools := []string{"Bash"}
	for t := range spec.FileTools {
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
	return adapter.InstallPlan{Artifacts: arts, Notes: []string{
		"restart Claude Code: hooks load when a session starts",
	}}
}
