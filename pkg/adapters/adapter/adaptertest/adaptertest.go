// Package adaptertest is the one test suite every adapter module runs from
// its own tests: [Run] over the adapter's payload fixtures, [Fuzz] for its
// normaliser, and [CheckEvidence] for the capability records it embeds.
package adaptertest

import (
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// ClientIDs are the adapter ids (docs/decisions.md#14-client-ids).
var ClientIDs = []string{"claude", "codex", "gemini", "kimi", "grok", "copilot", "qwen", "droid", "opencode", "kilo", "pi"}

// expectedKinds is the suite's own reading of which client event is which
// kind (docs/adapters.md#the-normalised-event and each client's section of
// docs/adapters.md). An adapter that maps an event
// otherwise fails the suite, so the five stay consistent.
var expectedKinds = map[string]adapter.Kind{
	"SessionStart":       adapter.SessionStart,
	"SessionEnd":         adapter.SessionEnd,
	"SessionHeartbeat":   adapter.Heartbeat,
	"UserPromptSubmit":   adapter.BeforeTurn,
	"BeforeAgent":        adapter.BeforeTurn,
	"PreToolUse":         adapter.BeforeTool,
	"BeforeTool":         adapter.BeforeTool,
	"PostToolUse":        adapter.AfterTool,
	"PostToolUseFailure": adapter.AfterTool,
	"AfterTool":          adapter.AfterTool,
	"Stop":               adapter.TurnEnd,
	"StopFailure":        adapter.TurnEnd,
	"StopCancelled":      adapter.TurnEnd,
	"AfterAgent":         adapter.TurnEnd,
	// The events acc's OpenCode and Kilo plugin reports
	// (docs/adapters.md#opencode): OpenCode's hook and event names, and
	// session.resumed and process.exit of its own.
	"session.created":     adapter.SessionStart,
	"session.resumed":     adapter.SessionStart,
	"chat.message":        adapter.BeforeTurn,
	"tool.execute.before": adapter.BeforeTool,
	"tool.execute.after":  adapter.AfterTool,
	"session.idle":        adapter.TurnEnd,
	"session.deleted":     adapter.SessionEnd,
	"process.exit":        adapter.SessionEnd,
	// Pi's extension events (docs/adapters.md#pi).
	"session_start":      adapter.SessionStart,
	"before_agent_start": adapter.BeforeTurn,
	"tool_call":          adapter.BeforeTool,
	"tool_result":        adapter.AfterTool,
	"agent_end":          adapter.TurnEnd,
	"session_shutdown":   adapter.SessionEnd,
}

// ContinuationClients fire UserPromptSubmit again within a turn, with an
// empty prompt, after each tool result (Qwen Code,
// docs/adapters.md#qwen-code): such a call starts no turn and must be Other.
var ContinuationClients = map[string]bool{"qwen": true}

// expectedKindOf is ExpectedKind for one payload of adapter a: a
// continuation client's UserPromptSubmit whose prompt is present and
// empty is Other.
func expectedKindOf(a adapter.Adapter, event string, payload []byte) adapter.Kind {
	if ContinuationClients[a.ID()] && event == "UserPromptSubmit" {
		if obj, err := hookio.Parse(payload); err == nil {
			if p, present, err := obj.Str("prompt"); err == nil && present && p == "" {
				return adapter.Other
			}
		}
	}
	return ExpectedKind(event)
}

// ExpectedKind is the kind the suite expects for a client event name;
// every event it does not list is Other.
func ExpectedKind(event string) adapter.Kind {
	if k, ok := expectedKinds[event]; ok {
		return k
	}
	return adapter.Other
}

// Payload keys whose values must never reach a normalised event: the
// transcript, what the user or model wrote, tool output and file contents.
var privateKeys = map[string]bool{
	"transcript_path": true, "transcriptPath": true,
	"prompt": true, "prompt_response": true,
	"last_assistant_message": true, "lastAssistantMessage": true,
	"tool_response": true, "tool_output": true, "toolResponse": true, "toolOutput": true,
	"content": true, "old_string": true, "new_string": true, "edits": true,
	"description": true, "error_message": true, "message": true,
	"llm_request": true, "llm_response": true,
}

// Fixture is one payload file: <Event>[-detail][.n].json.
type Fixture struct {
	File    string
	Event   string
	Payload []byte
}

// Fixtures reads every *.json file under fsys as a payload fixture; the
// event is the file's name as EventOfFile reads it.
func Fixtures(t testing.TB, fsys fs.FS) []Fixture {
	t.Helper()
	var out []Fixture
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".json" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out = append(out, Fixture{File: p, Event: EventOfFile(path.Base(p)), Payload: b})
		return nil
	})
	if err != nil {
		t.Fatalf("reading fixtures: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("no payload fixtures found")
	}
	return out
}

// EventOfFile is the event a fixture file is for: the name without
// ".json", cut at its first "-" (PreToolUse-Write.json) and without a
// trailing ".<digits>" (BeforeModel.2.json). Other dots are part of the
// event: the plugin clients' events are dotted (chat.message.json).
func EventOfFile(name string) string {
	name = strings.TrimSuffix(name, ".json")
	if i := strings.IndexByte(name, '-'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i+1 < len(name) && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return name
}

// Run is the shared suite: a's identity and event table; every fixture
// normalises to a valid event with the right kind, session id and cwd and
// leaks nothing; unknown events and broken payloads are refused; Inject,
// Deny and Allow render valid answers that carry the text they were given.
func Run(t *testing.T, a adapter.Adapter, fixtures fs.FS) {
	fx := Fixtures(t, fixtures)
	t.Run("identity", func(t *testing.T) { identity(t, a) })
	t.Run("fixtures", func(t *testing.T) {
		for _, f := range fx {
			t.Run(f.File, func(t *testing.T) { fixture(t, a, f) })
		}
	})
	t.Run("every event", func(t *testing.T) { everyEvent(t, a, fx[0]) })
	t.Run("refusals", func(t *testing.T) { refusals(t, a, fx) })
	t.Run("mcp tools", func(t *testing.T) { mcpTools(t, a, fx) })
}

func identity(t *testing.T, a adapter.Adapter) {
	if !slices.Contains(ClientIDs, a.ID()) {
		t.Errorf("id %q is not one of %v", a.ID(), ClientIDs)
	}
	if strings.TrimSpace(a.DisplayName()) == "" {
		t.Error("no display name")
	}
	// The id is the adapter module's short client name: the package that
	// implements it is pkg/adapters/<id>, so an id and a module never
	// disagree about which client they are.
	if pkg := reflect.TypeOf(a).PkgPath(); path.Base(pkg) != a.ID() {
		t.Errorf("id %q is implemented in package %s, want one named %s", a.ID(), pkg, a.ID())
	}
	if c := a.ClientCommand(); strings.ContainsAny(c, "/ \t\n") {
		t.Errorf("client command %q must be a bare process name", c)
	}
	for _, v := range a.SessionEnvVars() {
		if v == "" || strings.ToUpper(v) != v || strings.ContainsAny(v, "= \t\n") {
			t.Errorf("session env var %q is not a variable name", v)
		}
	}
	events := a.Events()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	seen := map[string]bool{}
	for _, e := range events {
		if e == "" || seen[e] {
			t.Errorf("event %q empty or listed twice", e)
		}
		seen[e] = true
	}
	kinds := map[adapter.Kind]bool{}
	for _, e := range events {
		kinds[ExpectedKind(e)] = true
	}
	for _, k := range []adapter.Kind{adapter.SessionStart, adapter.BeforeTurn, adapter.BeforeTool} {
		if !kinds[k] {
			t.Errorf("no event of kind %s: acc could not attach, project or guard", k)
		}
	}
}

// payloadSession and payloadCwd read a fixture's own session id and cwd,
// independently of the adapter under test.
func payloadSession(obj hookio.Object) string {
	s, _, _ := obj.Str("session_id", "sessionId", "thread_id", "threadId")
	return s
}

func payloadCwd(obj hookio.Object) string {
	s, _, _ := obj.Str("cwd", "working_directory", "workspace_root", "workspaceRoot")
	return s
}

func fixture(t *testing.T, a adapter.Adapter, f Fixture) {
	if !slices.Contains(a.Events(), f.Event) {
		t.Fatalf("fixture is for %q, which the adapter does not list", f.Event)
	}
	obj, err := hookio.Parse(f.Payload)
	if err != nil {
		t.Fatalf("fixture is not a JSON object: %v", err)
	}
	ev, err := a.Normalize(f.Event, f.Payload)
	if err != nil {
		t.Fatalf("refused a real payload: %v", err)
	}
	CheckEvent(t, a, f.Event, ev)
	if want := expectedKindOf(a, f.Event, f.Payload); ev.Kind != want {
		t.Errorf("kind %s, want %s", ev.Kind, want)
	}
	if want := payloadSession(obj); ev.SessionID != want {
		t.Errorf("session id %q, want the payload's %q", ev.SessionID, want)
	}
	if want := payloadCwd(obj); ev.Cwd != want {
		t.Errorf("cwd %q, want the payload's %q", ev.Cwd, want)
	}
	noLeak(t, ev, obj)
	if want := ev.Kind == adapter.TurnEnd && payloadStopActive(obj); ev.StopHookActive != want {
		t.Errorf("StopHookActive %v, want %v (the payload's, on a turn-end event only)", ev.StopHookActive, want)
	}
	responses(t, a, ev)
}

// payloadStopActive reads a fixture's own stop-hook flag, independently
// of the adapter under test.
func payloadStopActive(obj hookio.Object) bool {
	return obj.Bool("stop_hook_active", "stopHookActive")
}

// CheckEvent checks what holds for every normalised event.
func CheckEvent(t testing.TB, a adapter.Adapter, event string, ev *adapter.Event) {
	t.Helper()
	if ev == nil {
		t.Fatal("nil event without an error")
	}
	if ev.Adapter != a.ID() || ev.Name != event {
		t.Errorf("event names adapter %q event %q, want %q %q", ev.Adapter, ev.Name, a.ID(), event)
	}
	if ev.SessionID == "" || ev.Cwd == "" || !strings.HasPrefix(ev.Cwd, "/") {
		t.Errorf("event without session id or absolute cwd: %+v", ev)
	}
	switch ev.Kind {
	case adapter.SessionStart, adapter.SessionEnd, adapter.Heartbeat, adapter.BeforeTurn,
		adapter.BeforeTool, adapter.AfterTool, adapter.TurnEnd, adapter.Other:
	default:
		t.Errorf("kind %q is not a normalised kind", ev.Kind)
	}
	if len(ev.Targets) > 0 && !ev.Write {
		t.Errorf("targets %q without Write", ev.Targets)
	}
	if ev.Write && ev.Shell != "" {
		t.Error("an event is a file write or a shell command, not both")
	}
	for _, tg := range ev.Targets {
		if tg == "" {
			t.Errorf("empty target in %q", ev.Targets)
		}
	}
}

// noLeak: no field that leaves the adapter holds "redacted" (the marker
// fixtures put in every sanitised value) or any private payload value.
// Shell is the command itself, kept in memory for the guard and never
// encoded; it must be exactly the tool input's command.
func noLeak(t *testing.T, ev *adapter.Event, obj hookio.Object) {
	enc, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(enc)), "redacted") {
		t.Errorf("normalised event carries a redacted value: %s", enc)
	}
	for _, p := range privateValues(obj) {
		if strings.Contains(string(enc), p) {
			t.Errorf("normalised event carries private payload text %q: %s", p, enc)
		}
	}
	if ev.Shell != "" {
		found := false
		for _, s := range allStrings(obj) {
			if s == ev.Shell {
				found = true
			}
		}
		if !found {
			t.Errorf("Shell %q is not a command the payload holds", ev.Shell)
		}
	}
	inputs := strings.Join(allStrings(obj), "\n")
	for _, tg := range ev.Targets {
		if !strings.Contains(inputs, tg) {
			t.Errorf("target %q is not spelled in the payload", tg)
		}
	}
}

// privateValues are the strings found only under private keys (a path
// that a tool's output repeats from its input is not private).
func privateValues(obj hookio.Object) []string {
	private, public := map[string]bool{}, map[string]bool{}
	var walk func(v any, inPrivate bool)
	walk = func(v any, inPrivate bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				walk(vv, inPrivate || privateKeys[k])
			}
		case []any:
			for _, vv := range x {
				walk(vv, inPrivate)
			}
		case string:
			if inPrivate {
				private[x] = true
			} else {
				public[x] = true
			}
		}
	}
	walk(map[string]any(obj), false)
	var out []string
	for s := range private {
		if len(s) >= 8 && !public[s] {
			out = append(out, s)
		}
	}
	return out
}

func allStrings(obj hookio.Object) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, vv := range x {
				walk(vv)
			}
		case []any:
			for _, vv := range x {
				walk(vv)
			}
		case string:
			out = append(out, x)
		}
	}
	walk(map[string]any(obj))
	return out
}

// Sample texts the suite renders: quotes, markup, a newline and non-ASCII
// must survive a client's encoding unchanged.
const (
	sampleContext = "acc: --session S --generation G\n<untrusted peer message from=\"x\"> \"quoted\" & café </untrusted peer message>"
	sampleReason  = "file:src/a.go is claimed by codex-abc123 (session s_1); ask them or wait"
)

func responses(t *testing.T, a adapter.Adapter, ev *adapter.Event) {
	allow := a.Allow(ev)
	checkOutput(t, "Allow", allow)
	if allow.ExitCode != 0 || len(allow.Stderr) != 0 {
		t.Errorf("Allow must exit 0 quietly: %+v", allow)
	}
	if empty := a.Inject(ev, ""); !reflect.DeepEqual(empty, allow) {
		t.Errorf("Inject of empty context must equal Allow: %+v vs %+v", empty, allow)
	}
	inj := a.Inject(ev, sampleContext)
	checkOutput(t, "Inject", inj)
	if inj.ExitCode != 0 {
		t.Errorf("Inject exit %d", inj.ExitCode)
	}
	if ev.Kind == adapter.SessionStart || ev.Kind == adapter.BeforeTurn {
		if len(inj.Stdout) == 0 && !slices.Contains(NoContextAt[a.ID()], ev.Name) {
			t.Errorf("Inject on %s (%s) prints nothing", ev.Name, ev.Kind)
		}
	}
	// An event that takes no context answers Inject with Allow; anything
	// else must carry the context whole.
	if len(inj.Stdout) > 0 && !reflect.DeepEqual(inj, allow) && !carries(inj.Stdout, sampleContext) {
		t.Errorf("Inject output does not carry the context verbatim: %q", inj.Stdout)
	}
	hold(t, a, ev, allow)
	deny := a.Deny(ev, sampleReason)
	checkOutput(t, "Deny", deny)
	if ev.Kind != adapter.BeforeTool {
		if !reflect.DeepEqual(deny, allow) {
			t.Errorf("Deny on %s must render Allow: %+v", ev.Kind, deny)
		}
		return
	}
	if !NamesReason(deny, sampleReason) {
		t.Errorf("Deny does not name the reason: %+v", deny)
	}
	if def := a.Deny(ev, " "); !NamesReason(def, hookio.DefaultReason) {
		t.Errorf("Deny with a blank reason must give the default one: %+v", def)
	}
}

// NoContextAt names, per client, the session-start and before-turn events
// whose output the client's source or captures show never reaches the
// model: Inject renders Allow there and the suite does not ask for text.
// Kimi Code 2.1.0 gives no model request what SessionStart prints; Grok
// runs SessionStart and UserPromptSubmit as observe-only hooks
// (docs/adapters.md#kimi-code, docs/adapters.md#grok). acc's OpenCode
// plugin and Pi extension have no message to put a session start's text
// in (docs/adapters.md#opencode, docs/adapters.md#pi).
var NoContextAt = map[string][]string{
	"kimi":     {"SessionStart"},
	"grok":     {"SessionStart", "UserPromptSubmit"},
	"opencode": {"session.created", "session.resumed"},
	"kilo":     {"session.created", "session.resumed"},
	"pi":       {"session_start"},
}

// sampleHold is a hold reason with a peer frame inside: fences, quotes and
// a newline must reach the client unchanged.
const sampleHold = "acc: a question waits for your answer\n```acc-peer-message\nuntrusted peer message\nbody:\n\"why\" & café\n```\nAnswer with: acc reply m_1 --session S --generation G --body '…'"

// hold: only a turn-end event can be held; any other renders Allow. A
// turn-end event the client cannot hold renders Allow too; one it can
// carries the reason whole (a default one when blank), exit 0 or 2.
func hold(t *testing.T, a adapter.Adapter, ev *adapter.Event, allow adapter.Output) {
	h := a.Hold(ev, sampleHold)
	checkOutput(t, "Hold", h)
	if ev.Kind != adapter.TurnEnd || reflect.DeepEqual(h, allow) {
		if !reflect.DeepEqual(h, allow) {
			t.Errorf("Hold on %s (%s) must render Allow: %+v", ev.Name, ev.Kind, h)
		}
		return
	}
	if !NamesReason(h, sampleHold) {
		t.Errorf("Hold does not carry the reason whole: %+v", h)
	}
	if def := a.Hold(ev, " "); !NamesReason(def, hookio.DefaultHoldReason) {
		t.Errorf("Hold with a blank reason must give the default one: %+v", def)
	}
}

// checkOutput: stdout is empty, plain text, or (when it starts with '{')
// exactly one JSON object; exit 0 or 2.
func checkOutput(t testing.TB, what string, o adapter.Output) {
	t.Helper()
	if o.ExitCode != 0 && o.ExitCode != 2 {
		t.Errorf("%s exits %d; a hook exits 0 or 2", what, o.ExitCode)
	}
	if s := strings.TrimSpace(string(o.Stdout)); strings.HasPrefix(s, "{") {
		if _, err := hookio.Parse(o.Stdout); err != nil {
			t.Errorf("%s stdout is not one JSON object: %v: %q", what, err, o.Stdout)
		}
	}
}

// carries: out is text itself, or JSON holding text as one string value.
func carries(out []byte, text string) bool {
	if string(out) == text {
		return true
	}
	obj, err := hookio.Parse(out)
	if err != nil {
		return false
	}
	return slices.Contains(allStrings(obj), text)
}

// NamesReason reports whether a denial carries reason: as a JSON string
// value on stdout, or as the stderr text of an exit-2 denial.
func NamesReason(o adapter.Output, reason string) bool {
	if o.ExitCode == 2 {
		return len(o.Stdout) == 0 && strings.TrimRight(string(o.Stderr), "\n") == reason
	}
	return carries(o.Stdout, reason)
}

// everyEvent: every listed event is understood and has the suite's kind,
// for a payload shaped like the first fixture without its event field.
func everyEvent(t *testing.T, a adapter.Adapter, template Fixture) {
	obj, err := hookio.Parse(template.Payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hook_event_name", "hookEventName", "eventName", "event_name"} {
		delete(obj, k)
	}
	b, _ := json.Marshal(obj)
	for _, e := range a.Events() {
		ev, err := a.Normalize(e, b)
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		CheckEvent(t, a, e, ev)
		if want := expectedKindOf(a, e, b); ev.Kind != want {
			t.Errorf("%s: kind %s, want %s", e, ev.Kind, want)
		}
	}
}

func refusals(t *testing.T, a adapter.Adapter, fx []Fixture) {
	good := fx[0]
	for _, e := range []string{"", "NoSuchEvent", strings.ToLower(good.Event) + "x", "sessionStart ", "../SessionStart"} {
		if slices.Contains(a.Events(), e) {
			continue
		}
		if ev, err := a.Normalize(e, good.Payload); err == nil {
			t.Errorf("unknown event %q accepted: %+v", e, ev)
		}
	}
	for _, p := range []string{"", " ", "null", "[]", `"x"`, "42", "true", "{", `{"a":1} {}`, `{}{}`, "{}", `{"session_id":""}`, "\x00", `{"session_id":"s","cwd":"/x"`} {
		if ev, err := a.Normalize(good.Event, []byte(p)); err == nil {
			t.Errorf("broken payload %q accepted: %+v", p, ev)
		}
	}
	for _, f := range fx {
		obj, err := hookio.Parse(f.Payload)
		if err != nil {
			continue
		}
		for _, mut := range mutations(obj) {
			b, _ := json.Marshal(mut.obj)
			if ev, err := a.Normalize(f.Event, b); err == nil {
				t.Errorf("%s with %s accepted: %+v", f.File, mut.name, ev)
			}
		}
	}
}

type mutation struct {
	name string
	obj  hookio.Object
}

func mutations(obj hookio.Object) []mutation {
	clone := func() hookio.Object {
		c := hookio.Object{}
		for k, v := range obj {
			c[k] = v
		}
		return c
	}
	var out []mutation
	sessionKeys := []string{"session_id", "sessionId", "thread_id", "threadId"}
	cwdKeys := []string{"cwd", "working_directory", "workspace_root", "workspaceRoot"}
	set := func(name string, keys []string, v any) {
		c := clone()
		for _, k := range keys {
			if _, ok := c[k]; ok {
				if v == nil {
					delete(c, k)
				} else {
					c[k] = v
				}
			}
		}
		out = append(out, mutation{name, c})
	}
	set("no session id", sessionKeys, nil)
	set("empty session id", sessionKeys, "")
	set("numeric session id", sessionKeys, 42)
	set("session id with a newline", sessionKeys, "s1\nforged")
	set("no cwd", cwdKeys, nil)
	set("empty cwd", cwdKeys, "")
	set("relative cwd", cwdKeys, "proj/sub")
	set("cwd as object", cwdKeys, map[string]any{"path": "/x"})
	for _, k := range []string{"hook_event_name", "hookEventName", "eventName", "event_name"} {
		if _, ok := obj[k]; ok {
			c := clone()
			c[k] = "NotThisEvent"
			out = append(out, mutation{"another event's name", c})
			c = clone()
			c[k] = 7
			out = append(out, mutation{"a numeric event name", c})
		}
	}
	return out
}

// Fuzz is the shared fuzz body for an adapter's FuzzNormalize: seeded
// with the fixtures, it requires that no input panics, that an accepted
// payload gives a valid event, and that every answer renders.
func Fuzz(f *testing.F, a adapter.Adapter, fixtures fs.FS) {
	for _, fx := range Fixtures(f, fixtures) {
		f.Add(fx.Event, fx.Payload)
	}
	events := a.Events()
	sort.Strings(events)
	f.Add("", []byte("null"))
	f.Add(events[0], []byte(`{"session_id":"s","sessionId":"s","cwd":"/w","tool_name":"Bash","toolName":"run_terminal_command","tool_input":{"command":["bash","-lc","rm x"]},"toolInput":{"command":"rm y"}}`))
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		ev, err := a.Normalize(event, payload)
		if err != nil {
			if ev != nil {
				t.Fatalf("event %+v returned with error %v", ev, err)
			}
			return
		}
		CheckEvent(t, a, event, ev)
		if _, err := json.Marshal(ev); err != nil {
			t.Fatal(err)
		}
		for _, o := range []adapter.Output{a.Allow(ev), a.Inject(ev, "ctx"), a.Deny(ev, "why")} {
			checkOutput(t, "answer", o)
		}
		if ev.Shell != "" {
			_, _ = adapter.ShellWriteTargets(ev.Shell)
		}
	})
}

// mcpToolNames is the suite's own reading of how each client names an MCP
// server's tool in its pre-tool payload (docs/hooks.md#mcp-tools).
var mcpToolNames = map[string]func(server, tool string) string{
	"claude":  doubleUnderscore,
	"codex":   doubleUnderscore,
	"kimi":    doubleUnderscore,
	"grok":    func(server, tool string) string { return server + "__" + tool },
	"gemini":  func(server, tool string) string { return "mcp_" + server + "_" + tool },
	"copilot": func(server, tool string) string { return server + "-" + tool },
	"qwen":    doubleUnderscore,
	// OpenCode and Kilo name it <server>_<tool> to the model and in the
	// plugin's tool.execute.before (docs/adapters.md#opencode).
	"opencode": func(server, tool string) string { return server + "_" + tool },
	"kilo":     func(server, tool string) string { return server + "_" + tool },
	// Factory Droid names it <server>___<tool> to the model and in its
	// hook payload (docs/adapters.md#factory-droid).
	"droid": func(server, tool string) string { return server + "___" + tool },
	// Pi has no MCP (docs/adapters.md#pi).
	"pi": nil,
}

func doubleUnderscore(server, tool string) string { return "mcp__" + server + "__" + tool }

// MCPCase is one MCP tool call the suite feeds an adapter's pre-tool
// event, with what the normalised event must say.
type MCPCase struct {
	Name         string
	Server, Tool string
	Input        map[string]any
	// Write and Targets are what Event.Write and Event.Targets must be.
	Write   bool
	Targets []string
}

// MCPCases are the calls every adapter must read alike: the filesystem
// server's write tools (a server name with the client's separator in it
// included) are writes of the paths they name; its reads, a tool that
// writes no file, and acc's own tools are not.
var MCPCases = []MCPCase{
	{Name: "write_file", Server: "filesystem", Tool: "write_file",
		Input: map[string]any{"path": "src/a.go", "content": "package a"}, Write: true, Targets: []string{"src/a.go"}},
	{Name: "edit_file, absolute path", Server: "filesystem", Tool: "edit_file",
		Input: map[string]any{"path": "/w/src/a.go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}, Write: true, Targets: []string{"/w/src/a.go"}},
	{Name: "edit_file dry run", Server: "filesystem", Tool: "edit_file",
		Input: map[string]any{"path": "src/a.go", "dryRun": true}},
	{Name: "move_file", Server: "filesystem", Tool: "move_file",
		Input: map[string]any{"source": "src/b.go", "destination": "src/a.go"}, Write: true, Targets: []string{"src/b.go", "src/a.go"}},
	{Name: "create_directory", Server: "filesystem", Tool: "create_directory",
		Input: map[string]any{"path": "src/new"}, Write: true, Targets: []string{"src/new"}},
	{Name: "server name with separators", Server: "my_fs__2", Tool: "write_file",
		Input: map[string]any{"path": "src/a.go"}, Write: true, Targets: []string{"src/a.go"}},
	{Name: "edit_block", Server: "desktop-commander", Tool: "edit_block",
		Input: map[string]any{"file_path": "src/a.go", "old_string": "a", "new_string": "b"}, Write: true, Targets: []string{"src/a.go"}},
	{Name: "text editor create", Server: "editor", Tool: "str_replace_based_edit_tool",
		Input: map[string]any{"command": "create", "path": "src/a.go"}, Write: true, Targets: []string{"src/a.go"}},
	{Name: "text editor view", Server: "editor", Tool: "str_replace_based_edit_tool",
		Input: map[string]any{"command": "view", "path": "src/a.go"}},
	{Name: "write without a path", Server: "filesystem", Tool: "write_file",
		Input: map[string]any{"content": "x"}, Write: true},
	{Name: "read_file", Server: "filesystem", Tool: "read_file",
		Input: map[string]any{"path": "src/a.go"}},
	{Name: "read_multiple_files", Server: "filesystem", Tool: "read_multiple_files",
		Input: map[string]any{"paths": []any{"src/a.go"}}},
	{Name: "list_directory", Server: "filesystem", Tool: "list_directory",
		Input: map[string]any{"path": "src"}},
	{Name: "a tool that writes no file", Server: "github", Tool: "create_issue",
		Input: map[string]any{"title": "src/a.go is broken", "path": "src/a.go"}},
	{Name: "acc's own claim", Server: "acc", Tool: "acc_claim",
		Input: map[string]any{"resource": "file:src/a.go", "path": "src/a.go"}},
	{Name: "acc's own message", Server: "acc", Tool: "acc_message",
		Input: map[string]any{"to": "codex", "body": "write_file src/a.go"}},
}

// mcpTools: every MCPCase, as the client names it, on a pre-tool payload
// shaped like the adapter's own fixture (its tool and input keys).
func mcpTools(t *testing.T, a adapter.Adapter, fx []Fixture) {
	naming, ok := mcpToolNames[a.ID()]
	if !ok {
		t.Fatalf("the suite does not know how %s names MCP tools", a.ID())
	}
	if naming == nil {
		t.Skipf("%s has no MCP", a.ID())
	}
	var template hookio.Object
	var event string
	for _, f := range fx {
		obj, err := hookio.Parse(f.Payload)
		if err != nil || ExpectedKind(f.Event) != adapter.BeforeTool {
			continue
		}
		if name, _, _ := obj.Str("tool_name", "toolName", "tool"); name != "" {
			template, event = obj, f.Event
			break
		}
	}
	if template == nil {
		t.Skip("no pre-tool fixture names a tool")
	}
	toolKey, inputKey := firstKey(template, "tool_name", "toolName", "tool"), firstKey(template, "tool_input", "toolInput")
	if inputKey == "" {
		inputKey = "tool_input"
	}
	for _, c := range MCPCases {
		t.Run(c.Name, func(t *testing.T) {
			obj := hookio.Object{}
			for k, v := range template {
				obj[k] = v
			}
			obj[toolKey] = naming(c.Server, c.Tool)
			obj[inputKey] = c.Input
			b, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := a.Normalize(event, b)
			if err != nil {
				t.Fatalf("refused an MCP tool call: %v", err)
			}
			CheckEvent(t, a, event, ev)
			if ev.Tool != naming(c.Server, c.Tool) {
				t.Errorf("tool %q, want %q", ev.Tool, naming(c.Server, c.Tool))
			}
			if ev.Write != c.Write || !slices.Equal(ev.Targets, c.Targets) {
				t.Errorf("write %v targets %q, want write %v targets %q", ev.Write, ev.Targets, c.Write, c.Targets)
			}
			if ev.Shell != "" || ev.ShellTool {
				t.Errorf("an MCP tool read as the shell tool: %+v", ev)
			}
		})
	}
}

func firstKey(obj hookio.Object, keys ...string) string {
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			return k
		}
	}
	return ""
}

// HoldsOn checks that a holds a stop on event: a fixture of event under
// fixtures normalises with StopHookActive false and its Hold carries the
// reason; the same payload with the stop flag set to true (under the key
// the fixture uses) normalises with StopHookActive true. want is the
// exact output expected for sampleHold's reason.
func HoldsOn(t *testing.T, a adapter.Adapter, event string, fixtures fs.FS, want func(reason string) adapter.Output) {
	t.Helper()
	var f *Fixture
	for _, x := range Fixtures(t, fixtures) {
		if x.Event == event {
			f = &x
			break
		}
	}
	if f == nil {
		t.Fatalf("no %s fixture", event)
	}
	ev, err := a.Normalize(event, f.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if ev.StopHookActive {
		t.Errorf("%s fixture reads as stop_hook_active", f.File)
	}
	if got := a.Hold(ev, sampleHold); !reflect.DeepEqual(got, want(sampleHold)) {
		t.Errorf("Hold on %s = %+v (stdout %q), want %+v", event, got, got.Stdout, want(sampleHold))
	}
	obj, _ := hookio.Parse(f.Payload)
	key := "stop_hook_active"
	if _, ok := obj["stopHookActive"]; ok {
		key = "stopHookActive"
	}
	obj[key] = true
	b, _ := json.Marshal(obj)
	ev, err = a.Normalize(event, b)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.StopHookActive {
		t.Errorf("%s with %s true reads as not active", event, key)
	}
}
