package pi

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// testdataFS holds the 0.73.1 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/0.73.1")
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

// TestPayloads reads what acc takes from each payload the extension sent
// Pi 0.73.1: the kinds, the session start's source, the prompt, the file
// of write and edit in path (relative or absolute), bash's command, the
// shutdown's reason.
func TestPayloads(t *testing.T) {
	const sid, cwd = "01a23f86-3d9f-7652-8941-e2a84b837479", "/tmp/example-workspace"
	if ev := read(t, "session_start.json"); ev.Kind != adapter.SessionStart || ev.Source != "startup" || ev.SessionID != sid || ev.Cwd != cwd {
		t.Errorf("session_start: %+v", ev)
	}
	if ev := read(t, "session_start-continued.json"); ev.Kind != adapter.SessionStart || ev.Source != "startup" {
		t.Errorf("session_start of pi -c: %+v", ev)
	}
	if ev := read(t, "before_agent_start.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != "redacted: the user's prompt" {
		t.Errorf("before_agent_start: kind %s prompt %q", ev.Kind, ev.Prompt)
	}
	for file, target := range map[string]string{
		"tool_call-write.json":          "held.txt",
		"tool_call-write-absolute.json": "/tmp/example-workspace/abs.txt",
		"tool_call-edit.json":           "ok.txt",
	} {
		if ev := read(t, file); ev.Kind != adapter.BeforeTool || !ev.Write || !slices.Equal(ev.Targets, []string{target}) || ev.ShellTool {
			t.Errorf("%s: %+v", file, ev)
		}
	}
	if ev := read(t, "tool_call-bash.json"); ev.Kind != adapter.BeforeTool || !ev.ShellTool || ev.Shell != "echo hi > shell.txt" || ev.Write || ev.ShellUnreadable {
		t.Errorf("bash: %+v", ev)
	}
	if ev := read(t, "tool_result-edit.json"); ev.Kind != adapter.AfterTool || ev.Tool != "edit" || !slices.Equal(ev.Targets, []string{"ok.txt"}) {
		t.Errorf("tool_result of edit: %+v", ev)
	}
	if ev := read(t, "tool_result-bash.json"); ev.Kind != adapter.AfterTool || ev.Shell != "echo hi > shell.txt" {
		t.Errorf("tool_result of bash: %+v", ev)
	}
	if ev := read(t, "agent_end.json"); ev.Kind != adapter.TurnEnd || ev.StopHookActive || ev.EndReason != "" {
		t.Errorf("agent_end: %+v", ev)
	}
	if ev := read(t, "session_shutdown.json"); ev.Kind != adapter.SessionEnd || ev.EndReason != "quit" {
		t.Errorf("session_shutdown: %+v", ev)
	}
	// Pi's other tools write nothing; an unknown event is refused.
	payload := `{"hook_event_name":"tool_call","session_id":"s","cwd":"/w","tool_name":"read","tool_input":{"path":"a.go"}}`
	if ev, err := New().Normalize("tool_call", []byte(payload)); err != nil || ev.Write || ev.ShellTool || len(ev.Targets) != 0 {
		t.Errorf("read: %+v %v", ev, err)
	}
	if _, err := New().Normalize("input", []byte(`{"hook_event_name":"input","session_id":"s","cwd":"/w"}`)); err == nil {
		t.Error("an event the extension never sends was accepted")
	}
}

// kindOf is the kind the adapter gives its event name.
func kindOf(name string) adapter.Kind {
	for _, e := range spec.Events {
		if e.Name == name {
			return e.Kind
		}
	}
	return ""
}

func event(name string, kind adapter.Kind) *adapter.Event {
	return &adapter.Event{Adapter: ID, Name: name, Kind: kind, SessionID: "s", Cwd: "/w"}
}

// TestAnswers: context is {"context":T} where the extension passes it on
// (before_agent_start, tool_result) and nothing elsewhere; a denial is
// {"deny":R} on tool_call only; nothing holds agent_end.
func TestAnswers(t *testing.T) {
	a := New()
	const text = "acc: a \"peer\" <asks> & café\nline two\u2028"
	for _, name := range []string{"before_agent_start", "tool_result"} {
		out := a.Inject(event(name, kindOf(name)), text)
		var got map[string]any
		if err := json.Unmarshal(out.Stdout, &got); err != nil || out.ExitCode != 0 || len(out.Stderr) != 0 {
			t.Fatalf("%s: %q exit %d: %v", name, out.Stdout, out.ExitCode, err)
		}
		if len(got) != 1 || got["context"] != text || !bytes.HasSuffix(out.Stdout, []byte("}\n")) || bytes.Count(out.Stdout, []byte("\n")) != 1 {
			t.Errorf("%s: %q", name, out.Stdout)
		}
	}
	for _, e := range []struct {
		name string
		kind adapter.Kind
	}{{"session_start", adapter.SessionStart}, {"tool_call", adapter.BeforeTool}, {"agent_end", adapter.TurnEnd}, {"session_shutdown", adapter.SessionEnd}} {
		if out := a.Inject(event(e.name, e.kind), text); len(out.Stdout) != 0 || out.ExitCode != 0 {
			t.Errorf("context on %s: %+v", e.name, out)
		}
	}
	if out := a.Inject(nil, text); len(out.Stdout) != 0 {
		t.Errorf("context without an event: %q", out.Stdout)
	}
	if out := a.Inject(event("tool_result", adapter.AfterTool), ""); len(out.Stdout) != 0 {
		t.Errorf("empty context: %q", out.Stdout)
	}

	deny := a.Deny(event("tool_call", adapter.BeforeTool), "held by bob \"x\"")
	if string(deny.Stdout) != `{"deny":"held by bob \"x\""}`+"\n" || deny.ExitCode != 0 || len(deny.Stderr) != 0 {
		t.Errorf("deny %+v (%q)", deny, deny.Stdout)
	}
	var d map[string]string
	if err := json.Unmarshal(a.Deny(event("tool_call", adapter.BeforeTool), "  ").Stdout, &d); err != nil || d["deny"] != hookio.DefaultReason {
		t.Errorf("a blank reason: %v %v", d, err)
	}
	if out := a.Deny(event("tool_result", adapter.AfterTool), "x"); len(out.Stdout) != 0 {
		t.Errorf("a denial after the tool: %q", out.Stdout)
	}
	if out := a.Hold(event("agent_end", adapter.TurnEnd), "answer m_1"); len(out.Stdout) != 0 || len(out.Stderr) != 0 || out.ExitCode != 0 {
		t.Errorf("hold of agent_end: %+v", out)
	}
	if out := a.Allow(event("tool_call", adapter.BeforeTool)); len(out.Stdout) != 0 || len(out.Stderr) != 0 || out.ExitCode != 0 {
		t.Errorf("allow %+v", out)
	}
}

// TestExtensionMatchesAdapter: the extension registers exactly the events
// the adapter reads, runs the shim with this adapter's id, and reads
// context on exactly the events where Inject prints it and a denial where
// Deny does, under the keys they print.
func TestExtensionMatchesAdapter(t *testing.T) {
	src := string(extensionSource)
	var registered []string
	for _, m := range regexp.MustCompile(`pi\.on\("(\w+)"`).FindAllStringSubmatch(src, -1) {
		registered = append(registered, m[1])
	}
	if !slices.Equal(registered, New().Events()) {
		t.Errorf("the extension registers %v, the adapter reads %v", registered, New().Events())
	}
	if !strings.Contains(src, `spawnSync("sh", [SHIM, "`+ID+`", event]`) {
		t.Error("the extension does not run sh <shim> " + ID + " <event>")
	}
	reads := map[string]string{} // event -> answer key the extension acts on
	for _, m := range regexp.MustCompile(`text\(hook\("(\w+)",[^\n]*, "(\w+)"\)`).FindAllStringSubmatch(src, -1) {
		reads[m[1]] = m[2]
	}
	if len(reads) == 0 {
		t.Fatal("found no answer the extension reads")
	}
	a := New()
	for _, e := range spec.Events {
		ev := event(e.Name, e.Kind)
		inject, deny := a.Inject(ev, "T"), a.Deny(ev, "R")
		switch key := reads[e.Name]; {
		case key == "context":
			if string(inject.Stdout) != `{"context":"T"}`+"\n" || len(deny.Stdout) != 0 {
				t.Errorf("%s: the extension reads context; Inject %q Deny %q", e.Name, inject.Stdout, deny.Stdout)
			}
		case key == "deny":
			if string(deny.Stdout) != `{"deny":"R"}`+"\n" || len(inject.Stdout) != 0 {
				t.Errorf("%s: the extension reads a denial; Inject %q Deny %q", e.Name, inject.Stdout, deny.Stdout)
			}
		case key != "":
			t.Errorf("%s: the extension reads %q", e.Name, key)
		default:
			if len(inject.Stdout) != 0 || len(deny.Stdout) != 0 {
				t.Errorf("%s: the extension reads no answer, yet Inject %q Deny %q", e.Name, inject.Stdout, deny.Stdout)
			}
		}
	}
}

// TestExtensionShim: the shim's path is written as one JSON string
// literal, whatever it holds, and the rest of the file is the source as it
// is.
func TestExtensionShim(t *testing.T) {
	if n := bytes.Count(extensionSource, []byte(shimPlaceholder)); n != 1 {
		t.Fatalf("the source holds the placeholder %d times", n)
	}
	before, after, _ := bytes.Cut(extensionSource, []byte(shimPlaceholder))
	for _, shim := range []string{
		"/home/u/.local/share/acc/bin/acc-hook-shim",
		`/home/o'brien/"acc"/bin/shim`,
		`/data/back\slash\"; process.exit(1); "/shim`,
		"/data/new\nline/</script>/${HOME}/`tick`/\u2028\u2029/shim",
	} {
		got := Extension(shim)
		if !bytes.HasPrefix(got, before) || !bytes.HasSuffix(got, after) {
			t.Errorf("%q: the file around the path changed", shim)
			continue
		}
		lit := got[len(before) : len(got)-len(after)]
		if bytes.ContainsAny(lit, "\n\r\u2028\u2029") {
			t.Errorf("%q: the literal %s spans lines", shim, lit)
		}
		var back string
		if err := json.Unmarshal(lit, &back); err != nil || back != shim {
			t.Errorf("%q: literal %s reads back as %q (%v)", shim, lit, back, err)
		}
		if !strings.Contains(string(got), "const SHIM: string = "+string(lit)+";\n") {
			t.Errorf("%q: the literal is not SHIM's whole value", shim)
		}
	}
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatalf("embedded evidence does not load: %v", err)
	}
	adaptertest.CheckEvidence(t, New(), files)
}

// TestInstallPlan: the extension and the skill in Pi's agent directory,
// ~/.pi/agent or PI_CODING_AGENT_DIR (absolute, or from ~ as Pi reads it;
// a relative one ignored).
func TestInstallPlan(t *testing.T) {
	var c adapter.Installer = client{}
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/acc/bin/acc-hook-shim", Skill: []byte("skill\n"), AccVersion: "v1"}
	plan := c.InstallPlan(env)
	if len(plan.Artifacts) != 2 || len(plan.Notes) == 0 {
		t.Fatalf("plan %+v", plan)
	}
	ext, skill := plan.Artifacts[0], plan.Artifacts[1]
	if ext.Kind != adapter.ArtifactFile || ext.Path != "/home/u/.pi/agent/extensions/acc.ts" || ext.Executable || !bytes.Equal(ext.Content, Extension(env.Shim)) {
		t.Errorf("extension %+v", ext)
	}
	if !bytes.Contains(ext.Content, []byte(`const SHIM: string = "/data/acc/bin/acc-hook-shim";`)) {
		t.Errorf("the extension does not name the shim:\n%s", ext.Content)
	}
	if skill.Kind != adapter.ArtifactFile || skill.Path != "/home/u/.pi/agent/skills/acc/SKILL.md" || string(skill.Content) != "skill\n" {
		t.Errorf("skill %+v", skill)
	}
	if c.Binary() != "pi" || New().ClientCommand() != "pi" {
		t.Errorf("binary %q, client command %q", c.Binary(), New().ClientCommand())
	}
	for value, want := range map[string]string{
		"/elsewhere/pi": "/elsewhere/pi/extensions/acc.ts",
		"~/pi-agent":    "/home/u/pi-agent/extensions/acc.ts",
		"~":             "/home/u/extensions/acc.ts",
		"relative/pi":   "/home/u/.pi/agent/extensions/acc.ts",
		"":              "/home/u/.pi/agent/extensions/acc.ts",
	} {
		env.Getenv = func(k string) string {
			if k == AgentDirEnv {
				return value
			}
			return ""
		}
		if got := c.InstallPlan(env).Artifacts[0].Path; got != want {
			t.Errorf("%s=%q: %s, want %s", AgentDirEnv, value, got, want)
		}
	}
}
