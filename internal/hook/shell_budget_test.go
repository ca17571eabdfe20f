package hook

import (
	"bytes"
	"encoding/json"
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
