package droid

import (
	"embed"
	"encoding/json"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// testdataFS holds the 0.225.2 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/0.225.2")
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

// TestPayloads reads what acc takes from each 0.225.2 payload: the file of
// Create and Edit, Execute's command, the MCP naming, the session start's
// source, the held Stop's flag, the end's reason.
func TestPayloads(t *testing.T) {
	if ev := read(t, "SessionStart.json"); ev.Kind != adapter.SessionStart || ev.Source != "startup" || ev.Cwd != "/workspace/project" || ev.SessionID != "ba09768e-7e46-476d-91fb-d7293380c39f" {
		t.Errorf("SessionStart: %+v", ev)
	}
	if ev := read(t, "UserPromptSubmit.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != "redacted: the user's prompt" {
		t.Errorf("UserPromptSubmit: kind %s prompt %q", ev.Kind, ev.Prompt)
	}
	if ev := read(t, "PreToolUse-Create.json"); ev.Tool != "Create" || !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/held.txt"}) || ev.ShellTool {
		t.Errorf("Create: %+v", ev)
	}
	if ev := read(t, "PreToolUse-Edit.json"); ev.Tool != "Edit" || !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/out.txt"}) {
		t.Errorf("Edit: %+v", ev)
	}
	if ev := read(t, "PreToolUse-Execute.json"); !ev.ShellTool || ev.Shell != "echo hi > out.txt" || ev.Write || ev.ShellUnreadable {
		t.Errorf("Execute: %+v", ev)
	}
	if ev := read(t, "PostToolUse.json"); ev.Kind != adapter.AfterTool || ev.Tool != "Execute" || !ev.ShellTool {
		t.Errorf("PostToolUse: %+v", ev)
	}
	if ev := read(t, "PostToolUse-Edit.json"); ev.Kind != adapter.AfterTool || !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/out.txt"}) {
		t.Errorf("PostToolUse of Edit: %+v", ev)
	}
	if ev := read(t, "PreToolUse-mcp.json"); ev.Tool != "files___write_file" || !ev.Write || !slices.Equal(ev.Targets, []string{"held2.txt"}) {
		t.Errorf("an MCP write_file: %+v", ev)
	}
	if ev := read(t, "PreToolUse-mcpAcc.json"); ev.Tool != "acc___acc_status" || ev.Write || ev.ShellTool || len(ev.Targets) != 0 {
		t.Errorf("acc_status: %+v", ev)
	}
	if ev := read(t, "Stop.json"); ev.Kind != adapter.TurnEnd || ev.StopHookActive {
		t.Errorf("Stop: %+v", ev)
	}
	if ev := read(t, "Stop-held.json"); ev.Kind != adapter.TurnEnd || !ev.StopHookActive {
		t.Errorf("the Stop after a hold: %+v", ev)
	}
	if ev := read(t, "SessionEnd.json"); ev.Kind != adapter.SessionEnd || ev.EndReason != "other" {
		t.Errorf("SessionEnd: %+v", ev)
	}
}

// TestTools: Droid's own tool names and input keys decide what is a write
// and what is a shell command; Claude Code's names and its mcp__ form are
// not Droid's.
func TestTools(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: src/new.go\n+package src\n*** Update File: src/old.go\n@@\n-a\n+b\n*** End Patch"
	cases := []struct {
		name       string
		tool       string
		input      any
		write      bool
		targets    []string
		shellTool  bool
		shell      string
		unreadable bool
	}{
		{"Create", "Create", map[string]any{"file_path": "/w/a.go", "content": "x"}, true, []string{"/w/a.go"}, false, "", false},
		{"Create, relative", "Create", map[string]any{"file_path": "a.go"}, true, []string{"a.go"}, false, "", false},
		{"Create without a path", "Create", map[string]any{"content": "x"}, true, nil, false, "", false},
		{"Edit", "Edit", map[string]any{"file_path": "b.go", "old_str": "a", "new_str": "b", "change_all": true}, true, []string{"b.go"}, false, "", false},
		{"ApplyPatch", "ApplyPatch", map[string]any{"input": patch}, true, []string{"src/new.go", "src/old.go"}, false, "", false},
		{"Execute", "Execute", map[string]any{"command": "rm -f x", "summary": "Remove a file", "riskLevel": "low", "riskLevelReason": "r"}, false, nil, true, "rm -f x", false},
		{"Execute, command not a string", "Execute", map[string]any{"command": 7}, false, nil, true, "", true},
		{"Execute, input not an object", "Execute", "rm -f x", false, nil, true, "", true},
		{"Read", "Read", map[string]any{"file_path": "a.go"}, false, nil, false, "", false},
		{"LS", "LS", map[string]any{"directory_path": "/w"}, false, nil, false, "", false},
		{"Grep", "Grep", map[string]any{"pattern": "x", "path": "a.go"}, false, nil, false, "", false},
		{"Skill", "Skill", map[string]any{"skill": "acc"}, false, nil, false, "", false},
		{"Claude's Write", "Write", map[string]any{"file_path": "a.go"}, false, nil, false, "", false},
		{"Claude's Bash", "Bash", map[string]any{"command": "rm x"}, false, nil, false, "", false},
		{"the mcp__ form", "mcp__files__write_file", map[string]any{"path": "a.go"}, false, nil, false, "", false},
		{"an MCP shell tool", "dc___start_process", map[string]any{"command": "rm x"}, false, nil, true, "rm x", false},
	}
	for _, c := range cases {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": c.tool, "tool_input": c.input})
		ev, err := New().Normalize("PreToolUse", b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ev.Tool != c.tool || ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.ShellTool != c.shellTool || ev.Shell != c.shell || ev.ShellUnreadable != c.unreadable {
			t.Errorf("%s: write=%v targets=%q shellTool=%v shell=%q unreadable=%v", c.name, ev.Write, ev.Targets, ev.ShellTool, ev.Shell, ev.ShellUnreadable)
		}
	}
}

// TestAnswers: the exact lines 0.225.2 acted on — Claude Code's context,
// denial and stop hold — and nothing at all for Allow.
func TestAnswers(t *testing.T) {
	a := New()
	mk := func(name string, kind adapter.Kind) *adapter.Event {
		return &adapter.Event{Adapter: ID, Name: name, Kind: kind, SessionID: "s", Cwd: "/w"}
	}
	for _, name := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse"} {
		want := `{"hookSpecificOutput":{"hookEventName":"` + name + `","additionalContext":"<peer> & \"more\"\nline"}}` + "\n"
		if out := a.Inject(mk(name, adaptertest.ExpectedKind(name)), "<peer> & \"more\"\nline"); string(out.Stdout) != want || out.ExitCode != 0 || len(out.Stderr) != 0 {
			t.Errorf("Inject on %s: %q exit %d", name, out.Stdout, out.ExitCode)
		}
	}
	for _, name := range []string{"PreToolUse", "Stop", "SessionEnd", "Notification", "SubagentStop", "PreCompact"} {
		if out := a.Inject(mk(name, adaptertest.ExpectedKind(name)), "x"); !reflect.DeepEqual(out, adapter.Output{}) {
			t.Errorf("Inject on %s: %q", name, out.Stdout)
		}
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"held by bob"}}` + "\n"
	if out := a.Deny(mk("PreToolUse", adapter.BeforeTool), "held by bob"); string(out.Stdout) != want || out.ExitCode != 0 {
		t.Errorf("Deny: %q exit %d", out.Stdout, out.ExitCode)
	}
	if out := a.Deny(mk("PostToolUse", adapter.AfterTool), "x"); len(out.Stdout) != 0 {
		t.Errorf("a denial after the tool: %q", out.Stdout)
	}
	if out := a.Hold(mk("SubagentStop", adapter.Other), "x"); len(out.Stdout) != 0 {
		t.Errorf("a hold of SubagentStop: %q", out.Stdout)
	}
	for _, ev := range []*adapter.Event{nil, mk("SessionStart", adapter.SessionStart)} {
		if out := a.Allow(ev); len(out.Stdout) != 0 || len(out.Stderr) != 0 || out.ExitCode != 0 {
			t.Errorf("Allow: %+v", out)
		}
	}
	if out := a.Inject(nil, "x"); len(out.Stdout) != 0 {
		t.Errorf("Inject without an event: %q", out.Stdout)
	}
	// HoldsOn reads the first Stop fixture; give it the turn's first Stop,
	// not the one after a hold.
	first, err := fs.ReadFile(payloads(t), "Stop.json")
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.HoldsOn(t, a, "Stop", fstest.MapFS{"Stop.json": {Data: first}}, func(r string) adapter.Output {
		return adapter.Output{Stdout: []byte(`{"decision":"block","reason":` + quote(r) + "}\n")}
	})
}

// quote is r as one JSON string, without HTML escaping (hookio.JSONLine).
func quote(r string) string {
	return strings.TrimSuffix(string(hookio.JSONLine(r)), "\n")
}

// TestIdentity: the names acc finds Droid by.
func TestIdentity(t *testing.T) {
	c := client{}
	if c.ID() != "droid" || c.DisplayName() != "Factory Droid" || c.Binary() != "droid" || c.ClientCommand() != "droid" || c.SessionEnvVars() != nil {
		t.Errorf("identity %q %q %q %q %v", c.ID(), c.DisplayName(), c.Binary(), c.ClientCommand(), c.SessionEnvVars())
	}
	want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SubagentStop", "PreCompact", "SessionEnd"}
	if !slices.Equal(c.Events(), want) {
		t.Errorf("events %v", c.Events())
	}
}

// TestEvidence: the embedded records load and agree with Evidence() (none
// are recorded yet: the module claims nothing).
func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
}

// TestInstallPlan: one matcher group per event in settings.json under
// FACTORY_HOME_OVERRIDE/.factory (else ~/.factory), the tool events
// matching Droid's write and shell tools and the <server>___<tool> MCP
// ones, every command the shim's, and the skill.
func TestInstallPlan(t *testing.T) {
	c := client{}
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/acc-hook-shim", Skill: []byte("skill\n")}
	plan := c.InstallPlan(env)
	if len(plan.Notes) == 0 || !strings.Contains(plan.Notes[0], "restart") {
		t.Errorf("notes %q", plan.Notes)
	}
	wantMatcher := "^(ApplyPatch|Create|Edit|Execute)$|^.+___(create_directory|edit_block|edit_file|execute_command|move_file|start_process|str_replace_based_edit_tool|str_replace_editor|write_file)$"
	var events []string
	var skills int
	for _, art := range plan.Artifacts {
		if art.Kind == adapter.ArtifactFile {
			skills++
			if art.Path != "/home/u/.factory/skills/acc/SKILL.md" || string(art.Content) != "skill\n" || art.Executable {
				t.Errorf("file %s %q", art.Path, art.Content)
			}
			continue
		}
		if art.Kind != adapter.ArtifactJSONEntry || art.Path != "/home/u/.factory/settings.json" || len(art.Pointer) != 2 || art.Pointer[0] != "hooks" {
			t.Errorf("entry %+v", art)
			continue
		}
		ev := art.Pointer[1]
		events = append(events, ev)
		if !slices.Contains(c.Events(), ev) {
			t.Errorf("installs %s, which the adapter does not read", ev)
		}
		var group struct {
			Matcher *string
			Hooks   []map[string]any
		}
		dec := json.NewDecoder(strings.NewReader(string(art.Value)))
		dec.UseNumber()
		if err := dec.Decode(&group); err != nil || len(group.Hooks) != 1 {
			t.Fatalf("%s: %s %v", ev, art.Value, err)
		}
		h := group.Hooks[0]
		if len(h) != 3 || h["type"] != "command" || h["command"] != env.HookCommand(ID, ev) || h["timeout"] != json.Number("10") {
			t.Errorf("%s handler %v", ev, h)
		}
		toolEvent := ev == "PreToolUse" || ev == "PostToolUse"
		if toolEvent != (group.Matcher != nil) || (toolEvent && *group.Matcher != wantMatcher) {
			t.Errorf("%s matcher %s", ev, art.Value)
		}
	}
	if skills != 1 || strings.Join(events, " ") != "SessionStart UserPromptSubmit PreToolUse PostToolUse Stop SessionEnd" {
		t.Errorf("skills %d events %v", skills, events)
	}

	for _, tc := range []struct{ override, want string }{
		{"/elsewhere", "/elsewhere/.factory"},
		{"/elsewhere/", "/elsewhere/.factory"},
		{"relative/dir", "/home/u/.factory"},
		{"", "/home/u/.factory"},
	} {
		env.Getenv = func(k string) string {
			if k == "FACTORY_HOME_OVERRIDE" {
				return tc.override
			}
			return "/not/this"
		}
		if got := c.ConfigDir(env); got != tc.want {
			t.Errorf("FACTORY_HOME_OVERRIDE=%q: config dir %s, want %s", tc.override, got, tc.want)
		}
		for _, art := range c.InstallPlan(env).Artifacts {
			if !strings.HasPrefix(art.Path, tc.want+"/") {
				t.Errorf("FACTORY_HOME_OVERRIDE=%q: artifact at %s", tc.override, art.Path)
			}
		}
	}
}

// TestGuardMatcher: Droid tests a matcher as an unanchored JavaScript
// regular expression over the tool name; this one (whose syntax Go's
// regexp reads alike) selects the writing and shell tools and the MCP
// write tools, and nothing that merely contains their names.
func TestGuardMatcher(t *testing.T) {
	var matcher string
	for _, art := range (client{}).InstallPlan(adapter.InstallEnv{Home: "/h", Shim: "/s"}).Artifacts {
		if slices.Equal(art.Pointer, []string{"hooks", "PreToolUse"}) {
			var g struct{ Matcher string }
			if err := json.Unmarshal(art.Value, &g); err != nil {
				t.Fatal(err)
			}
			matcher = g.Matcher
		}
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		t.Fatalf("matcher %q: %v", matcher, err)
	}
	for _, name := range []string{"Create", "Edit", "ApplyPatch", "Execute", "files___write_file", "my_fs__2___edit_file", "dc___start_process", "editor___str_replace_based_edit_tool"} {
		if !re.MatchString(name) {
			t.Errorf("matcher does not select %s", name)
		}
	}
	for _, name := range []string{"Read", "LS", "Grep", "Glob", "Task", "Skill", "ToolSearch", "TaskOutput", "CreateX", "MyEdit", "Executes",
		"acc___acc_status", "files___read_file", "files___write_file_x", "___write_file", "mcp__files__write_file", "files__write_file"} {
		if re.MatchString(name) {
			t.Errorf("matcher selects %s", name)
		}
	}
}
