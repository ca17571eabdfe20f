package gemini

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
	t.Run("captured-0.61.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, testdataFS, "testdata/captured-0.61.0/payloads")) })
	t.Run("realclient-0.61.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, files, "evidence/0.61.0/payloads")) })
	t.Run("upstream-0.57.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, testdataFS, "testdata/upstream-0.57.0")) })
	t.Run("upstream-0.37.0", func(t *testing.T) { adaptertest.Run(t, New(), sub(t, testdataFS, "testdata/upstream-0.37.0")) })
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
	caps, _ := adapter.CapabilitiesFor(New(), "0.61.0")
	// Proven by the real-client tests (internal/realclient), the file tool's
	// guard included: sessions of this version count as guarded.
	want := adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, GuardShell: true, SessionEnd: true, MidTurn: true, EndOfTurn: true}
	if caps != want || !caps.Guarded() {
		t.Errorf("0.61.0 capabilities %+v, want %+v", caps, want)
	}
	if older, _ := adapter.CapabilitiesFor(New(), "0.57.0"); older != (adapter.Capabilities{}) {
		t.Errorf("0.57.0 has no capture of ours, yet inherits %+v", older)
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
		{"write_file", `{"file_path":"/w/n.txt","content":"x"}`, true, []string{"/w/n.txt"}, ""},
		{"replace", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, true, []string{"a.go"}, ""},
		{"run_shell_command", `{"command":"sed -i s/a/b/ f","description":"d"}`, false, nil, "sed -i s/a/b/ f"},
		{"read_file", `{"file_path":"a.go"}`, false, nil, ""},
	}
	for _, c := range cases {
		p := `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"` + c.tool + `","tool_input":` + c.input + `}`
		ev, err := a.Normalize("BeforeTool", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s: write=%v targets=%q shell=%q", c.tool, ev.Write, ev.Targets, ev.Shell)
		}
	}
}

func TestAnswers(t *testing.T) {
	a := New()
	pre := &adapter.Event{Adapter: ID, Name: "BeforeTool", Kind: adapter.BeforeTool, SessionID: "s", Cwd: "/w"}
	if got := string(a.Deny(pre, "held by x").Stdout); got != `{"decision":"deny","reason":"held by x"}`+"\n" {
		t.Errorf("deny: %s", got)
	}
	turn := &adapter.Event{Adapter: ID, Name: "BeforeAgent", Kind: adapter.BeforeTurn, SessionID: "s", Cwd: "/w"}
	if got := string(a.Inject(turn, "ctx").Stdout); got != `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"ctx"}}`+"\n" {
		t.Errorf("inject: %s", got)
	}
}

func FuzzNormalize(f *testing.F) {
	adaptertest.Fuzz(f, New(), sub(f, testdataFS, "testdata/captured-0.61.0/payloads"))
}

// TestMCPContext: the server's own names in mcp_context decide, since the
// tool name Gemini CLI builds may be changed (a long one is shortened with
// "..." in the middle) or split two ways.
func TestMCPContext(t *testing.T) {
	cases := []struct {
		name, tool, context string
		write               bool
	}{
		{"shortened name", "mcp_a_very_long_server_name_for_fi...rver_name_for_files_write_fi", `{"server_name":"a_very_long_server_name_for_files","tool_name":"write_file"}`, true},
		{"context says read", "mcp_fs_write_file", `{"server_name":"fs","tool_name":"read_file"}`, false},
		{"context without a tool name", "mcp_fs_write_file", `{"server_name":"fs"}`, true},
		{"context not an object", "mcp_fs_write_file", `"fs"`, true},
		{"name that does not split", "mcp_fs", `{"server_name":"fs","tool_name":"write_file"}`, true},
		{"context on a tool that is not MCP", "write_file_x", `{"server_name":"fs","tool_name":"write_file"}`, false},
	}
	for _, c := range cases {
		p := `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"` + c.tool +
			`","tool_input":{"path":"src/a.go"},"mcp_context":` + c.context + `}`
		ev, err := New().Normalize("BeforeTool", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ev.Write != c.write || (c.write && (len(ev.Targets) != 1 || ev.Targets[0] != "src/a.go")) {
			t.Errorf("%s: write %v targets %q, want write %v", c.name, ev.Write, ev.Targets, c.write)
		}
	}
}

// TestHold: AfterAgent is held with the {"decision":"block"} answer and
// reads stop_hook_active.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "AfterAgent", sub(t, testdataFS, "testdata/captured-0.61.0/payloads"), func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}
