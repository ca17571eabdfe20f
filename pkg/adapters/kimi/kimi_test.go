package kimi

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(files, "evidence/0.36.1/payloads")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), payloads(t)) }

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
	caps, _ := adapter.CapabilitiesFor(New(), "0.36.1")
	want := adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, GuardShell: true}
	if caps != want || !caps.Guarded() {
		t.Errorf("0.36.1 capabilities %+v, want %+v", caps, want)
	}
	if older, _ := adapter.CapabilitiesFor(New(), "0.36.0"); older != (adapter.Capabilities{}) {
		t.Errorf("an older version inherits %+v", older)
	}
}

func TestTools(t *testing.T) {
	a := New()
	cases := []struct {
		tool, input string
		write       bool
		targets     []string
		shell       string
	}{
		{"Write", `{"path":"/workspace/project/notes.txt","content":"x"}`, true, []string{"/workspace/project/notes.txt"}, ""},
		{"Edit", `{"path":"a.py","old_string":"a","new_string":"b"}`, true, []string{"a.py"}, ""},
		{"Edit", `{"file_path":"not-kimi's-key.py"}`, true, nil, ""},
		{"Bash", `{"command":"printf x >> f","description":"d"}`, false, nil, "printf x >> f"},
		{"Read", `{"path":"a.py"}`, false, nil, ""},
	}
	for _, c := range cases {
		p := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"` + c.tool + `","tool_input":` + c.input + `}`
		ev, err := a.Normalize("PreToolUse", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s %s: write=%v targets=%q shell=%q", c.tool, c.input, ev.Write, ev.Targets, ev.Shell)
		}
	}
}

func TestAnswers(t *testing.T) {
	a := New()
	turn := &adapter.Event{Adapter: ID, Name: "UserPromptSubmit", Kind: adapter.BeforeTurn, SessionID: "s", Cwd: "/w"}
	if got := string(a.Inject(turn, "ctx\nline").Stdout); got != "ctx\nline" {
		t.Errorf("inject must be the text itself, no newline added: %q", got)
	}
	beat := &adapter.Event{Adapter: ID, Name: "SessionHeartbeat", Kind: adapter.Heartbeat, SessionID: "s", Cwd: "/w"}
	if out := a.Inject(beat, "ctx"); len(out.Stdout) != 0 {
		t.Errorf("heartbeat context was never shown to reach the model: %q", out.Stdout)
	}
}

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), payloads(f)) }

// TestHold: Stop is held by exit 2 with the reason on stderr, and reads
// stop_hook_active; StopFailure is not held.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "Stop", payloads(t), func(r string) adapter.Output {
		return adapter.Output{Stderr: []byte(r + "\n"), ExitCode: 2}
	})
	ev := &adapter.Event{Adapter: ID, Name: "StopFailure", Kind: adapter.TurnEnd}
	if got := New().Hold(ev, "x"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
		t.Errorf("Hold on StopFailure = %+v, want Allow", got)
	}
	// The client does not take context from its post-tool hook (docs/hooks.md,
	// "Turn delivery"): acc never injects there.
	post := &adapter.Event{Adapter: ID, Name: "PostToolUse", Kind: adapter.AfterTool}
	if got := New().Inject(post, "x"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
		t.Errorf("Inject on PostToolUse = %+v, want Allow", got)
	}
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}
