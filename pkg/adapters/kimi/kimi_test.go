package kimi

import (
	"encoding/json"
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

// payloads210 are the 2.1.0 payloads (testdata/README.md).
func payloads210(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/2.1.0")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	t.Run("0.36.1", func(t *testing.T) { adaptertest.Run(t, New(), payloads(t)) })
	t.Run("2.1.0", func(t *testing.T) { adaptertest.Run(t, New(), payloads210(t)) })
}

// TestPayloads210 reads what acc takes from each 2.1.0 payload shape: the
// prompt of UserPromptSubmit is an array of content parts, read as the
// text of its text parts; TurnStarted's is a plain string; the session
// start's source; the tool targets and command.
func TestPayloads210(t *testing.T) {
	a := New()
	read := func(file string) *adapter.Event {
		t.Helper()
		b, err := fs.ReadFile(payloads210(t), file)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := a.Normalize(adaptertest.EventOfFile(file), b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return ev
	}
	if ev := read("UserPromptSubmit.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != "redacted: the user's prompt" {
		t.Errorf("UserPromptSubmit: kind %s prompt %q", ev.Kind, ev.Prompt)
	}
	if ev := read("UserPromptSubmit-two-parts.json"); ev.Prompt != "redacted: first part\nredacted: second part" {
		t.Errorf("two text parts read as %q", ev.Prompt)
	}
	if ev := read("TurnStarted.json"); ev.Kind != adapter.Other {
		t.Errorf("TurnStarted is %s, want other", ev.Kind)
	}
	if ev := read("SessionStart-resume.json"); ev.Kind != adapter.SessionStart || ev.Source != "resume" || ev.Model != "fake" {
		t.Errorf("resumed SessionStart: %+v", ev)
	}
	if ev := read("PreToolUse-Write.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/w.txt"}) {
		t.Errorf("Write: %+v", ev)
	}
	if ev := read("PreToolUse-Bash.json"); !ev.ShellTool || ev.Shell != "echo hi > out.txt" {
		t.Errorf("Bash: %+v", ev)
	}
	if ev := read("SessionHeartbeat.json"); ev.Kind != adapter.Heartbeat {
		t.Errorf("SessionHeartbeat is %s", ev.Kind)
	}
}

// TestProcessAndEnvironment: 2.1.0's process is named kimi-code, and its
// hooks get no variable naming the session.
func TestProcessAndEnvironment(t *testing.T) {
	if got := New().ClientCommand(); got != "kimi-code" {
		t.Errorf("ClientCommand %q, want kimi-code", got)
	}
	if got := New().SessionEnvVars(); len(got) != 0 {
		t.Errorf("SessionEnvVars %q, want none", got)
	}
}

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
	// What a session start prints reaches no model request in 2.1.0.
	for _, ev := range []*adapter.Event{
		{Adapter: ID, Name: "SessionStart", Kind: adapter.SessionStart, SessionID: "s", Cwd: "/w"},
		{Adapter: ID, Name: "SessionHeartbeat", Kind: adapter.Heartbeat, SessionID: "s", Cwd: "/w"},
		{Adapter: ID, Name: "TurnStarted", Kind: adapter.Other, SessionID: "s", Cwd: "/w"},
	} {
		if out := a.Inject(ev, "ctx"); len(out.Stdout)+len(out.Stderr) != 0 || out.ExitCode != 0 {
			t.Errorf("%s: context must render as Allow, got %+v", ev.Name, out)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	adaptertest.Fuzz(f, New(), payloads(f))
}

// configEvents210 are the hook events of the stricter schema Kimi Code
// 2.1.0 checks config.toml against when it rewrites the file itself
// (kimi login, logout); its hook loader accepts four more
// (UserPromptQueued, TurnStarted, SessionHeartbeat, TaskStarted).
var configEvents210 = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionResult",
	"UserPromptSubmit", "Stop", "StopFailure", "Interrupt", "SessionStart", "SessionEnd", "SubagentStart", "SubagentStop",
	"PreCompact", "PostCompact", "Notification"}

// TestInstallPlan: acc's config.toml block subscribes SessionStart,
// UserPromptSubmit, PreToolUse (with the guard matcher), Stop and
// SessionEnd, each with only the keys the schema allows, every event one
// of the stricter schema's; neither SessionHeartbeat nor the unawaited
// PostToolUse.
func TestInstallPlan(t *testing.T) {
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/acc/bin/acc-hook-shim", Skill: []byte("---\nname: acc\n---\n"), AccVersion: "1.2.3"}
	plan := New().(adapter.Installer).InstallPlan(env)
	var block string
	for _, art := range plan.Artifacts {
		switch art.Kind {
		case adapter.ArtifactTOMLBlock:
			block = string(art.Content)
		case adapter.ArtifactJSONEntry:
			// The plugin is registered as Kimi Code itself registers one
			// installed from a directory.
			var entry map[string]any
			if err := json.Unmarshal(art.Value, &entry); err != nil || entry["source"] != "local-path" || entry["enabled"] != true ||
				entry["root"] != "/home/u/.kimi-code/plugins/managed/agents-can-communicate" {
				t.Errorf("installed.json entry %s (%v)", art.Value, err)
			}
		}
	}
	if block == "" {
		t.Fatal("no config.toml block in the plan")
	}
	var events []string
	for _, table := range strings.Split(block, "[[hooks]]\n")[1:] {
		lines := strings.Split(strings.TrimSpace(table), "\n")
		ev := strings.Trim(strings.TrimPrefix(lines[0], "event = "), `"`)
		events = append(events, ev)
		if !slices.Contains(configEvents210, ev) {
			t.Errorf("event %q is not in 2.1.0's config schema", ev)
		}
		for _, l := range lines {
			key, _, _ := strings.Cut(l, " = ")
			if !slices.Contains([]string{"event", "command", "matcher", "timeout"}, key) {
				t.Errorf("%s: key %q is not one the schema allows", ev, key)
			}
			if key == "matcher" && ev != "PreToolUse" {
				t.Errorf("%s has a matcher", ev)
			}
		}
	}
	if want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"}; !slices.Equal(events, want) {
		t.Errorf("subscribed %q, want %q", events, want)
	}
}

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
	// The client does not take context from its post-tool hook
	// (docs/hooks.md#turn-delivery): acc never injects there.
	post := &adapter.Event{Adapter: ID, Name: "PostToolUse", Kind: adapter.AfterTool}
	if got := New().Inject(post, "x"); got.ExitCode != 0 || len(got.Stdout)+len(got.Stderr) != 0 {
		t.Errorf("Inject on PostToolUse = %+v, want Allow", got)
	}
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}
