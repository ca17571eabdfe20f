package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestArgumentsRefused(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "acc-mcp"), "--cwd", "/tmp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v", err)
	}
	for _, want := range []string{"ACC_MCP_PARTICIPANT", "ACC_MCP_WORKSPACE", "--cwd"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not name %s", stderr.String(), want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"ACC_MCP_PARTICIPANT": " research team ", "ACC_MCP_WORKSPACE": "/abs/ws/"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] }, "/launch")
	if err != nil || cfg.Participant != "research-team" || cfg.Dir != "/abs/ws" {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg, err = ConfigFromEnv(func(string) string { return "" }, "/launch")
	if err != nil || cfg.Participant != "mcp" || cfg.Dir != "/launch" {
		t.Fatalf("%+v %v", cfg, err)
	}
	env["ACC_MCP_WORKSPACE"] = "rel"
	if _, err := ConfigFromEnv(func(k string) string { return env[k] }, "/launch"); err == nil {
		t.Fatal("a relative ACC_MCP_WORKSPACE was accepted")
	}
}

func TestInitializeBothRevisions(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			r := newRoom(t)
			c := startInProcess(t, r, "research")
			res := c.initialize(version)["result"].(map[string]any)
			if res["protocolVersion"] != version {
				t.Fatalf("negotiated %v", res["protocolVersion"])
			}
			if _, ok := res["resultType"]; ok {
				t.Error("initialize carries resultType")
			}
			if b, _ := json.Marshal(res["capabilities"]); string(b) != `{"resources":{"subscribe":true},"tools":{}}` {
				t.Errorf("capabilities %s", b)
			}
			tools := c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
			if len(tools) != 12 {
				t.Errorf("%d tools", len(tools))
			}
			c.send(`{"jsonrpc":"2.0","id":"still-alive","method":"ping"}`)
			if b, _ := json.Marshal(c.wait(`"still-alive"`)["result"]); string(b) != "{}" {
				t.Errorf("ping: %s", b)
			}
			inbox := c.ok("acc_inbox", map[string]any{})
			if b, _ := json.Marshal(inbox); string(b) != `{"items":[],"nextCursor":null}` {
				t.Errorf("empty inbox: %s", b)
			}
			st := c.ok("acc_status", map[string]any{})
			ps := st["participants"].([]any)
			if len(ps) != 1 || ps[0].(map[string]any)["participantId"] != "research" || ps[0].(map[string]any)["harness"] != "mcp" ||
				ps[0].(map[string]any)["enforcement"] != "advisory" || ps[0].(map[string]any)["lifecycle"] != "manual" {
				t.Errorf("roster: %v", ps)
			}
			if _, isErr, text := c.tool("acc_work", map[string]any{}); !isErr || !strings.HasPrefix(text, "acc_work: ") {
				t.Errorf("acc_work {}: %v %s", isErr, text)
			}
		})
	}
	t.Run("2099-01-01", func(t *testing.T) {
		c := startInProcess(t, newRoom(t), "mcp")
		if v := c.initialize("2099-01-01")["result"].(map[string]any)["protocolVersion"]; v != "2025-11-25" {
			t.Errorf("negotiated %v", v)
		}
	})
}

// TestToolsListGolden compares tools/list (every schema) with
// testdata/tools_list.json; ACC_UPDATE=1 rewrites it. A missing snapshot
// fails: it is never created silently.
func TestToolsListGolden(t *testing.T) {
	c := startInProcess(t, newRoom(t), "mcp")
	c.initialize("2025-11-25")
	got, err := json.MarshalIndent(c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"], "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tools_list.json", append(got, '\n'))
}

func TestEveryTool(t *testing.T) {
	r := newRoom(t)
	c := startInProcess(t, r, "research")
	c.initialize("2025-11-25")
	c.ok("acc_status", map[string]any{}) // attaches research
	peer := r.acc("attach", "--participant", "alice")
	as := []string{"--session", peer["sessionId"].(string), "--generation", peer["generation"].(string)}

	if d := c.ok("acc_sync", map[string]any{}); d["cursor"] == nil {
		t.Errorf("sync delta: %v", d)
	}
	if d := c.ok("acc_sync", map[string]any{"scope": "history"}); d["view"] != "summary" {
		t.Errorf("sync history: %v", d)
	}
	if d := c.ok("acc_work", map[string]any{"summary": "docs", "mode": "edit", "resourceHints": []any{"file:docs/**"}}); d["summary"] != "docs" {
		t.Errorf("work: %v", d)
	}
	if d := c.ok("acc_work", map[string]any{"clear": true}); d["cleared"] != true {
		t.Errorf("work clear: %v", d)
	}
	cl := c.ok("acc_claim", map[string]any{"action": "acquire", "resource": "file:a.txt", "reason": "edit"})
	if cl["enforcement"] != "advisory" {
		t.Errorf("claim: %v", cl)
	}
	id := cl["claimId"].(string)
	if d := c.ok("acc_claim", map[string]any{"action": "renew", "claimId": id, "leaseSeconds": 60}); d["claimId"] != id {
		t.Errorf("renew: %v", d)
	}
	if d := c.ok("acc_release", map[string]any{"claimId": id}); d["released"] != id {
		t.Errorf("release: %v", d)
	}
	m := c.ok("acc_message", map[string]any{"to": []any{"alice"}, "subject": "hi", "body": "hello"})
	if m["message"].(map[string]any)["kind"] != "note" || len(m["delivery"].([]any)) != 1 {
		t.Errorf("message: %v", m)
	}
	if d := c.ok("acc_request", map[string]any{"toParticipantId": "alice", "title": "review docs"}); d["message"].(map[string]any)["obligation"] != "reply" {
		t.Errorf("request: %v", d)
	}
	// alice asks for an acknowledgement; research acknowledges it.
	dec := r.acc(append([]string{"message", "--to", "research", "--type", "decision", "--obligation", "acknowledge", "--subject", "use Go", "--body", "decided"}, as...)...)
	did := dec["message"].(map[string]any)["messageId"].(string)
	if rc := c.ok("acc_ack", map[string]any{"messageId": did}); rc["state"] != "acknowledged" {
		t.Errorf("ack: %v", rc)
	}
	q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "q", "--body", "?"}, as...)...)
	qid := q["message"].(map[string]any)["messageId"].(string)
	if d := c.ok("acc_reply", map[string]any{"messageId": qid, "body": "yes"}); d["receipt"].(map[string]any)["state"] != "acknowledged" {
		t.Errorf("reply: %v", d)
	}
	fin := c.ok("acc_finish", map[string]any{"goal": "docs", "status": "complete", "toParticipantId": "alice"})
	if fin["message"].(map[string]any)["kind"] != "handoff" {
		t.Errorf("finish: %v", fin)
	}
	// The next call attaches a new session.
	st := c.ok("acc_status", map[string]any{})
	if n := len(st["participants"].([]any)); n != 2 {
		t.Errorf("after finish: %d participants", n)
	}
	for _, uri := range []string{"acc://snapshot", "acc://roster", "acc://inbox"} {
		res := c.request("resources/read", map[string]any{"uri": uri})
		contents, ok := res["result"].(map[string]any)["contents"].([]any)
		if !ok || len(contents) != 1 || !json.Valid([]byte(contents[0].(map[string]any)["text"].(string))) {
			t.Errorf("%s: %v", uri, res)
		}
	}
	if n := len(c.request("resources/list", map[string]any{})["result"].(map[string]any)["resources"].([]any)); n != 3 {
		t.Errorf("%d resources", n)
	}
}

// TestBadInput: each refusal is answered as the contract says, the
// connection stays usable, and the store does not change.
func TestBadInput(t *testing.T) {
	r := newRoom(t)
	r.acc("attach", "--participant", "alice")
	c := startInProcess(t, r, "research")
	// A request between initialize and initialized, then a second initialize.
	c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
	before := r.fingerprint()
	if code := c.request("tools/list", map[string]any{})["error"].(map[string]any)["code"]; code != -32600.0 {
		t.Errorf("before initialized: %v", code)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})["error"].(map[string]any)["code"]; code != -32600.0 {
		t.Errorf("second initialize: %v", code)
	}
	// The framing vector of docs/mcp.md#conformance.
	for _, line := range []string{`null`, `{`, `{"method":42,"id":7}`, `{"jsonrpc":"2.0","id":8,"method":"ping","params":false}`} {
		c.send(line)
	}
	for key, code := range map[string]float64{"null": -32600, "null#1": -32700, "7": -32600, "8": -32602} {
		if got := c.wait(key)["error"].(map[string]any)["code"]; got != code {
			t.Errorf("reply %s: code %v, want %v", key, got, code)
		}
	}
	cases := []struct {
		tool   string
		args   any
		field  string
		reason string // "" when another test pins it
	}{
		{"acc_teleport", map[string]any{}, "unknown tool", "unknown_tool"},
		{"acc_status", map[string]any{"legacyField": true}, "arguments.legacyField", "unknown_argument"},
		{"acc_message", map[string]any{"to": []any{"alice"}, "subject": "s", "body": "b", "priority": "high"}, "arguments.priority", "unknown_argument"},
		{"acc_inbox", map[string]any{"limit": "ten"}, "arguments.limit", ""},
		{"acc_inbox", map[string]any{"limit": 501}, "arguments.limit", "invalid_limit"},
		{"acc_inbox", map[string]any{"limit": 0}, "arguments.limit", "invalid_limit"},
		{"acc_inbox", map[string]any{"messageId": "message_x", "cursor": "message_y"}, "arguments", ""},
		{"acc_message", map[string]any{"to": []any{"alice"}, "subject": "s", "body": "b", "kind": "answer"}, "arguments.kind", ""},
		{"acc_claim", map[string]any{"action": "renew", "resource": "file:a"}, "arguments", ""},
		{"acc_sync", map[string]any{"kind": "note"}, "arguments.kind", "sync_usage"},
		{"acc_work", map[string]any{"clear": false}, "arguments", ""},
	}
	for _, tc := range cases {
		_, isErr, text := c.tool(tc.tool, tc.args)
		if !isErr || !strings.HasPrefix(text, tc.tool+": ") || !strings.Contains(text, tc.field) {
			t.Errorf("%s %v: isError %v, %q", tc.tool, tc.args, isErr, text)
		}
		if tc.reason != "" && !strings.HasSuffix(text, "(usage, "+tc.reason+")") {
			t.Errorf("%s %v: %q, want reason %s (exit 2)", tc.tool, tc.args, text, tc.reason)
		}
	}
	// The roster still shows no research session: invalid calls create no presence.
	roster := c.request("resources/read", map[string]any{"uri": "acc://roster"})["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)["text"].(string)
	if strings.Contains(roster, "research") {
		t.Errorf("an invalid call created presence: %s", roster)
	}
	if after := r.fingerprint(); after != before {
		t.Error("the store changed")
	}
	if b, _ := json.Marshal(c.request("ping", map[string]any{})["result"]); string(b) != "{}" {
		t.Errorf("connection not usable: %s", b)
	}
}

func TestBinaryExchangeWithCLI(t *testing.T) {
	r := newRoom(t)
	c := startBinary(t, r, "research")
	c.initialize("2025-06-18")
	c.ok("acc_status", map[string]any{})
	alice := r.acc("attach", "--participant", "alice")
	as := []string{"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string)}
	q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "which port?", "--body", "8080 or 9090?"}, as...)...)
	qid := q["message"].(map[string]any)["messageId"].(string)

	page := c.ok("acc_inbox", map[string]any{})
	items := page["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"].(map[string]any)["messageId"] != qid {
		t.Fatalf("inbox: %v", page)
	}
	if _, hasBody := items[0].(map[string]any)["message"].(map[string]any)["body"]; hasBody {
		t.Error("a summary carries the body")
	}
	v, isErr, text := c.tool("acc_inbox", map[string]any{"messageId": qid})
	if isErr {
		t.Fatal(text)
	}
	exact := v.([]any)[0].(map[string]any)
	if exact["receipt"].(map[string]any)["state"] != "retrieved" || exact["message"].(map[string]any)["body"] != "8080 or 9090?" {
		t.Errorf("exact read: %v", exact)
	}
	rep := c.ok("acc_reply", map[string]any{"messageId": qid, "body": "9090"})
	if rep["receipt"].(map[string]any)["state"] != "acknowledged" {
		t.Errorf("reply: %v", rep)
	}
	got := r.acc(append([]string{"inbox"}, as...)...)
	its := got["items"].([]any)
	if len(its) != 1 || its[0].(map[string]any)["message"].(map[string]any)["kind"] != "answer" {
		t.Errorf("alice's inbox: %v", got)
	}
}

func TestTwoServers(t *testing.T) {
	r := newRoom(t)
	one := startBinary(t, r, "one")
	two := startBinary(t, r, "two")
	one.initialize("2025-11-25")
	two.initialize("2025-06-18")
	one.ok("acc_status", map[string]any{})
	two.ok("acc_status", map[string]any{})
	q := one.ok("acc_message", map[string]any{"to": []any{"two"}, "kind": "question", "subject": "ready?", "body": "are you ready?"})
	qid := q["message"].(map[string]any)["messageId"].(string)
	items := two.ok("acc_inbox", map[string]any{})["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"].(map[string]any)["messageId"] != qid {
		t.Fatalf("two's inbox: %v", items)
	}
	two.ok("acc_reply", map[string]any{"messageId": qid, "body": "ready"})
	ans := one.ok("acc_inbox", map[string]any{})["items"].([]any)
	if len(ans) != 1 {
		t.Fatalf("one's inbox: %v", ans)
	}
	v, _, _ := one.tool("acc_inbox", map[string]any{"messageId": ans[0].(map[string]any)["message"].(map[string]any)["messageId"]})
	if body := v.([]any)[0].(map[string]any)["message"].(map[string]any)["body"]; body != "ready" {
		t.Errorf("answer body %v", body)
	}
}

// TestDeliveryThroughMCP: acc_message reports each recipient's path as the
// CLI does (pkg/router); an MCP participant, whose capability floor has no
// next-turn delivery, is reached through its inbox.
func TestDeliveryThroughMCP(t *testing.T) {
	r := newRoom(t)
	c := startBinary(t, r, "research")
	c.initialize("2025-11-25")
	c.ok("acc_status", map[string]any{})
	alice := r.acc("attach", "--participant", "alice")
	ghost := r.acc("attach", "--participant", "ghost")
	r.acc("detach", "--session", ghost["sessionId"].(string), "--generation", ghost["generation"].(string))
	m := c.ok("acc_message", map[string]any{"to": []any{"alice", "ghost"}, "subject": "s", "body": "b"})
	for _, d := range m["delivery"].([]any) {
		d := d.(map[string]any)
		want := map[string]string{"alice": "unsupported_client_version", "ghost": "recipient_unavailable"}[d["recipientParticipantId"].(string)]
		if d["outcome"] != "queued" || d["transport"] != "durable" || d["errorCode"] != want {
			t.Errorf("delivery %v, want queued via durable (%s)", d, want)
		}
	}
	back := r.acc("message", "--to", "research", "--subject", "s", "--body", "b",
		"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string))
	d := back["delivery"].([]any)[0].(map[string]any)
	if d["transport"] != "durable" || d["errorCode"] != "unsupported_client_version" {
		t.Errorf("to the MCP participant: %v", d)
	}
}

// TestInboxSubscription: a client subscribed to acc://inbox gets
// notifications/resources/updated when a CLI session sends it a message,
// and none after it unsubscribed; other URIs cannot be subscribed to.
func TestInboxSubscription(t *testing.T) { inboxSubscription(t, newRoom(t)) }

// TestInboxSubscriptionPostgres: the same with the room on the PostgreSQL
// test server, where acc-mcp hears of changes through LISTEN/NOTIFY.
func TestInboxSubscriptionPostgres(t *testing.T) { inboxSubscription(t, newRoomPG(t)) }

func inboxSubscription(t *testing.T, r *room) {
	c, p := spawnBinary(t, r, "research")
	t.Cleanup(func() { p.in.Close(); p.cmd.Wait() })
	c.initialize("2025-11-25")
	if e, _ := c.request("resources/subscribe", map[string]any{"uri": "acc://snapshot"})["error"].(map[string]any); e == nil {
		t.Error("subscribing to acc://snapshot was accepted")
	}
	result(t, c.request("resources/subscribe", map[string]any{"uri": "acc://inbox"}))
	alice := r.acc("attach", "--participant", "alice")
	as := []string{"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string)}
	sent := time.Now()
	r.acc(append([]string{"message", "--to", "research", "--subject", "s", "--body", "b"}, as...)...)
	deadline := time.Now().Add(10 * time.Second)
	for len(c.notifications()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no notification within 10 s of the send")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("notified %v after the send returned", time.Since(sent).Round(time.Millisecond))
	var n struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal(c.notifications()[0], &n); err != nil || n.Method != "notifications/resources/updated" || n.Params.URI != "acc://inbox" {
		t.Fatalf("notification %s", c.notifications()[0])
	}
	// Quiet: nothing changes, so nothing more is sent (reading the inbox
	// to compare must not itself look like a change), and the watch does
	// not spin: acc-mcp, the store's only user now, uses next to no CPU.
	time.Sleep(time.Second)
	if n := len(c.notifications()); n != 1 {
		t.Fatalf("%d notifications for one send", n)
	}
	cpu0 := cpuTime(t, p.cmd.Process.Pid)
	time.Sleep(3 * time.Second)
	if used := cpuTime(t, p.cmd.Process.Pid) - cpu0; used > time.Second {
		t.Errorf("an idle subscribed acc-mcp used %v of CPU in 3 s", used)
	}
	// A receipt that moves elsewhere (the same participant reading from a
	// CLI session) changes the inbox, so the subscriber hears of it.
	other := r.acc("attach", "--participant", "research")
	ss := []string{"--session", other["sessionId"].(string), "--generation", other["generation"].(string)}
	id := r.acc(append([]string{"inbox"}, ss...)...)["items"].([]any)[0].(map[string]any)["message"].(map[string]any)["messageId"].(string)
	read := exec.Command(filepath.Join(binDir, "acc"), append([]string{"inbox", "--message", id}, ss...)...)
	read.Dir, read.Env = r.ws, r.environ()
	if out, err := read.CombinedOutput(); err != nil {
		t.Fatalf("reading elsewhere: %v %s", err, out)
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(c.notifications()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no notification within 10 s of the message being read elsewhere")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A participant whose session finished still hears of what arrives.
	c.ok("acc_finish", map[string]any{"goal": "done for now"})
	n0 := len(c.notifications())
	r.acc(append([]string{"message", "--to", "research", "--subject", "after finish", "--body", "b"}, as...)...)
	deadline = time.Now().Add(10 * time.Second)
	for len(c.notifications()) == n0 {
		if time.Now().After(deadline) {
			t.Fatal("no notification for a message sent after acc_finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Subscribing twice is one subscription: one unsubscribe ends it.
	result(t, c.request("resources/subscribe", map[string]any{"uri": "acc://inbox"}))
	result(t, c.request("resources/unsubscribe", map[string]any{"uri": "acc://inbox"}))
	before := len(c.notifications())
	r.acc(append([]string{"message", "--to", "research", "--subject", "s2", "--body", "b"}, as...)...)
	time.Sleep(500 * time.Millisecond)
	if len(c.notifications()) != before {
		t.Errorf("notified after unsubscribing: %s", c.notifications()[before:])
	}
}

// cpuTime is the user plus system CPU time process pid has used, from
// /proc/<pid>/stat (clock ticks of 10 ms).
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	// Fields after the command name (which may hold spaces) start at ")".
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
