package storage

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// searchFixture writes searchDocs as messages (subject and body split at
// the first period, when there is one) plus a handoff, a decision chain
// and a reply in a thread, and returns nothing: the ids are the docs' keys.
//
//	d1 alice→bob   note       t=1  "Rotate the auth tokens…"
//	d2 bob→alice   question   t=2
//	d3 alice→room  decision   t=3  (replaced by d6)
//	d4 carol→bob   note       t=4
//	d5 bob→room    note       t=5
//	d6 bob→room    decision   t=6  replaces d3
//	d7 carol→alice handoff    t=7  blockers line holds "quokka"
//	d8 alice→bob   answer     t=8  in d2's thread, subject "token" only
func searchFixture(t *testing.T, s Store) {
	t.Helper()
	ws := s.WorkspaceID()
	msg := func(id, from string, to []string, kind string, sent int, text string) *protocol.Message {
		m := fxMessage(ws, id, from, to, kind, sent)
		m.Subject, m.Body = text, "nothing else"
		return m
	}
	update(t, s, func(tx Tx) error {
		must(t, tx.InsertMessage(msg("d1", "alice", []string{"bob"}, protocol.KindNote, 1, searchDocs["d1"])))
		must(t, tx.PutReceipt(fxReceipt(ws, "d1", "bob", protocol.ReceiptQueued)))
		must(t, tx.InsertMessage(msg("d2", "bob", []string{"alice"}, protocol.KindQuestion, 2, searchDocs["d2"])))
		must(t, tx.PutReceipt(fxReceipt(ws, "d2", "alice", protocol.ReceiptQueued)))
		must(t, tx.InsertMessage(msg("d3", "alice", []string{}, protocol.KindDecision, 3, searchDocs["d3"])))
		must(t, tx.PutReceipt(fxReceipt(ws, "d3", "bob", protocol.ReceiptQueued))) // a room message's receipt
		d4 := msg("d4", "carol", []string{"bob"}, protocol.KindNote, 4, "menu")
		d4.Body = searchDocs["d4"] // the words are in the body only
		must(t, tx.InsertMessage(d4))
		must(t, tx.PutReceipt(fxReceipt(ws, "d4", "bob", protocol.ReceiptQueued)))
		must(t, tx.InsertMessage(msg("d5", "bob", []string{}, protocol.KindNote, 5, searchDocs["d5"])))
		d6 := msg("d6", "bob", []string{}, protocol.KindDecision, 6, "Migration 0043 keeps the tokens table")
		d6.DecisionChange = &protocol.DecisionChange{Action: protocol.DecisionReplace, MessageIDs: []string{"d3"}}
		must(t, tx.InsertMessage(d6))
		d7 := msg("d7", "carol", []string{"alice"}, protocol.KindHandoff, 7, "Hand over the parser")
		d7.Handoff.Blockers = []string{"waiting on the quokka review"}
		must(t, tx.InsertMessage(d7))
		must(t, tx.PutReceipt(fxReceipt(ws, "d7", "alice", protocol.ReceiptQueued)))
		d8 := msg("d8", "alice", []string{"bob"}, protocol.KindAnswer, 8, "token")
		d8.ThreadID, d8.InReplyTo = "d2", ptr("d2")
		must(t, tx.InsertMessage(d8))
		return tx.PutReceipt(fxReceipt(ws, "d8", "bob", protocol.ReceiptQueued))
	})
}

func searchIDs(t *testing.T, s Store, q SearchQuery) ([]string, error) {
	t.Helper()
	var ids []string
	err := s.View(context.Background(), func(tx ReadTx) error {
		return tx.SearchMessages(q, func(m protocol.Message) bool { ids = append(ids, m.MessageID); return true })
	})
	return ids, err
}

func sorted(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// suiteSearch: the index is written with each message, both engines find
// the same messages for the same queries and filters, a cursor continues
// the ranked list exactly, and a cursor that is no hit is refused.
func suiteSearch(t *testing.T, s Store) {
	searchFixture(t, s)
	match := func(q string) *protocol.SearchQuery { return mustParse(t, q) }
	sets := []struct {
		q    SearchQuery
		want []string
	}{
		{SearchQuery{Match: match("tokens")}, []string{"d1", "d3", "d6"}},
		{SearchQuery{Match: match("token")}, []string{"d2", "d8"}},
		{SearchQuery{Match: match("token*")}, []string{"d1", "d2", "d3", "d6", "d8"}},
		{SearchQuery{Match: match(`"refresh flow"`)}, []string{"d1"}},
		{SearchQuery{Match: match("refresh -draft")}, []string{"d1"}},
		{SearchQuery{Match: match("café")}, []string{"d4"}},
		{SearchQuery{Match: match("cafe")}, nil},
		{SearchQuery{Match: match("数据库")}, []string{"d4"}},
		{SearchQuery{Match: match("OR NOT")}, []string{"d5"}},
		{SearchQuery{Match: match("quokka")}, []string{"d7"}},
		{SearchQuery{Match: match("flat-white")}, []string{"d4"}},
		// A phrase never spans the subject and the body.
		{SearchQuery{Match: match(`"menu café"`)}, nil},
		{SearchQuery{Match: match("tokens"), From: []string{"bob"}}, []string{"d6"}},
		{SearchQuery{Match: match("token*"), From: []string{"bob", "carol"}}, []string{"d2", "d6"}},
		{SearchQuery{Match: match("token*"), To: "bob"}, []string{"d1", "d8"}},
		{SearchQuery{Match: match("token*"), Kind: protocol.KindDecision}, []string{"d3", "d6"}},
		{SearchQuery{Match: match("token*"), CurrentDecisions: true}, []string{"d6"}},
		{SearchQuery{Match: match("token*"), Since: ts(2), Until: ts(6)}, []string{"d2", "d3"}},
		{SearchQuery{Match: match("token*"), ThreadID: "d2"}, []string{"d2", "d8"}},
		{SearchQuery{Match: match("nothing")}, []string{"d1", "d2", "d3", "d5", "d6", "d7", "d8"}},
	}
	for _, c := range sets {
		got, err := searchIDs(t, s, c.q)
		if err != nil || !slices.Equal(sorted(got), c.want) {
			t.Errorf("search %+v: %v, %v; want %v", c.q, got, err, c.want)
		}
	}

	// A word in the subject ranks above the same word in the body alone.
	update(t, s, func(tx Tx) error {
		a := fxMessage(s.WorkspaceID(), "r1", "alice", []string{}, protocol.KindNote, 20)
		a.Subject, a.Body = "weekly status", "the zebra crossing is closed"
		must(t, tx.InsertMessage(a))
		b := fxMessage(s.WorkspaceID(), "r2", "alice", []string{}, protocol.KindNote, 10)
		b.Subject, b.Body = "zebra crossing", "closed for the week"
		return tx.InsertMessage(b)
	})
	if got, err := searchIDs(t, s, SearchQuery{Match: match("zebra")}); err != nil || !slices.Equal(got, []string{"r2", "r1"}) {
		t.Errorf("zebra: %v, %v; want the subject hit r2 first", got, err)
	}

	// Paging by cursor gives the whole ranked list, once each.
	for _, q := range []string{"token*", "nothing", "tokens -draft"} {
		full, err := searchIDs(t, s, SearchQuery{Match: match(q)})
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range full {
			rest, err := searchIDs(t, s, SearchQuery{Match: match(q), After: id})
			if err != nil || !slices.Equal(rest, full[i+1:]) {
				t.Errorf("%q after %s: %v, %v; want %v", q, id, rest, err, full[i+1:])
			}
		}
	}

	before := snapshot(t, s)
	for _, after := range []string{"d4", "message_unknown"} {
		_, err := searchIDs(t, s, SearchQuery{Match: match("tokens"), After: after})
		wantCode(t, err, protocol.ExitUsage, protocol.ReasonInvalidCursor)
	}
	// A hit of the words that the filters leave out continues no list.
	for _, q := range []SearchQuery{
		{Match: match("tokens"), From: []string{"bob"}, After: "d1"},
		{Match: match("tokens"), Kind: protocol.KindDecision, After: "d1"},
		{Match: match("token*"), To: "bob", After: "d2"},
		{Match: match("token*"), ThreadID: "d2", After: "d1"},
		{Match: match("token*"), Since: ts(3), After: "d2"},
		{Match: match("token*"), Until: ts(3), After: "d3"},
	} {
		_, err := searchIDs(t, s, q)
		wantCode(t, err, protocol.ExitUsage, protocol.ReasonInvalidCursor)
	}
	// A decision replaced since its page was read still continues the
	// list of current decisions.
	if _, err := searchIDs(t, s, SearchQuery{Match: match("tokens"), CurrentDecisions: true, After: "d3"}); err != nil {
		t.Errorf("current decisions after a replaced one: %v", err)
	}
	if after := snapshot(t, s); after != before {
		t.Error("a refused search changed the store")
	}

	// The index is part of the message's transaction: a rolled-back
	// message leaves no hit behind.
	err := s.Update(context.Background(), func(tx Tx) error {
		m := fxMessage(s.WorkspaceID(), "gone", "alice", []string{}, protocol.KindNote, 30)
		m.Subject = "ephemeral walrus"
		must(t, tx.InsertMessage(m))
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("the update did not fail")
	}
	if got, err := searchIDs(t, s, SearchQuery{Match: match("walrus")}); err != nil || len(got) != 0 {
		t.Errorf("walrus after a rollback: %v, %v", got, err)
	}
}

// TestTSVectorLiteral: the literal keeps each word once with its sorted
// positions, marks the subject's with weight A, leaves a gap before the
// body, and respects PostgreSQL's limits.
func TestTSVectorLiteral(t *testing.T) {
	t.Parallel()
	got := tsvectorLiteral([]string{"fix", "it"}, []string{"fix", "the", "it's", "fix"})
	want := `'fix':1A,4,7 'it':2A 'it''s':6 'the':5`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	many := strings.Fields(strings.Repeat("w ", 20000))
	lit := tsvectorLiteral(nil, many)
	if n := strings.Count(lit, ","); n != pgMaxPositions-1 {
		t.Errorf("%d positions kept, want %d", n+1, pgMaxPositions)
	}
	long := make([]string, 17000)
	for i := range long {
		long[i] = "w" + strings.Repeat("x", i%7)
	}
	for _, pos := range strings.FieldsFunc(tsvectorLiteral(nil, long), func(r rune) bool { return r == ',' || r == ':' || r == ' ' }) {
		if pos != "" && pos[0] >= '0' && pos[0] <= '9' && len(pos) > 5 {
			t.Errorf("position %s beyond PostgreSQL's range", pos)
		}
	}
}
