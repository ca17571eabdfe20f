package storage

import (
	"context"
	"errors"
	"fmt"
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

// suiteSearchPending: a message written as an acc of schema version 2
// writes it (its row, no index), as one still running after the upgrade
// does, is recorded pending by the store's trigger and missed by search
// until IndexPending indexes it; a message this acc writes leaves nothing
// pending; a pending message whose record is damaged is counted skipped
// and cleared, never indexed.
func suiteSearchPending(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	note := func(id string, sent int, subject string) *protocol.Message {
		m := fxMessage(ws, id, "alice", []string{"bob"}, protocol.KindNote, sent)
		m.Subject = subject
		return m
	}
	pending := func() int {
		t.Helper()
		var n int
		view(t, s, func(tx ReadTx) error {
			var err error
			n, err = tx.PendingIndex()
			return err
		})
		return n
	}
	wombat := SearchQuery{Match: mustParse(t, "wombat")}
	update(t, s, func(tx Tx) error { return tx.InsertMessage(note("p1", 1, "wombat sighting")) })
	if n := pending(); n != 0 {
		t.Fatalf("after an indexed insert: %d pending, want 0", n)
	}
	update(t, s, func(tx Tx) error {
		if err := tx.(*sqlTx).insertMessage(note("p2", 2, "wombat burrow"), false); err != nil {
			return err
		}
		return tx.(*sqlTx).insertMessage(note("p3", 3, "wombat damaged"), false)
	})
	if n := pending(); n != 2 {
		t.Fatalf("after two unindexed inserts: %d pending, want 2", n)
	}
	if got, err := searchIDs(t, s, wombat); err != nil || !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("before IndexPending: %v, %v; want [p1]", got, err)
	}
	// p3's record no longer decodes.
	update(t, s, func(tx Tx) error {
		return tx.(*sqlTx).exec("damage a record", "UPDATE messages SET record = '{' WHERE message_id = 'p3'")
	})
	var indexed, skipped int
	update(t, s, func(tx Tx) error {
		var err error
		indexed, skipped, err = tx.IndexPending()
		return err
	})
	if indexed != 1 || skipped != 1 {
		t.Errorf("IndexPending = %d indexed, %d skipped; want 1, 1", indexed, skipped)
	}
	if n := pending(); n != 0 {
		t.Errorf("after IndexPending: %d pending, want 0", n)
	}
	if got, err := searchIDs(t, s, wombat); err != nil || !slices.Equal(sorted(got), []string{"p1", "p2"}) {
		t.Errorf("after IndexPending: %v, %v; want p1 and p2", got, err)
	}
	// The damaged row is repaired by hand: it stays out of the index, as
	// it was out of every read, until a copy or upgrade indexes it again.
	update(t, s, func(tx Tx) error {
		return tx.(*sqlTx).exec("clear the test's damage", "DELETE FROM messages WHERE message_id = 'p3'")
	})
}

// suiteSearchPhraseGaps: a phrase matches within the body or one handoff
// line, never across the end of one and the start of the next, nor over
// a word too long to index; the words themselves are all found.
func suiteSearchPhraseGaps(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	long := strings.Repeat("x", protocol.MaxSearchWordBytes+1)
	update(t, s, func(tx Tx) error {
		m := fxMessage(ws, "h1", "carol", []string{"alice"}, protocol.KindHandoff, 1)
		m.Subject, m.Body = "Hand over", "body ends kestrel"
		m.Handoff.Completed = []string{"falcon merlin"}
		m.Handoff.Remaining = []string{"osprey harrier"}
		if err := tx.InsertMessage(m); err != nil {
			return err
		}
		n := fxMessage(ws, "n1", "carol", []string{"alice"}, protocol.KindNote, 2)
		n.Subject, n.Body = "birds", "buzzard "+long+" kite"
		return tx.InsertMessage(n)
	})
	for q, want := range map[string][]string{
		`"falcon merlin"`:  {"h1"},
		`"ends kestrel"`:   {"h1"},
		`"kestrel falcon"`: nil,
		`"merlin osprey"`:  nil,
		`"buzzard kite"`:   nil,
		`kestrel falcon`:   {"h1"},
		`merlin osprey`:    {"h1"},
		`buzzard kite`:     {"n1"},
		`"osprey harrier"`: {"h1"},
	} {
		got, err := searchIDs(t, s, SearchQuery{Match: mustParse(t, q)})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", q, got, err, want)
		}
	}
}

// suiteSearchHugeHandoff: a handoff whose distinct words pass
// protocol.MaxSearchDocumentBytes (PostgreSQL refuses a larger tsvector)
// is stored and indexed on both engines alike: words met before the
// bound are found, those first met after it are not.
func suiteSearchHugeHandoff(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	m := fxMessage(ws, "big", "carol", []string{"alice"}, protocol.KindHandoff, 1)
	m.Subject, m.Body = "Hand over everything", "see the lines"
	n := 0
	for bytes := 0; bytes < protocol.MaxSearchDocumentBytes+100_000; {
		var line []string
		for range 50 {
			w := fmt.Sprintf("w%07d", n)
			n++
			bytes += len(w)
			line = append(line, w)
		}
		m.Handoff.Completed = append(m.Handoff.Completed, strings.Join(line, " "))
	}
	update(t, s, func(tx Tx) error { return tx.InsertMessage(m) })
	for q, want := range map[string][]string{
		"w0000000":                      {"big"},
		fmt.Sprintf("w%07d", 50_000):    {"big"},
		fmt.Sprintf("w%07d", n-1):       nil,
		"hand over everything w0000001": {"big"},
	} {
		got, err := searchIDs(t, s, SearchQuery{Match: mustParse(t, q)})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", q, got, err, want)
		}
	}
}
