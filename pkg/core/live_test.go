package core

import (
	"context"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestLiveBinding: a live binding holds for its session's generation and
// its lease only; the router sees it in DeliveryTargets; it goes with the
// session at hook end; status never shows the endpoint.
func TestLiveBinding(t *testing.T) {
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
	if err != nil || targets[0].Live[b.SessionID] != (LiveEndpoint{Transport: "claude-inbox", Endpoint: "/tmp/cc-socks/1.sock"}) {
		t.Fatalf("targets %+v %v", targets, err)
	}
	if ok, _ := tr.Reachable(ctx, b.SessionID); !ok {
		t.Error("the session is not reachable")
	}
	st, _ := tr.Status(ctx, StatusQuery{})
	for _, row := range st.Participants {
		if row.SessionID == b.SessionID && !row.Reachable {
			t.Error("status does not say the session is reachable")
		}
	}
	// Past its lease, the binding is not used.
	clock = clock.Add(LiveLease + time.Second)
	tr.Heartbeat(ctx, b)
	if targets, _ := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"}); len(targets[0].Live) != 0 {
		t.Errorf("an expired binding is still used: %+v", targets[0].Live)
	}
	// Renewed, then the session ends: the binding goes with it.
	tr.RecordLiveBinding(ctx, b, "claude-inbox", "/tmp/cc-socks/1.sock")
	if err := tr.HookEnd(ctx, "claude", "cc-1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := tr.Reachable(ctx, b.SessionID); ok {
		t.Error("a closed session is still reachable")
	}
	// A new generation of the session does not inherit an old binding.
	res2, _ := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-2", Participant: "bob"})
	if targets, _ := tr.DeliveryTargets(ctx, m.MessageID, []string{"bob"}); len(targets[0].Live) != 0 {
		t.Errorf("a new session %s sees a live binding: %+v", res2.Caller.SessionID, targets[0].Live)
	}
}
