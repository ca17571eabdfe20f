package core

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// mapProbe answers liveness from a map; unknown pids are alive.
type mapProbe map[int]ProcessInfo

func (f mapProbe) Probe(pid int) ProcessInfo {
	if info, ok := f[pid]; ok {
		return info
	}
	return ProcessInfo{Exists: true}
}

type testRoom struct {
	*Room
	t    testing.TB
	dir  string
	home string
	// env is the environment the room was opened with (ACC_STORE_URL
	// included on PostgreSQL), for tests that open it again.
	env map[string]string
}

// newTestRoom opens a room on a fresh git repository with a private data home.
func newTestRoom(t testing.TB) *testRoom {
	t.Helper()
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", "-b", "main", repo)
	git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	home := filepath.Join(base, "data")
	env := map[string]string{"ACC_DATA_HOME": home, "HOME": base}
	if testEngine() == "postgresql" {
		// The room on the PostgreSQL test server: a config names it
		// (ACC_STORE_URL needs one) with an id of its own.
		id := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
		if err := os.WriteFile(filepath.Join(repo, "acc.workspace.json"), []byte(fmt.Sprintf(`{"schemaVersion":1,"workspaceId":%q}`, id)), 0o644); err != nil {
			t.Fatal(err)
		}
		env["ACC_STORE_URL"] = pgURL(t)
		t.Cleanup(func() { dropPGRoom(t, id) })
	}
	r, err := Open(context.Background(), OpenOptions{Cwd: repo, Getenv: func(k string) string { return env[k] }, GOOS: "linux"})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	r.Probe = mapProbe{}
	t.Cleanup(func() {
		if sq, ok := r.Store.(*storage.SQLite); ok {
			res, err := sq.IntegrityCheck(context.Background())
			if err != nil || len(res) != 1 || res[0] != "ok" {
				t.Errorf("integrity check after the test: %v %v", res, err)
			}
		}
		r.Close()
	})
	return &testRoom{Room: r, t: t, dir: repo, home: home, env: env}
}

func (tr *testRoom) attach(participant, harness string) Caller {
	tr.t.Helper()
	res, err := tr.Attach(context.Background(), AttachInput{ParticipantID: participant, Harness: harness})
	if err != nil {
		tr.t.Fatalf("attach %s: %v", participant, err)
	}
	return Caller{SessionID: res.SessionID, Generation: res.Generation}
}

func (tr *testRoom) send(c Caller, in SendInput) *SendResult {
	tr.t.Helper()
	in.Caller = c
	res, err := tr.Send(context.Background(), in)
	if err != nil {
		tr.t.Fatalf("send: %v", err)
	}
	return res
}

// testEngine is the engine newTestRoom puts its rooms on:
// ACC_TEST_ENGINE=postgresql runs the suite's rooms on the PostgreSQL test
// server (make test does, once), else SQLite.
func testEngine() string {
	if os.Getenv("ACC_TEST_ENGINE") == "postgresql" {
		return "postgresql"
	}
	return "sqlite"
}

// fingerprinter is what both engines' stores offer to prove a refusal
// changed nothing.
type fingerprinter interface {
	Fingerprint(ctx context.Context) (string, error)
}

func (tr *testRoom) fingerprint() string {
	tr.t.Helper()
	fp, err := tr.Store.(fingerprinter).Fingerprint(context.Background())
	if err != nil {
		tr.t.Fatal(err)
	}
	return fp
}

func (tr *testRoom) events() []protocol.Event {
	tr.t.Helper()
	var out []protocol.Event
	err := tr.Store.View(context.Background(), func(tx storage.ReadTx) error {
		var err error
		out, err = tx.Events(0, 1<<30)
		return err
	})
	if err != nil {
		tr.t.Fatal(err)
	}
	return out
}

func wantReason(t testing.TB, err error, reason string, code protocol.ExitCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s (exit %d), got success", reason, code)
	}
	pe := protocol.AsError(err)
	if pe.Reason != reason || pe.Code() != code {
		t.Fatalf("want %s (exit %d), got %s (exit %d): %s", reason, code, pe.Reason, pe.Code(), pe.Message)
	}
}

func TestInboxPagesStayWithinTheByteBudgetAndVisitEveryMessageOnce(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	long := strings.Repeat("é", 490) // 980 bytes; the summary keeps at most 160
	sent := map[string]bool{}
	for i := 0; i < 70; i++ {
		res := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: fmt.Sprintf("%d %s", i, long), Body: "b"})
		sent[res.Message.MessageID] = true
	}
	seen := map[string]bool{}
	cursor := ""
	prevSentAt, prevID := "9999", "~"
	pages := 0
	for {
		page, err := tr.Inbox(context.Background(), InboxQuery{Caller: b, Cursor: cursor, Limit: MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		raw, _ := protocol.MarshalIndent(page)
		if len(raw) > PageBudgetBytes {
			t.Fatalf("page %d is %d bytes, budget %d", pages, len(raw), PageBudgetBytes)
		}
		for _, it := range page.Items {
			m := it.Message
			if len(m.Subject) > SummarySubjectBytes || !strings.HasSuffix(m.Subject, "…") {
				t.Fatalf("summary subject not cut to %d bytes with an ellipsis: %d bytes", SummarySubjectBytes, len(m.Subject))
			}
			if seen[m.MessageID] {
				t.Fatalf("message %s listed twice", m.MessageID)
			}
			seen[m.MessageID] = true
			if m.SentAt > prevSentAt || (m.SentAt == prevSentAt && m.MessageID > prevID) {
				t.Fatalf("not newest first: %s %s after %s %s", m.SentAt, m.MessageID, prevSentAt, prevID)
			}
			prevSentAt, prevID = m.SentAt, m.MessageID
		}
		if page.NextCursor == nil {
			break
		}
		if *page.NextCursor != page.Items[len(page.Items)-1].Message.MessageID {
			t.Fatalf("nextCursor %s is not the last item", *page.NextCursor)
		}
		cursor = *page.NextCursor
	}
	if len(seen) != len(sent) {
		t.Fatalf("listed %d of %d messages", len(seen), len(sent))
	}
	if pages < 2 {
		t.Fatalf("70 long summaries fit one 12,000-byte page (%d pages): the budget was not applied", pages)
	}
	t.Logf("%d messages in %d pages", len(seen), pages)
}

func TestInboxCursorSurvivesReadingTheAnchor(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	for i := 0; i < 10; i++ {
		tr.send(a, SendInput{To: []string{"bob"}, Subject: fmt.Sprintf("note %d", i), Body: "b"})
	}
	first, err := tr.Inbox(context.Background(), InboxQuery{Caller: b, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tr.Inbox(context.Background(), InboxQuery{Caller: b, Limit: 4, Cursor: *first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	// Reading the anchor note resolves it; the cursor must still work and
	// the next page must not shift.
	if _, err := tr.ReadMessage(context.Background(), b, *first.NextCursor); err != nil {
		t.Fatal(err)
	}
	got, err := tr.Inbox(context.Background(), InboxQuery{Caller: b, Limit: 4, Cursor: *first.NextCursor})
	if err != nil {
		t.Fatalf("cursor after reading its anchor: %v", err)
	}
	if len(got.Items) != len(want.Items) {
		t.Fatalf("next page shifted: %d items, want %d", len(got.Items), len(want.Items))
	}
	for i := range got.Items {
		if got.Items[i].Message.MessageID != want.Items[i].Message.MessageID {
			t.Fatalf("next page shifted at %d", i)
		}
	}
	_, err = tr.Inbox(context.Background(), InboxQuery{Caller: b, Cursor: "message_AAAAAAAAAAAAAAAAAAAAAA"})
	wantReason(t, err, protocol.ReasonInvalidCursor, protocol.ExitUsage)
	_, err = tr.Inbox(context.Background(), InboxQuery{Caller: b, Limit: 501})
	wantReason(t, err, protocol.ReasonInvalidLimit, protocol.ExitUsage)
}

func TestListingIsReadOnlyAndExactReadMovesOnce(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	q := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "why?"}).Message.MessageID
	before := tr.fingerprint()
	for i := 0; i < 3; i++ {
		page, err := tr.Inbox(context.Background(), InboxQuery{Caller: b})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0].Receipt.State != protocol.ReceiptQueued {
			t.Fatalf("listing: %+v", page.Items)
		}
	}
	if tr.fingerprint() != before {
		t.Fatal("listing the inbox changed the store")
	}
	count := func(typ string) int {
		n := 0
		for _, e := range tr.events() {
			if e.Type == typ {
				n++
			}
		}
		return n
	}
	for i := 0; i < 3; i++ {
		items, err := tr.ReadMessage(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		if items[0].Receipt.State != protocol.ReceiptRetrieved || items[0].Message.Body != "why?" {
			t.Fatalf("exact read %d: %+v", i, items[0])
		}
	}
	if n := count(protocol.EventMessageRetrieved); n != 1 {
		t.Fatalf("three exact reads appended %d message.retrieved events, want 1", n)
	}
	// A retrieved question stays listable: it still owes a reply.
	page, _ := tr.Inbox(context.Background(), InboxQuery{Caller: b})
	if len(page.Items) != 1 {
		t.Fatal("a retrieved question must stay in the inbox until answered")
	}
	if _, err := tr.Reply(context.Background(), ReplyInput{Caller: b, MessageID: q, Body: "because"}); err != nil {
		t.Fatal(err)
	}
	items, err := tr.ReadMessage(context.Background(), b, q)
	if err != nil || items[0].Receipt.State != protocol.ReceiptAcknowledged {
		t.Fatalf("exact read after reply must keep acknowledged: %+v %v", items, err)
	}
	if n := count(protocol.EventMessageRetrieved); n != 1 {
		t.Fatal("an exact read of an acknowledged message appended an event")
	}
	// Alice cannot read Bob's copy: she holds no receipt for her own question.
	_, err = tr.ReadMessage(context.Background(), a, q)
	wantReason(t, err, protocol.ReasonNotRecoverable, protocol.ExitConflict)
}

func TestCallerResolutionNeverGuesses(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	_, err := tr.ResolveCaller(ctx, IdentityInput{})
	wantReason(t, err, protocol.ReasonCallerIdentityUnresolved, protocol.ExitUsage)
	a := tr.attach("alice", "cli")
	got, err := tr.ResolveCaller(ctx, IdentityInput{})
	if err != nil || got != a {
		t.Fatalf("the only live session must resolve: %v %v", got, err)
	}
	b := tr.attach("bob", "cli")
	_, err = tr.ResolveCaller(ctx, IdentityInput{})
	wantReason(t, err, protocol.ReasonCallerIdentityAmbiguous, protocol.ExitUsage)
	if !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "bob") {
		t.Fatalf("ambiguity must name the candidates: %v", err)
	}
	// A session id is public: alone it does not act as the session.
	for _, in := range []IdentityInput{{FlagSession: b.SessionID}, {EnvSession: b.SessionID}} {
		got, err := tr.ResolveCaller(ctx, in)
		wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
		if got != (Caller{}) || !strings.Contains(err.Error(), "needs its") || strings.Contains(err.Error(), b.Generation) {
			t.Fatalf("a bare session id must be refused naming the missing generation, never printing it: %v %v", got, err)
		}
	}
	// …unless the command only sets that session's records aside.
	if got, err := tr.ResolveCaller(ctx, IdentityInput{FlagSession: b.SessionID, SetAside: true}); err != nil || got != b {
		t.Fatalf("a session named to be set aside needs no proof: %v %v", got, err)
	}
	if got, _ := tr.ResolveCaller(ctx, IdentityInput{EnvSession: a.SessionID, EnvGeneration: a.Generation}); got != a {
		t.Fatal("ACC_SESSION + ACC_GENERATION must be used")
	}
	flags := Caller{SessionID: b.SessionID, Generation: "generation_x"}
	if got, _ := tr.ResolveCaller(ctx, IdentityInput{FlagSession: flags.SessionID, FlagGeneration: flags.Generation, EnvSession: a.SessionID, EnvGeneration: a.Generation}); got != flags {
		t.Fatal("flags outrank the environment")
	}
	_, err = tr.ResolveCaller(ctx, IdentityInput{FlagGeneration: a.Generation})
	wantReason(t, err, protocol.ReasonCallerIdentityUnresolved, protocol.ExitUsage)
	// A hook binding whose client session id is in the environment wins.
	err = tr.Store.Update(ctx, func(tx storage.Tx) error {
		return tx.PutBinding(&storage.SessionBinding{Key: "k", Harness: "claude", HarnessSessionID: "client-123", SessionID: b.SessionID, Generation: b.Generation, UpdatedAt: protocol.FormatTime(time.Now())})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tr.ResolveCaller(ctx, IdentityInput{Environ: []string{"CLAUDE_CODE_SESSION_ID=client-123"}}); err != nil || got != b {
		t.Fatalf("binding by client session id: %v %v", got, err)
	}
	// The same proof lets --session alone (or ACC_SESSION alone) act as b…
	proof := []string{"CLAUDE_CODE_SESSION_ID=client-123"}
	for _, in := range []IdentityInput{{FlagSession: b.SessionID, Environ: proof}, {EnvSession: b.SessionID, Environ: proof}} {
		if got, err := tr.ResolveCaller(ctx, in); err != nil || got != b {
			t.Fatalf("--session with the binding's proof must act as it: %v %v", got, err)
		}
	}
	// …but not as a session the environment does not prove.
	_, err = tr.ResolveCaller(ctx, IdentityInput{FlagSession: a.SessionID, Environ: proof})
	wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
	// A binding of an older generation proves nothing.
	err = tr.Store.Update(ctx, func(tx storage.Tx) error {
		return tx.PutBinding(&storage.SessionBinding{Key: "k2", Harness: "claude", HarnessSessionID: "client-old", SessionID: a.SessionID, Generation: "generation_old", UpdatedAt: protocol.FormatTime(time.Now())})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.ResolveCaller(ctx, IdentityInput{FlagSession: a.SessionID, Environ: []string{"X=client-old"}})
	wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
}

func TestAttachReplacesOnlyADeadSession(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "alice", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	old := Caller{SessionID: res.SessionID, Generation: res.Generation}
	tr.attach("bob", "cli")
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "alice", SessionID: old.SessionID, Generation: old.Generation})
	wantReason(t, err, protocol.ReasonSessionLive, protocol.ExitConflict)
	tr.Probe = mapProbe{4242: {Exists: false}}
	again, err := tr.Attach(ctx, AttachInput{ParticipantID: "alice", SessionID: old.SessionID, Generation: old.Generation})
	if err != nil {
		t.Fatalf("a dead pid's session must be replaceable: %v", err)
	}
	if again.Replaced == nil || *again.Replaced != old.Generation || again.Generation == old.Generation {
		t.Fatalf("replacement must report the old generation and issue a new one: %+v", again)
	}
	_, err = tr.Heartbeat(ctx, old)
	wantReason(t, err, protocol.ReasonStaleGeneration, protocol.ExitConflict)
	// A session without a pid is never provably dead.
	c := tr.attach("carol", "cli")
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "carol", SessionID: c.SessionID, Generation: c.Generation})
	wantReason(t, err, protocol.ReasonSessionLive, protocol.ExitConflict)
}

// Reopening a session gives the new generation its claims, so it needs
// proof that the caller is that session
// (docs/concepts.md#reopening-a-session): its last generation, or the hook
// binding proof in the environment. A session id alone, a wrong generation,
// another session's generation, the session's own earlier generation or an
// environment naming another client are refused with generation_required and
// change nothing; a generation for a session that does not exist is
// session_not_open.
func TestReopenNeedsProof(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "alice", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	b := tr.attach("bob", "cli")
	if _, err := tr.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: tr.dir}); err != nil {
		t.Fatal(err)
	}
	tr.Probe = mapProbe{4242: {Exists: false}}
	before := tr.fingerprint()
	for name, in := range map[string]AttachInput{
		"alone":              {ParticipantID: "alice", SessionID: a.SessionID},
		"wrong generation":   {ParticipantID: "alice", SessionID: a.SessionID, Generation: "generation_00000000000000000000000000"},
		"another's":          {ParticipantID: "alice", SessionID: a.SessionID, Generation: b.Generation},
		"no binding in env":  {ParticipantID: "alice", SessionID: a.SessionID, Environ: []string{"X=" + a.SessionID}},
		"mismatch, no proof": {ParticipantID: "mallory", SessionID: a.SessionID},
	} {
		_, err := tr.Attach(ctx, in)
		wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
		msg := protocol.AsError(err).Message
		if strings.Contains(msg, a.Generation) || !strings.Contains(msg, "attach without {field session} to open a new session") {
			t.Fatalf("%s: %q", name, msg)
		}
		if fp := tr.fingerprint(); fp != before {
			t.Fatalf("%s: a refused reopen changed the store", name)
		}
	}
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "alice", SessionID: "session_nosuch", Generation: a.Generation})
	wantReason(t, err, protocol.ReasonSessionNotOpen, protocol.ExitConflict)
	again, err := tr.Attach(ctx, AttachInput{ParticipantID: "alice", SessionID: a.SessionID, Generation: a.Generation})
	if err != nil {
		t.Fatal(err)
	}
	// The session's earlier generation no longer proves it.
	tr.Probe = mapProbe{}
	if _, err := tr.Detach(ctx, Caller{SessionID: a.SessionID, Generation: again.Generation}); err != nil {
		t.Fatal(err)
	}
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "alice", SessionID: a.SessionID, Generation: a.Generation})
	wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
}

// A hooked client's own session id in the environment proves the session
// its binding holds at that generation, as for ResolveCaller.
func TestReopenByBindingProof(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	h, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", PID: 4343})
	if err != nil {
		t.Fatal(err)
	}
	tr.Probe = mapProbe{4343: {Exists: false}}
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "bob", SessionID: h.Caller.SessionID, Environ: []string{"CLAUDE_SESSION_ID=cc-2"}})
	wantReason(t, err, protocol.ReasonGenerationRequired, protocol.ExitUsage)
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "bob", SessionID: h.Caller.SessionID, Environ: []string{"CLAUDE_SESSION_ID=cc-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced == nil || *res.Replaced != h.Caller.Generation {
		t.Fatalf("reopen by binding: %+v", res)
	}
}

func TestClientNameAddressing(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	me := tr.attach("codex-1", "codex")
	tr.attach("claude-1", "claude")
	res := tr.send(me, SendInput{To: []string{"claude"}, Subject: "s", Body: "b"})
	if got := res.Message.ToParticipantIDs; len(got) != 1 || got[0] != "claude-1" {
		t.Fatalf("client name must resolve to the one live claude session's participant: %v", got)
	}
	// A client name never resolves to the sender itself.
	_, err := tr.Send(ctx, SendInput{Caller: me, To: []string{"codex"}, Subject: "s", Body: "b"})
	wantReason(t, err, protocol.ReasonUnknownRecipient, protocol.ExitData)
	tr.attach("claude-2", "claude")
	before := tr.fingerprint()
	_, err = tr.Send(ctx, SendInput{Caller: me, To: []string{"claude"}, Subject: "s", Body: "b"})
	wantReason(t, err, protocol.ReasonAmbiguousRecipient, protocol.ExitUsage)
	_, err = tr.Send(ctx, SendInput{Caller: me, To: []string{"claude-1", "claude-1"}, Subject: "s", Body: "b"})
	wantReason(t, err, protocol.ReasonDuplicateRecipient, protocol.ExitUsage)
	if tr.fingerprint() != before {
		t.Fatal("a refused send changed the store")
	}
}

func TestRoomMessagesReachOpenSessionsAtCommit(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	c := tr.attach("carol", "cli")
	if _, err := tr.Detach(ctx, c); err != nil {
		t.Fatal(err)
	}
	res := tr.send(a, SendInput{Subject: "room", Body: "hello all"})
	if len(res.Recipients) != 1 || res.Recipients[0] != "bob" {
		t.Fatalf("room recipients = %v, want [bob]", res.Recipients)
	}
	d := tr.attach("dave", "cli")
	page, _ := tr.Inbox(ctx, InboxQuery{Caller: d})
	if len(page.Items) != 0 {
		t.Fatal("a late session must not get retroactive room receipts")
	}
	page, _ = tr.Inbox(ctx, InboxQuery{Caller: b})
	if len(page.Items) != 1 {
		t.Fatal("bob must have the room note")
	}
	_, err := tr.Send(ctx, SendInput{Caller: a, Kind: protocol.KindQuestion, Subject: "q", Body: "b"})
	wantReason(t, err, protocol.ReasonInvalidInput, protocol.ExitData)
}

func TestIdempotentRetryReturnsTheFirstMessage(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a := tr.attach("alice", "cli")
	tr.attach("bob", "cli")
	first := tr.send(a, SendInput{To: []string{"bob"}, Subject: "s", Body: "one", ClientMessageID: "client_k1"})
	before := tr.fingerprint()
	again := tr.send(a, SendInput{To: []string{"bob"}, Subject: "s", Body: "one", ClientMessageID: "client_k1"})
	if again.Created || again.Message.MessageID != first.Message.MessageID {
		t.Fatalf("retry created %v id %s, want the first %s", again.Created, again.Message.MessageID, first.Message.MessageID)
	}
	if tr.fingerprint() != before {
		t.Fatal("an idempotent retry changed the store")
	}
	_, err := tr.Send(ctx, SendInput{Caller: a, To: []string{"bob"}, Subject: "s", Body: "two", ClientMessageID: "client_k1"})
	wantReason(t, err, protocol.ReasonClientMessageIDConflict, protocol.ExitConflict)
	if tr.fingerprint() != before {
		t.Fatal("a refused retry changed the store")
	}
}

func TestFinishReleasesClaimsClosesAndIsRetryable(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	now := time.Now()
	claim := &protocol.Claim{SchemaVersion: protocol.SchemaVersion, ClaimID: protocol.NewID(protocol.KindClaim), WorkspaceID: tr.WS.ID,
		OwnerSessionID: a.SessionID, Resource: "file:src/a.go", Mode: protocol.ClaimExclusive, Enforcement: protocol.EnforcementAdvisory,
		Reason: "unspecified", AcquiredAt: protocol.FormatTime(now), ExpiresAt: protocol.FormatTime(now.Add(time.Hour)), Generation: protocol.NewID(protocol.KindGeneration)}
	if err := tr.Store.Update(ctx, func(tx storage.Tx) error { return tx.PutClaim(claim) }); err != nil {
		t.Fatal(err)
	}
	in := FinishInput{Caller: a, Goal: "ship it", Status: "partial", Completed: []string{"x"}, Remaining: []string{"y"}, To: "bob", ClientMessageID: "client_fin"}
	res, err := tr.Finish(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ReleasedClaims) != 1 || res.ReleasedClaims[0] != claim.ClaimID || res.Session.State != protocol.SessionClosed {
		t.Fatalf("finish result %+v", res)
	}
	if res.Message.Obligation != protocol.ObligationAcknowledge || res.Message.Handoff == nil || !strings.Contains(res.Message.Body, "remaining:\n- y") {
		t.Fatalf("handoff message %+v", res.Message)
	}
	before := tr.fingerprint()
	again, err := tr.Finish(ctx, in)
	if err != nil || again.Message.MessageID != res.Message.MessageID {
		t.Fatalf("finish retry with the same key must return the first handoff: %v", err)
	}
	if len(again.ReleasedClaims) != 1 || again.ReleasedClaims[0] != claim.ClaimID {
		t.Fatalf("a finish retry must report the claims the first finish released, got %v", again.ReleasedClaims)
	}
	if tr.fingerprint() != before {
		t.Fatal("finish retry changed the store")
	}
	in.ClientMessageID = "client_other"
	_, err = tr.Finish(ctx, in)
	wantReason(t, err, protocol.ReasonSessionNotOpen, protocol.ExitConflict)
	// Bob owes an acknowledgement, and ack resolves it.
	rc, err := tr.Ack(ctx, b, res.Message.MessageID)
	if err != nil || rc.State != protocol.ReceiptAcknowledged {
		t.Fatalf("ack handoff: %+v %v", rc, err)
	}
}

func TestLoneSessionLeavesNoDurableHistory(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a := tr.attach("alice", "cli")
	st, err := tr.Status(ctx, StatusQuery{Caller: &a})
	if err != nil || st.Materialised || st.Counts.Live != 1 {
		t.Fatalf("status of a lone session: %+v %v", st, err)
	}
	if _, err := tr.Detach(ctx, a); err != nil {
		t.Fatal(err)
	}
	n, err := tr.Store.(interface {
		DurableRowCount(context.Context) (int64, error)
	}).DurableRowCount(ctx)
	if err != nil || n != 0 {
		t.Fatalf("a lone session left %d durable rows (%v)", n, err)
	}
	// A second live session materialises everything in one transaction.
	tr.attach("alice", "cli")
	tr.attach("bob", "cli")
	ev := tr.events()
	if len(ev) != 3 || ev[0].Type != protocol.EventWorkspaceMaterialised || ev[0].Payload["reason"] != "second_live_session" ||
		ev[1].Type != protocol.EventSessionOpened || ev[2].Type != protocol.EventSessionOpened {
		b, _ := json.Marshal(ev)
		t.Fatalf("materialisation events: %s", b)
	}
}
