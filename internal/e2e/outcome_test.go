package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// runEnv runs acc in dir with extra environment variables (an
// ACC_FAILPOINT) and returns what it did.
func (sb *sandbox) runEnv(dir string, env []string, args ...string) result {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := sb.command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{args: args, stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
}

// runShell runs line, a command acc printed for a person to paste, with
// /bin/sh in dir, where `acc` is the built binary; it returns what it did.
func (sb *sandbox) runShell(dir, line string) result {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(sb.environ(), "PATH="+filepath.Dir(accBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{args: []string{"sh", "-c", line}, stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
}

// sent runs a send as s and returns the recorded message id.
func (sb *sandbox) sent(s session, args ...string) string {
	sb.t.Helper()
	res := sb.as(s, args...)
	if id := recordedID(res.stdout); res.code == 0 && id != "" {
		return id
	}
	sb.t.Fatalf("expected the send to be recorded, got:\n%s", res)
	return ""
}

// roomState is what the writes under test leave in a store.
type roomState struct {
	messagesBy map[string]int // subject → how many messages carry it
	claims     int
	acked      map[string]bool // message id → alice's receipt is acknowledged
	sessions   map[string]int  // participant → sessions recorded
	open       map[string]bool // session id → open
}

func (sb *sandbox) roomState(workspaceID string) roomState {
	sb.t.Helper()
	st := sb.openStore(workspaceID)
	defer st.Close()
	rs := roomState{messagesBy: map[string]int{}, acked: map[string]bool{}, sessions: map[string]int{}, open: map[string]bool{}}
	ctx, cancel := withTimeout()
	defer cancel()
	err := st.View(ctx, func(tx storage.ReadTx) error {
		if err := tx.ScanMessages(storage.MessageQuery{}, func(m protocol.Message) bool {
			rs.messagesBy[m.Subject]++
			return true
		}); err != nil {
			return err
		}
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		rs.claims = len(claims)
		for _, area := range []storage.Area{storage.Ephemeral, storage.Durable} {
			ss, err := tx.Sessions(area, false)
			if err != nil {
				return err
			}
			for _, s := range ss {
				rs.sessions[s.ParticipantID]++
				rs.open[s.SessionID] = s.State == protocol.SessionOpen
			}
		}
		return nil
	})
	if err != nil {
		sb.t.Fatalf("read the store: %v", err)
	}
	snap := readSnapshot(sb.t, st)
	for _, m := range snap.messages {
		for _, rc := range snap.receipts[m.MessageID] {
			if rc.RecipientParticipantID == "alice" && rc.State == protocol.ReceiptAcknowledged {
				rs.acked[m.MessageID] = true
			}
		}
	}
	return rs
}

// outcomeCase is one write whose COMMIT a failpoint breaks.
type outcomeCase struct {
	name string
	// prepare readies the room and returns the command's arguments (run as
	// alice unless it is attach) and the message it works on, if any.
	prepare func(sb *sandbox, alice, bob session) (args []string, msg string)
	// effect counts what the write leaves: 0 before it, 1 once done.
	effect func(rs roomState, msg string) int
	// landedRetry is the exit code and reason of the printed retry when
	// the first run landed ("" for exit 0).
	landedRetry string
}

func outcomeCases() []outcomeCase {
	bool01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	return []outcomeCase{
		{name: "message",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				return append([]string{"message", "--to", "bob", "--subject", "uncertain", "--body", "it's the body"}, a.creds()...), ""
			},
			effect: func(rs roomState, _ string) int { return rs.messagesBy["uncertain"] }},
		{name: "request",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				return append([]string{"request", "--to", "bob", "--title", "uncertain"}, a.creds()...), ""
			},
			effect: func(rs roomState, _ string) int { return rs.messagesBy["uncertain"] }},
		{name: "reply",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				q := sb.sent(b, "message", "--to", "alice", "--type", "question", "--subject", "q", "--body", "?")
				return append([]string{"reply", "--message", q, "--body", "answer"}, a.creds()...), q
			},
			effect: func(rs roomState, _ string) int { return rs.messagesBy["Re: q"] }},
		{name: "ack",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				n := sb.sent(b, "message", "--to", "alice", "--type", "decision", "--obligation", "acknowledge", "--subject", "n", "--body", "b")
				return append([]string{"ack", "--message", n}, a.creds()...), n
			},
			effect: func(rs roomState, msg string) int { return bool01(rs.acked[msg]) }},
		{name: "claim",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				return append([]string{"claim", "--resource", "file:README"}, a.creds()...), ""
			},
			effect: func(rs roomState, _ string) int { return rs.claims }},
		{name: "release", landedRetry: protocol.ReasonClaimNotFound,
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				sb.ok(a.dir, append([]string{"claim", "--resource", "file:README"}, a.creds()...)...)
				return append([]string{"release", "--resource", "file:README"}, a.creds()...), ""
			},
			effect: func(rs roomState, _ string) int { return 1 - rs.claims }},
		{name: "finish",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				return append([]string{"finish", "--goal", "uncertain", "--to", "bob"}, a.creds()...), a.SessionID
			},
			effect: func(rs roomState, sid string) int {
				if rs.open[sid] == (rs.messagesBy["uncertain"] == 1) {
					return -1 // a handoff without its closed session, or the reverse
				}
				return rs.messagesBy["uncertain"]
			}},
		{name: "attach",
			prepare: func(sb *sandbox, a, b session) ([]string, string) {
				return []string{"attach", "--participant", "carol"}, ""
			},
			effect: func(rs roomState, _ string) int { return rs.sessions["carol"] }},
	}
}

// TestOutcomeUnknownNamesATrueRetry breaks the COMMIT of each write with an
// I/O error, once after it landed and once instead of it: each run exits 4
// outcome_unknown naming the command to run again (with the send's
// clientMessageId), which leaves exactly one copy of the write either way;
// when it did not land the store is unchanged.
func TestOutcomeUnknownNamesATrueRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range outcomeCases() {
		for _, point := range []string{storage.FailCommitLanded, storage.FailCommitLost} {
			t.Run(tc.name+"/"+point, func(t *testing.T) {
				t.Parallel()
				sb := newSandbox(t)
				repo := sb.newRepo("repo")
				alice := sb.attach(repo, "alice", "cli")
				bob := sb.attach(repo, "bob", "cli")
				args, msg := tc.prepare(sb, alice, bob)
				before := fingerprint(t, sb, alice.WorkspaceID)
				if n := tc.effect(sb.roomState(alice.WorkspaceID), msg); n != 0 {
					t.Fatalf("before the write its effect counts %d", n)
				}
				res := sb.runEnv(repo, []string{"ACC_FAILPOINT=" + point}, append(args, "--json")...)
				if res.code != 4 {
					t.Fatalf("expected exit 4, got:\n%s", res)
				}
				env := sb.parseEnvelope(res)
				if env.OK || env.Error.Details["reasonCode"] != protocol.ReasonOutcomeUnknown || env.Error.Code != 4 {
					t.Fatalf("expected an outcome_unknown envelope, got:\n%s", res)
				}
				if !strings.Contains(env.Error.Message, "cannot tell whether it was recorded") {
					t.Fatalf("the message does not say the outcome is unknown:\n%s", res)
				}
				retry, _ := env.Error.Details["retry"].(string)
				if retry == "" || !strings.Contains(env.Error.Message, retry) {
					t.Fatalf("expected details.retry, also in the message, got:\n%s", res)
				}
				switch tc.name {
				case "message", "request", "reply", "finish":
					key, _ := env.Error.Details["clientMessageId"].(string)
					if !protocol.IsGeneratedID(protocol.KindClient, key) || !strings.HasSuffix(retry, " --client-message-id "+key) ||
						!strings.Contains(env.Error.Message, "it used clientMessageId "+key) {
						t.Fatalf("expected the send's clientMessageId in the details, the message and the retry, got:\n%s", res)
					}
				case "attach":
					sid, _ := env.Error.Details["sessionId"].(string)
					if !strings.Contains(env.Error.Message, "`acc status` shows whether session "+sid+" is open now") {
						t.Fatalf("expected the attach's session id and how to check it, got:\n%s", res)
					}
					if _, recorded := sb.roomState(alice.WorkspaceID).open[sid]; recorded != (point == storage.FailCommitLanded) {
						t.Fatalf("session %s recorded=%v after %s", sid, recorded, point)
					}
				}
				landed := point == storage.FailCommitLanded
				if got, want := tc.effect(sb.roomState(alice.WorkspaceID), msg), map[bool]int{true: 1, false: 0}[landed]; got != want {
					t.Fatalf("after %s the write's effect counts %d, want %d", point, got, want)
				}
				if !landed && fingerprint(t, sb, alice.WorkspaceID) != before {
					t.Fatalf("a COMMIT that never ran changed the store")
				}
				// The printed retry, pasted into a shell.
				again := sb.runShell(repo, retry)
				if landed && tc.landedRetry != "" {
					if again.code != 5 || sb.parseEnvelope(again).Error.Details["reasonCode"] != tc.landedRetry {
						t.Fatalf("expected the retry to answer %s, got:\n%s", tc.landedRetry, again)
					}
				} else if again.code != 0 {
					t.Fatalf("expected the printed retry to exit 0, got:\n%s", again)
				}
				want := 1
				if tc.name == "attach" && landed {
					want = 2 // the lost generation's session stays; the retry opened a usable one
				}
				if got := tc.effect(sb.roomState(alice.WorkspaceID), msg); got != want {
					t.Fatalf("after the retry the write's effect counts %d, want %d", got, want)
				}
				checkIntegrity(t, sb.openStore(alice.WorkspaceID))
			})
		}
	}
}

// TestACommittedWriteOutlivesTheDeadline lets the command's deadline run
// out right before and right after each write's COMMIT: the write is
// recorded once and the command exits 0 printing it, and a send is routed
// as usual instead of failing on the spent deadline. Each run waits out the
// whole deadline, so all of them run at once (a failed preparation fails
// the test from its goroutine).
func TestACommittedWriteOutlivesTheDeadline(t *testing.T) {
	t.Parallel()
	type run struct {
		tc    outcomeCase
		point string
		sb    *sandbox
		alice session
		msg   string
		args  []string
		res   result
	}
	var runs []*run
	for _, tc := range outcomeCases() {
		for _, point := range []string{storage.FailStallBeforeCommit, storage.FailStallAfterCommit} {
			runs = append(runs, &run{tc: tc, point: point, sb: newSandbox(t)})
		}
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			repo := r.sb.newRepo("repo")
			r.alice = r.sb.attach(repo, "alice", "cli")
			bob := r.sb.attach(repo, "bob", "cli")
			r.args, r.msg = r.tc.prepare(r.sb, r.alice, bob)
			r.res = r.sb.runEnv(r.alice.dir, []string{"ACC_FAILPOINT=" + r.point}, append(r.args, "--json")...)
		})
	}
	wg.Wait()
	for _, r := range runs {
		t.Run(r.tc.name+"/"+r.point, func(t *testing.T) {
			sb, res := r.sb, r.res
			sb.t = t
			if res.code != 0 {
				t.Fatalf("a committed write must exit 0, got:\n%s", res)
			}
			var data struct {
				Message *struct {
					Subject string `json:"subject"`
				} `json:"message"`
				Delivery []delivery `json:"delivery"`
				ClaimID  string     `json:"claimId"`
				State    string     `json:"state"`
				Session  string     `json:"sessionId"`
			}
			env := sb.parseEnvelope(res)
			if !env.OK || json.Unmarshal(env.Data, &data) != nil {
				t.Fatalf("expected ok:true with the result, got:\n%s", res)
			}
			switch r.tc.name {
			case "message", "request", "reply", "finish":
				if data.Message == nil || len(data.Delivery) != 1 || (data.Delivery[0].ErrorCode != nil && *data.Delivery[0].ErrorCode == "transport_error") {
					t.Fatalf("expected the message and its routing, got:\n%s", res)
				}
			case "claim", "release":
				if data.ClaimID == "" {
					t.Fatalf("expected the claim, got:\n%s", res)
				}
			case "ack":
				if data.State != protocol.ReceiptAcknowledged {
					t.Fatalf("expected the acknowledged receipt, got:\n%s", res)
				}
			case "attach":
				if data.Session == "" {
					t.Fatalf("expected the session, got:\n%s", res)
				}
			}
			if got := r.tc.effect(sb.roomState(r.alice.WorkspaceID), r.msg); got != 1 {
				t.Fatalf("the write's effect counts %d, want 1:\n%s", got, res)
			}
		})
	}
}

// mcpResult is an acc-mcp tools/call result.
type mcpResult struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		Message *struct {
			MessageID       string `json:"messageId"`
			ClientMessageID string `json:"clientMessageId"`
		} `json:"message"`
		Error *struct {
			Code       int            `json:"code"`
			ReasonCode string         `json:"reasonCode"`
			Message    string         `json:"message"`
			Details    map[string]any `json:"details"`
		} `json:"error"`
	} `json:"structuredContent"`
}

func (m *mcpSender) tool(name string, args map[string]any) mcpResult {
	m.t.Helper()
	var r mcpResult
	raw := m.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &r); err != nil {
		m.t.Fatalf("%s: %v: %s", name, err, raw)
	}
	return r
}

// TestMCPOutcomeUnknownNamesATrueRetry breaks the COMMIT of acc_message in
// a real acc-mcp, after it landed and instead of it: the tool result is
// outcome_unknown (exit 4) with the clientMessageId the send used and the
// call to make again; making it (from a second server, the first still
// breaks every COMMIT) leaves exactly one message either way. With the
// deadline spent around the COMMIT the call succeeds and is routed.
func TestMCPOutcomeUnknownNamesATrueRetry(t *testing.T) {
	t.Parallel()
	for _, point := range []string{storage.FailCommitLanded, storage.FailCommitLost, storage.FailStallBeforeCommit, storage.FailStallAfterCommit} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			repo := sb.newRepo("repo")
			sb.attach(repo, "bob", "cli")
			// A server's first call makes two writes of its own to open its
			// session, so the third write is the send.
			m := sb.startMCP("alice", repo, "ACC_FAILPOINT="+point, "ACC_FAILPOINT_SKIP=2")
			args := map[string]any{"to": []string{"bob"}, "subject": "uncertain", "body": "b"}
			r := m.tool("acc_message", args)
			count := func() int {
				var s session
				sb.jsonOK(&s, repo, "attach", "--participant", "probe")
				return sb.roomState(s.WorkspaceID).messagesBy["uncertain"]
			}
			if point == storage.FailStallBeforeCommit || point == storage.FailStallAfterCommit {
				if r.IsError || r.StructuredContent.Message == nil {
					t.Fatalf("a committed send must succeed, got %+v", r)
				}
				if n := count(); n != 1 {
					t.Fatalf("expected the message stored once, saw %d", n)
				}
				return
			}
			e := r.StructuredContent.Error
			if !r.IsError || e == nil || e.Code != 4 || e.ReasonCode != protocol.ReasonOutcomeUnknown ||
				!strings.Contains(e.Message, "cannot tell whether it was recorded") {
				t.Fatalf("expected an outcome_unknown result, got %+v", r)
			}
			key, _ := e.Details["clientMessageId"].(string)
			retry, _ := e.Details["retry"].(map[string]any)
			retryArgs, _ := retry["arguments"].(map[string]any)
			if !protocol.IsGeneratedID(protocol.KindClient, key) || !strings.Contains(e.Message, key) ||
				retry["tool"] != "acc_message" || retryArgs["clientMessageId"] != key || retryArgs["subject"] != "uncertain" {
				t.Fatalf("expected the key in the message and the retry call in details, got %+v", e)
			}
			want := map[bool]int{true: 1, false: 0}[point == storage.FailCommitLanded]
			if n := count(); n != want {
				t.Fatalf("after %s: %d messages, want %d", point, n, want)
			}
			again := sb.startMCP("alice", repo).tool("acc_message", retryArgs)
			if again.IsError || again.StructuredContent.Message == nil || again.StructuredContent.Message.ClientMessageID != key {
				t.Fatalf("the retry call must succeed with the key, got %+v", again)
			}
			if n := count(); n != 1 {
				t.Fatalf("after the retry: %d messages, want 1", n)
			}
		})
	}
}
