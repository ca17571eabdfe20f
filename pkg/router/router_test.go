package router

import (
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestPlanGivesOneQueuedOutcomePerRecipient(t *testing.T) {
	m := &protocol.Message{MessageID: "message_x", Kind: protocol.KindQuestion}
	got := Plan(m, []string{"claude", "codex"})
	if len(got) != 2 {
		t.Fatalf("want 2 outcomes, got %d", len(got))
	}
	for i, want := range []string{"claude", "codex"} {
		d := got[i]
		if d.RecipientParticipantID != want || d.Outcome != OutcomeQueued || d.Transport != TransportInbox || d.ErrorCode == nil || *d.ErrorCode != ErrDeliveryDisabled {
			t.Errorf("outcome %d = %+v", i, d)
		}
	}
	if n := len(Plan(m, nil)); n != 0 {
		t.Errorf("no recipients must give no outcomes, got %d", n)
	}
}
