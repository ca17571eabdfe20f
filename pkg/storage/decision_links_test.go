package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestDecisionLinks checks that a stored decision change links its targets,
// marks them replaced, and that DecisionGroup returns the whole connected
// group from any member, walking the links both ways, on both engines.
func TestDecisionLinks(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { decisionLinks(t, openTestSQLite(t)) })
	t.Run("postgresql", func(t *testing.T) { decisionLinks(t, openTestPostgres(t)) })
}

func decisionLinks(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	change := func(id, action string, sent int, targets ...string) *protocol.Message {
		m := fxMessage(ws, id, "alice", []string{}, protocol.KindDecision, sent)
		m.DecisionChange = &protocol.DecisionChange{Action: action, MessageIDs: targets}
		return m
	}
	update(t, s, func(tx Tx) error {
		for i, id := range []string{"message_a", "message_b", "message_x"} {
			must(t, tx.InsertMessage(fxMessage(ws, id, "alice", []string{}, protocol.KindDecision, i)))
		}
		must(t, tx.PutReceipt(fxReceipt(ws, "message_a", "bob", protocol.ReceiptQueued)))
		// c replaces a and b; d withdraws c. x stays alone.
		must(t, tx.InsertMessage(change("message_c", protocol.DecisionReplace, 5, "message_a", "message_b")))
		return tx.InsertMessage(change("message_d", protocol.DecisionWithdraw, 6, "message_c"))
	})
	want := []DecisionLink{
		{"message_c", "message_a", protocol.DecisionReplace},
		{"message_c", "message_b", protocol.DecisionReplace},
		{"message_d", "message_c", protocol.DecisionWithdraw},
	}
	view(t, s, func(tx ReadTx) error {
		for _, from := range []string{"message_a", "message_b", "message_c", "message_d"} {
			got, err := tx.DecisionGroup(from)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("DecisionGroup(%s) = %v, want %v", from, got, want)
			}
		}
		if got, err := tx.DecisionGroup("message_x"); err != nil || len(got) != 0 {
			t.Errorf("a lone decision has no links, got %v %v", got, err)
		}
		var heads []string
		must(t, tx.ScanMessages(MessageQuery{Kind: protocol.KindDecision, HeadsOnly: true}, func(m protocol.Message) bool {
			heads = append(heads, m.MessageID)
			return true
		}))
		if want := []string{"message_d", "message_x"}; !reflect.DeepEqual(heads, want) {
			t.Errorf("heads %v, want %v", heads, want)
		}
		n := 0
		must(t, tx.ScanInbox(InboxQuery{Recipient: "bob", ListableOnly: true}, func(InboxRow) bool { n++; return true }))
		if n != 0 {
			t.Errorf("a replaced decision is still listable")
		}
		var rcs []string
		must(t, tx.ScanReceipts(func(r protocol.Receipt) bool {
			rcs = append(rcs, r.MessageID+"/"+r.RecipientParticipantID)
			return true
		}))
		if want := []string{"message_a/bob"}; !reflect.DeepEqual(rcs, want) {
			t.Errorf("ScanReceipts = %v, want %v", rcs, want)
		}
		return nil
	})
	// A change naming a decision that is not stored is refused whole.
	err := s.Update(context.Background(), func(tx Tx) error {
		return tx.InsertMessage(change("message_e", protocol.DecisionReplace, 7, "message_zz"))
	})
	if err == nil {
		t.Fatal("a link to an unknown message was stored")
	}
}

// TestDecisionGroupUsesItsIndexes checks that the group walk reads the links
// by key in both directions, never by scanning the table.
func TestDecisionGroupUsesItsIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "acc.db"), "workspace_plan")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var plan []string
	err = s.View(ctx, func(rt ReadTx) error {
		rows, err := rt.(*sqlTx).q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+strings.ReplaceAll(queryDecisionGroup, "?", "'m'"))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				return err
			}
			plan = append(plan, detail)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(plan, "\n")
	if !strings.Contains(joined, "decision_links_by_target") || strings.Contains(joined, "SCAN l") {
		t.Errorf("the group walk does not use both indexes:\n%s", joined)
	}
	t.Logf("plan:\n%s", joined)
}
