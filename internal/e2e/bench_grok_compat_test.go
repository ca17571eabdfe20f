package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkHookGrokCompat measures the built acc-hook on the pre-tool
// calls Grok makes when acc's Claude Code and Grok hooks are both
// installed: its own entry (acc-hook grok, a guard check) and then the
// Claude Code entry, which reads the environment and acc's Grok hook file
// and does nothing (docs/hooks.md#grok-running-claude-codes-hooks).
// Measured, never asserted.
func BenchmarkHookGrokCompat(b *testing.B) {
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	sb.dir("repo", "src")
	if err := os.MkdirAll(filepath.Join(sb.home, ".grok"), 0o755); err != nil {
		b.Fatal(err)
	}
	sb.ok(repo, "install", "--adapter", "claude", "--adapter", "grok")
	g := clientByID(b, "grok")
	sid := "bench-grok"
	env := grokEnv("pre_tool_use", sid, repo)
	if r := sb.hook(hookOpts{env: grokEnv("session_start", sid, repo)}, g.startPayload(b, sid, repo), "grok", "SessionStart"); r.code != 0 {
		b.Fatalf("session start: %s", r)
	}
	payload := g.shellPayload(b, sid, repo, "echo x > src/a.go")
	for _, client := range []string{"grok", "claude"} {
		b.Run(client, func(b *testing.B) {
			for b.Loop() {
				if r := sb.hook(hookOpts{env: env}, payload, client, "PreToolUse"); r.code != 0 || r.stdout != "" {
					b.Fatalf("acc-hook %s PreToolUse: %s", client, r)
				}
			}
		})
	}
}
