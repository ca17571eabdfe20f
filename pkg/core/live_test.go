package core

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestLiveBinding: a live binding holds for its session's generation and
// its lease only; the router sees it in DeliveryTargets; it goes with the
// session at hook end; status never shows the endpoint.
func TestLiveBinding(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	a := tr.attach("alice", "cli")
	res, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Caller
	wantReason(t, tr.RecordLiveBinding(ctx, Caller{SessionID: b.SessionID, Generation: "generation_stale"}, "claude-inbox", "/tmp/cc-socks/1.sock"), protocol.ReasonStaleGeneration, protocol.ExitConflict)
	wantReason(t, tr.RecordLiveBinding(ctx, b, "", "/x"), protocol.ReasonInvalidInput, protocol.ExitData)
	if err := tr.RecordLiveBinding(ctx, b, "claude-inbox", "/tmp/cc-socks/1.sock"); err != nil {
		t.Fatal(err)
	}
	m := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "?"}).Message
	targets, err := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"})
	if l := targets[0].Live[b.SessionID]; err != nil || l.Transport != "claude-inbox" || l.Endpoint != "/tmp/cc-socks/1.sock" || l.Stale ||
		l.LeaseUntil != protocol.FormatTime(clock.Add(LiveLease)) {
		t.Fatalf("targets %+v %v", targets, err)
	}
	if ok, _ := tr.LiveBound(ctx, b.SessionID); !ok {
		t.Error("the session is not reachable")
	}
	// Status says reachable only where a send would push: live push proven
	// for the client (declared at attach) and a policy that is not off.
	reachable := func(policy string) (bool, []DeliveryBindingRow) {
		st, _ := tr.Status(ctx, StatusQuery{LivePolicy: func(string) string { return policy }})
		for _, row := range st.Participants {
			if row.SessionID == b.SessionID {
				return row.Reachable, st.DeliveryBindings
			}
		}
		return false, st.DeliveryBindings
	}
	if ok, rows := reachable("actionable"); ok || len(rows) != 1 || rows[0].Proven {
		t.Errorf("a client without live push proven is reachable: %v %+v", ok, rows)
	}
	declared := protocol.DeclaredCapabilities{}
	declared.Delivery.LivePush = true
	proven, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", Capabilities: &declared,
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManual})
	if err != nil || proven.Caller != b {
		t.Fatalf("resume: %+v %v", proven, err)
	}
	if ok, _ := reachable("off"); ok {
		t.Error("reachable with the policy off")
	}
	ok, rows := reachable("actionable")
	if !ok || len(rows) != 1 || rows[0] != (DeliveryBindingRow{SessionID: b.SessionID, ParticipantID: "bob",
		Transport: "claude-inbox", Reachable: true, Proven: true, Policy: "actionable", LeaseUntil: protocol.FormatTime(clock.Add(LiveLease))}) {
		t.Errorf("status: reachable %v, delivery bindings %+v", ok, rows)
	}
	// A second live session of the participant: a send would push to
	// neither (ambiguous), so neither is reachable.
	second := tr.attach("bob", "cli")
	if ok, _ := reachable("actionable"); ok {
		t.Error("reachable while the participant has two live sessions")
	}
	// Asked by that second session, which never delivers to itself: a
	// send from it to bob would push to the hooked session.
	st2, _ := tr.Status(ctx, StatusQuery{Caller: &second, Sender: &second, LivePolicy: func(string) string { return "actionable" }})
	for _, row := range st2.Participants {
		if want := row.SessionID == b.SessionID; row.Reachable != want {
			t.Errorf("status asked by bob's other session: %s reachable %v, want %v", row.SessionID, row.Reachable, want)
		}
	}
	// And the hooked session asking about itself is not its own recipient.
	tr.Detach(ctx, second)
	st3, _ := tr.Status(ctx, StatusQuery{Caller: &b, Sender: &b, LivePolicy: func(string) string { return "actionable" }})
	if ok, _ := reachable("actionable"); !ok {
		t.Error("a caller that is only guessed must not hide the session")
	}
	for _, row := range st3.Participants {
		if row.SessionID == b.SessionID && row.Reachable {
			t.Error("a session is reachable to itself")
		}
	}
	st, _ := tr.Status(ctx, StatusQuery{})
	if js, _ := json.Marshal(st); strings.Contains(string(js), "cc-socks") {
		t.Errorf("status shows the endpoint: %s", js)
	}
	// Past its lease the binding is expired, not stale: an idle session is
	// the one to wake, and the sender revalidates the endpoint itself.
	clock = clock.Add(LiveLease + time.Second)
	tr.Heartbeat(ctx, b)
	if targets, _ := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"}); !targets[0].Live[b.SessionID].Expired || targets[0].Live[b.SessionID].Stale {
		t.Errorf("an expired binding: %+v", targets[0].Live)
	}
	if ok, _ := tr.LiveBound(ctx, b.SessionID); !ok {
		t.Error("an expired binding of the current generation must still be reachable")
	}
	// A binding written for another generation of the session (one the
	// session no longer has) is stale too: acc only writes bindings for the
	// caller's current generation, so this is written to the store directly.
	if err := tr.Store.Update(ctx, func(tx storage.Tx) error {
		return tx.PutBinding(&storage.SessionBinding{Key: liveKey(b.SessionID), Harness: "claude-inbox", HarnessSessionID: "/tmp/cc-socks/1.sock",
			SessionID: b.SessionID, Generation: "generation_replacedAAAAAAAAAAAAAA", UpdatedAt: protocol.FormatTime(clock)})
	}); err != nil {
		t.Fatal(err)
	}
	if targets, _ := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"}); !targets[0].Live[b.SessionID].Stale {
		t.Errorf("a replaced generation's binding is not stale: %+v", targets[0].Live)
	}
	// Renewed, then the session ends: the binding goes with it.
	tr.RecordLiveBinding(ctx, b, "claude-inbox", "/tmp/cc-socks/1.sock")
	if err := tr.HookEnd(ctx, "claude", "cc-1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := tr.LiveBound(ctx, b.SessionID); ok {
		t.Error("a closed session is still reachable")
	}
	// A new generation of the session does not inherit an old binding.
	res2, _ := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-2", Participant: "bob"})
	if targets, _ := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"}); len(targets[0].Live) != 0 {
		t.Errorf("a new session %s sees a live binding: %+v", res2.Caller.SessionID, targets[0].Live)
	}
}

// TestRecordOffer: a live offer moves a queued receipt to offered, once,
// with its event; a receipt past queued is left as it is.
func TestRecordOffer(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a := tr.attach("alice", "cli")
	b := tr.attach("bob", "cli")
	m := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "?"}).Message
	if err := tr.RecordOffer(ctx, m.MessageID, "bob", "claude-inbox"); err != nil {
		t.Fatal(err)
	}
	items, _ := tr.Inbox(ctx, InboxQuery{Caller: b})
	if got := items.Items[0].Receipt.State; got != protocol.ReceiptOffered {
		t.Fatalf("receipt %s, want offered", got)
	}
	if err := tr.RecordOffer(ctx, m.MessageID, "bob", "claude-inbox"); err != nil {
		t.Fatal(err)
	}
}

// TestProjectionSkipsLiveFrames: a pending message whose whole live frame
// the turn's prompt carries is not projected again and is reported in
// InPrompt; a prompt with only part of the frame (a forged id line, a cut
// body) changes nothing.
func TestProjectionSkipsLiveFrames(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a := tr.attach("alice", "cli")
	b := tr.attach("bob", "cli")
	m := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "which port?"}).Message
	other := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q2", Body: "and the host?"}).Message
	frame := LiveFrame(&m)
	p, err := tr.Project(ctx, b, ProjectionOptions{Prompt: "Another session sent a message:\n" + frame + "\n(wrapper)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.InPrompt) != 1 || p.InPrompt[0] != m.MessageID || strings.Contains(p.Text, "which port?") {
		t.Fatalf("InPrompt %v, text:\n%s", p.InPrompt, p.Text)
	}
	if len(p.Offered) != 1 || p.Offered[0] != other.MessageID {
		t.Fatalf("the other message must still be projected: %v", p.Offered)
	}
	for _, prompt := range []string{frame[:len(frame)/2], "messageId: " + m.MessageID, strings.Replace(frame, "which port?", "which host?", 1)} {
		p, _ := tr.Project(ctx, b, ProjectionOptions{Prompt: prompt})
		if len(p.InPrompt) != 0 || len(p.Offered) != 2 {
			t.Errorf("prompt %q: InPrompt %v, offered %v", prompt, p.InPrompt, p.Offered)
		}
	}
}

// TestLiveBindingNamesNoCaller: a command run from a hooked session's
// shell sees both the client's session id and its live channel in its
// environment; the live binding must not count as a second way of naming
// the session (which made resolution ambiguous).
func TestLiveBindingNamesNoCaller(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	res, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob",
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManual})
	if err != nil {
		t.Fatal(err)
	}
	tr.attach("alice", "cli") // another live session, so only the environment can decide
	for _, endpoint := range []string{"/tmp/cc-socks/1.sock", "cc-1"} {
		if err := tr.RecordLiveBinding(ctx, res.Caller, "claude-inbox", endpoint); err != nil {
			t.Fatal(err)
		}
		got, err := tr.ResolveCaller(ctx, IdentityInput{Environ: []string{"CLAUDE_CODE_SESSION_ID=cc-1", "CLAUDE_CODE_MESSAGING_SOCKET=/tmp/cc-socks/1.sock"}})
		if err != nil || got != res.Caller {
			t.Errorf("endpoint %q: resolved %+v, %v; want %+v", endpoint, got, err, res.Caller)
		}
	}
	// The live binding alone names nobody.
	if got, err := tr.ResolveCaller(ctx, IdentityInput{Environ: []string{"CLAUDE_CODE_MESSAGING_SOCKET=/tmp/cc-socks/1.sock"}}); err == nil && got == res.Caller {
		t.Error("a live endpoint resolved the caller")
	}
}

// TestRecordLiveBindingWritesOnlyWhenNeeded: a hook renewing an unchanged
// binding at every turn writes nothing until half the lease has passed;
// a changed endpoint is written at once.
func TestRecordLiveBindingWritesOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	res, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob",
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManual})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Caller
	if err := tr.RecordLiveBinding(ctx, b, "claude-inbox", "/a.sock"); err != nil {
		t.Fatal(err)
	}
	before := tr.fingerprint()
	clock = clock.Add(LiveLease/2 - time.Second)
	if err := tr.RecordLiveBinding(ctx, b, "claude-inbox", "/a.sock"); err != nil || tr.fingerprint() != before {
		t.Errorf("an unchanged, fresh binding was written again (%v)", err)
	}
	clock = clock.Add(2 * time.Second)
	if err := tr.RecordLiveBinding(ctx, b, "claude-inbox", "/a.sock"); err != nil || tr.fingerprint() == before {
		t.Errorf("a binding half its lease old was not renewed (%v)", err)
	}
	renewed := tr.fingerprint()
	if err := tr.RecordLiveBinding(ctx, b, "claude-inbox", "/b.sock"); err != nil || tr.fingerprint() == renewed {
		t.Errorf("a changed endpoint was not written (%v)", err)
	}
	wantReason(t, tr.RecordLiveBinding(ctx, Caller{SessionID: b.SessionID, Generation: "generation_stale"}, "claude-inbox", "/b.sock"),
		protocol.ReasonStaleGeneration, protocol.ExitConflict)
}
