package e2e

import (
	"strings"
	"testing"
)

// TestRouterEndOfTurnIsTrue: `acc message` reports end-of-turn only when
// the recipient's stop hook would hold for the message. With
// policy.endOfTurnMaxHolds 0 no stop is ever held, and once a turn has
// had its policy.endOfTurnMaxHolds holds no further stop of it is: in
// both cases the message waits for the next turn, and the send says
// next-turn.
func TestRouterEndOfTurnIsTrue(t *testing.T) {
	t.Run("maxHolds=0", func(t *testing.T) {
		tr := newTurnRoom(t, true, map[string]any{"midTurn": "off", "endOfTurnMaxHolds": 0})
		tr.prompt()
		d, q := tr.sb.deliver(tr.alice, "--to", "bob", "--type", "question", "--subject", "s", "--body", "b")
		if reason := hold(t, tr.stop(false)); reason != "" {
			t.Fatalf("endOfTurnMaxHolds 0 held a stop: %s", reason)
		}
		wantDelivery(t, "endOfTurnMaxHolds 0", d, "bob", "queued", "next-turn", "")
		if !strings.Contains(tr.c.injected(t, tr.prompt(), "UserPromptSubmit"), q) {
			t.Fatal("the next turn must carry it")
		}
	})
	t.Run("holds spent", func(t *testing.T) {
		tr := newTurnRoom(t, true, map[string]any{"midTurn": "off", "endOfTurnMaxHolds": 1})
		tr.prompt()
		tr.send("question", "first", "b")
		if reason := hold(t, tr.stop(false)); reason == "" {
			t.Fatal("the first question must hold the stop")
		}
		d, _ := tr.sb.deliver(tr.alice, "--to", "bob", "--type", "question", "--subject", "second", "--body", "b")
		if reason := hold(t, tr.stop(false)); reason != "" {
			t.Fatalf("a turn was held more than endOfTurnMaxHolds times: %s", reason)
		}
		wantDelivery(t, "holds spent", d, "bob", "queued", "next-turn", "")
	})
}
