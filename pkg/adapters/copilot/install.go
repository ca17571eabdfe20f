package copilot

import (
	"encoding/json"
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Copilot CLI is started as copilot.
func (client) Binary() string { return "copilot" }

// ConfigDir is COPILOT_HOME, else ~/.copilot
// (docs/adapters.md#what-acc-install-writes).
func (client) ConfigDir(env adapter.InstallEnv) string {
	return env.Dir("COPILOT_HOME", ".copilot")
}

// HookFile is the hook file acc installs for Copilot CLI:
// <ConfigDir>/hooks/acc.json. Copilot CLI loads every *.json file of that
// directory when a session starts.
func HookFile(env adapter.InstallEnv) string {
	return filepath.Join(client{}.ConfigDir(env), "hooks", "acc.json")
}

// hookTimeouts are the events acc installs and their timeouts in seconds
// (Copilot CLI's default is 30).
var hookTimeouts = []struct {
	event   string
	timeout int
}{{"SessionStart", 15}, {"UserPromptSubmit", 30}, {"PreToolUse", 10}, {"PostToolUse", 10}, {"Stop", 60}, {"SessionEnd", 10}}

// InstallPlan wires Copilot CLI as measured on 1.0.102
// (docs/adapters.md#what-acc-install-writes): a hook file of acc's own,
// HookFile, in Copilot's format ({"version":1,"hooks":{<Event>:[{"type":
// "command","bash":…,"timeoutSec":…}]}}) with Claude Code's event names,
// which makes Copilot send Claude's payload shape; no matcher, so every
// tool call reaches acc-hook, which passes what writes nothing. And the
// skill in skills/acc/.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	hooks := map[string]any{}
	for _, h := range hookTimeouts {
		hooks[h.event] = []any{map[string]any{"type": "command", "bash": env.HookCommand(ID, h.event), "timeoutSec": h.timeout}}
	}
	hookFile, _ := json.MarshalIndent(map[string]any{"version": 1, "hooks": hooks}, "", "  ")
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: HookFile(env), Content: append(hookFile, '\n')},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(c.ConfigDir(env), "skills", "acc", "SKILL.md"), Content: env.Skill},
	}, Notes: []string{"restart Copilot CLI: hooks load when a session starts"}}
}
