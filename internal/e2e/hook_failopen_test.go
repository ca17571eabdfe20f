package e2e

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/hook"
	"github.com/acc-go/acc/pkg/protocol"
)

// failRoom is a repository with a hooked session ("me") that has a
// question pending, and a peer holding a guarded claim on src/a.go.
type failRoom struct {
	sb   *sandbox
	c    hookClient
	repo string
	sid  string
	peer session
	q    string
	wsID string
}

func newFailRoom(t *testing.T, c hookClient) *failRoom {
	t.Helper()
	sb := newSandbox(t)
	fr := &failRoom{sb: sb, c: c, repo: sb.newRepo("repo"), sid: "fail-" + c.id}
	sb.hookSession(c, fr.sid, fr.repo, "ACC_PARTICIPANT=me")
	fr.peer = sb.attach(fr.repo, "peer", "cli")
	sb.ok(fr.repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, fr.peer.creds()...)...)
	fr.q = sb.sendAs(fr.peer, "--to", "me", "--type", "question", "--subject", "pending", "--body", "a pending question")
	fr.wsID = sb.roomStatus(fr.repo).WorkspaceID
	return fr
}

// proceeds asserts the client was told to proceed: exit 0, stdout the
// given answer, exactly one "acc: " line on stderr.
func proceeds(t *testing.T, r hookRun, stdout, label string) {
	t.Helper()
	if r.code != 0 || r.stdout != stdout {
		t.Errorf("%s: expected exit 0 and stdout %q:\n%s", label, stdout, r)
	}
	if !strings.HasPrefix(r.stderr, "acc: ") || !strings.HasSuffix(r.stderr, "\n") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("%s: expected exactly one `acc: …` line on stderr:\n%s", label, r)
	}
}

// TestHookFailOpenOnRefusedInput: malformed payloads, an unknown event, an
// unknown adapter and missing arguments leave every client with its
// "proceed" answer (nothing for an unknown adapter), exit 0, one line on
// stderr, and nothing offered.
func TestHookFailOpenOnRefusedInput(t *testing.T) {
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			fr := newFailRoom(t, c)
			sb := fr.sb
			turn := c.turnPayload(t, fr.sid, fr.repo)
			relative := c.turnObject(t, fr.sid, "repo")
			noSession := c.turnObject(t, fr.sid, fr.repo)
			delete(noSession, c.sessionKey)
			noCwd := c.turnObject(t, fr.sid, fr.repo)
			delete(noCwd, "cwd")
			numericSession := c.turnObject(t, fr.sid, fr.repo)
			numericSession[c.sessionKey] = 42
			for _, v := range []struct {
				label   string
				args    []string
				payload []byte
				stdout  string
			}{
				{"not JSON", []string{c.id, c.turn}, []byte("this is not json"), c.allow},
				{"empty stdin", []string{c.id, c.turn}, nil, c.allow},
				{"null", []string{c.id, c.turn}, []byte("null"), c.allow},
				{"an array", []string{c.id, c.turn}, []byte("[]"), c.allow},
				{"two objects", []string{c.id, c.turn}, append(append([]byte{}, turn...), turn...), c.allow},
				{"no session id", []string{c.id, c.turn}, encode(t, noSession), c.allow},
				{"numeric session id", []string{c.id, c.turn}, encode(t, numericSession), c.allow},
				{"no cwd", []string{c.id, c.turn}, encode(t, noCwd), c.allow},
				{"relative cwd", []string{c.id, c.turn}, encode(t, relative), c.allow},
				{"payload of another event", []string{c.id, c.tool}, turn, c.allow},
				{"unknown event", []string{c.id, "NoSuchEvent"}, turn, c.allow},
				{"unknown adapter", []string{"nosuch", c.turn}, turn, ""},
				{"no arguments", nil, turn, ""},
				{"adapter only", []string{c.id}, turn, ""},
				{"extra argument", []string{c.id, c.turn, "extra"}, turn, ""},
			} {
				proceeds(t, sb.hook(hookOpts{}, v.payload, v.args...), v.stdout, v.label)
			}
			store := sb.openStore(fr.wsID)
			if s := receiptState(t, store, fr.q, "me"); s != protocol.ReceiptQueued {
				t.Fatalf("after refused hooks the receipt is %s, want queued", s)
			}
			if c.silentStart {
				// The control for a client told nothing before a turn: the
				// session is bound (the refused calls attached nothing).
				if s := sb.boundSession(c.id, fr.sid, fr.repo); s.SessionID == "" {
					t.Fatalf("%s: the session is not bound", c.id)
				}
				return
			}
			// The control: the same turn, well formed, offers it.
			if ctxt, _ := sb.turn(c, fr.sid, fr.repo); !strings.Contains(ctxt, fr.q) {
				t.Fatalf("a well-formed turn did not project the question:\n%s", ctxt)
			}
			if s := receiptState(t, store, fr.q, "me"); s != protocol.ReceiptOffered {
				t.Fatalf("after a well-formed turn the receipt is %s, want offered", s)
			}
		})
	}
}

// TestHookFailOpenOnCorruptStore: when acc.db is not a database, every
// hook lets the client proceed with one line on stderr, and the file is
// left exactly as it was.
func TestHookFailOpenOnCorruptStore(t *testing.T) {
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			fr := newFailRoom(t, c)
			sb := fr.sb
			path := sb.storePath(fr.wsID)
			garbage := bytes.Repeat([]byte("this is not an SQLite database\n"), 256)
			for _, p := range []string{path + "-wal", path + "-shm"} {
				os.Remove(p)
			}
			if err := os.WriteFile(path, garbage, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, v := range []struct {
				label, event string
				payload      []byte
			}{
				{"session start", c.start, c.startPayload(t, fr.sid, fr.repo)},
				{"new session start", c.start, c.startPayload(t, "another", fr.repo)},
				{"turn", c.turn, c.turnPayload(t, fr.sid, fr.repo)},
				{"pre-tool write into the claim", c.tool, c.shellPayload(t, fr.sid, fr.repo, "echo x > src/a.go")},
				{"session end", c.end, c.endPayload(t, fr.sid, fr.repo)},
			} {
				r := sb.hook(hookOpts{}, v.payload, c.id, v.event)
				proceeds(t, r, c.allow, v.label)
				if !strings.Contains(r.stderr, protocol.ReasonStoreCorrupt) {
					t.Errorf("%s: the diagnostic should name %s: %q", v.label, protocol.ReasonStoreCorrupt, r.stderr)
				}
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, garbage) {
				t.Fatalf("the unreadable store was changed (%v)", err)
			}
		})
	}
}

// TestHookFailOpenWhenLockedPastTheDeadline: another process holds the
// store's write lock (BEGIN IMMEDIATE) for longer than the hook's budget.
// A turn and a first session start give up at the 5-second deadline with
// the client's "proceed" answer, exit 0, one line naming store_busy, and
// nothing offered; a pre-tool check, which only reads, still decides.
func TestHookFailOpenWhenLockedPastTheDeadline(t *testing.T) {
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			fr := newFailRoom(t, c)
			sb := fr.sb
			release := holdWriteLock(t, sb.storePath(fr.wsID))
			var wg sync.WaitGroup
			runs := map[string]*hookRun{}
			for label, p := range map[string]struct {
				event   string
				payload []byte
			}{
				"turn":        {c.turn, c.turnPayload(t, fr.sid, fr.repo)},
				"first start": {c.start, c.startPayload(t, "late-"+c.id, fr.repo)},
			} {
				r := &hookRun{}
				runs[label] = r
				wg.Go(func() { *r = sb.hook(hookOpts{}, p.payload, c.id, p.event) })
			}
			guard := sb.hook(hookOpts{}, c.shellPayload(t, fr.sid, fr.repo, "echo x > src/a.go"), c.id, c.tool)
			if _, denied := c.denial(t, guard); !denied {
				t.Errorf("pre-tool under a held write lock should still deny:\n%s", guard)
			}
			wg.Wait()
			release()
			for label, r := range runs {
				t.Logf("%s under a held write lock: exit %d after %v", label, r.code, r.took)
				proceeds(t, *r, c.allow, label)
				if !strings.Contains(r.stderr, protocol.ReasonStoreBusy) {
					t.Errorf("%s: the diagnostic should name %s: %q", label, protocol.ReasonStoreBusy, r.stderr)
				}
				// The budget is 5 s; allow generous slack for a loaded machine,
				// far below the lock the test would hold forever.
				if r.took > hook.Deadline+10*time.Second {
					t.Errorf("%s: the hook took %v, far past its %v budget", label, r.took, hook.Deadline)
				}
				if r.took < hook.Deadline-time.Second {
					t.Errorf("%s: the hook gave up after %v, well before its %v budget", label, r.took, hook.Deadline)
				}
			}
			store := sb.openStore(fr.wsID)
			if s := receiptState(t, store, fr.q, "me"); s != protocol.ReceiptQueued {
				t.Fatalf("after a turn that timed out the receipt is %s, want queued", s)
			}
			if n := countEvents(t, store, protocol.EventMessageOfferSucceeded); n != 0 {
				t.Fatalf("%d offer(s) recorded by turns that timed out", n)
			}
		})
	}
}
