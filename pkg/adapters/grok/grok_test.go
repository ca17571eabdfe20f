package grok

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

//go:embed testdata
var testdataFS embed.FS

func documented(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/documented-1.0.13")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), documented(t)) }

func TestAdvisory(t *testing.T) {
	adaptertest.CheckEvidence(t, New(), fstest.MapFS{})
	for _, v := range []string{"1.0.13", "1.0.24", "9.9.9"} {
		if caps, ev := adapter.CapabilitiesFor(New(), v); caps != (adapter.Capabilities{}) || ev != nil {
			t.Errorf("Grok %s claims %+v", v, caps)
		}
	}
}

func TestPayloadForms(t *testing.T) {
	a := New()
	cases := []struct {
		event, payload string
		ok             bool
	}{
		{"PreToolUse", `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/w"}`, true},
		{"PreToolUse", `{"hookEventName":"PreToolUse","sessionId":"s","cwd":"/w"}`, true},
		{"PreToolUse", `{"hook_event_name":"pre_tool_use","session_id":"s","cwd":"/w"}`, true},
		{"PreToolUse", `{"hookEventName":"post_tool_use","sessionId":"s","cwd":"/w"}`, false},
		{"pre_tool_use", `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/w"}`, false},
		{"SessionStart", `{"hookEventName":"session_start","workspaceRoot":"/w","sessionId":"s"}`, false},
	}
	for _, c := range cases {
		_, err := a.Normalize(c.event, []byte(c.payload))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: err %v", c.event, c.payload, err)
		}
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
		{"write", `{"file_path":"/w/notes.txt","content":"x"}`, true, []string{"/w/notes.txt"}, ""},
		{"search_replace", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, true, []string{"a.go"}, ""},
		{"run_terminal_command", `{"command":"printf '// x' >> /w/notes.txt"}`, false, nil, "printf '// x' >> /w/notes.txt"},
		{"read_file", `{"file_path":"a.go"}`, false, nil, ""},
	}
	for _, c := range cases {
		p := `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/w","toolName":"` + c.tool + `","toolInput":` + c.input + `}`
		ev, err := a.Normalize("PreToolUse", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s: write=%v targets=%q shell=%q", c.tool, ev.Write, ev.Targets, ev.Shell)
		}
	}
	// The documented shell vector (reference/adapters.md §9.5).
	if got, err := adapter.ShellWriteTargets("printf '// x' >> /tmp/example-workspace/notes.txt"); err != nil || !slices.Equal(got, []string{"/tmp/example-workspace/notes.txt"}) {
		t.Errorf("documented vector: %q %v", got, err)
	}
}

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), documented(f)) }

// TestHold: Stop is held with the {"decision":"block"} answer and reads
// stopHookActive.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "Stop", documented(t), func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
	// The Stop Grok fires as its session closes is never held.
	closing := &adapter.Event{Adapter: ID, Name: "Stop", Kind: adapter.TurnEnd, EndReason: "shutdown"}
	if got := New().Hold(closing, "x"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
		t.Errorf("Hold on a closing Stop = %+v, want Allow", got)
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
