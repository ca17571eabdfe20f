package codex

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

func sub(t testing.TB, fsys fs.FS, dir string) fs.FS {
	t.Helper()
	s, err := fs.Sub(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	t.Run("captured-0.171.0", func(t *testing.T) {
		adaptertest.Run(t, New(), sub(t, testdataFS, "testdata/captured-0.171.0/payloads"))
	})
	t.Run("realclient-0.171.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, files, "evidence/0.171.0/payloads")) })
	t.Run("upstream-0.147.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, testdataFS, "testdata/upstream-0.147.0")) })
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
	caps, _ := adapter.CapabilitiesFor(New(), "0.171.0")
	// Proven by the real-client tests (internal/realclient), the file tool's
	// guard included: sessions of this version count as guarded.
	want := adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, GuardShell: true, SessionEnd: true, LivePush: true, MidTurn: true, EndOfTurn: true}
	if caps != want || !caps.Guarded() {
		t.Errorf("0.171.0 capabilities %+v, want %+v", caps, want)
	}
	if older, _ := adapter.CapabilitiesFor(New(), "0.170.9"); older != (adapter.Capabilities{}) {
		t.Errorf("an older version inherits %+v", older)
	}
}

func TestTools(t *testing.T) {
	a := New()
	patch := "*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** Add File: b.go\n+z\n*** End Patch"
	cases := []struct {
		name, input string
		tool        string
		write       bool
		targets     []string
		shell       string
	}{
		{"apply_patch command", `{"command":` + q(patch) + `}`, "apply_patch", true, []string{"a.go", "b.go"}, ""},
		{"apply_patch input", `{"input":` + q(patch) + `}`, "apply_patch", true, []string{"a.go", "b.go"}, ""},
		{"apply_patch patch", `{"patch":` + q(patch) + `}`, "apply_patch", true, []string{"a.go", "b.go"}, ""},
		{"shell command that is a patch", `{"command":` + q(patch) + `}`, "Bash", true, []string{"a.go", "b.go"}, ""},
		// How Codex 0.171 hands the model's edits to its shell tool
		// (internal/realclient TestGuard): a file edit, not a shell command.
		{"apply_patch heredoc", `{"command":` + q("apply_patch <<'EOF'\n"+patch+"\nEOF\n") + `}`, "Bash", true, []string{"a.go", "b.go"}, ""},
		{"apply_patch heredoc and more", `{"command":` + q("apply_patch <<'EOF'\n"+patch+"\nEOF\nrm c.go") + `}`, "Bash", false, nil, "apply_patch <<'EOF'\n" + patch + "\nEOF\nrm c.go"},
		{"Bash", `{"command":"echo hi > out.txt"}`, "Bash", false, nil, "echo hi > out.txt"},
		{"shell with input", `{"input":"rm x"}`, "shell", false, nil, "rm x"},
		{"shell argv", `{"command":["bash","-lc","echo \"it's\" > out.txt"]}`, "shell", false, nil, `'bash' '-lc' 'echo "it'\''s" > out.txt'`},
		{"exec_command", `{"cmd":"touch f"}`, "exec_command", false, nil, "touch f"},
		{"read tool", `{"path":"x"}`, "view_image", false, nil, ""},
	}
	for _, c := range cases {
		p := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"` + c.tool + `","tool_input":` + c.input + `}`
		ev, err := a.Normalize("PreToolUse", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s: write=%v targets=%q shell=%q", c.name, ev.Write, ev.Targets, ev.Shell)
		}
	}
	// The argv form reaches the shell reader as the same words.
	if got, err := adapter.ShellWriteTargets(`'bash' '-lc' 'echo "it'\''s" > out.txt'`); err != nil || !slices.Equal(got, []string{"out.txt"}) {
		t.Errorf("argv command targets %q %v", got, err)
	}
	// Aliases of the session id and cwd keys (docs/adapters.md#codex).
	ev, err := a.Normalize("SessionStart", []byte(`{"thread_id":"t1","working_directory":"/w","eventName":"SessionStart"}`))
	if err != nil || ev.SessionID != "t1" || ev.Cwd != "/w" {
		t.Errorf("aliases: %+v %v", ev, err)
	}
}

func q(s string) string {
	b := []byte{'"'}
	for _, c := range s {
		switch c {
		case '\n':
			b = append(b, '\\', 'n')
		case '"':
			b = append(b, '\\', '"')
		default:
			b = append(b, string(c)...)
		}
	}
	return string(append(b, '"'))
}

func TestAnswers(t *testing.T) {
	a := New()
	pre := &adapter.Event{Adapter: ID, Name: "PreToolUse", Kind: adapter.BeforeTool, SessionID: "s", Cwd: "/w", Tool: "apply_patch", Write: true}
	out := a.Deny(pre, "held\x1b[31m by x")
	if out.ExitCode != 2 || len(out.Stdout) != 0 || string(out.Stderr) != "held [31m by x\n" {
		t.Errorf("deny: %+v", out)
	}
}

func FuzzNormalize(f *testing.F) {
	adaptertest.Fuzz(f, New(), sub(f, testdataFS, "testdata/captured-0.171.0/payloads"))
}

// TestHold: Stop is held with the {"decision":"block"} answer and reads
// stop_hook_active.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "Stop", sub(t, testdataFS, "testdata/captured-0.171.0/payloads"), func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}
