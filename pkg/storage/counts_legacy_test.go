package storage

import (
	"context"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestSQLiteCountsWithoutCountRow: a store of schema version 1 written
// before the message count was kept in meta has no 'message_count' row.
// Counts must still report the true number of messages (it fell back to a
// NULL and failed every status with an internal error, exit 1), and later
// inserts must keep it true.
func TestSQLiteCountsWithoutCountRow(t *testing.T) {
	path := storePath(t)
	first, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	update(t, first, func(tx Tx) error {
		return tx.InsertMessage(fxMessage(testWorkspace, "message_1", "alice", []string{"bob"}, protocol.KindNote, 1))
	})
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, "DELETE FROM meta WHERE key = 'message_count'")

	s := openAt(t, path, testWorkspace)
	counts := func() int64 {
		t.Helper()
		var c Counts
		err := s.View(context.Background(), func(tx ReadTx) error {
			var err error
			c, err = tx.Counts()
			return err
		})
		if err != nil {
			t.Fatalf("Counts on a store without the count row: %v", err)
		}
		return c.Messages
	}
	if n := counts(); n != 1 {
		t.Fatalf("Counts().Messages = %d, want 1", n)
	}
	update(t, s, func(tx Tx) error {
		return tx.InsertMessage(fxMessage(testWorkspace, "message_2", "alice", []string{"bob"}, protocol.KindNote, 2))
	})
	if n := counts(); n != 2 {
		t.Fatalf("after one more message Counts().Messages = %d, want 2", n)
	}
}
