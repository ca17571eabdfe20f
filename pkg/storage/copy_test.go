package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// fillRoom writes a room with every kind of record: sessions in both
// areas, a claim, messages with receipts in several states, a decision
// change, events and a binding.
func fillRoom(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.PutWorkspace(fxWorkspace(ws)))
		for _, p := range []string{"alice", "bob"} {
			must(t, tx.PutParticipant(Durable, fxParticipant(ws, p)))
			must(t, tx.PutSession(Durable, fxSession(ws, "session_"+p, p, 1)))
		}
		must(t, tx.PutParticipant(Ephemeral, fxParticipant(ws, "carol")))
		must(t, tx.PutIntent(Durable, fxIntent(ws, "session_alice")))
		must(t, tx.PutClaim(fxClaim(ws, "claim_1", "session_alice")))
		for i, kind := range []string{protocol.KindQuestion, protocol.KindNote, protocol.KindDecision} {
			id := "message_" + string(rune('a'+i))
			must(t, tx.InsertMessage(fxMessage(ws, id, "alice", []string{"bob"}, kind, 10+i)))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", []string{protocol.ReceiptQueued, protocol.ReceiptOffered, protocol.ReceiptAcknowledged}[i])))
			must(t, tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)))
		}
		return tx.PutBinding(&SessionBinding{Key: "claude:abc", Harness: "claude", HarnessSessionID: "abc", SessionID: "session_alice", Generation: "generation_session_alice", UpdatedAt: ts(1)})
	})
}

// TestCopyRoomAcrossEngines copies a room from SQLite to PostgreSQL and
// back: the same records, ids, receipt states, sequences and counts on all
// three, and what each reads through the interface is the same.
func TestCopyRoomAcrossEngines(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	ws := pgWorkspace(t)
	src := openAt(t, filepath.Join(t.TempDir(), "a", "acc.db"), ws)
	fillRoom(t, src)
	// More rows than one batch of the copy's INSERTs, and not a multiple.
	bulk := 2*copyBatch + 37
	update(t, src, func(tx Tx) error {
		for i := range bulk {
			id := fmt.Sprintf("message_bulk%04d", i)
			must(t, tx.InsertMessage(fxMessage(ws, id, "bob", []string{"alice"}, protocol.KindNote, 100+i)))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "alice", protocol.ReceiptQueued)))
			must(t, tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)))
		}
		return nil
	})
	pg, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close(); dropRoom(t, u, ws) })
	rep, err := CopyRoom(context.Background(), src, pg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows["messages"] != int64(3+bulk) || rep.Rows["receipts"] != int64(3+bulk) || rep.Rows["events"] != int64(3+bulk) || rep.Rows["eph_participants"] != 1 || rep.Rows["session_bindings"] != 1 {
		t.Fatalf("rows copied: %v", rep.Rows)
	}
	back := openAt(t, filepath.Join(t.TempDir(), "b", "acc.db"), ws)
	rep2, err := CopyRoom(context.Background(), pg, back)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Digest != rep.Digest {
		t.Fatalf("digest after the round trip %s, before %s", rep2.Digest, rep.Digest)
	}
	want := readAll(t, src)
	// The copy is searchable: its index was rebuilt in the copy's
	// transaction, and finds what the source's finds.
	wantHits, err := searchIDs(t, src, SearchQuery{Match: mustParse(t, "subject")})
	if err != nil || len(wantHits) != 3+bulk {
		t.Fatalf("source search: %d hits, %v", len(wantHits), err)
	}
	for name, s := range map[string]Store{"postgres": pg, "sqlite again": back} {
		if got := readAll(t, s); got != want {
			t.Errorf("%s reads differently:\n%s\nwant\n%s", name, got, want)
		}
		if got, err := searchIDs(t, s, SearchQuery{Match: mustParse(t, "subject")}); err != nil || !slices.Equal(sorted(got), sorted(wantHits)) {
			t.Errorf("%s search: %d hits, %v; want %d", name, len(got), err, len(wantHits))
		}
	}
	// The next event continues the source's sequence.
	update(t, pg, func(tx Tx) error {
		e := fxEvent(protocol.EventMessageRecorded)
		must(t, tx.AppendEvent(e))
		if e.Sequence != protocol.FormatSequence(int64(4+bulk)) {
			t.Errorf("next sequence %s, want %d", e.Sequence, 4+bulk)
		}
		return nil
	})
	view(t, pg, func(tx ReadTx) error {
		c, err := tx.Counts()
		must(t, err)
		if c.Messages != int64(3+bulk) || c.Events != int64(4+bulk) {
			t.Errorf("counts %+v", c)
		}
		return nil
	})
}

// TestCopyRoomRefusesNonEmptyTarget: a target with any record is refused
// store_not_empty (exit 5) and left unchanged, on both engines.
func TestCopyRoomRefusesNonEmptyTarget(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	ws := pgWorkspace(t)
	src := openAt(t, filepath.Join(t.TempDir(), "a", "acc.db"), ws)
	fillRoom(t, src)
	pg, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close(); dropRoom(t, u, ws) })
	update(t, pg, func(tx Tx) error { return tx.PutParticipant(Ephemeral, fxParticipant(ws, "dave")) })
	sq := openAt(t, filepath.Join(t.TempDir(), "b", "acc.db"), ws)
	update(t, sq, func(tx Tx) error {
		return tx.PutBinding(&SessionBinding{Key: "k", Harness: "codex", HarnessSessionID: "x", SessionID: "s", Generation: "g", UpdatedAt: ts(1)})
	})
	for name, dst := range map[string]interface {
		Store
		Fingerprint(context.Context) (string, error)
	}{"postgres": pg, "sqlite": sq} {
		before, _ := dst.Fingerprint(context.Background())
		_, err := CopyRoom(context.Background(), src, dst)
		if !protocol.IsReason(err, protocol.ReasonStoreNotEmpty) || protocol.CodeOf(err) != 5 {
			t.Fatalf("%s: copy into a non-empty room: %v", name, err)
		}
		if after, _ := dst.Fingerprint(context.Background()); after != before {
			t.Fatalf("%s: a refused copy changed the target", name)
		}
	}
}

// readAll is everything a reader sees through the interface, as JSON.
func readAll(t *testing.T, s Store) string {
	t.Helper()
	var all []any
	view(t, s, func(tx ReadTx) error {
		w, err := tx.Workspace()
		all = append(all, w, err)
		for _, a := range []Area{Durable, Ephemeral} {
			ps, err1 := tx.Participants(a)
			ss, err2 := tx.Sessions(a, false)
			is, err3 := tx.Intents(a)
			all = append(all, ps, ss, is, err1, err2, err3)
		}
		cs, err := tx.Claims()
		all = append(all, cs, err)
		evs, err := tx.Events(0, 1000)
		all = append(all, evs, err)
		bs, err := tx.Bindings()
		all = append(all, bs, err)
		c, err := tx.Counts()
		all = append(all, c, err)
		var rows []InboxRow
		err = tx.ScanInbox(InboxQuery{Recipient: "bob"}, func(r InboxRow) bool { rows = append(rows, r); return true })
		all = append(all, rows, err)
		var owed []InboxRow
		err = tx.ScanOwed("bob", func(r InboxRow) bool { owed = append(owed, r); return true })
		all = append(all, owed, err)
		return nil
	})
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
