package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeClientBin writes a program named name that answers --version with
// version, and returns its directory (to put first on a hook's PATH).
func fakeClientBin(t *testing.T, name, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type delivery struct {
	RecipientParticipantID string  `json:"recipientParticipantId"`
	Outcome                string  `json:"outcome"`
	Transport              string  `json:"transport"`
	ErrorCode              *string `json:"errorCode"`
}

func (sb *sandbox) deliver(from session, args ...string) ([]delivery, string) {
	sb.t.Helper()
	var out struct {
		Message  struct{ MessageID string } `json:"message"`
		Delivery []delivery                 `json:"delivery"`
	}
	sb.jsonOK(&out, from.dir, append(append([]string{"message"}, args...), from.creds()...)...)
	return out.Delivery, out.Message.MessageID
}

func wantDelivery(t *testing.T, label string, got []delivery, participant, outcome, transport, code string) {
	t.Helper()
	for _, d := range got {
		if d.RecipientParticipantID != participant {
			continue
		}
		c := ""
		if d.ErrorCode != nil {
			c = *d.ErrorCode
		}
		if d.Outcome != outcome || d.Transport != transport || c != code {
			b, _ := json.Marshal(d)
			t.Errorf("%s: %s, want %s via %s (%q)", label, b, outcome, transport, code)
		}
		return
	}
	t.Errorf("%s: no delivery for %s in %+v", label, participant, got)
}

// sendSpec is one send, spelled for either front.
type sendSpec struct {
	to                            []string
	kind, subject, body, clientID string
	supersedes                    string
}

func (sp sendSpec) flags() []string {
	var out []string
	for _, p := range sp.to {
		out = append(out, "--to", p)
	}
	out = append(out, "--subject", sp.subject, "--body", sp.body)
	if sp.kind != "" {
		out = append(out, "--type", sp.kind)
	}
	if sp.clientID != "" {
		out = append(out, "--client-message-id", sp.clientID)
	}
	if sp.supersedes != "" {
		out = append(out, "--supersedes", sp.supersedes)
	}
	return out
}

func (sp sendSpec) arguments() map[string]any {
	to := []any{}
	for _, p := range sp.to {
		to = append(to, p)
	}
	args := map[string]any{"to": to, "subject": sp.subject, "body": sp.body}
	if sp.kind != "" {
		args["kind"] = sp.kind
	}
	if sp.clientID != "" {
		args["clientMessageId"] = sp.clientID
	}
	if sp.supersedes != "" {
		args["supersedes"] = []any{sp.supersedes}
	}
	return args
}

// mcpSender is a running acc-mcp for one participant, driven over its
// stdio like any MCP client (2025-11-25).
type mcpSender struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	next int
}

func (sb *sandbox) startMCP(participant, workspace string, env ...string) *mcpSender {
	sb.t.Helper()
	cmd := exec.Command(mcpBin)
	cmd.Dir = sb.t.TempDir()
	cmd.Env = append(append(sb.environ(), "ACC_MCP_PARTICIPANT="+participant, "ACC_MCP_WORKSPACE="+workspace), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		sb.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		sb.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		sb.t.Fatal(err)
	}
	m := &mcpSender{t: sb.t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	m.out.Buffer(nil, 16<<20)
	sb.t.Cleanup(func() { in.Close(); cmd.Wait() })
	m.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}})
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// call sends one request and returns its result (requests are sent one at
// a time, so the next line with an id is the answer).
func (m *mcpSender) call(method string, params any) json.RawMessage {
	m.t.Helper()
	m.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.next, "method": method, "params": params})
	fmt.Fprintln(m.in, string(b))
	for m.out.Scan() {
		var r struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(m.out.Bytes(), &r); err != nil || r.ID == nil {
			continue // a notification
		}
		if r.Error != nil {
			m.t.Fatalf("%s: %s", method, r.Error)
		}
		return r.Result
	}
	m.t.Fatalf("%s: acc-mcp closed its output", method)
	return nil
}

func (m *mcpSender) deliver(sp sendSpec) ([]delivery, string) {
	m.t.Helper()
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Message  struct{ MessageID string } `json:"message"`
			Delivery []delivery                 `json:"delivery"`
		} `json:"structuredContent"`
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(m.call("tools/call", map[string]any{"name": "acc_message", "arguments": sp.arguments()}), &res); err != nil || res.IsError {
		m.t.Fatalf("acc_message %v: %v %+v", sp.arguments(), err, res.Content)
	}
	return res.StructuredContent.Delivery, res.StructuredContent.Message.MessageID
}

// TestDeliveryOutcomes drives each reachable row of the router's table
// through the built acc and through acc-mcp, with real sessions: a hooked
// Claude Code session whose version has next-turn proven, a hooked one
// whose version has nothing proven, a manual CLI session, a participant
// with no live session, a room message, a repeated send after the
// receipt moved, a send to one's own participant, and the repeat of a
// decision superseded since. Every fallback leaves the receipt queued;
// next-turn leaves it queued until the recipient's hook hands the message
// to its client.
func TestDeliveryOutcomes(t *testing.T) {
	for _, front := range []string{"cli", "mcp"} {
		t.Run(front, func(t *testing.T) { deliveryOutcomes(t, front) })
	}
}

func deliveryOutcomes(t *testing.T, front string) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	proven := fakeClientBin(t, "claude", "2.1.332 (Claude Code)")
	old := fakeClientBin(t, "claude", "1.0.0 (Claude Code)")
	sb.hookSession(claude, "sid-hooked", repo, "ACC_PARTICIPANT=hooked", "PATH="+proven+":"+os.Getenv("PATH"))
	sb.hookSession(claude, "sid-old", repo, "ACC_PARTICIPANT=oldclient", "PATH="+old+":"+os.Getenv("PATH"))
	sb.attach(repo, "manual", "cli")
	gone := sb.attach(repo, "gone", "cli")
	sb.ok(repo, append([]string{"detach"}, gone.creds()...)...)
	wsID := sb.roomStatus(repo).WorkspaceID
	var send func(sendSpec) ([]delivery, string)
	self := "sender"
	switch front {
	case "cli":
		sender := sb.attach(repo, "sender", "cli")
		send = func(sp sendSpec) ([]delivery, string) { return sb.deliver(sender, sp.flags()...) }
	case "mcp":
		m := sb.startMCP("sender", repo)
		send = m.deliver
	}

	q := sendSpec{to: []string{"hooked"}, kind: "question", subject: "q", body: "?", clientID: "client_q1"}
	d, qid := send(q)
	wantDelivery(t, "next turn", d, "hooked", "queued", "next-turn", "")
	d, oldID := send(sendSpec{to: []string{"oldclient"}, subject: "n", body: "b"})
	wantDelivery(t, "version not proven", d, "oldclient", "queued", "durable", "unsupported_client_version")
	d, manualID := send(sendSpec{to: []string{"manual"}, subject: "n", body: "b"})
	wantDelivery(t, "manual session", d, "manual", "queued", "durable", "unsupported_client_version")
	d, goneID := send(sendSpec{to: []string{"gone"}, subject: "n", body: "b"})
	wantDelivery(t, "no live session", d, "gone", "queued", "durable", "recipient_unavailable")
	// A room message addresses nobody: no delivery entries
	// (docs/decisions.md#22-waiting); it still waits in every open session's inbox.
	if d, _ = send(sendSpec{subject: "room note", body: "b"}); len(d) != 0 {
		t.Errorf("room message: delivery %+v, want none", d)
	}
	// A session is never a live session of the recipient for its own
	// message: the sender is its participant's only session, so sending
	// to itself finds nobody live.
	d, selfID := send(sendSpec{to: []string{self}, subject: "note to self", body: "b"})
	wantDelivery(t, "to one's own participant", d, self, "queued", "durable", "recipient_unavailable")

	store := sb.openStore(wsID)
	for _, fb := range []struct{ id, who string }{{oldID, "oldclient"}, {manualID, "manual"}, {goneID, "gone"}, {selfID, self}} {
		if got := receiptState(t, store, fb.id, fb.who); got != "queued" {
			t.Errorf("a fallback to %s left the receipt %s, want queued", fb.who, got)
		}
	}
	if got := receiptState(t, store, qid, "hooked"); got != "queued" {
		t.Errorf("next-turn path: the receipt is %s before the recipient's turn, want queued", got)
	}
	store.Close()
	sb.turn(claude, "sid-hooked", repo)
	store = sb.openStore(wsID)
	if got := receiptState(t, store, qid, "hooked"); got != "offered" {
		t.Errorf("after the recipient's turn the receipt is %s, want offered", got)
	}
	store.Close()
	// The same send again reports where the receipt stands.
	d, _ = send(q)
	wantDelivery(t, "repeated send", d, "hooked", "offered", "durable", "")

	// A decision superseded before its send is repeated is no longer
	// pending anywhere, so the repeat promises no next turn.
	decide := sendSpec{to: []string{"hooked"}, kind: "decision", subject: "port", body: "8080", clientID: "client_d1"}
	// The recipient is in a turn now (its prompt hook ran, no stop yet),
	// and Claude Code 2.1.332 has mid-turn delivery proven: the decision
	// goes after its next tool call.
	d, d1 := send(decide)
	wantDelivery(t, "a decision", d, "hooked", "queued", "mid-turn", "")
	send(sendSpec{kind: "decision", supersedes: d1, subject: "port", body: "9090"})
	d, again := send(decide)
	if again != d1 {
		t.Fatalf("the repeated send recorded %s, not %s", again, d1)
	}
	wantDelivery(t, "a repeated, superseded decision", d, "hooked", "queued", "durable", "")
}

// TestSendWordsNameTheReader: the text a send prints names what really
// brings the message to each recipient. A participant with a CLI session
// and a hooked Claude Code session (listed in that order) hears of the
// Claude Code session's next turn and of the CLI session that may read it
// first; a message to one's own participant does not say "no live
// session" while the sending session is live.
func TestSendWordsNameTheReader(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	sb.attach(repo, "mix", "cli")
	proven := fakeClientBin(t, "claude", "2.1.332 (Claude Code)")
	sb.hookSession(claude, "sid-mix", repo, "ACC_PARTICIPANT=mix", "PATH="+proven+":"+os.Getenv("PATH"))
	alice := sb.attach(repo, "alice", "cli")

	res := sb.as(alice, "message", "--to", "mix", "--type", "question", "--subject", "port?", "--body", "8080?")
	if res.code != 0 {
		t.Fatalf("send: %s", res)
	}
	want := "  mix: queued; their Claude Code 2.1.332 shows it at its next turn, unless their CLI session reads it first with acc inbox\n"
	if !strings.Contains(res.stdout, want) {
		t.Errorf("send to mix printed\n%s\nwant the line\n%s", res.stdout, want)
	}

	res = sb.as(alice, "message", "--to", "alice", "--subject", "note to self", "--body", "b")
	if res.code != 0 {
		t.Fatalf("send to self: %s", res)
	}
	want = "  alice: queued; no live session of theirs apart from the sender, so it waits in their inbox\n"
	if !strings.Contains(res.stdout, want) {
		t.Errorf("send to oneself printed\n%s\nwant the line\n%s", res.stdout, want)
	}
}
