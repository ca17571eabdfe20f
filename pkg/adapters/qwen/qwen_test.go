package qwen

import (
	"embed"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
)

// testdataFS holds the 0.24.4 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/0.24.4")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), payloads(t)) }

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), payloads(f)) }

func read(t *testing.T, file string) *adapter.Event {
	t.Helper()
	b, err := fs.ReadFile(payloads(t), file)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New().Normalize(adaptertest.EventOfFile(file), b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ev
}

// TestPayloads reads what acc takes from each 0.24.4 payload: Gemini
// CLI's tool names with Claude's keys, the MCP naming, the source and
// model of the session start.
func TestPayloads(t *testing.T) {
	if ev := read(t, "SessionStart.json"); ev.Kind != adapter.SessionStart || ev.Source != "startup" || ev.Model != "fake-model" {
		t.Errorf("SessionStart: %+v", ev)
	}
	if ev := read(t, "UserPromptSubmit.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != "redacted: the user's prompt" {
		t.Errorf("UserPromptSubmit: %+v", ev)
	}
	if ev := read(t, "PreToolUse-write_file.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/held.txt"}) {
		t.Errorf("write_file: %+v", ev)
	}
	if ev := read(t, "PreToolUse-run_shell_command.json"); !ev.ShellTool || ev.Shell != "echo hello > out.txt" {
		t.Errorf("run_shell_command: %+v", ev)
	}
	if ev := read(t, "PreToolUse-mcp.json"); ev.Tool != "mcp__accx__acc_status" || ev.Write {
		t.Errorf("an MCP read: %+v", ev)
	}
	if ev := read(t, "Stop.json"); ev.Kind != adapter.TurnEnd || ev.StopHookActive {
		t.Errorf("Stop: %+v", ev)
	}
}

// TestContinuation: the UserPromptSubmit Qwen fires again after a tool
// result, with an empty prompt, starts no turn and gets no context, while
// one with a prompt (even a blank-looking one) does.
func TestContinuation(t *testing.T) {
	a := New()
	ev := read(t, "UserPromptSubmit-continuation.json")
	if ev.Kind != adapter.Other || ev.Name != "UserPromptSubmit" {
		t.Fatalf("continuation: %+v", ev)
	}
	if out := a.Inject(ev, "acc: the room"); len(out.Stdout) != 0 {
		t.Errorf("context on a continuation: %q", out.Stdout)
	}
	for _, payload := range []string{
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/w","prompt":" "}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/w"}`,
	} {
		ev, err := a.Normalize("UserPromptSubmit", []byte(payload))
		if err != nil || ev.Kind != adapter.BeforeTurn {
			t.Errorf("%s: %+v %v", payload, ev, err)
		}
	}
	if Continuation([]byte(`not json`)) || Continuation([]byte(`{"prompt":7}`)) {
		t.Error("a payload that is no continuation counted as one")
	}
}

// TestAnswers: Claude Code's shapes.
func TestAnswers(t *testing.T) {
	a := New()
	mk := func(name string, kind adapter.Kind) *adapter.Event {
		return &adapter.Event{Adapter: ID, Name: name, Kind: kind, SessionID: "s", Cwd: "/w"}
	}
	for _, name := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse"} {
		out := a.Inject(mk(name, adapter.BeforeTurn), "acc: x")
		var got map[string]map[string]string
		if err := json.Unmarshal(out.Stdout, &got); err != nil || got["hookSpecificOutput"]["additionalContext"] != "acc: x" || got["hookSpecificOutput"]["hookEventName"] != name {
			t.Errorf("%s: %q %v", name, out.Stdout, err)
		}
	}
	if out := a.Deny(mk("PreToolUse", adapter.BeforeTool), "held by bob"); !strings.Contains(string(out.Stdout), `"permissionDecision":"deny"`) || out.ExitCode != 0 {
		t.Errorf("deny %+v", out)
	}
	if out := a.Hold(mk("Stop", adapter.TurnEnd), "answer"); !strings.Contains(string(out.Stdout), `"decision":"block"`) {
		t.Errorf("hold %+v", out)
	}
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
}

// TestInstallPlan: one matcher group per event in ~/.qwen/settings.json,
// the tool events matching Qwen's write and shell tools, and the skill.
func TestInstallPlan(t *testing.T) {
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/shim", Skill: []byte("skill\n")}
	plan := client{}.InstallPlan(env)
	var events []string
	for _, art := range plan.Artifacts {
		if art.Kind == adapter.ArtifactFile {
			if art.Path != "/home/u/.qwen/skills/acc/SKILL.md" {
				t.Errorf("file %s", art.Path)
			}
			continue
		}
		if art.Path != "/home/u/.qwen/settings.json" || len(art.Pointer) != 2 || art.Pointer[0] != "hooks" {
			t.Errorf("entry %+v", art)
			continue
		}
		events = append(events, art.Pointer[1])
		var group struct {
			Matcher string
			Hooks   []map[string]any
		}
		if err := json.Unmarshal(art.Value, &group); err != nil || len(group.Hooks) != 1 || group.Hooks[0]["command"] != env.HookCommand(ID, art.Pointer[1]) {
			t.Errorf("%s: %s %v", art.Pointer[1], art.Value, err)
		}
		toolEvent := art.Pointer[1] == "PreToolUse" || art.Pointer[1] == "PostToolUse"
		if want := "^(edit|run_shell_command|write_file)$|^mcp__"; toolEvent != strings.HasPrefix(group.Matcher, want) {
			t.Errorf("%s matcher %q", art.Pointer[1], group.Matcher)
		}
	}
	if strings.Join(events, " ") != "SessionStart UserPromptSubmit PreToolUse PostToolUse Stop SessionEnd" {
		t.Errorf("events %v", events)
	}
}
