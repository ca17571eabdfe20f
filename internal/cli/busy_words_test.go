package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// TestBusyWordsNameTheCarrier: when a recipient has two busy sessions and
// only one of them would show the message (the other's installation
// turned mid-turn off, or its turn has had its holds), the sender's words
// name the one that does, not the first busy one in the list.
func TestBusyWordsNameTheCarrier(t *testing.T) {
	working := &protocol.Activity{State: protocol.ActivityWorking, Since: "2026-12-02T09:00:00.000Z"}
	q := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	claude := router.Session{SessionID: "s1", Harness: "claude", ClientVersion: "2.1.332", NextTurn: true, MidTurn: true, EndOfTurn: true, Activity: working}
	codex := router.Session{SessionID: "s2", Harness: "codex", ClientVersion: "0.64.0", NextTurn: true, MidTurn: true, EndOfTurn: true, Activity: working}
	offMid := claude
	offMid.MidTurnPolicy = router.PolicyOff
	spent := claude
	spent.HoldsSpent = true
	codexEnd := codex
	codexEnd.MidTurn = false
	for _, c := range []struct {
		name     string
		sessions []router.Session
		via      string
	}{
		{"mid-turn off for Claude Code's installation", []router.Session{offMid, codex}, router.TransportMidTurn},
		{"Claude Code's turn has had its holds", []router.Session{spent, codexEnd}, router.TransportEndOfTurn},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := router.Recipient{ParticipantID: "bob", Receipt: protocol.ReceiptQueued, Sessions: c.sessions,
				MidTurn: router.PolicyActionable, EndOfTurn: router.PolicyActionable}
			if c.via == router.TransportEndOfTurn {
				r.MidTurn = router.PolicyOff
			}
			d := router.Router{}.Route(context.Background(), q, []router.Recipient{r})[0]
			if d.Transport != c.via {
				t.Fatalf("routed via %s, want %s", d.Transport, c.via)
			}
			words := strings.Join(deliveryLines([]router.Delivery{d}, "alice"), "\n")
			if !strings.Contains(words, "Codex 0.64.0") || strings.Contains(words, "Claude Code") {
				t.Fatalf("the words must name the Codex session that shows it:\n%s", words)
			}
		})
	}
}
