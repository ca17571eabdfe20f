package grok

import (
	"embed"
	"encoding/json"
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

// derived holds payloads written from Grok's source types at the commit
// docs/adapters.md cites (testdata/README.md): derived, not captured.
func derived(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/source-19d42e3")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), derived(t)) }

func TestAdvisory(t *testing.T) {
	adaptertest.CheckEvidence(t, New(), fstest.MapFS{})
	for _, v := range []string{"1.0.13", "1.0.24", "9.9.9"} {
		if caps, ev := adapter.CapabilitiesFor(New(), v); caps != (adapter.Capabilities{}) || ev != nil {
			t.Errorf("Grok %s claims %+v", v, caps)
		}
	}
}

// TestPayloadForms: Grok's envelope is camelCase with a snake_case
// hookEventName (HookEventEnvelope, event.rs); Claude Code's snake_case
// keys are not what Grok sends and are refused.
func TestPayloadForms(t *testing.T) {
	a := New()
	cases := []struct {
		event, payload string
		ok             bool
	}{
		{"PreToolUse", `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/w"}`, true},
		{"SubagentStop", `{"hookEventName":"subagent_stop","sessionId":"s","cwd":"/w","phase":"gate","subagentId":"a","subagentType":"explore"}`, true},
		{"PreToolUse", `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w"}`, false},
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

// TestFields: what acc reads from each derived payload.
func TestFields(t *testing.T) {
	a := New()
	read := func(event, file string) *adapter.Event {
		t.Helper()
		b, err := fs.ReadFile(derived(t), file)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := a.Normalize(event, b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return ev
	}
	if ev := read("SessionStart", "SessionStart.json"); ev.Source != "startup" || ev.Model != "grok-code-fast-1" || ev.SessionID != "0198c2a4-7f3e-7c10-9d52-4b1e6a0f2c11" || ev.Cwd != "/tmp/example-workspace" {
		t.Errorf("SessionStart: %+v", ev)
	}
	if ev := read("Stop", "Stop.json"); ev.Kind != adapter.TurnEnd || ev.EndReason != "end_turn" || ev.StopHookActive {
		t.Errorf("Stop: %+v", ev)
	}
	if ev := read("SessionEnd", "SessionEnd.json"); ev.Kind != adapter.SessionEnd || ev.EndReason != "shutdown" {
		t.Errorf("SessionEnd: %+v", ev)
	}
	if ev := read("PostToolUse", "PostToolUse.json"); ev.Kind != adapter.AfterTool || ev.Tool != "run_terminal_command" {
		t.Errorf("PostToolUse: %+v", ev)
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
		{"search_replace", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, true, []string{"a.go"}, ""},
		{"hashline_edit", `{"file_path":"/w/a.go","edits":[{"op":"write","content":"x"}]}`, true, []string{"/w/a.go"}, ""},
		{"write", `{"file_path":"/w/notes.txt","content":"x"}`, true, []string{"/w/notes.txt"}, ""},
		{"run_terminal_command", `{"command":"printf '// x' >> /w/notes.txt","description":"d"}`, false, nil, "printf '// x' >> /w/notes.txt"},
		{"read_file", `{"file_path":"a.go"}`, false, nil, ""},
		// Claude Code's names are not Grok's tools.
		{"Write", `{"file_path":"a.go"}`, false, nil, ""},
		{"Bash", `{"command":"echo x > a.go"}`, false, nil, ""},
		// MCP tools are <server>__<tool>.
		{"filesystem__write_file", `{"path":"src/a.go"}`, true, []string{"src/a.go"}, ""},
		// A server may be called anything, "mcp__filesystem" too.
		{"mcp__filesystem__write_file", `{"path":"src/a.go"}`, true, []string{"src/a.go"}, ""},
	}
	for _, c := range cases {
		p := `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/w","toolName":"` + c.tool + `","toolUseId":"t","toolInput":` + c.input + `,"toolInputTruncated":false}`
		ev, err := a.Normalize("PreToolUse", []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell {
			t.Errorf("%s: write=%v targets=%q shell=%q", c.tool, ev.Write, ev.Targets, ev.Shell)
		}
	}
}

// TestAnswers: the shapes Grok's runner reads (runner/mod.rs,
// runner/command.rs): a deny decision on PreToolUse; additionalContext
// only on a stop gate; nothing anywhere else.
func TestAnswers(t *testing.T) {
	a := New()
	ev := func(name string, kind adapter.Kind, reason string) *adapter.Event {
		return &adapter.Event{Adapter: ID, Name: name, Kind: kind, EndReason: reason}
	}
	if got := a.Deny(ev("PreToolUse", adapter.BeforeTool, ""), "held by s_1"); string(got.Stdout) != `{"decision":"deny","reason":"held by s_1"}`+"\n" || got.ExitCode != 0 {
		t.Errorf("Deny = %q exit %d", got.Stdout, got.ExitCode)
	}
	for _, e := range []*adapter.Event{ev("SessionStart", adapter.SessionStart, ""), ev("UserPromptSubmit", adapter.BeforeTurn, ""),
		ev("PreToolUse", adapter.BeforeTool, ""), ev("PostToolUse", adapter.AfterTool, ""), ev("Stop", adapter.TurnEnd, "shutdown")} {
		if got := a.Inject(e, "ctx"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
			t.Errorf("Inject on %s (%s) = %+v, want nothing: Grok gives that output to no model", e.Name, e.EndReason, got)
		}
	}
	want := `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"ctx"}}` + "\n"
	if got := a.Inject(ev("Stop", adapter.TurnEnd, "end_turn"), "ctx"); string(got.Stdout) != want {
		t.Errorf("Inject on Stop = %q, want %q", got.Stdout, want)
	}
	if got := a.Inject(ev("SubagentStop", adapter.Other, ""), "ctx"); !strings.Contains(string(got.Stdout), `"additionalContext":"ctx"`) {
		t.Errorf("Inject on SubagentStop = %q", got.Stdout)
	}
}

func TestInstallPlan(t *testing.T) {
	env := adapter.InstallEnv{Home: "/h", Shim: "/d/acc-hook.sh", MCPServer: "/d/acc-mcp"}
	plan := New().(adapter.Installer).InstallPlan(env)
	if plan.Artifacts[0].Path != "/h/.grok/hooks/acc.json" || HookFile(env) != plan.Artifacts[0].Path {
		t.Fatalf("hook file at %s", plan.Artifacts[0].Path)
	}
	content := plan.Artifacts[0].Content
	for _, e := range InstalledEvents() {
		if !HookFileRuns(content, e) {
			t.Errorf("the hook file does not run %s", e)
		}
	}
	if HookFileRuns(content, "PreCompact") || HookFileRuns([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x claude Stop"}]}]}}`), "Stop") || HookFileRuns([]byte("{"), "Stop") {
		t.Error("HookFileRuns sees a hook that is not acc's Grok hook")
	}
	if !strings.Contains(string(content), `"matcher": "^(hashline_edit|run_terminal_command|search_replace|write)$|^.+__(`) {
		t.Errorf("matcher: %s", content)
	}
	if got := New().(adapter.Installer).ConfigDir(adapter.InstallEnv{Home: "/h", Getenv: func(k string) string {
		if k == "GROK_HOME" {
			return "/g"
		}
		return ""
	}}); got != "/g" {
		t.Errorf("GROK_HOME ignored: %s", got)
	}
}

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), derived(f)) }

// TestHold: Stop is held with the {"decision":"block"} answer and reads
// stopHookActive.
func TestHold(t *testing.T) {
	adaptertest.HoldsOn(t, New(), "Stop", derived(t), func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
	// The Stop Grok fires as its session closes is never held.
	closing := &adapter.Event{Adapter: ID, Name: "Stop", Kind: adapter.TurnEnd, EndReason: "shutdown"}
	if got := New().Hold(closing, "x"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
		t.Errorf("Hold on a closing Stop = %+v, want Allow", got)
	}
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}

// TestInHookRunner: both runner variables are needed; GROK_SESSION_ID,
// which Grok's shell commands get too, is not enough.
func TestInHookRunner(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"GROK_HOOK_EVENT": "pre_tool_use", "GROK_HOOK_NAME": "global/settings:pre_tool_use[0].hooks[0]", "GROK_SESSION_ID": "s"}, true},
		{map[string]string{"GROK_SESSION_ID": "s", "CLAUDE_PROJECT_DIR": "/w"}, false},
		{map[string]string{"GROK_HOOK_EVENT": "pre_tool_use"}, false},
		{map[string]string{"GROK_HOOK_EVENT": "", "GROK_HOOK_NAME": "x"}, false},
		{nil, false},
	}
	for _, c := range cases {
		if got := InHookRunner(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
	if InHookRunner(nil) {
		t.Error("nil getenv")
	}
}

// TestHookFileRunsStaleMatcher: a hook file whose tool matcher is not the
// one this acc installs (an older acc's exact list without hashline_edit)
// does not count for the tool events; its other events still do.
func TestHookFileRunsStaleMatcher(t *testing.T) {
	env := adapter.InstallEnv{Home: "/h", Shim: "/d/acc-hook.sh", MCPServer: "/d/acc-mcp"}
	content := New().(adapter.Installer).InstallPlan(env).Artifacts[0].Content
	var doc map[string]map[string][]map[string]any
	if err := json.Unmarshal(content, &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		doc["hooks"][ev][0]["matcher"] = "run_terminal_command|search_replace|write"
	}
	stale, _ := json.Marshal(doc)
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		if HookFileRuns(stale, ev) {
			t.Errorf("%s with an older matcher counts as run", ev)
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		if !HookFileRuns(stale, ev) {
			t.Errorf("%s no longer counts as run", ev)
		}
	}
}

// TestFromHookRunner: Grok's variables and a payload whose hookEventName is
// GROK_HOOK_EVENT; Claude Code's payload under inherited variables, another
// event's envelope, and what is no JSON object are not Grok's.
func TestFromHookRunner(t *testing.T) {
	env := map[string]string{"GROK_HOOK_EVENT": "pre_tool_use", "GROK_HOOK_NAME": "global/settings:pre_tool_use[0].hooks[0]"}
	getenv := func(k string) string { return env[k] }
	grokPayload := `{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/r","toolName":"write"}`
	cases := []struct {
		payload string
		want    bool
	}{
		{grokPayload, true},
		// Cut short after the field: still Grok's.
		{`{"hookEventName":"pre_tool_use","sessionId":"s","toolInput":{"content":"xxxx`, true},
		// A key before it with a nested value is skipped.
		{`{"x":{"hookEventName":"no"},"hookEventName":"pre_tool_use"}`, true},
		{`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write"}`, false},
		{`{"hookEventName":"stop","sessionId":"s"}`, false},
		{`{"hookEventName":7}`, false},
		{`["hookEventName","pre_tool_use"]`, false},
		{``, false},
		{`not json`, false},
	}
	for _, c := range cases {
		if got := FromHookRunner(getenv, []byte(c.payload)); got != c.want {
			t.Errorf("%s: %v, want %v", c.payload, got, c.want)
		}
	}
	if FromHookRunner(func(string) string { return "" }, []byte(grokPayload)) || FromHookRunner(nil, []byte(grokPayload)) {
		t.Error("Grok's payload without Grok's hook variables counts as Grok's")
	}
}
