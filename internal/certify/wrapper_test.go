package certify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWrapperSendsAfterSessionStart: the peer's question waiting for run 2
// is sent once, after the session start hook answered and before the next
// hook runs acc-hook, also when the client starts both hooks together
// (GitHub Copilot CLI) and session start is the slow one, and when the
// client names its session start otherwise (Pi's session_start, whose
// extension gives each hook 15 s: it must not wait there for a
// SessionStart that never comes). The hook here is a script that notes
// when it starts and ends; the question notes when it is sent.
func TestWrapperSendsAfterSessionStart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		start, next string                         // the client's session start and the hook after it
		order       func(start func(event string)) // how the client starts its hooks
	}{
		{"one after the other", "SessionStart", "UserPromptSubmit", func(start func(string)) { start("SessionStart"); start("UserPromptSubmit") }},
		{"pi", "session_start", "before_agent_start", func(start func(string)) { start("session_start"); start("before_agent_start") }},
		{"together", "SessionStart", "UserPromptSubmit", func(start func(string)) {
			var wg sync.WaitGroup
			for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse"} {
				wg.Add(1)
				go func() { defer wg.Done(); start(ev) }()
			}
			wg.Wait()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(dir, "trace")
			hook := filepath.Join(dir, "hook")
			// Session start takes a second; every hook notes its start and end.
			script := "#!/bin/sh\necho \"start $2\" >> " + shellQuote(trace) + "\n[ \"$2\" != " + tc.start + " ] || sleep 1\necho \"end $2\" >> " + shellQuote(trace) + "\necho ok\n"
			if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			h := &hookLog{path: filepath.Join(dir, "hooks.log"), after: filepath.Join(dir, "after"), starts: []string{tc.start}}
			// An earlier run's session start is in the log already.
			if err := os.WriteFile(h.path, []byte(tc.start+"\tb2s=\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			wrapper, err := h.writeWrapper(dir, hook)
			if err != nil {
				t.Fatal(err)
			}
			if n := h.countStarts(); n != 1 {
				t.Fatalf("the log holds %d session starts, want 1", n)
			}
			if err := os.WriteFile(h.after+".starts", []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(h.after, []byte("echo sent >> "+shellQuote(trace)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.order(func(event string) {
				if out, err := exec.Command(wrapper, "claude", event).CombinedOutput(); err != nil {
					t.Errorf("%s: %v %s", event, err, out)
				}
			})
			b, _ := os.ReadFile(trace)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			at := func(line string) int {
				n, i := 0, -1
				for k, l := range lines {
					if l == line {
						n, i = n+1, k
					}
				}
				if n != 1 {
					t.Fatalf("%q appears %d times in the trace:\n%s", line, n, b)
				}
				return i
			}
			sent := at("sent")
			if sent < at("end "+tc.start) {
				t.Errorf("the question was sent before session start answered:\n%s", b)
			}
			if sent > at("start "+tc.next) {
				t.Errorf("the next hook ran before the question was sent:\n%s", b)
			}
		})
	}
}
