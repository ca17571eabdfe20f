package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// TestShellReadOutOfTimeIsGuarded: reading a shell command that has not
// finished shellReadReserve before the deadline counts as not read, so a
// peer's guarded claim denies the call, saying so, instead of the hook
// running past its budget and failing open. The reader here never
// finishes, whatever the machine's speed; the adapter's bounds keep real
// reading far from this backstop.
func TestShellReadOutOfTimeIsGuarded(t *testing.T) {
	w := newWorld(t)
	w.r.Deadline = shellReadReserve + 3*time.Second
	w.besideGuardedPeer("file:x.go")
	never := make(chan struct{})
	defer close(never)
	defer func(was func(string, adapter.ShellEnv) (adapter.ShellReading, error)) { shellTargets = was }(shellTargets)
	shellTargets = func(string, adapter.ShellEnv) (adapter.ShellReading, error) {
		<-never
		return adapter.ShellReading{}, nil
	}
	payload, _ := json.Marshal(map[string]any{"session_id": "c1", "cwd": w.repo, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": "echo x > x.go"}})
	res := w.run(&bytes.Buffer{}, []string{"claude", "PreToolUse"}, payload)
	if !strings.Contains(res.stdout, `"permissionDecision":"deny"`) ||
		!strings.Contains(res.stdout, "acc cannot tell where it writes (the command took longer to read than the hook's budget allows)") {
		t.Errorf("a command whose reading never finished: stdout %q stderr %q; want a deny saying it took too long to read", res.stdout, res.stderr)
	}
}

// TestSlowGitIsGuarded: a git that answers no sooner than the hook's
// deadline (a huge repository, a stuck lock) is cut off gitCheckReserve
// before it, so the call's writes count as unknown and a peer's guarded
// claim denies it, saying why, instead of the hook running out of budget
// and failing open. git here is a stand-in on PATH that sleeps past the
// deadline, set after the session and the claim exist.
func TestSlowGitIsGuarded(t *testing.T) {
	w := newWorld(t)
	w.r.Deadline = gitCheckReserve + 3*time.Second
	w.besideGuardedPeer("file:x.go")
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	payload, _ := json.Marshal(map[string]any{"session_id": "c1", "cwd": w.repo, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": "git stash"}})
	res := w.run(&bytes.Buffer{}, []string{"claude", "PreToolUse"}, payload)
	if !strings.Contains(res.stdout, `"permissionDecision":"deny"`) || !strings.Contains(res.stdout, "took longer than the hook") {
		t.Errorf("git stash with a git that never answers: stdout %q stderr %q; want a deny saying git took too long", res.stdout, res.stderr)
	}
}
