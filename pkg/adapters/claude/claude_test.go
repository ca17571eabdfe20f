package claude

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

var fixtureDirs = []struct {
	fsys func() fs.FS
	dir  string
}{
	{func() fs.FS { return files }, "evidence/2.1.197/payloads"},
	{func() fs.FS { return files }, "evidence/2.1.332/payloads"},
	{func() fs.FS { return testdataFS }, "testdata/upstream-2.1.233"},
}

func TestSuite(t *testing.T) {
	for _, d := range fixtureDirs {
		t.Run(d.dir, func(t *testing.T) { adaptertest.Run(t, New(), sub(t, d.fsys(), d.dir)) })
	}
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
	caps, ev := adapter.CapabilitiesFor(New(), "2.1.197")
	if !caps.Attach || !caps.NextTurn || !caps.GuardShell || !caps.SessionEnd || caps.GuardFiles || ev == nil {
		t.Errorf("2.1.197 capabilities %+v (evidence %v)", caps, ev)
	}
	if caps.Guarded() {
		t.Error("the 2.1.197 capture denied no file tool: Claude Code 2.1.197 must not count as guarded")
	}
	if caps.LivePush {
		t.Error("2.1.197 predates the inbox socket: no live push")
	}
	if between, _ := adapter.CapabilitiesFor(New(), "2.1.331"); between != caps {
		t.Errorf("a version between the captures inherits %+v, want %+v", between, caps)
	}
	// The real-client tests (internal/realclient) proved the Write tool's
	// guard, live push through the inbox socket, delivery after a tool call
	// and at the end of a turn, and everything else again, on 2.1.332.
	all := adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, GuardShell: true, SessionEnd: true, LivePush: true, MidTurn: true, EndOfTurn: true}
	for _, v := range []string{"2.1.332", "2.2.0"} {
		if got, ev := adapter.CapabilitiesFor(New(), v); got != all || !got.Guarded() || ev == nil || ev.Version != "2.1.332" {
			t.Errorf("%s capabilities %+v (evidence %v), want %+v from 2.1.332", v, got, ev, all)
		}
	}
	if older, ev := adapter.CapabilitiesFor(New(), "2.1.196"); older != (adapter.Capabilities{}) || ev != nil {
		t.Errorf("an older version inherits %+v", older)
	}
}

func TestTools(t *testing.T) {
	a := New()
	cases := []struct {
		payload string
		write   bool
		targets []string
		shell   string
	}{
		{`{"tool_name":"Write","tool_input":{"file_path":"/w/a.go","content":"x"}}`, true, []string{"/w/a.go"}, ""},
		{`{"tool_name":"Edit","tool_input":{"file_path":"b.go","old_string":"a","new_string":"b"}}`, true, []string{"b.go"}, ""},
		{`{"tool_name":"MultiEdit","tool_input":{"file_path":"c.go","edits":[]}}`, true, []string{"c.go"}, ""},
		{`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"n.ipynb","new_source":"x"}}`, true, []string{"n.ipynb"}, ""},
		{`{"tool_name":"Write","tool_input":{}}`, true, nil, ""},
		{`{"tool_name":"Bash","tool_input":{"command":"echo x > f"}}`, false, nil, "echo x > f"},
		{`{"tool_name":"Read","tool_input":{"file_path":"r.go"}}`, false, nil, ""},
		{`{"tool_name":"Grep","tool_input":{"pattern":"x"}}`, false, nil, ""},
	}
	for _, c := range cases {
		p := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse",` + c.payload[1:]
		ev, err := a.Normalize("PreToolUse", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.payload, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s: write=%v targets=%q shell=%q", c.payload, ev.Write, ev.Targets, ev.Shell)
		}
	}
}

func TestAnswers(t *testing.T) {
	a := New()
	pre := &adapter.Event{Adapter: ID, Name: "PreToolUse", Kind: adapter.BeforeTool, SessionID: "s", Cwd: "/w"}
	if got := string(a.Deny(pre, "held by x").Stdout); got != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"held by x"}}`+"\n" {
		t.Errorf("deny: %s", got)
	}
	turn := &adapter.Event{Adapter: ID, Name: "UserPromptSubmit", Kind: adapter.BeforeTurn, SessionID: "s", Cwd: "/w"}
	if got := string(a.Inject(turn, "<peer> & more").Stdout); got != `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<peer> & more"}}`+"\n" {
		t.Errorf("inject: %s", got)
	}
	stop := &adapter.Event{Adapter: ID, Name: "Stop", Kind: adapter.TurnEnd, SessionID: "s", Cwd: "/w"}
	// Stop context was never shown to reach the model: Inject answers Allow.
	if out := a.Inject(stop, "x"); string(out.Stdout) != "{}\n" {
		t.Errorf("Inject on Stop must answer Allow, got %q", out.Stdout)
	}
}

func FuzzNormalize(f *testing.F) {
	adaptertest.Fuzz(f, New(), sub(f, files, "evidence/2.1.197/payloads"))
}

// TestHold: Stop is held with the {"decision":"block"} answer and reads
// stop_hook_active; no other event is held.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "Stop", sub(t, files, "evidence/2.1.332/payloads"), func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
	ev := &adapter.Event{Adapter: ID, Name: "PostToolUse", Kind: adapter.AfterTool}
	if got := New().Hold(ev, "x"); string(got.Stdout) != "{}\n" {
		t.Errorf("Hold on PostToolUse = %q, want Allow", got.Stdout)
	}
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}
