// Package watch tells long-lived readers of a workspace's store (acc wait,
// acc top, acc-mcp's resource subscriptions) that the store may have
// changed. A wake-up is only a hint: the reader re-reads the store and
// decides (docs/protocol.md#waking-readers).
//
// For a room in SQLite it rests on fsnotify watching the store's directory
// (SQLite in WAL mode writes acc.db-wal on every commit), with a bounded
// poll as a safety net, and a poll alone when the directory cannot be
// watched (missing, or inotify exhausted) or the watcher overflows. For a
// room on PostgreSQL it rests on LISTEN on the room's channel, which every
// committed write notifies, with the same safety-net poll, and a poll alone
// while the listening connection is down (it reconnects with backoff).
package watch

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/storage"
	"github.com/fsnotify/fsnotify"
	"github.com/jackc/pgx/v5"
)

// Poll intervals: Backstop while the watcher works, Fallback without it;
// Trail1 and Trail2 are the wake-ups after a burst of file events.
var (
	Backstop = 2 * time.Second
	Fallback = 250 * time.Millisecond
	Trail1   = 20 * time.Millisecond
	Trail2   = 150 * time.Millisecond
)

// Reconnect backoff of a room on PostgreSQL whose listening connection
// dropped or could not be made: the first retry after ReconnectMin,
// doubling up to ReconnectMax.
var (
	ReconnectMin = 100 * time.Millisecond
	ReconnectMax = 5 * time.Second
)

// Watcher delivers wake-ups on C (buffered: several changes coalesce into
// one pending wake-up) until its context ends.
type Watcher struct {
	C <-chan struct{}
	// Watching is false when only polling (the directory could not be
	// watched); Err says why. For a room on PostgreSQL they are set once,
	// from the first attempt to listen; later drops and reconnections
	// change the wake-ups, not these fields.
	Watching bool
	Err      error
}

// Room watches an opened room's store st: LISTEN on its channel when st is
// a room on PostgreSQL (storePath is not used: such a room has no local
// file), else the SQLite store file at storePath, as StoreEvery. backstop
// is the safety-net poll while the change signal works.
func Room(ctx context.Context, st storage.Store, storePath string, backstop time.Duration) *Watcher {
	if pg, ok := st.(*storage.Postgres); ok {
		return listen(ctx, pg, backstop)
	}
	return StoreEvery(ctx, storePath, backstop)
}

// listen wakes on every notification of pg's channel, and every backstop.
// A dropped or refused connection wakes once (changes may have been
// missed), then polls at Fallback while it reconnects with capped
// exponential backoff; once listening again it wakes once more, for what
// happened in between.
func listen(ctx context.Context, pg *storage.Postgres, backstop time.Duration) *Watcher {
	c := make(chan struct{}, 1)
	wake := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	w := &Watcher{C: c}
	conn, err := pg.Listen(ctx)
	w.Watching, w.Err = err == nil, err
	go func() {
		wait := ReconnectMin
		for {
			if conn == nil {
				if !pollFor(ctx, wait, wake) {
					return
				}
				var err error
				if conn, err = pg.Listen(ctx); err != nil {
					conn = nil
					wait = min(wait*2, ReconnectMax)
					continue
				}
				wait = ReconnectMin
				wake() // what changed while nobody listened
			}
			serve(ctx, conn, backstop, wake)
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
			wake() // the connection dropped: changes may have been missed
		}
	}()
	return w
}

// pollFor wakes every Fallback for d, and reports whether ctx is still
// live at the end.
func pollFor(ctx context.Context, d time.Duration, wake func()) bool {
	end := time.NewTimer(d)
	defer end.Stop()
	t := time.NewTicker(min(d, Fallback))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-end.C:
			return true
		case <-t.C:
			wake()
		}
	}
}

// serve wakes on conn's notifications and every backstop until ctx ends or
// the connection fails.
func serve(ctx context.Context, conn *pgx.Conn, backstop time.Duration, wake func()) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notified := make(chan struct{}, 1)
	broken := make(chan struct{})
	go func() {
		defer close(broken)
		for {
			if _, err := conn.WaitForNotification(lctx); err != nil {
				return
			}
			select {
			case notified <- struct{}{}:
			default:
			}
		}
	}()
	t := time.NewTicker(backstop)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			cancel()
			<-broken
			return
		case <-notified:
			wake()
		case <-t.C:
			wake()
		case <-broken:
			return
		}
	}
}

// Store watches the directory of the store file storePath (…/acc.db).
func Store(ctx context.Context, storePath string) *Watcher {
	return StoreEvery(ctx, storePath, Backstop)
}

// StoreEvery is Store with its own backstop interval (a live view that
// refreshes its clocks by itself can afford a long one).
func StoreEvery(ctx context.Context, storePath string, backstop time.Duration) *Watcher {
	c := make(chan struct{}, 1)
	w := &Watcher{C: c}
	wake := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	fw, err := fsnotify.NewWatcher()
	if err == nil {
		if err = fw.Add(filepath.Dir(storePath)); err != nil {
			fw.Close()
		}
	}
	interval := Fallback
	if err == nil {
		w.Watching, interval = true, backstop
	} else {
		w.Err = err
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		// A commit becomes visible when SQLite updates its shared-memory
		// index, which inotify does not see: the last file event of a
		// commit can come just before it is readable. So every burst of
		// events is followed by two trailing wake-ups.
		trail1, trail2 := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
		trail1.Stop()
		trail2.Stop()
		defer trail1.Stop()
		defer trail2.Stop()
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w.Watching {
			defer fw.Close()
			events, errs = fw.Events, fw.Errors
		}
		base := filepath.Base(storePath)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				if strings.HasPrefix(filepath.Base(ev.Name), base) {
					wake()
					trail1.Reset(Trail1)
					trail2.Reset(Trail2)
				}
			case <-trail1.C:
				wake()
			case <-trail2.C:
				wake()
			case _, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				wake() // an overflow lost events: look again
			case <-t.C:
				wake()
			}
		}
	}()
	return w
}
