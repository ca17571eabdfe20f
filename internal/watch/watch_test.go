package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/jackc/pgx/v5"
)

// eventually is how long a wake-up may take on a loaded machine: far
// beyond any real latency, so only a missing wake-up fails.
const eventually = 20 * time.Second

func pgURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("ACC_TEST_PG_URL")
	if u == "" {
		if os.Getenv("ACC_REQUIRE_PG") == "1" {
			t.Fatal("ACC_TEST_PG_URL is empty and ACC_REQUIRE_PG=1: run the tests through scripts/with-pg.sh (make test does)")
		}
		t.Skip("no PostgreSQL server: ACC_TEST_PG_URL is empty (make test starts one through scripts/with-pg.sh)")
	}
	return u
}

// pgRoom opens a fresh room twice (a watcher's handle and a writer's) and
// drops it when the test ends.
func pgRoom(t testing.TB) (watched, writer *storage.Postgres) {
	t.Helper()
	u := pgURL(t)
	id := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	ctx := context.Background()
	var err error
	if watched, err = storage.OpenPostgres(ctx, u, id, storage.PostgresOptions{}); err != nil {
		t.Fatal(err)
	}
	if writer, err = storage.OpenPostgres(ctx, u, id, storage.PostgresOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		writer.Close()
		if err := watched.Drop(context.Background()); err != nil {
			t.Errorf("drop the room: %v", err)
		}
		watched.Close()
	})
	return watched, writer
}

// write commits one event through st.
func write(t testing.TB, st storage.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()
	err := st.Update(ctx, func(tx storage.Tx) error {
		return tx.AppendEvent(&protocol.Event{ActorSessionID: protocol.NewID(protocol.KindSession), Type: protocol.EventIntentCleared, OccurredAt: protocol.FormatTime(time.Now()), Payload: map[string]any{}})
	})
	if err != nil {
		t.Fatalf("write: %v", err)
	}
}

// drain empties w.C of the wake-ups so far, waiting briefly for a late one
// (fsnotify's trailing wake-ups come up to Trail2 after a commit).
func drain(w *Watcher) { drainFor(w, 2*Trail2) }

func drainFor(w *Watcher, quiet time.Duration) {
	for {
		select {
		case <-w.C:
		case <-time.After(quiet):
			return
		}
	}
}

func woken(t testing.TB, w *Watcher, what string) {
	t.Helper()
	select {
	case <-w.C:
	case <-time.After(eventually):
		t.Fatalf("no wake-up within %v after %s", eventually, what)
	}
}

// quiet sets the polls so long that only a notification can wake a
// watcher during the test.
func quiet(t *testing.T) {
	b, f := Backstop, Fallback
	Backstop, Fallback = time.Hour, time.Hour
	t.Cleanup(func() { Backstop, Fallback = b, f })
}

// listeners counts the server backends listening on pg's channel (their
// last statement is the LISTEN, as (*storage.Postgres).Listen words it),
// through the test role itself.
func listeners(t testing.TB, pg *storage.Postgres) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	q := `SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN "' || $1 || '"'`
	if err := conn.QueryRow(context.Background(), q, pg.Channel()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitListeners waits until listeners(pg) == want.
func waitListeners(t testing.TB, pg *storage.Postgres, want int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for n := listeners(t, pg); n != want; n = listeners(t, pg) {
		if time.Now().After(deadline) {
			t.Fatalf("%d backends listen on the room's channel, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRoomWakesOnNotify: a commit through another handle of the room wakes
// the watcher through LISTEN (the polls are set to an hour).
func TestRoomWakesOnNotify(t *testing.T) {
	quiet(t)
	watched, writer := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Room(ctx, watched, filepath.Join(t.TempDir(), "no-such-store.db"), Backstop)
	if !w.Watching || w.Err != nil {
		t.Fatalf("Watching %v, Err %v; want a listening watcher", w.Watching, w.Err)
	}
	drain(w)
	for range 3 {
		write(t, writer)
		woken(t, w, "a commit")
	}
}

// TestRoomReconnectsAfterTheConnectionDrops: the listening backend is
// terminated; the watcher wakes (changes may have been missed), listens
// again, and a later commit wakes it through the new connection. When its
// context ends, it stops listening.
func TestRoomReconnectsAfterTheConnectionDrops(t *testing.T) {
	quiet(t)
	watched, writer := pgRoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := Room(ctx, watched, "", Backstop)
	waitListeners(t, watched, 1)
	drain(w)

	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var killed int
	if err := conn.QueryRow(context.Background(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = 'LISTEN "' || $1 || '"'`, watched.Channel()).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listening backends, want 1", killed)
	}
	woken(t, w, "the listening connection dropped")
	waitListeners(t, watched, 1)
	drain(w)
	write(t, writer)
	woken(t, w, "a commit after the reconnection")

	cancel()
	waitListeners(t, watched, 0)
}

// TestRoomOnSQLiteWatchesTheFile: a SQLite store is watched through its
// directory as before.
func TestRoomOnSQLiteWatchesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acc.db")
	st, err := storage.OpenSQLite(context.Background(), path, "workspace_watch")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Room(ctx, st, path, time.Hour)
	if !w.Watching {
		t.Fatalf("the store's directory is not watched: %v", w.Err)
	}
	drain(w)
	write(t, st)
	woken(t, w, "a commit")
}

// BenchmarkWake measures the time from a commit returning to the
// watcher's wake-up, for a room on PostgreSQL (LISTEN/NOTIFY over
// loopback) and in SQLite (fsnotify on the WAL); p50-ms and p90-ms.
//
//	scripts/with-pg.sh go test -run '^$' -bench Wake -benchtime 200x ./internal/watch/
func BenchmarkWake(b *testing.B) {
	run := func(b *testing.B, watched, writer storage.Store, path string, quiet time.Duration) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		bs := Backstop
		Backstop = time.Hour
		defer func() { Backstop = bs }()
		w := Room(ctx, watched, path, time.Hour)
		drain(w)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			write(b, writer)
			done := time.Now()
			woken(b, w, "a commit")
			lat = append(lat, time.Since(done))
			b.StopTimer()
			drainFor(w, quiet) // fsnotify's trailing wake-ups
			b.StartTimer()
		}
		b.StopTimer()
		report(b, lat)
	}
	b.Run("engine=postgresql", func(b *testing.B) {
		watched, writer := pgRoom(b)
		run(b, watched, writer, "", 20*time.Millisecond)
	})
	b.Run("engine=sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "acc.db")
		st, err := storage.OpenSQLite(context.Background(), path, "workspace_watch")
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		run(b, st, st, path, 2*Trail2)
	})
}

func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}
