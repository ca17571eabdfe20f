package copilot

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

// testdataFS holds the 1.0.102 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/1.0.102")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), payloads(t)) }

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), payloads(f)) }

// TestPayloads reads what acc takes from each 1.0.102 payload: the file of
// Write and Edit in path, Bash's command, the session start's source, the
// held Stop's stop_hook_active, the end's reason.
func TestPayloads(t *testing.T) {
	a := New()
	read := func(file string) *adapter.Event {
		t.Helper()
		b, err := fs.ReadFile(payloads(t), file)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := a.Normalize(adaptertest.EventOfFile(file), b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return ev
	}
	if ev := read("SessionStart.json"); ev.Kind != adapter.SessionStart || ev.Source != "new" || ev.Cwd != "/workspace/project" {
		t.Errorf("SessionStart: %+v", ev)
	}
	if ev := read("UserPromptSubmit.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != "redacted: the user's prompt" {
		t.Errorf("UserPromptSubmit: kind %s prompt %q", ev.Kind, ev.Prompt)
	}
	if ev := read("PreToolUse-Write.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/held.txt"}) {
		t.Errorf("Write: %+v", ev)
	}
	if ev := read("PreToolUse-Edit.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/e.txt"}) {
		t.Errorf("Edit: %+v", ev)
	}
	if ev := read("PreToolUse-Bash.json"); !ev.ShellTool || ev.Shell != "echo hello > out.txt" || ev.Write {
		t.Errorf("Bash: %+v", ev)
	}
	if ev := read("Stop.json"); ev.Kind != adapter.TurnEnd || ev.StopHookActive {
		t.Errorf("Stop: %+v", ev)
	}
	if ev := read("Stop-held.json"); !ev.StopHookActive {
		t.Errorf("the Stop after a hold: %+v", ev)
	}
	if ev := read("SessionEnd.json"); ev.Kind != adapter.SessionEnd || ev.EndReason != "complete" {
		t.Errorf("SessionEnd: %+v", ev)
	}
}

// TestAnswers: context is a top-level additionalContext on the three
// events whose context reached the model, and nothing elsewhere; a denial
// and a hold take Claude Code's shapes.
func TestAnswers(t *testing.T) {
	a := New()
	ev := func(name string, kind adapter.Kind) *adapter.Event {
		return &adapter.Event{Adapter: ID, Name: name, Kind: kind, SessionID: "s", Cwd: "/w"}
	}
	for _, name := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse"} {
		out := a.Inject(ev(name, adapter.Other), "acc: a \"peer\" <asks>\nline two")
		var got map[string]any
		if err := json.Unmarshal(out.Stdout, &got); err != nil || out.ExitCode != 0 {
			t.Fatalf("%s: %q exit %d: %v", name, out.Stdout, out.ExitCode, err)
		}
		if len(got) != 1 || got["additionalContext"] != "acc: a \"peer\" <asks>\nline two" {
			t.Errorf("%s: %v", name, got)
		}
	}
	if out := a.Inject(ev("Stop", adapter.TurnEnd), "x"); len(out.Stdout) != 0 {
		t.Errorf("context on Stop: %q", out.Stdout)
	}
	deny := a.Deny(ev("PreToolUse", adapter.BeforeTool), "held by bob")
	var d map[string]map[string]any
	if err := json.Unmarshal(deny.Stdout, &d); err != nil || d["hookSpecificOutput"]["permissionDecisionReason"] != "held by bob" || deny.ExitCode != 0 || !strings.Contains(string(deny.Stdout), `"permissionDecision":"deny"`) ||
		!strings.Contains(string(deny.Stdout), "held by bob") {
		t.Errorf("deny %q exit %d: %v", deny.Stdout, deny.ExitCode, err)
	}
	if out := a.Deny(ev("PostToolUse", adapter.AfterTool), "x"); len(out.Stdout) != 0 {
		t.Errorf("a denial after the tool: %q", out.Stdout)
	}
	hold := a.Hold(ev("Stop", adapter.TurnEnd), "answer m_1")
	if !strings.Contains(string(hold.Stdout), `"decision":"block"`) || !strings.Contains(string(hold.Stdout), "answer m_1") {
		t.Errorf("hold %q", hold.Stdout)
	}
	if out := a.Hold(ev("SessionEnd", adapter.SessionEnd), "x"); len(out.Stdout) != 0 {
		t.Errorf("a hold of SessionEnd: %q", out.Stdout)
	}
	if out := a.Allow(nil); len(out.Stdout) != 0 || out.ExitCode != 0 {
		t.Errorf("allow %+v", out)
	}
}

// TestMCPNames: an MCP tool is <server>-<tool>, as 1.0.102 named acc-mcp's
// acc_status (accx-acc_status) in its PreToolUse payload.
func TestMCPNames(t *testing.T) {
	payload := `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"files-write_file","tool_input":{"path":"a.go","content":"x"}}`
	ev, err := New().Normalize("PreToolUse", []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Write || !slices.Equal(ev.Targets, []string{"a.go"}) {
		t.Errorf("an MCP write_file: %+v", ev)
	}
	payload = `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"accx-acc_status","tool_input":{}}`
	if ev, err := New().Normalize("PreToolUse", []byte(payload)); err != nil || ev.Write {
		t.Errorf("acc_status: %+v %v", ev, err)
	}
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
}

// TestInstallPlan: acc's own hook file under COPILOT_HOME (else
// ~/.copilot), Claude's event names, every command the shim's, and the
// skill.
func TestInstallPlan(t *testing.T) {
	c := client{}
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/acc-hook-shim", Skill: []byte("skill\n"), AccVersion: "v1"}
	plan := c.InstallPlan(env)
	if len(plan.Artifacts) != 2 || plan.Artifacts[0].Path != "/home/u/.copilot/hooks/acc.json" || plan.Artifacts[1].Path != "/home/u/.copilot/skills/acc/SKILL.md" {
		t.Fatalf("artifacts %+v", plan.Artifacts)
	}
	var file struct {
		Version int
		Hooks   map[string][]map[string]any
	}
	if err := json.Unmarshal(plan.Artifacts[0].Content, &file); err != nil {
		t.Fatal(err)
	}
	var events []string
	for ev, entries := range file.Hooks {
		events = append(events, ev)
		if len(entries) != 1 || entries[0]["type"] != "command" || entries[0]["bash"] != env.HookCommand(ID, ev) || entries[0]["timeoutSec"] == nil {
			t.Errorf("%s: %v", ev, entries)
		}
		if !slices.Contains(c.Events(), ev) {
			t.Errorf("installs %s, which the adapter does not read", ev)
		}
	}
	slices.Sort(events)
	if file.Version != 1 || strings.Join(events, " ") != "PostToolUse PreToolUse SessionEnd SessionStart Stop UserPromptSubmit" {
		t.Errorf("version %d events %v", file.Version, events)
	}
	env.Getenv = func(k string) string {
		if k == "COPILOT_HOME" {
			return "/elsewhere/copilot"
		}
		return ""
	}
	if got := c.InstallPlan(env).Artifacts[0].Path; got != "/elsewhere/copilot/hooks/acc.json" {
		t.Errorf("with COPILOT_HOME: %s", got)
	}
}
