package core

import (
	"context"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestDeliveryTargets: the router sees each recipient's live sessions but
// never the session that sent the message, and learns when a decision is
// no longer pending because it was superseded.
func TestDeliveryTargets(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a1, a2 := tr.attach("alice", "cli"), tr.attach("alice", "cli")
	b := tr.attach("bob", "cli")
	m := tr.send(a1, SendInput{To: []string{"alice", "bob"}, Subject: "s", Body: "b"}).Message
	got, err := tr.DeliveryTargets(ctx, m.MessageID, m.ToParticipantIDs)
	if err != nil {
		t.Fatal(err)
	}
	sessions := func(dt DeliveryTarget) []string {
		var out []string
		for _, s := range dt.Sessions {
			out = append(out, s.SessionID)
		}
		return out
	}
	if len(got) != 2 || got[0].ParticipantID != "alice" || len(got[0].Sessions) != 1 || got[0].Sessions[0].SessionID != a2.SessionID {
		t.Errorf("alice's live sessions %v, want only %s (not the sender %s)", sessions(got[0]), a2.SessionID, a1.SessionID)
	}
	if len(got) != 2 || len(got[1].Sessions) != 1 || got[1].Sessions[0].SessionID != b.SessionID || got[1].Receipt != protocol.ReceiptQueued || got[1].NotPending {
		t.Errorf("bob's target %+v", got[1])
	}

	d1 := tr.send(a1, decide([]string{"bob"}, "v1")).Message.MessageID
	in := decide(nil, "v2")
	in.Supersedes = []string{d1}
	d2 := tr.send(a1, in).Message.MessageID
	d3 := tr.send(a1, decide([]string{"bob"}, "w1")).Message.MessageID
	in = decide(nil, "never mind")
	in.Withdraws = []string{d3}
	d4 := tr.send(a1, in).Message.MessageID
	for id, want := range map[string]bool{d1: true, d2: false, d3: true, d4: false} {
		got, err := tr.DeliveryTargets(ctx, id, []string{"bob"})
		if err != nil || len(got) != 1 || got[0].NotPending != want {
			t.Errorf("decision %s: not pending %v, want %v (%v)", id, got, want, err)
		}
	}
	_, err = tr.DeliveryTargets(ctx, "message_AAAAAAAAAAAAAAAAAAAAAA", []string{"bob"})
	wantReason(t, err, protocol.ReasonUnknownMessage, protocol.ExitData)
}
