package grok

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Grok is started as grok.
func (client) Binary() string { return "grok" }

// ConfigDir is GROK_HOME, else ~/.grok (reference/adapters.md §6.1).
func (client) ConfigDir(env adapter.InstallEnv) string { return env.Dir("GROK_HOME", ".grok") }

// hookTimeouts are §2.6's per-event timeouts, in seconds.
var hookTimeouts = []struct {
	event   string
	timeout int
}{{"SessionStart", 15}, {"UserPromptSubmit", 30}, {"PreToolUse", 10}, {"PostToolUse", 10}, {"Stop", 60}, {"SessionEnd", 10}}

// InstallPlan wires Grok as §2.6 documents: a hook file of acc's own in
// hooks/ (files there are always trusted), the skill in skills/acc/, and
// acc-mcp registered as an MCP server in config.toml (acc's managed block)
// so a Grok session can always poll (SPEC decision 12). Grok claims no
// capability until a real capture proves one.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	tools := []string{}
	for t := range spec.FileTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	matcher := adapter.ToolMatcher(tools...)
	hooks := map[string]any{}
	for _, h := range hookTimeouts {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": env.HookCommand(ID, h.event), "timeout": h.timeout}}}
		if h.event == "PreToolUse" || h.event == "PostToolUse" {
			group["matcher"] = matcher
		}
		hooks[h.event] = []any{group}
	}
	hookFile, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	block := fmt.Sprintf("[mcp_servers.acc]\ncommand = %s\nenv = { ACC_MCP_PARTICIPANT = \"grok\" }\n", adapter.TOMLString(env.MCPServer))
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: filepath.Join(dir, "hooks", "acc.json"), Content: append(hookFile, '\n')},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(dir, "skills", "acc", "SKILL.md"), Content: env.Skill},
		{Kind: adapter.ArtifactTOMLBlock, Path: filepath.Join(dir, "config.toml"), Content: []byte(block)},
	}, Notes: []string{
		"restart Grok: hooks and MCP servers load when a session starts",
		"Grok sessions count as advisory: no Grok capability is proven yet; its agent can poll with the acc tools (acc-mcp)",
	}}
}
