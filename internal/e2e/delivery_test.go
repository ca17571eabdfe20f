package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestDeliveryOutcomes drives each reachable row of the router's table
// through the built acc with real sessions: a hooked Claude Code session
// whose version has next-turn proven, a hooked one whose version has
// nothing proven, a manual CLI session, a participant with no live
// session, a room message, and a repeated send after the receipt moved.
// Every fallback leaves the receipt queued; next-turn leaves it queued
// until the recipient's hook hands the message to its client.
func TestDeliveryOutcomes(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	proven := fakeClientBin(t, "claude", "2.1.332 (Claude Code)")
	old := fakeClientBin(t, "claude", "1.0.0 (Claude Code)")
	hooked := sb.hookSession(claude, "sid-hooked", repo, "ACC_PARTICIPANT=hooked", "PATH="+proven+":"+os.Getenv("PATH"))
	sb.hookSession(claude, "sid-old", repo, "ACC_PARTICIPANT=oldclient", "PATH="+old+":"+os.Getenv("PATH"))
	sender := sb.attach(repo, "sender", "cli")
	sb.attach(repo, "manual", "cli")
	gone := sb.attach(repo, "gone", "cli")
	sb.ok(repo, append([]string{"detach"}, gone.creds()...)...)
	wsID := sb.roomStatus(repo).WorkspaceID

	d, qid := sb.deliver(sender, "--to", "hooked", "--type", "question", "--subject", "q", "--body", "?", "--client-message-id", "client_q1")
	wantDelivery(t, "next turn", d, "hooked", "queued", "next-turn", "")
	d, oldID := sb.deliver(sender, "--to", "oldclient", "--subject", "n", "--body", "b")
	wantDelivery(t, "version not proven", d, "oldclient", "queued", "durable", "unsupported_client_version")
	d, manualID := sb.deliver(sender, "--to", "manual", "--subject", "n", "--body", "b")
	wantDelivery(t, "manual session", d, "manual", "queued", "durable", "unsupported_client_version")
	d, goneID := sb.deliver(sender, "--to", "gone", "--subject", "n", "--body", "b")
	wantDelivery(t, "no live session", d, "gone", "queued", "durable", "recipient_unavailable")
	// A room message addresses nobody: no delivery entries (SPEC decision
	// 22); it still waits in every open session's inbox.
	d, _ = sb.deliver(sender, "--subject", "room note", "--body", "b")
	if len(d) != 0 {
		t.Errorf("room message: delivery %+v, want none", d)
	}

	store := sb.openStore(wsID)
	for _, fb := range []struct{ id, who string }{{oldID, "oldclient"}, {manualID, "manual"}, {goneID, "gone"}} {
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
	d, _ = sb.deliver(sender, "--to", "hooked", "--type", "question", "--subject", "q", "--body", "?", "--client-message-id", "client_q1")
	wantDelivery(t, "repeated send", d, "hooked", "offered", "durable", "")
	_ = hooked
}
