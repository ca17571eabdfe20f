package grok

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Binary: Grok is started as grok.
func (client) Binary() string { return "grok" }

// ConfigDir is GROK_HOME, else ~/.grok: where Grok reads its user
// config.toml and its global hook files (docs/adapters.md#grok).
func (client) ConfigDir(env adapter.InstallEnv) string { return env.Dir("GROK_HOME", ".grok") }

// HookFile is the hook file acc installs for Grok under env:
// <ConfigDir>/hooks/acc.json. Grok loads every *.json file of that
// directory at session start, always trusted.
func HookFile(env adapter.InstallEnv) string {
	return filepath.Join(client{}.ConfigDir(env), "hooks", "acc.json")
}

// hookTimeouts are the events acc installs and their timeouts, in
// seconds. Grok's own defaults (5 s; 600 s for Stop) are replaced so that
// acc-hook's 5-second budget always fits.
var hookTimeouts = []struct {
	event   string
	timeout int
}{{"SessionStart", 15}, {"UserPromptSubmit", 30}, {"PreToolUse", 10}, {"PostToolUse", 10}, {"Stop", 60}, {"SessionEnd", 10}}

// InstalledEvents lists the events acc's Grok hook file registers.
func InstalledEvents() []string {
	out := make([]string, len(hookTimeouts))
	for i, h := range hookTimeouts {
		out[i] = h.event
	}
	return out
}

// InstallPlan wires Grok as its source reads it
// (docs/adapters.md#grok): a hook file of acc's own, HookFile, in Grok's JSON
// hook format
// ({"hooks":{<Event>:[{"matcher":…,"hooks":[{"type":"command","command":…,
// "timeout":<seconds>}]}]}}; the tool matcher a regular expression over Grok's
// tool names and <server>__<tool> MCP names, adapter.GuardMatcher), the skill
// in skills/acc/, and acc-mcp as [mcp_servers.acc] in config.toml (acc's
// managed block) so a Grok agent can always poll (docs/adapters.md#grok). Grok
// claims no capability until a real run proves one.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	dir := c.ConfigDir(env)
	hooks := map[string]any{}
	for _, h := range hookTimeouts {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": env.HookCommand(ID, h.event), "timeout": h.timeout}}}
		if m := hookMatcher(h.event); m != "" {
			group["matcher"] = m
		}
		hooks[h.event] = []any{group}
	}
	hookFile, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	block := fmt.Sprintf("[mcp_servers.acc]\ncommand = %s\nenv = { ACC_MCP_PARTICIPANT = \"grok\" }\n", adapter.TOMLString(env.MCPServer))
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: HookFile(env), Content: append(hookFile, '\n')},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(dir, "skills", "acc", "SKILL.md"), Content: env.Skill},
		{Kind: adapter.ArtifactTOMLBlock, Path: filepath.Join(dir, "config.toml"), Content: []byte(block)},
	}, Notes: []string{
		"restart Grok: hooks and MCP servers load when a session starts",
		"Grok also runs acc's Claude Code hooks (its [compat.claude] default); acc-hook answers those as Grok, once per event",
		"Grok sessions count as advisory: no Grok capability is proven yet; its agent can poll with the acc tools (acc-mcp)",
	}}
}

// hookMatcher is the matcher acc's hook file gives event: on the tool
// events a regular expression over Grok's file-writing and shell tools and
// the <server>__<tool> names of MCP tools that write files
// (adapter.GuardMatcher); none on the others, which Grok then runs for
// every occurrence.
func hookMatcher(event string) string {
	if event != "PreToolUse" && event != "PostToolUse" {
		return ""
	}
	tools := []string{}
	for t := range spec.FileTools {
		tools = append(tools, t)
	}
	for t := range spec.ShellTools {
		tools = append(tools, t)
	}
	return adapter.GuardMatcher(spec.MCP, tools...)
}

// HookFileRuns reports whether content, a hook file as Grok reads it,
// registers acc-hook's Grok command for event with the matcher this acc
// installs for it (hookMatcher): Grok then runs that entry for every call
// acc's Claude Code entry would see. acc-hook asks it of HookFile when
// Grok runs acc's Claude Code hooks, so as to leave the event to this
// file when it is there
// (docs/hooks.md#grok-running-claude-codes-hooks). A file an older acc wrote,
// whose tool matcher leaves out a tool Grok now has, does not count for that
// event.
func HookFileRuns(content []byte, event string) bool {
	var file struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(content, &file) != nil {
		return false
	}
	for _, group := range file.Hooks[event] {
		if group.Matcher != hookMatcher(event) {
			continue
		}
		for _, h := range group.Hooks {
			if h.Type == "command" && strings.HasSuffix(h.Command, " "+ID+" "+event) {
				return true
			}
		}
	}
	return false
}
