package watch

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// BenchmarkWakeNotify measures how soon a reader of a room on PostgreSQL
// sees a commit of another handle: from the start of the write to the
// first wake-up (LISTEN/NOTIFY) after which its read shows the write.
// Compare BenchmarkWakeFsnotify (go test -bench Wake -run '^$'
// ./internal/watch/).
func BenchmarkWakeNotify(b *testing.B) {
	watched, writer := pgRoom(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Room(ctx, watched, "", time.Hour)
	if !w.Watching() {
		b.Fatalf("not listening: %v", w.Err())
	}
	benchWake(b, watched, writer, w)
}

// BenchmarkWakeFsnotify is BenchmarkWakeNotify for a room in a SQLite
// file, woken through its directory.
func BenchmarkWakeFsnotify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "acc.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	watched, err := storage.OpenSQLite(ctx, path, ws)
	if err != nil {
		b.Fatal(err)
	}
	defer watched.Close()
	writer, err := storage.OpenSQLite(ctx, path, ws)
	if err != nil {
		b.Fatal(err)
	}
	defer writer.Close()
	w := Room(ctx, watched, path, time.Hour)
	if !w.Watching() {
		b.Fatalf("not watching: %v", w.Err())
	}
	benchWake(b, watched, writer, w)
}

// benchWake commits one event per iteration through writer and waits for
// the wake-up of w after which watched shows it (an earlier wake-up that
// shows nothing new yet, such as a trailing one of the previous commit,
// does not count). It reports the mean as ns/wake, the median and 99th
// percentile in ms, and the median of the write alone.
func benchWake(b *testing.B, watched, writer storage.Store, w *Watcher) {
	seq := lastSequence(b, watched)
	wakes := make([]time.Duration, 0, b.N)
	writes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		drain(w)
		began := time.Now()
		write(b, writer)
		wrote := time.Since(began)
		seq++
		for {
			awaitWake(b, w, "after a commit")
			if lastSequence(b, watched) >= seq {
				break
			}
		}
		wakes = append(wakes, time.Since(began))
		writes = append(writes, wrote)
	}
	b.StopTimer()
	var sum time.Duration
	for _, d := range wakes {
		sum += d
	}
	slices.Sort(wakes)
	slices.Sort(writes)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(sum)/float64(len(wakes)), "ns/wake")
	b.ReportMetric(ms(wakes[len(wakes)/2]), "ms-p50")
	b.ReportMetric(ms(wakes[len(wakes)*99/100]), "ms-p99")
	b.ReportMetric(ms(writes[len(writes)/2]), "ms-p50-write")
}

// lastSequence is the last event sequence st shows.
func lastSequence(b *testing.B, st storage.Store) int64 {
	b.Helper()
	var seq int64
	err := st.View(context.Background(), func(tx storage.ReadTx) (err error) {
		seq, err = tx.LastSequence()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return seq
}
