package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// statusView is the part of `acc status --json` these tests read.
type statusView struct {
	WorkspaceID  string `json:"workspaceId"`
	Source       string `json:"source"`
	Materialised bool   `json:"materialised"`
	Participants []struct {
		SessionID     string  `json:"sessionId"`
		ParticipantID string  `json:"participantId"`
		Harness       string  `json:"harness"`
		CheckoutRoot  *string `json:"checkoutRoot"`
		Branch        *string `json:"branch"`
		Presence      string  `json:"presence"`
	} `json:"participants"`
	Caller *string `json:"callerSessionId"`
}

func (sb *sandbox) status(s session) statusView {
	sb.t.Helper()
	var st statusView
	sb.jsonOK(&st, s.dir, append([]string{"status"}, s.creds()...)...)
	return st
}

// inboxView is the part of `acc inbox --json` these tests read.
type inboxView struct {
	Items []struct {
		Message struct {
			MessageID         string `json:"messageId"`
			FromParticipantID string `json:"fromParticipantId"`
			Subject           string `json:"subject"`
		} `json:"message"`
		Receipt protocol.Receipt `json:"receipt"`
	} `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

func (sb *sandbox) inbox(s session) inboxView {
	sb.t.Helper()
	var in inboxView
	sb.jsonOK(&in, s.dir, append([]string{"inbox"}, s.creds()...)...)
	return in
}

func (in inboxView) has(id string) bool {
	for _, it := range in.Items {
		if it.Message.MessageID == id {
			return true
		}
	}
	return false
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestWorktreesShareOneRoom: sessions attached in the main checkout and in a
// second worktree of the same repository are in one room (same workspaceId);
// each sees the other in `acc status --json` with its own checkoutRoot and
// branch; and a message crosses between them.
func TestWorktreesShareOneRoom(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	wt := filepath.Join(sb.base, "wt")
	sb.git(repo, "worktree", "add", "-q", "-b", "side", wt)
	// Attach from a subdirectory of the worktree: discovery walks up.
	wtSub := filepath.Join(wt, "src")
	if err := os.MkdirAll(wtSub, 0o755); err != nil {
		t.Fatal(err)
	}

	a := sb.attach(repo, "alpha", "codex")
	b := sb.attach(wtSub, "beta", "claude")
	if a.WorkspaceID != b.WorkspaceID {
		t.Fatalf("expected one room for both worktrees, saw workspaceId %s (main checkout) and %s (worktree)", a.WorkspaceID, b.WorkspaceID)
	}
	if !b.Materialised {
		t.Errorf("expected the second session to materialise the room (attach .materialised=true), saw false")
	}
	want := map[string]struct{ root, branch string }{
		a.SessionID: {repo, "main"},
		b.SessionID: {wt, "side"},
	}
	for _, viewer := range []session{a, b} {
		st := sb.status(viewer)
		if st.WorkspaceID != a.WorkspaceID || st.Source != protocol.SourceGit {
			t.Errorf("status seen from %s: expected workspace %s from git, saw %s from %s", viewer.ParticipantID, a.WorkspaceID, st.WorkspaceID, st.Source)
		}
		seen := map[string]bool{}
		for _, p := range st.Participants {
			w, ok := want[p.SessionID]
			if !ok {
				t.Errorf("status seen from %s lists an unexpected session %s (%s)", viewer.ParticipantID, p.SessionID, p.ParticipantID)
				continue
			}
			seen[p.SessionID] = true
			if deref(p.CheckoutRoot) != w.root || deref(p.Branch) != w.branch {
				t.Errorf("status seen from %s: session %s (%s) expected checkoutRoot %s on branch %s, saw %s on %s",
					viewer.ParticipantID, p.SessionID, p.ParticipantID, w.root, w.branch, deref(p.CheckoutRoot), deref(p.Branch))
			}
			if p.Presence != "online" {
				t.Errorf("status seen from %s: session %s expected online, saw %s", viewer.ParticipantID, p.ParticipantID, p.Presence)
			}
		}
		if len(seen) != 2 {
			t.Errorf("status seen from %s: expected both sessions (alpha and beta), saw %d: %+v", viewer.ParticipantID, len(seen), st.Participants)
		}
	}

	// The room is real: a message from the worktree reaches the main checkout.
	id := sb.send(b, "alpha", "across worktrees")
	if in := sb.inbox(a); !in.has(id) {
		t.Errorf("expected alpha's inbox (main checkout) to list %s sent from the worktree, saw %+v", id, in.Items)
	}
	if dirs := workspaceDirs(t, sb); len(dirs) != 1 {
		t.Errorf("expected one workspace store in the data home, saw %v", dirs)
	}
}

// TestPlainDirectoryRoom: outside Git, the directory itself is the room —
// attach, message and inbox work, and status says source "directory" with
// no branch.
func TestPlainDirectoryRoom(t *testing.T) {
	sb := newSandbox(t)
	plain := sb.dir("plain", "project")
	// The test is only meaningful when no enclosing directory is a Git
	// repository.
	probe := exec.Command("git", "-C", plain, "rev-parse", "--git-dir")
	probe.Env = sb.environ()
	if out, err := probe.CombinedOutput(); err == nil {
		t.Fatalf("test setup: %s lies inside a Git repository (%s); expected a directory outside Git", plain, strings.TrimSpace(string(out)))
	}

	one := sb.attach(plain, "one", "cli")
	two := sb.attach(plain, "two", "cli")
	if one.WorkspaceID != two.WorkspaceID {
		t.Fatalf("expected one room for one plain directory, saw %s and %s", one.WorkspaceID, two.WorkspaceID)
	}
	if deref(one.CheckoutRoot) != plain || one.Branch != nil {
		t.Errorf("attach in a plain directory: expected checkoutRoot %s and no branch, saw %s and %s", plain, deref(one.CheckoutRoot), deref(one.Branch))
	}
	st := sb.status(one)
	if st.Source != protocol.SourceDirectory {
		t.Errorf("expected status source %q, saw %q", protocol.SourceDirectory, st.Source)
	}
	id := sb.send(one, "two", "hello from a plain directory")
	in := sb.inbox(two)
	if !in.has(id) {
		t.Fatalf("expected two's inbox to list %s, saw %+v", id, in.Items)
	}
	for _, it := range in.Items {
		if it.Message.MessageID == id && (it.Message.FromParticipantID != "one" || it.Receipt.State != protocol.ReceiptQueued) {
			t.Errorf("inbox item %s: expected from one, receipt queued; saw from %s, receipt %s", id, it.Message.FromParticipantID, it.Receipt.State)
		}
	}
}

// TestTwoClonesAreTwoRooms: two clones of one repository at different paths
// are two rooms; a participant that exists only in the other clone cannot be
// addressed (exit 4, unknown_recipient), and nothing is recorded.
func TestTwoClonesAreTwoRooms(t *testing.T) {
	sb := newSandbox(t)
	origin := sb.newRepo("origin")
	c1 := filepath.Join(sb.base, "clone1")
	c2 := filepath.Join(sb.base, "clone2")
	sb.git(sb.base, "clone", "-q", origin, c1)
	sb.git(sb.base, "clone", "-q", origin, c2)

	one := sb.attach(c1, "one", "cli")
	two := sb.attach(c2, "two", "cli")
	if one.WorkspaceID == two.WorkspaceID {
		t.Fatalf("expected two rooms for two clones, both attached to %s", one.WorkspaceID)
	}
	for _, c := range []struct {
		from session
		to   string
	}{{one, "two"}, {two, "one"}} {
		res := sb.as(c.from, "message", "--to", c.to, "--subject", "across clones", "--body", "should not arrive", "--json")
		if res.code != int(protocol.ExitData) {
			t.Errorf("message from %s to %s (other clone): expected exit %d, saw:\n%s", c.from.ParticipantID, c.to, protocol.ExitData, res)
			continue
		}
		env := sb.parseEnvelope(res)
		if env.OK || env.Error == nil || env.Error.Details["reasonCode"] != protocol.ReasonUnknownRecipient {
			t.Errorf("message from %s to %s: expected an error envelope with reasonCode %s, saw %s", c.from.ParticipantID, c.to, protocol.ReasonUnknownRecipient, res.stdout)
		}
	}
	// Each clone's status lists only its own session.
	for _, s := range []session{one, two} {
		st := sb.status(s)
		if len(st.Participants) != 1 || st.Participants[0].SessionID != s.SessionID {
			b, _ := json.Marshal(st.Participants)
			t.Errorf("status in %s's clone: expected only %s, saw %s", s.ParticipantID, s.SessionID, b)
		}
	}
	// The refused sends left both rooms without history.
	for _, s := range []session{one, two} {
		st := sb.openStore(s.WorkspaceID)
		ctx, cancel := withTimeout()
		n, err := st.DurableRowCount(ctx)
		cancel()
		if err != nil || n != 0 {
			t.Errorf("room of %s after the refused send: expected 0 durable rows, saw %d (err %v)", s.ParticipantID, n, err)
		}
	}
	if dirs := workspaceDirs(t, sb); len(dirs) != 2 {
		t.Errorf("expected two workspace stores in the data home, saw %v", dirs)
	}
}

// workspaceDirs lists the workspace directories in the sandbox data home.
func workspaceDirs(t *testing.T, sb *sandbox) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(sb.data, "acc", "workspaces"))
	if err != nil {
		t.Fatalf("list the workspaces in the data home: %v", err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
