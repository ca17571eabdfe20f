package opencode

import (
	"embed"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
)

// testdataFS holds the 1.18.33 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/1.18.33")
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

// TestPayloads reads what acc takes from each payload the plugin sends:
// the file of write and edit in filePath, bash's command, the start's
// source, the end's reason, the prompt with the quotes opencode run adds.
func TestPayloads(t *testing.T) {
	if ev := read(t, "session.created.json"); ev.Kind != adapter.SessionStart || ev.Source != "startup" || ev.Cwd != "/workspace/project" || ev.SessionID != "ses_dc073b906ffeAolTdDwD5uFXOl" {
		t.Errorf("session.created: %+v", ev)
	}
	if ev := read(t, "session.resumed.json"); ev.Kind != adapter.SessionStart || ev.Source != "resume" {
		t.Errorf("session.resumed: %+v", ev)
	}
	if ev := read(t, "chat.message.json"); ev.Kind != adapter.BeforeTurn || ev.Prompt != `"redacted: the user's prompt"` {
		t.Errorf("chat.message: kind %s prompt %q", ev.Kind, ev.Prompt)
	}
	if ev := read(t, "tool.execute.before-write.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/src/a.go"}) {
		t.Errorf("write: %+v", ev)
	}
	if ev := read(t, "tool.execute.before-edit.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"/workspace/project/src/e.go"}) {
		t.Errorf("edit: %+v", ev)
	}
	if ev := read(t, "tool.execute.before-apply_patch.json"); !ev.Write || !slices.Equal(ev.Targets, []string{"src/a.go", "src/new.go"}) {
		t.Errorf("apply_patch: %+v", ev)
	}
	if ev := read(t, "tool.execute.before-bash.json"); !ev.ShellTool || ev.Shell != "echo x > src/a.go" || ev.Write {
		t.Errorf("bash: %+v", ev)
	}
	if ev := read(t, "tool.execute.before-mcp.json"); ev.Write || ev.ShellTool || ev.Tool != "acc_acc_status" {
		t.Errorf("acc-mcp's acc_status: %+v", ev)
	}
	if ev := read(t, "tool.execute.after.json"); ev.Kind != adapter.AfterTool || ev.Tool != "bash" {
		t.Errorf("tool.execute.after: %+v", ev)
	}
	if ev := read(t, "session.idle.json"); ev.Kind != adapter.TurnEnd {
		t.Errorf("session.idle: %+v", ev)
	}
	for file, reason := range map[string]string{"process.exit.json": "exit", "session.deleted.json": "deleted"} {
		if ev := read(t, file); ev.Kind != adapter.SessionEnd || ev.EndReason != reason {
			t.Errorf("%s: %+v", file, ev)
		}
	}
}

// TestAnswers: context is {"context":…} on chat.message and
// tool.execute.after only, a denial {"deny":…} on tool.execute.before
// only, and nothing ever holds a stop.
func TestAnswers(t *testing.T) {
	a := New()
	const text = "acc: <peer> & \"quoted\"\nline two"
	for _, file := range []string{"chat.message.json", "tool.execute.after.json"} {
		out := a.Inject(read(t, file), text)
		var got map[string]string
		if err := json.Unmarshal(out.Stdout, &got); err != nil || got["context"] != text || len(got) != 1 || out.ExitCode != 0 {
			t.Errorf("Inject on %s: %q (exit %d)", file, out.Stdout, out.ExitCode)
		}
	}
	for _, file := range []string{"session.created.json", "session.resumed.json", "session.idle.json", "tool.execute.before-bash.json", "process.exit.json"} {
		if out := a.Inject(read(t, file), text); len(out.Stdout) != 0 || out.ExitCode != 0 {
			t.Errorf("Inject on %s printed %q", file, out.Stdout)
		}
	}
	out := a.Deny(read(t, "tool.execute.before-write.json"), "held by bob")
	if string(out.Stdout) != `{"deny":"held by bob"}`+"\n" || out.ExitCode != 0 {
		t.Errorf("Deny: %q (exit %d)", out.Stdout, out.ExitCode)
	}
	if out := a.Deny(read(t, "tool.execute.before-write.json"), " "); !strings.Contains(string(out.Stdout), "guarded claim") {
		t.Errorf("Deny with a blank reason: %q", out.Stdout)
	}
	if out := a.Deny(read(t, "chat.message.json"), "no"); len(out.Stdout) != 0 {
		t.Errorf("Deny on chat.message printed %q", out.Stdout)
	}
	if out := a.Hold(read(t, "session.idle.json"), "wait"); len(out.Stdout) != 0 || out.ExitCode != 0 {
		t.Errorf("Hold printed %q", out.Stdout)
	}
}

// TestInstallPlan: the plugin under $XDG_CONFIG_HOME/opencode/plugin (or
// ~/.config/…) naming the shim, and the skill beside it.
func TestInstallPlan(t *testing.T) {
	c := New().(Client)
	env := adapter.InstallEnv{Home: "/home/u", Shim: "/data/acc/hook-shim", Skill: []byte("skill\n")}
	plan := c.InstallPlan(env)
	var paths []string
	for _, a := range plan.Artifacts {
		if a.Kind != adapter.ArtifactFile {
			t.Errorf("%s: kind %s, want a whole file", a.Path, a.Kind)
		}
		paths = append(paths, a.Path)
	}
	if want := []string{"/home/u/.config/opencode/plugin/acc.js", "/home/u/.config/opencode/skills/acc/SKILL.md"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	if !strings.Contains(string(plan.Artifacts[0].Content), `const SHIM = "/data/acc/hook-shim";`) ||
		!strings.Contains(string(plan.Artifacts[0].Content), `const CLIENT = "opencode";`) {
		t.Errorf("the plugin does not name the shim and client:\n%s", plan.Artifacts[0].Content)
	}
	env.Getenv = func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/xdg"}[k] }
	if got := c.PluginFile(env); got != "/xdg/opencode/plugin/acc.js" {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	env.Getenv = func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "rel"}[k] }
	if got := c.PluginFile(env); got != "/home/u/.config/opencode/plugin/acc.js" {
		t.Errorf("with a relative XDG_CONFIG_HOME: %s", got)
	}
}

// TestPluginShimLiteral: whatever the shim's path holds, it is one
// JavaScript string literal that reads back as that path, and the rest of
// the plugin is unchanged.
func TestPluginShimLiteral(t *testing.T) {
	c := New().(Client)
	plain := string(c.Plugin("/x"))
	for _, shim := range []string{`/a'b/"c"/d\e`, "/with\nnewline", "/u/\u2028/\u2029", "/t/`x`/${y}", "/s/</script>"} {
		got := string(c.Plugin(shim))
		line := ""
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "const SHIM = ") {
				line = l
			}
		}
		lit := strings.TrimSuffix(strings.TrimPrefix(line, "const SHIM = "), ";")
		var back string
		if err := json.Unmarshal([]byte(lit), &back); err != nil || back != shim {
			t.Errorf("shim %q: literal %s reads back %q (%v)", shim, lit, back, err)
		}
		if strings.Replace(got, line, `const SHIM = "/x";`, 1) != plain {
			t.Errorf("shim %q changed more than its line", shim)
		}
	}
}

// TestPluginRuns loads the plugin in Node (OpenCode runs it in Bun; the
// plugin uses only node: modules both have) with a shim that records its
// payload and answers, and drives it as OpenCode 1.18.33 does: context
// becomes a synthetic text part after the prompt, a denial throws with
// the reason, tool.execute.after's context ends the tool's output, a
// subagent's calls are its root session's, and each live session ends at
// exit. Skipped without node on PATH.
func TestPluginRuns(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "shim")
	log := filepath.Join(dir, "calls.jsonl")
	// The shim logs "<client> <event> <payload>" and answers by event.
	script := "#!/bin/sh\n{ printf '%s %s ' \"$1\" \"$2\"; cat; echo; } >> " + log + "\n" +
		"case $2 in\n" +
		"chat.message) echo '{\"context\":\"CTX <1>\"}' ;;\n" +
		"tool.execute.before) grep -q held " + log + " && echo '{\"deny\":\"held by bob\"}' ;;\n" +
		"tool.execute.after) echo '{\"context\":\"AFTER\"}' ;;\n" +
		"esac\n"
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "acc.mjs")
	if err := os.WriteFile(plugin, New().(Client).Plugin(shim), 0o644); err != nil {
		t.Fatal(err)
	}
	driver := `
import { AccPlugin } from "./acc.mjs";
const h = await AccPlugin({ directory: "/ws" });
const out = [];
await h.event({ event: { type: "session.created", properties: { sessionID: "ses_1", info: { id: "ses_1", directory: "/ws" } } } });
await h.event({ event: { type: "session.created", properties: { sessionID: "ses_2", info: { id: "ses_2", parentID: "ses_1" } } } });
const msg = { message: { id: "msg_1", sessionID: "ses_1" }, parts: [{ id: "prt_1", type: "text", text: "hi" }] };
await h["chat.message"]({ sessionID: "ses_1" }, msg);
out.push(msg.parts);
await h["chat.message"]({ sessionID: "ses_2" }, { message: { id: "msg_2", sessionID: "ses_2" }, parts: [] });
const after = { output: "done" };
await h["tool.execute.after"]({ tool: "bash", sessionID: "ses_2" }, after);
out.push(after.output);
try {
  await h["tool.execute.before"]({ tool: "write", sessionID: "ses_2" }, { args: { filePath: "/ws/held.txt", content: "x" } });
  out.push("allowed");
} catch (e) { out.push("threw: " + e.message); }
await h.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
console.log(JSON.stringify(out));
`
	if err := os.WriteFile(filepath.Join(dir, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "driver.mjs")
	cmd.Dir = dir
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stdout)
	}
	want := `[[{"id":"prt_1","type":"text","text":"hi"},{"id":"prt_1acc","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"CTX <1>","synthetic":true}],"done\n\nAFTER","threw: held by bob"]`
	if got := strings.TrimSpace(string(stdout)); got != want {
		t.Errorf("the plugin did\n%s\nwant\n%s", got, want)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		client, rest, _ := strings.Cut(line, " ")
		event, payload, _ := strings.Cut(rest, " ")
		var p map[string]any
		if client != "opencode" || json.Unmarshal([]byte(payload), &p) != nil || p["hook_event_name"] != event {
			t.Errorf("call %q", line)
			continue
		}
		events = append(events, event+":"+p["session_id"].(string))
	}
	// The subagent's session (ses_2) neither starts, has turns nor ends:
	// its tool calls are ses_1's.
	want2 := []string{"session.created:ses_1", "chat.message:ses_1", "tool.execute.after:ses_1", "tool.execute.before:ses_1", "session.idle:ses_1", "process.exit:ses_1"}
	if !slices.Equal(events, want2) {
		t.Errorf("hook calls %v, want %v", events, want2)
	}
}
