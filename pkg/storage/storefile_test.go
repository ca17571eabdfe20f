package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestSQLiteRefusesIncompleteFiles: acc only ever links a complete store
// into place, so an acc.db that is empty, shorter than a page, a bare
// SQLite file without acc's schema, or a directory was damaged (or never
// was acc's): store_corrupt naming the path and the fix, and left as found.
func TestSQLiteRefusesIncompleteFiles(t *testing.T) {
	for name, make := range map[string]func(t *testing.T, path string){
		"zero bytes": func(t *testing.T, path string) { must(t, os.WriteFile(path, nil, 0o600)) },
		"100 bytes":  func(t *testing.T, path string) { must(t, os.WriteFile(path, []byte(strings.Repeat("x", 100)), 0o600)) },
		"no schema":  func(t *testing.T, path string) { rawExec(t, path, "PRAGMA journal_mode=WAL", "PRAGMA user_version=0") },
		"directory":  func(t *testing.T, path string) { must(t, os.Mkdir(path, 0o700)) },
		"first page of a store": func(t *testing.T, path string) {
			s, err := OpenSQLite(context.Background(), path, testWorkspace)
			must(t, err)
			s.Close()
			rawExec(t, path, "PRAGMA wal_checkpoint(TRUNCATE)")
			must(t, os.Truncate(path, 4096))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := storePath(t)
			must(t, os.MkdirAll(filepath.Dir(path), 0o700))
			make(t, path)
			err := refusedOpen(t, path, testWorkspace, protocol.ReasonStoreCorrupt)
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "move it aside") {
				t.Errorf("the refusal %q should name %s and the fix", msg, path)
			}
			if _, err := OpenSQLiteExisting(context.Background(), path, testWorkspace); !protocol.IsReason(err, protocol.ReasonStoreCorrupt) {
				t.Errorf("OpenSQLiteExisting: %v, want store_corrupt", err)
			}
		})
	}
}

// TestSQLiteRefusesTruncatedStore cuts a real store to half its size: the
// file is shorter than its header says, quick_check finds the damage, and
// the open is refused as store_corrupt before anything is written.
func TestSQLiteRefusesTruncatedStore(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	must(t, err)
	seed(t, s)
	update(t, s, func(tx Tx) error {
		for i := range 400 {
			m := fxMessage(testWorkspace, fmt.Sprintf("message_t%03d", i), "alice", []string{"bob"}, protocol.KindNote, i)
			m.Body = strings.Repeat("long body ", 100)
			if err := tx.InsertMessage(m); err != nil {
				return err
			}
		}
		return nil
	})
	s.Close()
	rawExec(t, path, "PRAGMA wal_checkpoint(TRUNCATE)")
	info, err := os.Stat(path)
	must(t, err)
	must(t, os.Truncate(path, info.Size()/2))
	err = refusedOpen(t, path, testWorkspace, protocol.ReasonStoreCorrupt)
	if !strings.Contains(err.Error(), "truncated") {
		t.Errorf("the refusal %q should say the file is truncated", err)
	}
}

// TestSQLiteCloseKeepsTheWAL: closing a store does not checkpoint it, so a
// process that commits pays one WAL fsync and no copy into acc.db
// (docs/design.md). If a driver upgrade breaks the connection hook that
// turns SQLite's checkpoint on close off, this fails.
func TestSQLiteCloseKeepsTheWAL(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	must(t, err)
	if !checkpointOnCloseDisabled.Load() {
		t.Fatal("the connection hook could not turn off SQLite's checkpoint on close (has modernc.org/sqlite's conn changed?)")
	}
	before, err := os.ReadFile(path)
	must(t, err)
	seed(t, s)
	must(t, s.Close())
	wal, err := os.Stat(path + "-wal")
	if err != nil || wal.Size() == 0 {
		t.Fatalf("after close the WAL is gone or empty (%v): the store was checkpointed on close", err)
	}
	after, err := os.ReadFile(path)
	must(t, err)
	if string(after) != string(before) {
		t.Error("closing the store wrote acc.db: it was checkpointed on close")
	}
	// The data is there for the next process, and intact.
	s = openAt(t, path, testWorkspace)
	view(t, s, func(tx ReadTx) error {
		if m, err := tx.Message("message_1"); m == nil || err != nil {
			t.Fatalf("the committed message is not visible after reopening: %v", err)
		}
		return nil
	})
	ents, err := os.ReadDir(filepath.Dir(path))
	must(t, err)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".new-") {
			t.Errorf("a temporary store file was left behind: %s", e.Name())
		}
	}
}

// TestSQLiteWALStaysBounded: many commits from processes that each close
// the store afterwards still checkpoint in the background of the traffic,
// so the WAL does not grow without bound.
func TestSQLiteWALStaysBounded(t *testing.T) {
	path := storePath(t)
	for round := range 30 {
		s, err := OpenSQLite(context.Background(), path, testWorkspace)
		must(t, err)
		update(t, s, func(tx Tx) error {
			for i := range 20 {
				m := fxMessage(testWorkspace, fmt.Sprintf("message_%02d_%02d", round, i), "alice", []string{"bob"}, protocol.KindNote, i)
				m.Body = strings.Repeat("body ", 400)
				if err := tx.InsertMessage(m); err != nil {
					return err
				}
			}
			return nil
		})
		must(t, s.Close())
	}
	info, err := os.Stat(path + "-wal")
	must(t, err)
	// The commit that takes the WAL past walCheckpointBytes empties it;
	// one round adds well under walCheckpointBytes.
	if info.Size() > 2*walCheckpointBytes {
		t.Errorf("the WAL is %d bytes after 600 messages; want at most %d", info.Size(), 2*walCheckpointBytes)
	}
	db, err := os.Stat(path)
	must(t, err)
	if db.Size() <= 64<<10 {
		t.Errorf("acc.db is %d bytes after 600 messages of 2 KB: nothing was checkpointed", db.Size())
	}
	t.Logf("acc.db %d bytes, acc.db-wal %d bytes", db.Size(), info.Size())
	checkIntegrity(t, openAt(t, path, testWorkspace))
}

// TestSQLiteDamagedRecord: with InboxQuery.Damaged set, a row whose message
// does not decode is skipped and named while the others are returned;
// without it the scan refuses with store_corrupt. DamagedRecords names it.
func TestSQLiteDamagedRecord(t *testing.T) {
	path := storePath(t)
	s := openAt(t, path, testWorkspace)
	update(t, s, func(tx Tx) error {
		for i := range 3 {
			id := fmt.Sprintf("message_%d", i)
			must(t, tx.InsertMessage(fxMessage(testWorkspace, id, "alice", []string{"bob"}, protocol.KindNote, i)))
			must(t, tx.PutReceipt(fxReceipt(testWorkspace, id, "bob", protocol.ReceiptQueued)))
		}
		return nil
	})
	rawExec(t, path, "UPDATE messages SET record = '{broken' WHERE message_id = 'message_1'")
	var got []string
	var damaged []DamagedRecord
	view(t, s, func(tx ReadTx) error {
		err := tx.ScanInbox(InboxQuery{Recipient: "bob"}, func(r InboxRow) bool {
			got = append(got, r.Message.MessageID)
			return true
		})
		damaged = tx.Damaged()
		return err
	})
	if strings.Join(got, " ") != "message_2 message_0" || len(damaged) != 1 || damaged[0].Table != "messages" || damaged[0].Key != "message_1" {
		t.Fatalf("listed %v, damaged %+v", got, damaged)
	}
	// A write transaction does not act on a partial list: the same scan
	// there fails whole, and the exact read of the damaged message too.
	err := s.Update(context.Background(), func(tx Tx) error {
		return tx.ScanInbox(InboxQuery{Recipient: "bob"}, func(InboxRow) bool { return true })
	})
	wantCode(t, err, protocol.ExitData, protocol.ReasonStoreCorrupt)
	err = s.View(context.Background(), func(tx ReadTx) error {
		_, err := tx.Message("message_1")
		return err
	})
	wantCode(t, err, protocol.ExitData, protocol.ReasonStoreCorrupt)
	all, err := s.DamagedRecords(context.Background(), 10)
	must(t, err)
	if len(all) != 1 || all[0].Table != "messages" || all[0].Key != "message_1" || all[0].Problem == "" {
		t.Fatalf("DamagedRecords = %+v", all)
	}
}

// TestFileFaultReasons: each operating-system fault under the store has its
// own exit-4 reason, and the message names the path (never exit 1).
func TestFileFaultReasons(t *testing.T) {
	path := "/data/acc/workspaces/workspace_x/acc.db"
	for errno, reason := range map[syscall.Errno]string{
		syscall.ENOSPC:  protocol.ReasonStoreFull,
		syscall.EDQUOT:  protocol.ReasonStoreFull,
		syscall.EACCES:  protocol.ReasonStoreUnwritable,
		syscall.EPERM:   protocol.ReasonStoreUnwritable,
		syscall.EROFS:   protocol.ReasonStoreUnwritable,
		syscall.EIO:     protocol.ReasonStoreIOError,
		syscall.ENOTDIR: protocol.ReasonStoreCorrupt,
	} {
		err := fileFault(path, "create the store directory", &os.PathError{Op: "mkdir", Path: filepath.Dir(path), Err: errno})
		wantCode(t, err, protocol.ExitData, reason)
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%v: the message %q does not name %s", errno, err, path)
		}
	}
}

// TestCreateRemovesAbandonedTemporaryFiles: the temporary store a creator
// killed mid-way left beside acc.db is removed by the next creation once it
// is older than an hour; a younger one (a creation that may be running) is
// left alone, and so is anything that is not such a file.
func TestCreateRemovesAbandonedTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acc.db")
	old := filepath.Join(dir, ".acc.db.new-00112233aabbccdd")
	oldWAL := old + "-wal"
	young := filepath.Join(dir, ".acc.db.new-ffeeddccbbaa9988")
	other := filepath.Join(dir, "notes.txt")
	for _, f := range []string{old, oldWAL, young, other} {
		must(t, os.WriteFile(f, []byte("x"), 0o600))
	}
	long := time.Now().Add(-2 * time.Hour)
	for _, f := range []string{old, oldWAL, other} {
		must(t, os.Chtimes(f, long, long))
	}
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	must(t, err)
	s.Close()
	for _, f := range []string{old, oldWAL} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s is still there (err %v)", filepath.Base(f), err)
		}
	}
	for _, f := range []string{young, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(f), err)
		}
	}
}
