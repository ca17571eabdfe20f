package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

const testWorkspace = "workspace_test"

// storePath returns where a workspace's store lives under a fresh data home.
func storePath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "acc", "workspaces", testWorkspace, "acc.db")
}

// openAt opens the store at path for ws. Its cleanup runs SQLite's
// integrity check, which must say "ok", and closes the store.
func openAt(t *testing.T, path, ws string) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), path, ws)
	if err != nil {
		t.Fatalf("OpenSQLite(%s): %v", path, err)
	}
	t.Cleanup(func() {
		checkIntegrity(t, s)
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTestSQLite opens a fresh store in t.TempDir().
func openTestSQLite(t *testing.T) *SQLite { return openAt(t, storePath(t), testWorkspace) }

// checkIntegrity asserts that PRAGMA integrity_check reports exactly "ok".
func checkIntegrity(t *testing.T, s *SQLite) {
	t.Helper()
	got, err := s.IntegrityCheck(context.Background())
	if err != nil {
		t.Errorf("IntegrityCheck: %v", err)
		return
	}
	if len(got) != 1 || got[0] != "ok" {
		t.Errorf("IntegrityCheck = %q, want [ok]", got)
		keepAside(t, s.Path())
	}
}

// keepAside copies a failing store's files out of t.TempDir(), which the
// test removes, so the broken database can be examined.
func keepAside(t *testing.T, path string) {
	t.Helper()
	if path == "" {
		return
	}
	dir, err := os.MkdirTemp("", "acc-failed-store-")
	if err != nil {
		t.Logf("cannot keep the store aside: %v", err)
		return
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(path + suffix); err == nil {
			os.WriteFile(filepath.Join(dir, filepath.Base(path)+suffix), b, 0o600)
		}
	}
	t.Logf("the failing store was copied to %s", dir)
}

func TestSQLiteSuite(t *testing.T) {
	runSuite(t, func(t *testing.T) Store { return openTestSQLite(t) })
}

// TestSQLiteMemorySuite runs the same contract against the in-memory store
// that read-only commands use before a workspace has a store file.
func TestSQLiteMemorySuite(t *testing.T) {
	runSuite(t, func(t *testing.T) Store {
		s, err := OpenSQLiteEmpty(context.Background(), testWorkspace)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			checkIntegrity(t, s)
			s.Close()
		})
		return s
	})
}

// rawDB opens the file with the SQLite driver directly, bypassing every acc
// check, to set up broken or foreign states and to hold locks.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+uriPath(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db := rawDB(t, path)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// dirState describes every file in dir by name and content hash.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name()+"/")
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), "-shm") {
			// The WAL index: shared memory that every process opening
			// the store may rebuild from the WAL; it holds no data.
			out = append(out, fmt.Sprintf("%s %d", e.Name(), len(b)))
			continue
		}
		sum := sha256.Sum256(b)
		out = append(out, fmt.Sprintf("%s %d %s", e.Name(), len(b), hex.EncodeToString(sum[:8])))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// seed writes a little of everything durable.
func seed(t *testing.T, s Store) {
	t.Helper()
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.PutWorkspace(fxWorkspace(ws)))
		must(t, tx.PutParticipant(Durable, fxParticipant(ws, "alice")))
		must(t, tx.InsertMessage(fxMessage(ws, "message_1", "alice", []string{"bob"}, protocol.KindQuestion, 1)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_1", "bob", protocol.ReceiptQueued)))
		return tx.AppendEvent(fxEvent(protocol.EventMessageRecorded))
	})
}

func fingerprint(t *testing.T, s *SQLite) string {
	t.Helper()
	fp, err := s.Fingerprint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// refusedOpen opens path for ws expecting a refusal with exit 4 and reason;
// the directory's files must be byte-identical afterwards.
func refusedOpen(t *testing.T, path, ws, reason string) error {
	t.Helper()
	before := dirState(t, filepath.Dir(path))
	s, err := OpenSQLite(context.Background(), path, ws)
	if err == nil {
		s.Close()
		t.Fatalf("OpenSQLite accepted the store; want %s", reason)
	}
	wantCode(t, err, protocol.ExitData, reason)
	if after := dirState(t, filepath.Dir(path)); after != before {
		t.Fatalf("a refused open changed the store files:\nbefore\n%s\nafter\n%s", before, after)
	}
	return err
}

func TestSQLiteFileModes(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "acc", "workspaces", testWorkspace, "acc.db")
	s := openAt(t, path, testWorkspace)
	seed(t, s)
	for _, dir := range []string{"acc", "acc/workspaces", "acc/workspaces/" + testWorkspace} {
		fi, err := os.Stat(filepath.Join(home, dir))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("directory %s has mode %o, want 700", dir, got)
		}
	}
	seen := 0
	for _, name := range []string{"acc.db", "acc.db-wal", "acc.db-shm"} {
		fi, err := os.Stat(filepath.Join(filepath.Dir(path), name))
		if errors.Is(err, fs.ErrNotExist) && name != "acc.db" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		seen++
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %o, want 600", name, got)
		}
	}
	t.Logf("checked the modes of %d store files", seen)
}

func TestSQLiteReopenKeepsData(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	fp := fingerprint(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, testWorkspace)
	if got := fingerprint(t, s); got != fp {
		t.Fatal("the store changed across close and reopen")
	}
	view(t, s, func(tx ReadTx) error {
		m, err := tx.Message("message_1")
		if m == nil || err != nil {
			t.Fatalf("message lost across reopen: %v", err)
		}
		return nil
	})
}

func TestSQLiteRefusesForeignWorkspace(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	fp := fingerprint(t, s)
	s.Close()
	err = refusedOpen(t, path, "workspace_other", protocol.ReasonStoreForeignWorkspace)
	if !strings.Contains(err.Error(), testWorkspace) || !strings.Contains(err.Error(), "workspace_other") {
		t.Errorf("the refusal %q should name both workspaces", err)
	}
	if got := protocol.AsError(err).Details["storeWorkspaceId"]; got != testWorkspace {
		t.Errorf("details.storeWorkspaceId = %v", got)
	}
	if got := fingerprint(t, openAt(t, path, testWorkspace)); got != fp {
		t.Fatal("the refused open changed the store's rows")
	}
}

func TestSQLiteRefusesUnknownVersion(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	s.Close()
	rawExec(t, path, "PRAGMA user_version = 99")
	err = refusedOpen(t, path, testWorkspace, protocol.ReasonStoreVersionUnknown)
	if got := protocol.AsError(err).Details["schemaVersion"]; got != 99 {
		t.Errorf("details.schemaVersion = %v, want 99", got)
	}
	if !strings.Contains(err.Error(), "99") {
		t.Errorf("the refusal %q should name the version found", err)
	}
}

func TestSQLiteRefusesNonDatabase(t *testing.T) {
	for name, content := range map[string][]byte{
		"short text": []byte("hello\n"),
		"long text":  []byte(strings.Repeat("this is not a database\n", 400)),
		"binary":     append([]byte("SQLite format 2\x00"), make([]byte, 8192)...),
	} {
		t.Run(name, func(t *testing.T) {
			path := storePath(t)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			refusedOpen(t, path, testWorkspace, protocol.ReasonStoreCorrupt)
		})
	}
}

func TestSQLiteRefusesForeignTables(t *testing.T) {
	path := storePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)", "INSERT INTO notes(text) VALUES ('mine')")
	err := refusedOpen(t, path, testWorkspace, "")
	if strings.Contains(err.Error(), "-1") {
		t.Errorf("the refusal %q reports an internal marker as a version", err)
	}
	t.Logf("refusal: %v (%s)", err, protocol.AsError(err).Reason)
}

// TestSQLiteRefusesMissingIdentity: acc's schema version without a workspace
// identity is not a store acc can trust.
func TestSQLiteRefusesMissingIdentity(t *testing.T) {
	path := storePath(t)
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rawExec(t, path, "DELETE FROM meta WHERE key = 'workspace_id'")
	refusedOpen(t, path, testWorkspace, protocol.ReasonStoreCorrupt)
}

// TestSQLiteSpecialPaths: characters that mean something in a SQLite URI
// must not change which file is opened.
func TestSQLiteSpecialPaths(t *testing.T) {
	for _, name := range []string{"Application Support", "my#data", "what?x=1", "100%", "a%20b", "x%3fy"} {
		t.Run(name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), name)
			path := filepath.Join(home, "acc.db")
			seed(t, openAt(t, path, testWorkspace))
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the store is not at %s: %v", path, err)
			}
			ents, _ := os.ReadDir(filepath.Dir(home))
			if len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("files appeared beside the data home: %v", names)
			}
		})
	}
}

// TestSQLiteConcurrentOpen: several processes may create the same new store
// at once; all succeed, one schema is written, and the file is in WAL mode.
// The race is short, so it is run for several fresh files.
func TestSQLiteConcurrentOpen(t *testing.T) {
	const rounds, n = 25, 6
	for round := range rounds {
		path := storePath(t)
		var wg sync.WaitGroup
		stores := make([]*SQLite, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stores[i], errs[i] = OpenSQLite(context.Background(), path, testWorkspace)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, open %d: %v (cause: %v)", round, i, err, errors.Unwrap(err))
				continue
			}
			if i == 0 {
				seed(t, stores[i])
			}
			checkIntegrity(t, stores[i])
			stores[i].Close()
		}
		if t.Failed() {
			t.FailNow()
		}
		var mode string
		if err := rawDB(t, path).QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Fatalf("journal mode %q (%v), want wal", mode, err)
		}
	}
}

// TestSQLiteConcurrentHandles runs writers on two separate handles on one
// file (two processes, as far as SQLite can tell) next to writers sharing a
// handle: nothing is lost and sequences stay gap-free.
func TestSQLiteConcurrentHandles(t *testing.T) {
	path := storePath(t)
	a := openAt(t, path, testWorkspace)
	b := openAt(t, path, testWorkspace)
	const writers, each = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				err := s.Update(ctx, func(tx Tx) error {
					id := fmt.Sprintf("message_w%d_%d", w, i)
					if err := tx.InsertMessage(fxMessage(testWorkspace, id, fmt.Sprintf("w%d", w), []string{"bob"}, protocol.KindNote, i)); err != nil {
						return err
					}
					if err := tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)); err != nil {
						return err
					}
					return tx.AppendEvent(fxEvent(protocol.EventMessageOffered))
				})
				cancel()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Update: %v", err)
	}
	for _, s := range []*SQLite{a, b} {
		seqs, _ := sequences(t, s)
		wantGapFree(t, seqs, 2*writers*each)
		view(t, s, func(tx ReadTx) error {
			c, err := tx.Counts()
			must(t, err)
			if c.Messages != writers*each {
				t.Errorf("%d messages, want %d", c.Messages, writers*each)
			}
			return nil
		})
	}
}

// TestSQLiteStoreBusy holds the write lock from another connection: an Update
// with a short deadline gives up with store_busy (exit 3), reads still work,
// and an Update that waits long enough succeeds once the lock is released.
func TestSQLiteStoreBusy(t *testing.T) {
	path := storePath(t)
	s := openAt(t, path, testWorkspace)
	seed(t, s)
	holder := rawDB(t, path)
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	start := time.Now()
	err = s.Update(ctx, func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "late")) })
	elapsed := time.Since(start)
	cancel()
	t.Logf("a 200 ms deadline gave up after %v", elapsed)
	wantCode(t, err, protocol.ExitTimeout, protocol.ReasonStoreBusy)
	if elapsed > 10*time.Second {
		t.Errorf("store_busy took %v for a 200 ms deadline", elapsed)
	}

	// An expired context is store_busy too, never a conflict.
	dead, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	err = s.Update(dead, func(Tx) error { return nil })
	cancel()
	wantCode(t, err, protocol.ExitTimeout, protocol.ReasonStoreBusy)

	// Readers are not blocked by a writer (WAL).
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := s.View(rctx, func(tx ReadTx) error { _, err := tx.Message("message_1"); return err }); err != nil {
		t.Errorf("View while a writer holds the lock: %v", err)
	}
	cancel()

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- s.Update(ctx, func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "patient")) })
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Update finished while the lock was held: %v", err)
	default:
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	locked = false
	start = time.Now()
	if err := <-done; err != nil {
		t.Fatalf("the waiting Update failed after the lock was released: %v", err)
	}
	t.Logf("the waiting Update finished %v after the release", time.Since(start))
	view(t, s, func(tx ReadTx) error {
		if p, _ := tx.Participant(Durable, "patient"); p == nil {
			t.Error("the waiting Update's write is missing")
		}
		if p, _ := tx.Participant(Durable, "late"); p != nil {
			t.Error("the timed-out Update's write is present")
		}
		return nil
	})
}

func TestSQLiteFingerprint(t *testing.T) {
	s := openTestSQLite(t)
	empty := fingerprint(t, s)
	if fingerprint(t, s) != empty {
		t.Fatal("Fingerprint is not stable")
	}
	seed(t, s)
	seeded := fingerprint(t, s)
	if seeded == empty {
		t.Fatal("Fingerprint did not change when rows were added")
	}
	view(t, s, func(tx ReadTx) error { _, err := tx.Events(0, 10); return err })
	_ = s.Update(context.Background(), func(tx Tx) error {
		must(t, tx.PutParticipant(Durable, fxParticipant(testWorkspace, "gone")))
		return errors.New("roll back")
	})
	if fingerprint(t, s) != seeded {
		t.Fatal("Fingerprint changed after a read and a rolled-back write")
	}
	// Rewriting a record with the same content changes nothing.
	update(t, s, func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "alice")) })
	if fingerprint(t, s) != seeded {
		t.Fatal("Fingerprint changed after an identical rewrite")
	}
	// One field of one row changes it.
	r := fxReceipt(testWorkspace, "message_1", "bob", protocol.ReceiptOffered)
	update(t, s, func(tx Tx) error { return tx.PutReceipt(r) })
	if fingerprint(t, s) == seeded {
		t.Fatal("Fingerprint did not change when a receipt advanced")
	}
	// Ephemeral rows and bindings count too: a refused command must leave
	// them alone as well.
	before := fingerprint(t, s)
	update(t, s, func(tx Tx) error { return tx.PutBinding(&SessionBinding{Key: "k", SessionID: "session_a"}) })
	if fingerprint(t, s) == before {
		t.Fatal("Fingerprint ignores bindings")
	}
	before = fingerprint(t, s)
	update(t, s, func(tx Tx) error { return tx.PutIntent(Ephemeral, fxIntent(testWorkspace, "session_a")) })
	if fingerprint(t, s) == before {
		t.Fatal("Fingerprint ignores ephemeral rows")
	}
}

func TestSQLiteDurableRowCount(t *testing.T) {
	s := openTestSQLite(t)
	count := func() int64 {
		n, err := s.DurableRowCount(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("a new store has %d durable rows", n)
	}
	// A lone session: ephemeral rows and a binding, no durable history.
	update(t, s, func(tx Tx) error {
		must(t, tx.PutParticipant(Ephemeral, fxParticipant(testWorkspace, "alice")))
		must(t, tx.PutSession(Ephemeral, fxSession(testWorkspace, "session_a", "alice", 1)))
		must(t, tx.PutIntent(Ephemeral, fxIntent(testWorkspace, "session_a")))
		return tx.PutBinding(&SessionBinding{Key: "k", SessionID: "session_a"})
	})
	if n := count(); n != 0 {
		t.Fatalf("ephemeral rows and bindings count as durable: %d", n)
	}
	steps := []struct {
		name string
		put  func(tx Tx) error
		add  int64
	}{
		{"workspace", func(tx Tx) error { return tx.PutWorkspace(fxWorkspace(testWorkspace)) }, 1},
		{"participant", func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "alice")) }, 1},
		{"session", func(tx Tx) error { return tx.PutSession(Durable, fxSession(testWorkspace, "session_a", "alice", 1)) }, 1},
		{"intent", func(tx Tx) error { return tx.PutIntent(Durable, fxIntent(testWorkspace, "session_a")) }, 1},
		{"claim", func(tx Tx) error { return tx.PutClaim(fxClaim(testWorkspace, "claim_1", "session_a")) }, 1},
		{"message", func(tx Tx) error {
			return tx.InsertMessage(fxMessage(testWorkspace, "message_1", "alice", []string{"bob"}, protocol.KindNote, 1))
		}, 1},
		{"receipt", func(tx Tx) error {
			return tx.PutReceipt(fxReceipt(testWorkspace, "message_1", "bob", protocol.ReceiptQueued))
		}, 1},
		{"event", func(tx Tx) error { return tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)) }, 1},
		{"replace", func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "alice")) }, 0},
	}
	want := int64(0)
	for _, st := range steps {
		update(t, s, st.put)
		want += st.add
		if n := count(); n != want {
			t.Fatalf("after the %s: %d durable rows, want %d", st.name, n, want)
		}
	}
}

func TestSQLiteUseAfterClose(t *testing.T) {
	s, err := OpenSQLite(context.Background(), storePath(t), testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Update(context.Background(), func(Tx) error { return nil }); err == nil {
		t.Fatal("Update on a closed store succeeded")
	}
	if err := s.View(context.Background(), func(ReadTx) error { return nil }); err == nil {
		t.Fatal("View on a closed store succeeded")
	}
}

// TestSQLiteViewRefusesWrites: the value View passes also implements Tx;
// every write through it fails instead of vanishing at the rollback.
func TestSQLiteViewRefusesWrites(t *testing.T) {
	s := openTestSQLite(t)
	seed(t, s)
	before := fingerprint(t, s)
	writes := map[string]func(tx Tx) error{
		"participant": func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(testWorkspace, "x")) },
		"receipt": func(tx Tx) error {
			return tx.PutReceipt(fxReceipt(testWorkspace, "message_1", "bob", protocol.ReceiptAcknowledged))
		},
		"event":    func(tx Tx) error { return tx.AppendEvent(fxEvent(protocol.EventSessionClosed)) },
		"binding":  func(tx Tx) error { return tx.PutBinding(&SessionBinding{Key: "k"}) },
		"decision": func(tx Tx) error { return tx.MarkDecisionReplaced("message_1") },
	}
	for name, write := range writes {
		err := s.View(context.Background(), func(rt ReadTx) error {
			tx, ok := rt.(Tx)
			if !ok {
				return nil
			}
			return write(tx)
		})
		if err == nil {
			t.Errorf("a %s write inside View returned no error", name)
		}
	}
	if fingerprint(t, s) != before {
		t.Fatal("writes inside View changed the store")
	}
}
