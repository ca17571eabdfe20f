package storage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// downgradeSQLite turns the store at path back into schema version 2, as
// an older acc left it: no search tables.
func downgradeSQLite(t *testing.T, path string) {
	t.Helper()
	rawExec(t, path, "DROP TRIGGER search_pending_add", "DROP TABLE search_pending", "DROP TABLE search_index", "DROP TABLE search_docs", "PRAGMA user_version = 2")
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	var v int
	if err := rawDB(t, path).QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSQLiteUpgradesVersion2: a store of schema version 2 is upgraded on
// open, its records unchanged and every message found by search; acc
// doctor's open leaves it as it is; an older acc refuses the result.
func TestSQLiteUpgradesVersion2(t *testing.T) {
	t.Parallel()
	path := storePath(t)
	s := openPlain(t, path)
	searchFixture(t, s)
	want, err := searchIDs(t, s, SearchQuery{Match: mustParse(t, "token*")})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	downgradeSQLite(t, path)
	files := dirState(t, filepath.Dir(path))

	inspected, err := OpenSQLiteToInspect(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	if v := inspected.SchemaVersion(); v != 2 {
		t.Errorf("SchemaVersion() = %d, want 2", v)
	}
	if lines, err := inspected.IntegrityCheck(context.Background()); err != nil || !slices.Equal(lines, []string{"ok"}) {
		t.Errorf("integrity of the inspected store: %v, %v", lines, err)
	}
	inspected.Close()
	if after := dirState(t, filepath.Dir(path)); after != files {
		t.Errorf("the inspecting open changed the store's files:\n%s\nthen\n%s", files, after)
	}

	up := openPlain(t, path)
	if v := up.SchemaVersion(); v != SchemaVersion {
		t.Errorf("SchemaVersion() = %d after the upgrade", v)
	}
	if v := userVersion(t, path); v != SchemaVersion {
		t.Fatalf("user_version %d after the upgrade, want %d", v, SchemaVersion)
	}
	got, err := searchIDs(t, up, SearchQuery{Match: mustParse(t, "token*")})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("after the upgrade: %v, %v; want %v", got, err, want)
	}
	up.Close()

	// An acc that reads version 2 only refuses the upgraded store.
	rawExec(t, path, "PRAGMA user_version = 4")
	refusedOpen(t, path, testWorkspace, protocol.ReasonStoreVersionUnknown)
}

// TestSQLiteUpgradeCrash: a process killed while it upgrades a store of
// 100,000 messages (halfway through the index, or just before its
// COMMIT) leaves the store at schema version 2, whole, with the same
// records; the next open upgrades it, and search finds what it should.
func TestSQLiteUpgradeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-message store")
	}
	t.Parallel()
	n := 100_000
	path := storePath(t)
	s := openPlain(t, path)
	fillMessages(t, s, n)
	fp, err := s.Fingerprint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	downgradeSQLite(t, path)

	for _, point := range []string{FailMigrating, FailBeforeCommit} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteUpgradeHelper$")
		cmd.Env = append(os.Environ(), "ACC_UPGRADE_HELPER_STORE="+path, "ACC_FAILPOINT="+point)
		out, err := cmd.CombinedOutput()
		if st, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !st.Signaled() {
			t.Fatalf("the upgrading process was not killed at %s: %v\n%s", point, err, out)
		}
		if v := userVersion(t, path); v != 2 {
			t.Fatalf("after a crash at %s: user_version %d, want 2", point, v)
		}
		db := rawDB(t, path)
		var left int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name LIKE 'search%'").Scan(&left); err != nil || left != 0 {
			t.Fatalf("after a crash at %s: %d search tables (%v), want none", point, left, err)
		}
		var ok string
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("after a crash at %s: integrity %q, %v", point, ok, err)
		}
		db.Close()
	}

	t0 := time.Now()
	up := openAt(t, path, testWorkspace)
	t.Logf("upgrading %d messages took %v", n, time.Since(t0))
	if after, err := up.Fingerprint(context.Background()); err != nil || after != fp {
		t.Errorf("the records changed across the crashes and the upgrade (%v)", err)
	}
	got, err := searchIDs(t, up, SearchQuery{Match: mustParse(t, "m77777")})
	if err != nil || len(got) != 1 {
		t.Errorf("m77777: %d hits, %v; want 1", len(got), err)
	}
	// The whole index is counted in SQLite itself: a search through the
	// store returning 100,000 hits can outlast the store's deadline on a
	// busy machine, which says nothing about the upgrade.
	db := rawDB(t, path)
	defer db.Close()
	for q, want := range map[string]int{"every": n, "every NOT odd": n / 2} {
		var count int
		if err := db.QueryRow("SELECT count(*) FROM search_index WHERE search_index MATCH ?", q).Scan(&count); err != nil || count != want {
			t.Errorf("%q: %d entries, %v; want %d", q, count, err, want)
		}
	}
}

// openPlain opens the store at path, creating it, for a test that closes
// it itself.
func openPlain(t *testing.T, path string) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSQLiteUpgradeHelper is the child of TestSQLiteUpgradeCrash: it
// opens the store, which upgrades it, and dies at ACC_FAILPOINT.
func TestSQLiteUpgradeHelper(t *testing.T) {
	path := os.Getenv("ACC_UPGRADE_HELPER_STORE")
	if path == "" {
		t.Skip("a helper process of TestSQLiteUpgradeCrash")
	}
	s, err := OpenSQLiteExisting(context.Background(), path, testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// fillMessages writes n small room notes, in transactions of 5,000; the
// words "every" (all), "odd" (every other) and m<i> (one each) find them.
func fillMessages(t testing.TB, s Store, n int) {
	t.Helper()
	ws := s.WorkspaceID()
	for start := 0; start < n; start += 5000 {
		err := s.Update(context.Background(), func(tx Tx) error {
			for i := start; i < min(start+5000, n); i++ {
				m := fxMessage(ws, fmt.Sprintf("message_%06d", i), "alice", []string{}, protocol.KindNote, i%86400)
				m.Subject = "note m" + strconv.Itoa(i)
				m.Body = "every message has a body"
				if i%2 == 1 {
					m.Body += " odd"
				}
				if err := tx.InsertMessage(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPostgresUpgradesVersion2: a room of schema version 2 is upgraded on
// open as on SQLite; NoMigrate leaves it untouched; a process killed in
// the middle of the upgrade leaves version 2 for the next open. With
// ACC_STRESS=1 (make stress) the room holds 100,000 messages and a second
// process is killed halfway through indexing them.
func TestPostgresUpgradesVersion2(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	searchFixture(t, p)
	n, points := 1200, []string{FailBeforeCommit}
	if os.Getenv("ACC_STRESS") == "1" {
		n, points = 100_000, []string{FailMigrating, FailBeforeCommit}
	}
	fillMessages(t, p, n)
	want, err := searchIDs(t, p, SearchQuery{Match: mustParse(t, "token*")})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := p.Fingerprint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pgAdmin(t, p, "DROP TABLE $ROOM.search_docs", "DROP TRIGGER search_pending_add ON $ROOM.messages", "DROP FUNCTION $ROOM.search_pending_add", "DROP TABLE $ROOM.search_pending",
		"UPDATE $ROOM.meta SET value = '2' WHERE key = 'schema_version'")
	before := roomDump(t, p.Schema())

	inspected, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{NoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := inspected.SchemaVersion(); v != 2 {
		t.Errorf("SchemaVersion() = %d, want 2", v)
	}
	inspected.Close()
	if after := roomDump(t, p.Schema()); after != before {
		t.Fatalf("an open with NoMigrate changed the room:\n%s\nthen\n%s", before, after)
	}

	for _, point := range points {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresUpgradeHelper$")
		cmd.Env = append(os.Environ(), "ACC_UPGRADE_HELPER_ROOM="+p.WorkspaceID(), "ACC_FAILPOINT="+point)
		out, err := cmd.CombinedOutput()
		if st, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !st.Signaled() {
			t.Fatalf("the upgrading process was not killed at %s: %v\n%s", point, err, out)
		}
		if after := roomDump(t, p.Schema()); after != before {
			t.Fatalf("an upgrade killed at %s changed the room:\n%s\nthen\n%s", point, before, after)
		}
	}
	began := time.Now()

	up, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	got, err := searchIDs(t, up, SearchQuery{Match: mustParse(t, "token*")})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("after the upgrade: %v, %v; want %v", got, err, want)
	}
	t.Logf("upgrading %d messages on the server took %v", n, time.Since(began))
	if all, err := searchIDs(t, up, SearchQuery{Match: mustParse(t, "every odd")}); err != nil || len(all) != n/2 {
		t.Errorf("every odd: %d hits, %v; want %d", len(all), err, n/2)
	}
	if after, err := up.Fingerprint(context.Background()); err != nil || after != fp {
		t.Errorf("the records changed across the upgrade (%v)", err)
	}
}

// TestPostgresUpgradeHelper is the child of TestPostgresUpgradesVersion2.
func TestPostgresUpgradeHelper(t *testing.T) {
	ws := os.Getenv("ACC_UPGRADE_HELPER_ROOM")
	if ws == "" {
		t.Skip("a helper process of TestPostgresUpgradesVersion2")
	}
	p, err := OpenPostgres(context.Background(), pgURL(t), ws, PostgresOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestSearchIndexAcrossProcesses: a handle kept open (as acc top keeps
// one), which also sends between them, while other processes send, each opening the store, writing one
// message and closing, as acc message does, finds every message by
// search, and SQLite's integrity check, run through that handle, finds
// the index whole: FTS5 merges its segments as they grow, and neither a
// search nor the check may read the layout the handle saw before.
func TestSearchIndexAcrossProcesses(t *testing.T) {
	t.Parallel()
	path := storePath(t)
	s := openAt(t, path, testWorkspace)
	match := mustParse(t, "trial")
	for round := 1; round <= 4; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSearchIndexWriterHelper$")
		cmd.Env = append(os.Environ(), "ACC_INDEX_HELPER_STORE="+path, "ACC_INDEX_HELPER_ROUND="+strconv.Itoa(round))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("writer round %d: %v\n%s", round, err, out)
		}
		// The check first: a search before it would refresh the layout
		// the connection cached and hide a check that reads a stale one.
		if lines, err := s.IntegrityCheck(context.Background()); err != nil || !slices.Equal(lines, []string{"ok"}) {
			t.Fatalf("after round %d: integrity %q, %v", round, lines, err)
		}
		got, err := searchIDs(t, s, SearchQuery{Match: match})
		if err != nil || len(got) != round*41-1 {
			t.Fatalf("after round %d: %d hits, %v; want %d", round, len(got), err, round*41-1)
		}
		// The long-lived handle writes too, into the index others grew.
		update(t, s, func(tx Tx) error {
			m := fxMessage(testWorkspace, fmt.Sprintf("message_own_%d", round), "bob", []string{}, protocol.KindNote, round)
			m.Subject = fmt.Sprintf("trial own %d", round)
			return tx.InsertMessage(m)
		})
	}
}

// TestSearchIndexWriterHelper is the writer of
// TestSearchIndexAcrossProcesses: 40 sends, each its own open, write and
// close of the store.
func TestSearchIndexWriterHelper(t *testing.T) {
	path := os.Getenv("ACC_INDEX_HELPER_STORE")
	if path == "" {
		t.Skip("a helper process of TestSearchIndexAcrossProcesses")
	}
	round := os.Getenv("ACC_INDEX_HELPER_ROUND")
	for i := range 40 {
		s, err := OpenSQLiteExisting(context.Background(), path, testWorkspace)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Update(context.Background(), func(tx Tx) error {
			m := fxMessage(testWorkspace, fmt.Sprintf("message_r%s_%02d", round, i), "alice", []string{}, protocol.KindNote, i)
			m.Subject = fmt.Sprintf("trial %s %d", round, i)
			return tx.InsertMessage(m)
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// pendingCount reads s's PendingIndex.
func pendingCount(t *testing.T, s Store) int {
	t.Helper()
	var n int
	view(t, s, func(tx ReadTx) error {
		var err error
		n, err = tx.PendingIndex()
		return err
	})
	return n
}

// unindexedNote writes a note the way an acc of schema version 2 does:
// its row, no index.
func unindexedNote(t *testing.T, s Store, id, subject string) {
	t.Helper()
	m := fxMessage(s.WorkspaceID(), id, "alice", []string{"bob"}, protocol.KindNote, 9)
	m.Subject = subject
	update(t, s, func(tx Tx) error { return tx.(*sqlTx).insertMessage(m, false) })
}

// TestSQLiteAddsPendingTable: a store of schema version 3 made before the
// index had its pending table (an earlier build of this version) gets
// the table and trigger on open, with every message the index lacks
// recorded pending, so a search finds it after IndexPending.
func TestSQLiteAddsPendingTable(t *testing.T) {
	t.Parallel()
	path := storePath(t)
	s := openPlain(t, path)
	searchFixture(t, s)
	unindexedNote(t, s, "late", "numbat report")
	s.Close()
	rawExec(t, path, "DROP TRIGGER search_pending_add", "DROP TABLE search_pending")

	s = openAt(t, path, testWorkspace)
	if n := pendingCount(t, s); n != 1 {
		t.Fatalf("after the open: %d pending, want 1", n)
	}
	update(t, s, func(tx Tx) error { _, _, err := tx.IndexPending(); return err })
	if got, err := searchIDs(t, s, SearchQuery{Match: mustParse(t, "numbat")}); err != nil || !slices.Equal(got, []string{"late"}) {
		t.Errorf("numbat: %v, %v; want [late]", got, err)
	}
	unindexedNote(t, s, "later", "numbat again")
	if n := pendingCount(t, s); n != 1 {
		t.Errorf("the trigger is back: %d pending after an unindexed write, want 1", n)
	}
}

// TestPostgresAddsPendingTable is TestSQLiteAddsPendingTable on
// PostgreSQL.
func TestPostgresAddsPendingTable(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	searchFixture(t, p)
	unindexedNote(t, p, "late", "numbat report")
	pgAdmin(t, p, "DROP TRIGGER search_pending_add ON $ROOM.messages", "DROP FUNCTION $ROOM.search_pending_add", "DROP TABLE $ROOM.search_pending")

	up, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if n := pendingCount(t, up); n != 1 {
		t.Fatalf("after the open: %d pending, want 1", n)
	}
	update(t, up, func(tx Tx) error { _, _, err := tx.IndexPending(); return err })
	if got, err := searchIDs(t, up, SearchQuery{Match: mustParse(t, "numbat")}); err != nil || !slices.Equal(got, []string{"late"}) {
		t.Errorf("numbat: %v, %v; want [late]", got, err)
	}
	unindexedNote(t, up, "later", "numbat again")
	if n := pendingCount(t, up); n != 1 {
		t.Errorf("the trigger is back: %d pending after an unindexed write, want 1", n)
	}
}
