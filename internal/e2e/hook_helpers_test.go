package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// hookClient is what these tests know of one client's hooks, written down
// from the client's payloads and its chosen reply shapes
// (docs/adapters.md#what-each-client-is-told, docs/adapters.md#the-normalised-event),
// independently of the adapter code.
// Payloads come from the fixtures kept in the adapter module (see
// fixtureFor).
type hookClient struct {
	id string
	// Event names the client passes to acc-hook.
	start, turn, tool, end string
	// sessionKey, toolKey and inputKey name the payload's session id, tool
	// name and tool input.
	sessionKey, toolKey, inputKey string
	// The shell tool and the key of its command; the file-writing tool and
	// the key of the path it writes (for Codex, apply_patch and its body).
	shellTool, shellKey, writeTool, writeKey string
	// patch: the write tool takes a patch body (Codex apply_patch).
	patch bool
	// textInject: context is printed as plain text (Kimi), not as the
	// hookSpecificOutput envelope.
	textInject bool
	// quietStart: the session start attaches but prints nothing, its output
	// reaching no model (Kimi Code 2.1.0); the owner line comes with the
	// first turn.
	quietStart bool
	// deny is the shape of a refusal: "permission" (hookSpecificOutput
	// permissionDecision), "decision" ({"decision":"deny"}), "exit2" (exit
	// 2, reason on stderr, nothing on stdout).
	deny string
	// allow is the exact stdout of "proceed, nothing to add".
	allow string
	// silentStart: the client gives no model its session-start or
	// before-turn output (Grok), so acc prints nothing there and a test
	// finds the session acc attached in the store.
	silentStart bool
}

var hookClients = []hookClient{
	{
		id: "claude", start: "SessionStart", turn: "UserPromptSubmit", tool: "PreToolUse", end: "SessionEnd",
		sessionKey: "session_id", toolKey: "tool_name", inputKey: "tool_input",
		shellTool: "Bash", shellKey: "command", writeTool: "Edit", writeKey: "file_path",
		deny: "permission", allow: "{}\n",
	},
	{
		id: "codex", start: "SessionStart", turn: "UserPromptSubmit", tool: "PreToolUse", end: "SessionEnd",
		sessionKey: "session_id", toolKey: "tool_name", inputKey: "tool_input",
		shellTool: "Bash", shellKey: "command", writeTool: "apply_patch", writeKey: "command", patch: true,
		deny: "exit2",
	},
	{
		id: "gemini", start: "SessionStart", turn: "BeforeAgent", tool: "BeforeTool", end: "SessionEnd",
		sessionKey: "session_id", toolKey: "tool_name", inputKey: "tool_input",
		shellTool: "run_shell_command", shellKey: "command", writeTool: "write_file", writeKey: "file_path",
		deny: "decision",
	},
	{
		id: "kimi", start: "SessionStart", turn: "UserPromptSubmit", tool: "PreToolUse", end: "SessionEnd",
		sessionKey: "session_id", toolKey: "tool_name", inputKey: "tool_input",
		shellTool: "Bash", shellKey: "command", writeTool: "Write", writeKey: "path",
		textInject: true, quietStart: true, deny: "permission",
	},
	{
		id: "grok", start: "SessionStart", turn: "UserPromptSubmit", tool: "PreToolUse", end: "SessionEnd",
		sessionKey: "sessionId", toolKey: "toolName", inputKey: "toolInput",
		shellTool: "run_terminal_command", shellKey: "command", writeTool: "write", writeKey: "file_path",
		deny: "decision", silentStart: true,
	},
}

func clientByID(t testing.TB, id string) hookClient {
	t.Helper()
	for _, c := range hookClients {
		if c.id == id {
			return c
		}
	}
	t.Fatalf("no hook client %q", id)
	return hookClient{}
}

// adapterDir is pkg/adapters/<id> in the checkout under test.
func adapterDir(t testing.TB, id string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "pkg", "adapters", id)
}

// fixtureFiles lists the hook payloads an adapter module keeps (the JSON
// objects naming a hook event under testdata/ and evidence/), relative to
// its directory: evidence first (reverse name order), then testdata.
func fixtureFiles(t testing.TB, id string) []string {
	t.Helper()
	root := adapterDir(t, id)
	var evidence, testdata []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if parts[0] != "testdata" && parts[0] != "evidence" {
			return nil
		}
		// Beside the payloads lie records, observations and environments:
		// a payload names its event.
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || (m["hook_event_name"] == nil && m["hookEventName"] == nil) {
			return nil
		}
		if parts[0] == "testdata" {
			testdata = append(testdata, rel)
		} else {
			evidence = append(evidence, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list the %s fixtures: %v", id, err)
	}
	slices.Sort(testdata)
	slices.SortFunc(evidence, func(a, b string) int { return -strings.Compare(a, b) })
	return append(evidence, testdata...)
}

// fixtureEvent is the client event a fixture file holds: its name up to the
// first "." or "-" (PreToolUse-Edit.json, BeforeModel.2.json).
func fixtureEvent(rel string) string {
	name := filepath.Base(rel)
	if i := strings.IndexAny(name, ".-"); i > 0 {
		name = name[:i]
	}
	return name
}

// fixtureFor reads the client's first kept payload of event, or nil when
// the module keeps none.
func (c hookClient) fixtureFor(t testing.TB, event string) map[string]any {
	t.Helper()
	for _, rel := range fixtureFiles(t, c.id) {
		if fixtureEvent(rel) == event {
			return c.fixture(t, rel)
		}
	}
	return nil
}

func (c hookClient) mustFixture(t testing.TB, event string) map[string]any {
	t.Helper()
	m := c.fixtureFor(t, event)
	if m == nil {
		t.Fatalf("the %s adapter keeps no %s payload", c.id, event)
	}
	return m
}

// fixture reads one kept payload as a JSON object.
func (c hookClient) fixture(t testing.TB, rel string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(adapterDir(t, c.id), rel))
	if err != nil {
		t.Fatalf("read the %s fixture: %v", c.id, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s fixture %s: %v", c.id, rel, err)
	}
	return m
}

// rewrite points a payload at client session sid in directory cwd. Fields
// acc never reads (transcript paths, prompts) stay as captured.
func (c hookClient) rewrite(m map[string]any, sid, cwd string) map[string]any {
	m[c.sessionKey] = sid
	m["cwd"] = cwd
	if _, ok := m["workspaceRoot"]; ok {
		m["workspaceRoot"] = cwd
	}
	return m
}

func encode(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startPayload, turnPayload and endPayload are the client's kept payloads
// for session sid in cwd.
func (c hookClient) startPayload(t testing.TB, sid, cwd string) []byte {
	return encode(t, c.rewrite(c.mustFixture(t, c.start), sid, cwd))
}

func (c hookClient) turnPayload(t testing.TB, sid, cwd string) []byte {
	return encode(t, c.turnObject(t, sid, cwd))
}

func (c hookClient) turnObject(t testing.TB, sid, cwd string) map[string]any {
	return c.rewrite(c.mustFixture(t, c.turn), sid, cwd)
}

func (c hookClient) endPayload(t testing.TB, sid, cwd string) []byte {
	if m := c.fixtureFor(t, c.end); m != nil {
		return encode(t, c.rewrite(m, sid, cwd))
	}
	// No kept session end: the start payload with the end's event name
	// and a reason, the shape Kimi Code's schema gives (its kept one, from
	// an interactive run, has that shape).
	m := c.rewrite(c.mustFixture(t, c.start), sid, cwd)
	m["hook_event_name"] = c.end
	delete(m, "source")
	m["reason"] = "exit"
	return encode(t, m)
}

// toolPayload is the client's pre-tool payload for tool with input set
// (on top of what the kept payload's input holds).
func (c hookClient) toolPayload(t testing.TB, sid, cwd, tool string, set map[string]any) []byte {
	m := c.rewrite(c.mustFixture(t, c.tool), sid, cwd)
	m[c.toolKey] = tool
	in, _ := m[c.inputKey].(map[string]any)
	if in == nil {
		in = map[string]any{}
		m[c.inputKey] = in
	}
	for k, v := range set {
		in[k] = v
	}
	return encode(t, m)
}

// shellPayload is the client's shell-tool call running command.
func (c hookClient) shellPayload(t testing.TB, sid, cwd, command string) []byte {
	return c.toolPayload(t, sid, cwd, c.shellTool, map[string]any{c.shellKey: command})
}

// writePayload is the client's file-writing tool call on path; for Codex
// it is an apply_patch updating path.
func (c hookClient) writePayload(t testing.TB, sid, cwd, path string) []byte {
	if c.patch {
		return c.patchPayload(t, sid, cwd, "*** Begin Patch\n*** Update File: "+path+"\n@@\n-old\n+new\n*** End Patch\n")
	}
	return c.toolPayload(t, sid, cwd, c.writeTool, map[string]any{c.writeKey: path})
}

// patchPayload is a Codex apply_patch call with the given body.
func (c hookClient) patchPayload(t testing.TB, sid, cwd, body string) []byte {
	return c.toolPayload(t, sid, cwd, c.writeTool, map[string]any{c.writeKey: body})
}

// hookRun is what one acc-hook process did.
type hookRun struct {
	args   []string
	stdout string
	stderr string
	code   int
	took   time.Duration
}

func (r hookRun) String() string {
	return fmt.Sprintf("acc-hook %s: exit %d after %v\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.took,
		clip(r.stdout, 1500), clip(r.stderr, 800))
}

// hookOpts vary one acc-hook run.
type hookOpts struct {
	// dir is the hook process's working directory (default: the sandbox
	// base, which is no workspace).
	dir string
	// env is added to the sandbox environment (ACC_PARTICIPANT=…).
	env []string
}

// hook runs the built acc-hook with args and payload on stdin; it never
// fails the test.
func (sb *sandbox) hook(o hookOpts, payload []byte, args ...string) hookRun {
	ctx, cancel := withTimeout()
	defer cancel()
	dir := o.dir
	if dir == "" {
		dir = sb.base
	}
	cmd := sb.program(ctx, dir, hookBin, args...)
	cmd.Env = append(sb.environ(), o.env...)
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	res := hookRun{args: args, stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err), took: time.Since(began)}
	if err != nil && res.code == 0 {
		res.code = -1
	}
	return res
}

// injected returns the context a turn or session-start hook printed, after
// checking it is exactly the client's inject shape (exit 0; "" when the
// hook printed the client's "proceed" answer instead).
func (c hookClient) injected(t testing.TB, r hookRun, event string) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("expected exit 0 from a %s %s hook:\n%s", c.id, event, r)
	}
	if r.stdout == c.allow {
		return ""
	}
	if c.textInject {
		return r.stdout
	}
	var v struct {
		HookSpecificOutput *struct {
			HookEventName     *string `json:"hookEventName"`
			AdditionalContext *string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || !strings.HasSuffix(r.stdout, "}\n") || strings.Count(r.stdout, "\n") != 1 ||
		v.HookSpecificOutput == nil || v.HookSpecificOutput.HookEventName == nil || v.HookSpecificOutput.AdditionalContext == nil {
		t.Fatalf("expected one line {\"hookSpecificOutput\":{\"hookEventName\":…,\"additionalContext\":…}} from %s %s (%v):\n%s", c.id, event, err, r)
	}
	if *v.HookSpecificOutput.HookEventName != event {
		t.Fatalf("%s: the inject envelope names event %q, want %q", c.id, *v.HookSpecificOutput.HookEventName, event)
	}
	return *v.HookSpecificOutput.AdditionalContext
}

// denial reads a pre-tool answer: the reason and true for the client's
// refusal shape, "" and false for its "proceed" answer; any other output
// fails the test.
func (c hookClient) denial(t testing.TB, r hookRun) (string, bool) {
	t.Helper()
	if c.deny == "exit2" {
		switch {
		case r.code == 2 && r.stdout == "" && strings.TrimSpace(r.stderr) != "":
			return strings.TrimSpace(r.stderr), true
		case r.code == 0 && r.stdout == c.allow:
			return "", false
		}
		t.Fatalf("%s pre-tool: expected exit 2 with a reason on stderr, or exit 0 with nothing:\n%s", c.id, r)
	}
	if r.code != 0 {
		t.Fatalf("%s pre-tool: expected exit 0:\n%s", c.id, r)
	}
	if r.stdout == c.allow {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	switch c.deny {
	case "permission":
		var v struct {
			HookSpecificOutput struct {
				HookEventName            string `json:"hookEventName"`
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if err := dec.Decode(&v); err == nil && v.HookSpecificOutput.HookEventName == "PreToolUse" &&
			v.HookSpecificOutput.PermissionDecision == "deny" && v.HookSpecificOutput.PermissionDecisionReason != "" {
			return v.HookSpecificOutput.PermissionDecisionReason, true
		}
	case "decision":
		var v struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		if err := dec.Decode(&v); err == nil && v.Decision == "deny" && v.Reason != "" {
			return v.Reason, true
		}
	}
	t.Fatalf("%s pre-tool: stdout is neither the client's denial (%s) nor its proceed answer %q:\n%s", c.id, c.deny, c.allow, r)
	return "", false
}

var ownerLineRE = regexp.MustCompile(`^acc: --session (session_[A-Za-z0-9_-]{22}) --generation (generation_[A-Za-z0-9_-]{22})$`)

// ownerLine parses the first line of a context: the trusted owner line.
func ownerLine(t testing.TB, context string) session {
	t.Helper()
	first, _, _ := strings.Cut(context, "\n")
	m := ownerLineRE.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("expected the context to start with `acc: --session S --generation G`, got:\n%s", clip(context, 1500))
	}
	return session{SessionID: m[1], Generation: m[2]}
}

// defaultParticipant is the participant a hooked session gets without
// ACC_PARTICIPANT: "<client>-" + the first 6 characters of
// base64url(SHA-256(client session id)) (docs/hooks.md#what-each-event-does).
func defaultParticipant(client, sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return client + "-" + base64.RawURLEncoding.EncodeToString(sum[:])[:6]
}

// statusRow is one participant row of `acc status --json`.
type statusRow struct {
	SessionID     string `json:"sessionId"`
	ParticipantID string `json:"participantId"`
	Harness       string `json:"harness"`
	State         string `json:"state"`
	Presence      string `json:"presence"`
	Enforcement   string `json:"enforcement"`
}

type statusData struct {
	WorkspaceID  string      `json:"workspaceId"`
	Materialised bool        `json:"materialised"`
	Participants []statusRow `json:"participants"`
}

// roomStatus is `acc status --all --json` from dir.
func (sb *sandbox) roomStatus(dir string) statusData {
	sb.t.Helper()
	var st statusData
	sb.jsonOK(&st, dir, "status", "--all")
	return st
}

func (st statusData) session(id string) *statusRow {
	for i := range st.Participants {
		if st.Participants[i].SessionID == id {
			return &st.Participants[i]
		}
	}
	return nil
}

// receiptState reads the receipt of message id for participant from the
// store (through pkg/storage, read-only).
func receiptState(t testing.TB, st storage.Store, id, participant string) string {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	state := ""
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		r, err := tx.Receipt(id, participant)
		if r != nil {
			state = r.State
		}
		return err
	}); err != nil {
		t.Fatalf("read the receipt of %s: %v", id, err)
	}
	return state
}

// countEvents counts events of type typ in the store's log.
func countEvents(t testing.TB, st storage.Store, typ string) int {
	t.Helper()
	n := 0
	for _, e := range readSnapshot(t, st).events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// bindingOf reads the session binding of a client session ("" when none):
// the key is the first 32 hex digits of SHA-256("<client>:<sid>")
// (docs/protocol.md#session-binding).
func bindingOf(t testing.TB, st storage.Store, client, sid string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(client + ":" + sid))
	key := hex.EncodeToString(sum[:16])
	ctx, cancel := withTimeout()
	defer cancel()
	out := ""
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		b, err := tx.Binding(key)
		if b != nil {
			out = b.SessionID
		}
		return err
	}); err != nil {
		t.Fatalf("read the binding: %v", err)
	}
	return out
}

// sessionState is a session's state in the store ("" when it has no row).
func sessionState(t testing.TB, st storage.Store, id string) string {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	out := ""
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
			s, err := tx.Session(a, id)
			if err != nil {
				return err
			}
			if s != nil {
				out = s.State
				return nil
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("read session %s: %v", id, err)
	}
	return out
}

// sendAs sends a message from s and returns its id (any exit but 0 fails).
func (sb *sandbox) sendAs(s session, args ...string) string {
	sb.t.Helper()
	var out struct {
		Message protocol.Message `json:"message"`
	}
	sb.jsonOK(&out, s.dir, append(append([]string{"message"}, args...), s.creds()...)...)
	if out.Message.MessageID == "" {
		sb.t.Fatalf("acc message %v recorded no message id", args)
	}
	return out.Message.MessageID
}

// hookSession attaches client session sid through acc-hook's session
// start in dir and returns the session from the owner line it printed;
// for a client whose start prints nothing (quietStart), from the owner
// line of the turn that follows.
func (sb *sandbox) hookSession(c hookClient, sid, dir string, env ...string) session {
	sb.t.Helper()
	r := sb.hook(hookOpts{env: env}, c.startPayload(sb.t, sid, dir), c.id, c.start)
	if c.silentStart {
		if r.code != 0 || r.stdout != c.allow {
			sb.t.Fatalf("%s session start: want exit 0 and nothing printed:\n%s", c.id, r)
		}
		s := sb.boundSession(c.id, sid, dir)
		if s.SessionID == "" {
			sb.t.Fatalf("%s session start attached no session:\n%s", c.id, r)
		}
		return s
	}
	ctxt := c.injected(sb.t, r, c.start)
	if c.quietStart {
		if ctxt != "" || r.stderr != "" {
			sb.t.Fatalf("%s session start should print nothing:\n%s", c.id, r)
		}
		r = sb.hook(hookOpts{env: env}, c.turnPayload(sb.t, sid, dir), c.id, c.turn)
		ctxt = c.injected(sb.t, r, c.turn)
	}
	if ctxt == "" {
		sb.t.Fatalf("%s session start printed no context:\n%s", c.id, r)
	}
	s := ownerLine(sb.t, ctxt)
	s.dir = dir
	return s
}

// boundSession is the session acc-hook bound to client session sid of
// client in the room of dir, read in-process; empty when there is none.
func (sb *sandbox) boundSession(client, sid, dir string) session {
	sb.t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	room, err := core.Open(ctx, core.OpenOptions{Cwd: dir, Getenv: sb.getenv, NoCreate: true})
	if err != nil {
		sb.t.Fatalf("open the room of %s: %v", dir, err)
	}
	defer room.Close()
	c, err := room.HookCaller(ctx, client, sid)
	if err != nil {
		sb.t.Fatalf("read the binding of %s %s: %v", client, sid, err)
	}
	if c == nil {
		return session{dir: dir}
	}
	return session{SessionID: c.SessionID, Generation: c.Generation, dir: dir}
}

// turn runs the client's before-turn hook for sid in dir and returns the
// context it printed.
func (sb *sandbox) turn(c hookClient, sid, dir string) (string, hookRun) {
	sb.t.Helper()
	r := sb.hook(hookOpts{}, c.turnPayload(sb.t, sid, dir), c.id, c.turn)
	return c.injected(sb.t, r, c.turn), r
}

// holdWriteLock takes SQLite's write lock on a store (BEGIN IMMEDIATE) and
// returns the function that releases it.
func holdWriteLock(t testing.TB, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock of %s: %v", path, err)
	}
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}
