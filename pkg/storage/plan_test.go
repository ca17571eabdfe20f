package storage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueriesUseTheirIndexes checks SQLite's plan for the reads that must not
// scan history: an inbox page, what a participant owes, and what a sender
// is still owed.
func TestQueriesUseTheirIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "acc.db"), "workspace_plan")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ query, index string }{
		{`SELECT m.record, r.record FROM receipts r JOIN messages m ON m.message_id = r.message_id
			WHERE r.recipient_participant_id = 'p' AND r.listable = 1 AND (r.sent_at, r.message_id) < ('t', 'm')
			ORDER BY r.sent_at DESC, r.message_id DESC`, "receipts_inbox"},
		{strings.ReplaceAll(queryOwed, "?", "'p'"), "receipts_owed"},
		// The post-tool hook's scan (core's queuedForTurn) and the
		// projection's walk only the queued receipts, however many offered
		// ones a long session has piled up.
		{strings.ReplaceAll(inboxQuery(InboxQuery{Recipient: "p", QueuedOnly: true, ListableOnly: true, Kind: "question"}), "?", "'p'"), "receipts_queued"},
		{strings.ReplaceAll(inboxQuery(InboxQuery{Recipient: "p", QueuedOnly: true, ListableOnly: true}), "?", "'p'"), "receipts_queued"},
		{strings.ReplaceAll(queryOutstanding, "?", "'p'"), "receipts_outstanding"},
	} {
		var plan []string
		err := s.View(ctx, func(rt ReadTx) error {
			rows, err := rt.(*sqlTx).q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query)
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
		if !strings.Contains(strings.Join(plan, "\n"), c.index) {
			t.Errorf("plan does not use %s:\n%s", c.index, strings.Join(plan, "\n"))
		}
	}
}

// TestEarlierStoreGetsTheQueuedIndex: a store created before
// receipts_queued existed gets it when opened, and keeps it.
func TestEarlierStoreGetsTheQueuedIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "acc.db")
	s, err := OpenSQLite(ctx, path, "workspace_old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "DROP INDEX receipts_queued"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	has := func() bool {
		t.Helper()
		s, err := OpenSQLite(ctx, path, "workspace_old")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'receipts_queued'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if !has() {
		t.Fatal("opening an earlier store must add receipts_queued")
	}
	if !has() {
		t.Fatal("the index went away")
	}
}
