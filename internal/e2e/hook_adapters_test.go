package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestHookLifecycleEveryClient plays one client session's life through the
// built acc-hook for each of the five clients, on the client's own
// captured payloads (cwd rewritten to a temporary Git repository, session
// id fixed): session start attaches; a lone session is told only its owner
// line; a second session start resumes the same session; with a peer in
// the room a turn prints the client's inject shape, owner line first; a
// write into the peer's guarded claim gets the client's denial; session
// end closes the session and removes the binding.
func TestHookLifecycleEveryClient(t *testing.T) {
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			repo := sb.newRepo("repo")
			src := sb.dir("repo", "src")
			if err := os.WriteFile(filepath.Join(src, "a.go"), []byte("package a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sid := "client-session-" + c.id

			// Session start attaches, as the default participant, and a lone
			// session is told only its owner line.
			// A client whose start output reaches no model (quietStart) is
			// told nothing there, and its owner line on the first turn.
			start := sb.hook(hookOpts{}, c.startPayload(t, sid, repo), c.id, c.start)
			told, event := start, c.start
			if c.quietStart {
				if start.code != 0 || start.stdout != c.allow || start.stderr != "" {
					t.Fatalf("%s session start should attach and print nothing:\n%s", c.id, start)
				}
				told, event = sb.hook(hookOpts{}, c.turnPayload(t, sid, repo), c.id, c.turn), c.turn
			}
			me := ownerLine(t, c.injected(t, told, event))
			me.dir = repo
			if ctxt := c.injected(t, told, event); ctxt != "acc: --session "+me.SessionID+" --generation "+me.Generation || told.stderr != "" {
				t.Fatalf("a lone session should be told only its owner line:\n%s", told)
			}
			st := sb.roomStatus(repo)
			row := st.session(me.SessionID)
			if row == nil || row.Harness != c.id || row.ParticipantID != defaultParticipant(c.id, sid) || row.State != protocol.SessionOpen {
				t.Fatalf("after session start, status should show %s open with harness %s as %s, saw %+v", me.SessionID, c.id, defaultParticipant(c.id, sid), st.Participants)
			}
			me.ParticipantID = row.ParticipantID

			// And only that on every turn while alone.
			for i := 0; i < 2; i++ {
				ctxt, r := sb.turn(c, sid, repo)
				if ctxt != "acc: --session "+me.SessionID+" --generation "+me.Generation {
					t.Fatalf("a lone session's turn should print only its owner line, got %q\n%s", ctxt, r)
				}
			}
			// A second session start for the same client session resumes.
			if again := sb.hookSession(c, sid, repo); again.SessionID != me.SessionID || again.Generation != me.Generation {
				t.Fatalf("a second session start opened %s/%s instead of resuming %s/%s", again.SessionID, again.Generation, me.SessionID, me.Generation)
			}
			if n := len(sb.roomStatus(repo).Participants); n != 1 {
				t.Fatalf("a resumed session start left %d sessions, want 1", n)
			}

			// A peer joins (the room materialises), claims src/a.go guarded
			// and asks a question.
			peer := sb.attach(repo, "peer", "cli")
			store := sb.openStore(st.WorkspaceID)
			opened := countEvents(t, store, protocol.EventSessionOpened)
			if again := sb.hookSession(c, sid, repo); again.SessionID != me.SessionID {
				t.Fatalf("session start after materialisation opened %s, want %s resumed", again.SessionID, me.SessionID)
			}
			if n := countEvents(t, store, protocol.EventSessionOpened); n != opened {
				t.Fatalf("resuming recorded %d new session.opened event(s)", n-opened)
			}
			sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, peer.creds()...)...)
			q := sb.sendAs(peer, "--to", me.ParticipantID, "--type", "question", "--subject", "ownership", "--body", "is src/a.go yours?")

			ctxt, r := sb.turn(c, sid, repo)
			if ownerLine(t, ctxt) != (session{SessionID: me.SessionID, Generation: me.Generation}) {
				t.Fatalf("the owner line names another session:\n%s", ctxt)
			}
			for _, want := range []string{"untrusted peer message", "messageId: " + q, "sender: peer (session " + peer.SessionID + ")", "is src/a.go yours?", "- peer peer (cli,"} {
				if !strings.Contains(ctxt, want) {
					t.Fatalf("the turn context lacks %q:\n%s", want, r)
				}
			}
			if s := receiptState(t, store, q, me.ParticipantID); s != protocol.ReceiptOffered {
				t.Fatalf("after the turn the receipt is %s, want offered", s)
			}

			// Writes into the peer's guarded claim are refused in the
			// client's shape, naming the holder; others pass.
			for name, payload := range map[string][]byte{
				"shell":      c.shellPayload(t, sid, repo, "echo x > src/a.go"),
				"write tool": c.writePayload(t, sid, repo, "src/a.go"),
			} {
				reason, denied := c.denial(t, sb.hook(hookOpts{}, payload, c.id, c.tool))
				if !denied || !strings.Contains(reason, "peer") || !strings.Contains(reason, "file:src/a.go") {
					t.Fatalf("%s write into the peer's guarded claim: denied=%v reason %q", name, denied, reason)
				}
			}
			for name, payload := range map[string][]byte{
				"shell read":    c.shellPayload(t, sid, repo, "cat src/a.go"),
				"shell other":   c.shellPayload(t, sid, repo, "echo x > src/b.go"),
				"write unowned": c.writePayload(t, sid, repo, "src/b.go"),
			} {
				if _, denied := c.denial(t, sb.hook(hookOpts{}, payload, c.id, c.tool)); denied {
					t.Fatalf("%s was denied", name)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(src, "a.go")); string(b) != "package a\n" {
				t.Fatalf("src/a.go changed: %q", b)
			}

			// Session end closes the session and removes the binding.
			end := sb.hook(hookOpts{}, c.endPayload(t, sid, repo), c.id, c.end)
			if end.code != 0 || end.stdout != c.allow || end.stderr != "" {
				t.Fatalf("session end: expected exit 0 and %q, got:\n%s", c.allow, end)
			}
			if s := sessionState(t, store, me.SessionID); s != protocol.SessionClosed {
				t.Fatalf("after session end the session is %q, want closed", s)
			}
			if b := bindingOf(t, store, c.id, sid); b != "" {
				t.Fatalf("after session end the client session is still bound to %s", b)
			}
			// The same client session starting again is a new acc session.
			if next := sb.hookSession(c, sid, repo); next.SessionID == me.SessionID {
				t.Fatalf("a session start after session end resumed the closed session %s", me.SessionID)
			}
		})
	}
}

// TestHookParticipantFromEnvironment: ACC_PARTICIPANT in the client's
// environment names the participant (sanitised); without it the default
// is "<client>-<6 characters>"; two client sessions of one client are two
// participants.
func TestHookParticipantFromEnvironment(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	c := clientByID(t, "codex")
	named := sb.hookSession(c, "s-named", repo, "ACC_PARTICIPANT=Reviewer Bot #2")
	plain := sb.hookSession(c, "s-plain", repo)
	other := sb.hookSession(clientByID(t, "gemini"), "s-plain", repo)
	st := sb.roomStatus(repo)
	for s, want := range map[string]string{
		named.SessionID: "Reviewer-Bot-2",
		plain.SessionID: defaultParticipant("codex", "s-plain"),
		other.SessionID: defaultParticipant("gemini", "s-plain"),
	} {
		row := st.session(s)
		if row == nil || row.ParticipantID != want {
			t.Errorf("session %s: expected participant %s, status shows %+v", s, want, row)
		}
	}
	if plain.SessionID == other.SessionID {
		t.Fatal("the same session id from two clients was bound to one session")
	}
}

// TestHookEveryFixture runs every payload kept in the adapter modules
// (testdata/ and evidence/*/payloads/) through the built acc-hook, pointed
// at a temporary repository: each exits 0 with nothing on stderr (beyond
// the note that a shell command did not parse) and
// prints the client's "proceed" answer or its inject shape; and the words
// the fixtures' redacted fields hold never reach stdout, stderr or the
// store.
func TestHookEveryFixture(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	total := 0
	for _, c := range hookClients {
		files := fixtureFiles(t, c.id)
		if len(files) < 5 {
			t.Fatalf("%s: found only %d kept payloads", c.id, len(files))
		}
		sid := "fixture-" + c.id
		// Attach first so that tool and end events have a session.
		sb.hookSession(c, sid, repo)
		for _, rel := range files {
			event := fixtureEvent(rel)
			r := sb.hook(hookOpts{}, encode(t, c.rewrite(c.fixture(t, rel), sid, repo)), c.id, event)
			total++
			// The one note allowed: a shell command that does not parse
			// (the redacted ones) is judged on the statements before the
			// error, and acc says so.
			if r.code != 0 || r.stderr != "" && r.stderr != "acc: the command has a syntax error; acc judged the statements bash runs before it\n" {
				t.Errorf("%s %s: expected exit 0 and a silent stderr:\n%s", c.id, rel, r)
				continue
			}
			if r.stdout != c.allow {
				if ctxt := c.injected(t, r, event); !strings.HasPrefix(ctxt, "acc: --session ") {
					t.Errorf("%s %s: printed context that does not start with the owner line:\n%s", c.id, rel, r)
				}
			}
			for _, out := range []string{r.stdout, r.stderr} {
				if strings.Contains(out, "redacted") {
					t.Errorf("%s %s: a redacted payload field reached the output:\n%s", c.id, rel, r)
				}
			}
		}
	}
	t.Logf("%d fixture payloads through acc-hook", total)
	ws := sb.roomStatus(repo).WorkspaceID
	for _, suffix := range []string{"", "-wal"} {
		raw, err := os.ReadFile(sb.storePath(ws) + suffix)
		if err != nil {
			continue
		}
		if bytes.Contains(raw, []byte("redacted")) {
			t.Errorf("the store file acc.db%s holds text from a redacted payload field", suffix)
		}
	}
}

// TestHookQuietStartLeavesMessagesQueued: for a client whose session-start
// output reaches no model (Kimi Code), the built acc-hook's session start,
// with a question waiting, prints exactly the client's "proceed" answer
// and leaves the receipt queued; the next turn prints the question and
// offers it.
func TestHookQuietStartLeavesMessagesQueued(t *testing.T) {
	for _, c := range hookClients {
		if !c.quietStart {
			continue
		}
		t.Run(c.id, func(t *testing.T) {
			sb := newSandbox(t)
			repo := sb.newRepo("repo")
			sb.hookSession(c, "quiet", repo, "ACC_PARTICIPANT=me")
			peer := sb.attach(repo, "peer", "cli")
			q := sb.sendAs(peer, "--to", "me", "--type", "question", "--subject", "ownership", "--body", "is src/a.go yours?")
			store := sb.openStore(sb.roomStatus(repo).WorkspaceID)

			start := sb.hook(hookOpts{env: []string{"ACC_PARTICIPANT=me"}}, c.startPayload(t, "quiet", repo), c.id, c.start)
			if start.code != 0 || start.stdout != c.allow || start.stderr != "" {
				t.Fatalf("a session start with a question waiting should print only %q:\n%s", c.allow, start)
			}
			if s := receiptState(t, store, q, "me"); s != protocol.ReceiptQueued {
				t.Fatalf("after the session start the receipt is %s, want queued", s)
			}
			ctxt, r := sb.turn(c, "quiet", repo)
			if !strings.Contains(ctxt, "messageId: "+q) || !strings.Contains(ctxt, "is src/a.go yours?") {
				t.Fatalf("the turn after the start does not show the question:\n%s", r)
			}
			if s := receiptState(t, store, q, "me"); s != protocol.ReceiptOffered {
				t.Fatalf("after the turn the receipt is %s, want offered", s)
			}
		})
	}
}
