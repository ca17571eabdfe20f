package codex

import (
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Codex is started as codex.
func (client) Binary() string { return "codex" }

// ConfigDir is CODEX_HOME, else ~/.codex (docs/adapters.md#codex).
func (client) ConfigDir(env adapter.InstallEnv) string { return env.Dir("CODEX_HOME", ".codex") }

var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

// InstallPlan wires Codex through $CODEX_HOME/hooks.json, the user hook
// layer 0.171 loads (hooks are on by default there;
// docs/decisions.md#9-installer-ownership, docs/adapters.md#codex), in the same event → matcher group →
// handlers layout as Claude Code, timeout in seconds. Tool events match
// apply_patch, the shell tool's names and the MCP tools that write files
// (adapter.GuardMatcher: Codex matches a regular expression). The skill goes to
// ~/.agents/skills/acc/SKILL.md, the user skill directory Codex reads.
// Codex runs no hook the user has not trusted: the note says so.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	var tools []string
	for t := range spec.PatchTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	matcher := adapter.GuardMatcher(spec.MCP, tools...)
	arts := adapter.JSONHookArtifacts(filepath.Join(dir, "hooks.json"), hookEvents,
		func(ev string) string {
			if ev == "PreToolUse" || ev == "PostToolUse" {
				return matcher
			}
			return ""
		},
		func(ev string) map[string]any {
			return map[string]any{"type": "command", "command": env.HookCommand(ID, ev), "timeout": 10}
		})
	arts = append(arts, adapter.Artifact{Kind: adapter.ArtifactFile, Path: filepath.Join(env.Home, ".agents", "skills", "acc", "SKILL.md"), Content: env.Skill})
	return adapter.InstallPlan{Artifacts: arts, Notes: []string{
		"in Codex, open /hooks and trust acc's hooks: Codex runs no hook a person has not trusted (and says nothing about it)",
		"restart Codex: hooks load when a session starts",
	}}
}
