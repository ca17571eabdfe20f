package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/storage/pgtest"
)

// TestMain doubles as the writer process of TestRoomWakesOnPostgresCommit:
// with ACC_WATCH_TEST_WRITE set to a workspace id it commits one event to
// that room on ACC_TEST_PG_URL's server and exits (1 on failure).
func TestMain(m *testing.M) {
	if ws := os.Getenv("ACC_WATCH_TEST_WRITE"); ws != "" {
		ctx := context.Background()
		st, err := storage.OpenPostgres(ctx, os.Getenv("ACC_TEST_PG_URL"), ws, storage.PostgresOptions{NoCreate: true})
		if err == nil {
			err = st.Update(ctx, appendEvent)
			st.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// eventually is how long a wake-up or a state may take to come on a
// loaded machine: generous, never a measure.
const eventually = 20 * time.Second

// pgURL is the PostgreSQL test server's URL (pgtest.URL: skips without
// one, fails under ACC_REQUIRE_PG=1).
func pgURL(t testing.TB) string { return pgtest.URL(t) }

// pgRoom opens a fresh room on the test server twice — the store a
// watcher follows and a second handle that writes, as another process
// would — and drops the room when the test ends.
func pgRoom(t testing.TB) (watched, writer *storage.Postgres) {
	t.Helper()
	u := pgURL(t)
	ws := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	ctx := context.Background()
	watched, err := storage.OpenPostgres(ctx, u, ws, storage.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writer, err = storage.OpenPostgres(ctx, u, ws, storage.PostgresOptions{NoCreate: true})
	if err != nil {
		watched.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		writer.Close()
		watched.Close()
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Errorf("drop the room: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{watched.Schema()}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop the room: %v", err)
		}
	})
	return watched, writer
}

// pgExec runs one statement on a connection of its own to the test server.
func pgExec(t testing.TB, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// backendAlive reports whether the server still has the process pid.
func backendAlive(t testing.TB, pid uint32) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", int64(pid)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// appendEvent appends one event: the smallest write that notifies.
func appendEvent(tx storage.Tx) error {
	return tx.AppendEvent(&protocol.Event{ActorSessionID: "session_a", Type: "intent.published", OccurredAt: protocol.FormatTime(time.Now())})
}

// write commits one event to st.
func write(t testing.TB, st storage.Store) {
	t.Helper()
	if err := st.Update(context.Background(), appendEvent); err != nil {
		t.Fatal(err)
	}
}

// drain takes a pending wake-up off w, if any.
func drain(w *Watcher) {
	select {
	case <-w.C:
	default:
	}
}

// awaitWake fails the test when w does not wake within eventually.
func awaitWake(t testing.TB, w *Watcher, what string) {
	t.Helper()
	select {
	case <-w.C:
	case <-time.After(eventually):
		t.Fatalf("no wake-up within %s %s", eventually, what)
	}
}

// quiet fails the test when w wakes within d.
func quiet(t testing.TB, w *Watcher, d time.Duration, what string) {
	t.Helper()
	select {
	case <-w.C:
		t.Fatalf("woke %s", what)
	case <-time.After(d):
	}
}

// until polls cond every 20 ms, failing the test when it is still false
// after eventually.
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(eventually); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", eventually, what)
		}
	}
}

// A commit through another handle of the room wakes the watcher through
// LISTEN/NOTIFY; with nothing written it stays quiet (its backstop is an
// hour), and file events where a SQLite store would live do not wake it:
// a room on PostgreSQL is never watched through a directory.
func TestRoomWakesOnPostgresCommit(t *testing.T) {
	watched, writer := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	w := Room(ctx, watched, filepath.Join(dir, "acc.db"), time.Hour)
	if !w.Watching() || w.Err() != nil {
		t.Fatalf("Watching %v, Err %v: want a live LISTEN", w.Watching(), w.Err())
	}
	if w.backendPID() == 0 {
		t.Fatal("no LISTEN backend recorded")
	}
	drain(w)
	quiet(t, w, 500*time.Millisecond, "with nothing written")
	if err := os.WriteFile(filepath.Join(dir, "acc.db-wal"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet(t, w, 500*time.Millisecond, "on a file event in the store path's directory")
	for i := range 3 {
		write(t, writer)
		awaitWake(t, w, "after a commit")
		if !w.Watching() {
			t.Fatalf("commit %d: Watching turned false (Err %v)", i, w.Err())
		}
	}
	// A commit of another process, as another machine's would be.
	quiet(t, w, 300*time.Millisecond, "between commits")
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), "ACC_WATCH_TEST_WRITE="+watched.WorkspaceID())
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	awaitWake(t, w, "after another process's commit")
}

// Cutting the LISTEN connection's backend wakes the watcher (changes may
// have been missed), it listens again on a new backend, and a later commit
// wakes it through the new connection.
func TestRoomReconnectsAfterBackendKilled(t *testing.T) {
	watched, writer := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Room(ctx, watched, "", time.Hour)
	first := w.backendPID()
	if !w.Watching() || first == 0 {
		t.Fatalf("Watching %v, backend %d, Err %v", w.Watching(), first, w.Err())
	}
	drain(w)
	pgExec(t, "SELECT pg_terminate_backend($1)", int64(first))
	awaitWake(t, w, "after the LISTEN backend was terminated")
	until(t, "listening again on a new backend", func() bool {
		pid := w.backendPID()
		return w.Watching() && pid != 0 && pid != first
	})
	if backendAlive(t, first) {
		t.Fatalf("backend %d still there", first)
	}
	drain(w) // the reconnection's own wake-up, pending before Watching turned true
	quiet(t, w, 300*time.Millisecond, "with nothing written after reconnecting")
	write(t, writer)
	awaitWake(t, w, "after a commit on the new connection")
}

// While the connection is down the watcher polls every Fallback, with
// Watching false and Err saying why; ending ctx stops it.
func TestRoomPollsWhileDisconnected(t *testing.T) {
	watched, _ := pgRoom(t)
	saved := []time.Duration{RetryMin, RetryMax, Fallback}
	RetryMin, RetryMax, Fallback = time.Hour, time.Hour, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	w := Room(ctx, watched, "", time.Hour)
	RetryMin, RetryMax, Fallback = saved[0], saved[1], saved[2]
	defer cancel()
	pid := w.backendPID()
	if pid == 0 {
		t.Fatalf("no LISTEN backend (Err %v)", w.Err())
	}
	pgExec(t, "SELECT pg_terminate_backend($1)", int64(pid))
	until(t, "Watching false with a reason", func() bool { return !w.Watching() && w.Err() != nil })
	if w.backendPID() != 0 {
		t.Fatalf("backend %d still recorded while disconnected", w.backendPID())
	}
	for i := range 5 {
		drain(w)
		awaitWake(t, w, "from the fallback poll")
		if w.Watching() {
			t.Fatalf("poll %d: reconnected despite an hour's retry delay", i)
		}
	}
	cancel()
	until(t, "Err says ctx ended", func() bool { return errors.Is(w.Err(), context.Canceled) })
	drain(w)
	quiet(t, w, 300*time.Millisecond, "after ctx ended")
}

// Ending ctx closes the LISTEN connection: its backend leaves the server.
// The collector is off meanwhile, so that a connection left open is not
// closed by its finalizer instead.
func TestRoomCancelClosesConnection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	watched, _ := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := Room(ctx, watched, "", time.Hour)
	pid := w.backendPID()
	if pid == 0 || !backendAlive(t, pid) {
		t.Fatalf("no live LISTEN backend (pid %d, Err %v)", pid, w.Err())
	}
	cancel()
	until(t, "the LISTEN backend gone after cancel", func() bool { return !backendAlive(t, pid) })
	until(t, "Watching false after cancel", func() bool { return !w.Watching() })
}

// The backstop wakes a connected watcher when nothing happens and checks
// the connection without losing it: the same backend stays, and a commit
// still comes through.
func TestRoomBackstopKeepsConnection(t *testing.T) {
	watched, writer := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Room(ctx, watched, "", 50*time.Millisecond)
	pid := w.backendPID()
	if pid == 0 {
		t.Fatalf("no LISTEN backend (Err %v)", w.Err())
	}
	for range 5 {
		drain(w)
		awaitWake(t, w, "from the backstop")
	}
	if got := w.backendPID(); !w.Watching() || got != pid {
		t.Fatalf("after backstops: Watching %v, backend %d (was %d), Err %v", w.Watching(), got, pid, w.Err())
	}
	write(t, writer)
	awaitWake(t, w, "after a commit")
	if got := w.backendPID(); got != pid {
		t.Fatalf("backend changed from %d to %d", pid, got)
	}
}

// A room in a SQLite file is watched through its directory: a commit of
// another handle wakes the watcher; nothing written, it stays quiet.
func TestRoomSQLiteWakesOnCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acc.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	st, err := storage.OpenSQLite(ctx, path, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writer, err := storage.OpenSQLite(ctx, path, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	w := Room(ctx, st, path, time.Hour)
	if !w.Watching() || w.Err() != nil {
		t.Fatalf("Watching %v, Err %v", w.Watching(), w.Err())
	}
	time.Sleep(Trail2 + 50*time.Millisecond) // trailing wake-ups of the opens
	drain(w)
	quiet(t, w, 500*time.Millisecond, "with nothing written")
	write(t, writer)
	awaitWake(t, w, "after a commit")
}

// A directory that cannot be watched leaves a polling watcher saying why.
func TestStoreMissingDirectoryPolls(t *testing.T) {
	saved := Fallback
	Fallback = 20 * time.Millisecond
	defer func() { Fallback = saved }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Store(ctx, filepath.Join(t.TempDir(), "missing", "acc.db"))
	if w.Watching() || w.Err() == nil {
		t.Fatalf("Watching %v, Err %v: want polling with a reason", w.Watching(), w.Err())
	}
	for range 3 {
		drain(w)
		awaitWake(t, w, "from the fallback poll")
	}
}
