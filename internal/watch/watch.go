// Package watch tells long-lived readers of a room (acc wait, acc top,
// acc-mcp's resource subscriptions) that its store may have changed. A
// wake-up is only a hint: the reader re-reads the store and decides. Every
// change wakes a reader within moments and nothing is lost when the hint is
// (docs/protocol.md#waking-readers):
//
//   - A room in a SQLite file is watched through fsnotify on the file's
//     directory (in WAL mode every commit writes acc.db-wal), with a bounded
//     poll as a safety net, and a poll alone when the directory cannot be
//     watched (missing, or inotify exhausted) or the watcher overflows.
//   - A room on PostgreSQL may have no file on this machine at all: a
//     connection of the watcher's own LISTENs on the room's channel, which
//     every committed write notifies. When that connection fails the
//     watcher wakes once (changes may have gone unseen), polls until it is
//     back, and reconnects with a growing delay; while connected it polls
//     only as a backstop, checking each time that the connection answers.
//
// Several changes before the reader looks coalesce into one pending
// wake-up.
package watch

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/jackc/pgx/v5"

	"github.com/acc-go/acc/pkg/storage"
)

// Poll intervals: Backstop while the watcher works, Fallback without it;
// Trail1 and Trail2 are the wake-ups after a burst of file events.
var (
	Backstop = 2 * time.Second
	Fallback = 250 * time.Millisecond
	Trail1   = 20 * time.Millisecond
	Trail2   = 150 * time.Millisecond
)

// Reconnection of a room on PostgreSQL: the first attempt RetryMin after
// the connection failed, each further one twice as late, at most RetryMax
// apart; the delay starts again from RetryMin once a connection has lasted
// RetryMax. ListenWait bounds one attempt to connect and LISTEN, and one
// check that the connection still answers.
var (
	RetryMin   = 100 * time.Millisecond
	RetryMax   = 5 * time.Second
	ListenWait = 10 * time.Second
)

// Watcher delivers wake-ups on C (buffered: several changes coalesce into
// one pending wake-up) until its context ends.
type Watcher struct {
	C <-chan struct{}
	c chan struct{}

	mu       sync.Mutex
	watching bool
	err      error
	// pid is the server process of the LISTEN connection, 0 without one
	// (for tests: they cut that backend).
	pid uint32
}

func newWatcher() *Watcher {
	c := make(chan struct{}, 1)
	return &Watcher{C: c, c: c}
}

// Watching reports whether changes wake the reader as they happen (file
// events, or a live LISTEN connection); false means it is only polled,
// every Fallback, and Err says why. For a room on PostgreSQL it changes as
// the connection drops and comes back.
func (w *Watcher) Watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watching
}

// Err is why the watcher is only polling (nil while Watching): the
// directory could not be watched, or the PostgreSQL connection failed or
// could not be made (a *protocol.Error of storage.Postgres.Listen, or the
// connection's own error; never a password). On PostgreSQL, once the
// watcher's context ended, Watching is false and Err is the context's
// error (no wake-up comes after that).
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) set(watching bool, err error, pid uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watching, w.err, w.pid = watching, err, pid
}

// backendPID is the server process holding the watcher's LISTEN, 0 when
// there is none: a hook for tests.
func (w *Watcher) backendPID() uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid
}

// wake leaves one pending wake-up on C; one already pending absorbs it.
func (w *Watcher) wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Room watches an opened room's store until ctx ends: through LISTEN on the
// room's channel when st is a *storage.Postgres (no file is watched: the
// room may have none on this machine), else through the directory of
// storePath, the room's SQLite file (…/acc.db), as StoreEvery does.
// backstop is the poll interval while changes are being followed (a live
// view that refreshes its clocks by itself can afford a long one); zero or
// less means Backstop.
//
// On PostgreSQL the first LISTEN is made before Room returns (bounded by
// ListenWait and ctx), so a reader that looks after Room returns misses no
// later commit; when it cannot be made, Room still returns a watcher that
// polls every Fallback and keeps trying (Watching false, Err the reason).
// The connection is closed when ctx ends.
func Room(ctx context.Context, st storage.Store, storePath string, backstop time.Duration) *Watcher {
	if backstop <= 0 {
		backstop = Backstop
	}
	if p, ok := st.(*storage.Postgres); ok {
		return listen(ctx, p, backstop)
	}
	return StoreEvery(ctx, storePath, backstop)
}

// Store watches the directory of the store file storePath (…/acc.db).
func Store(ctx context.Context, storePath string) *Watcher {
	return StoreEvery(ctx, storePath, Backstop)
}

// StoreEvery is Store with its own backstop interval (a live view that
// refreshes its clocks by itself can afford a long one).
func StoreEvery(ctx context.Context, storePath string, backstop time.Duration) *Watcher {
	w := newWatcher()
	fw, err := fsnotify.NewWatcher()
	if err == nil {
		if err = fw.Add(filepath.Dir(storePath)); err != nil {
			fw.Close()
		}
	}
	interval := Fallback
	if err == nil {
		w.watching, interval = true, backstop
	} else {
		w.err = err
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
		if err == nil {
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
					w.wake()
					trail1.Reset(Trail1)
					trail2.Reset(Trail2)
				}
			case <-trail1.C:
				w.wake()
			case <-trail2.C:
				w.wake()
			case _, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				w.wake() // an overflow lost events: look again
			case <-t.C:
				w.wake()
			}
		}
	}()
	return w
}

// listener is one LISTEN watcher's room and timing, the package's
// intervals as they were when it started.
type listener struct {
	w                                            *Watcher
	p                                            *storage.Postgres
	backstop, fallback, retryMin, retryMax, wait time.Duration
}

// listen is Room for a room on PostgreSQL.
func listen(ctx context.Context, p *storage.Postgres, backstop time.Duration) *Watcher {
	l := &listener{w: newWatcher(), p: p, backstop: backstop, fallback: Fallback,
		retryMin: RetryMin, retryMax: RetryMax, wait: ListenWait}
	actx, cancel := context.WithTimeout(ctx, l.wait)
	conn, err := p.Listen(actx)
	cancel()
	if err != nil {
		l.w.set(false, err, 0)
	} else {
		l.w.set(true, nil, conn.PgConn().PID())
	}
	go l.run(ctx, conn)
	return l.w
}

// run follows conn (nil when there is none yet) and, each time it fails,
// wakes once and makes a new one, until ctx ends.
func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	w := l.w
	delay := l.retryMin
	for {
		if conn != nil {
			began := time.Now()
			err := l.follow(ctx, conn)
			closeConn(conn)
			if ctx.Err() != nil {
				w.set(false, ctx.Err(), 0)
				return
			}
			w.set(false, err, 0)
			w.wake() // notifications may have been lost with the connection
			if time.Since(began) >= l.retryMax {
				delay = l.retryMin
			}
		}
		if conn = l.reconnect(ctx, &delay); conn == nil {
			w.set(false, ctx.Err(), 0)
			return
		}
		// What changed while disconnected, since the last poll; the wake-up
		// goes before Watching turns true, so whoever sees it true finds
		// it pending already.
		w.wake()
		w.set(true, nil, conn.PgConn().PID())
	}
}

// follow wakes on every notification conn receives, and every backstop
// without one (checking then that the connection still answers), until
// ctx ends or the connection fails; it returns why it stopped.
func (l *listener) follow(ctx context.Context, conn *pgx.Conn) error {
	w := l.w
	for {
		wctx, cancel := context.WithTimeout(ctx, l.backstop)
		_, err := conn.WaitForNotification(wctx)
		quiet := wctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			w.wake()
		case ctx.Err() != nil:
			return ctx.Err()
		case quiet && !conn.IsClosed():
			// Nothing for a backstop interval: look again, and make sure
			// the connection is not silently gone (a server or network
			// that vanished without closing it).
			w.wake()
			pctx, cancel := context.WithTimeout(ctx, l.wait)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
		default:
			return err
		}
	}
}

// reconnect makes a new LISTEN connection, waiting *delay before each
// attempt and doubling it (to RetryMax) after each, and waking every
// Fallback all the while; nil when ctx ended first. A failed attempt's
// error becomes Err.
func (l *listener) reconnect(ctx context.Context, delay *time.Duration) *pgx.Conn {
	w := l.w
	poll := time.NewTicker(l.fallback)
	defer poll.Stop()
	type attempt struct {
		conn *pgx.Conn
		err  error
	}
	for {
		pause := time.NewTimer(*delay)
	waiting:
		for {
			select {
			case <-ctx.Done():
				pause.Stop()
				return nil
			case <-poll.C:
				w.wake()
			case <-pause.C:
				break waiting
			}
		}
		*delay = min(2**delay, l.retryMax)
		// The attempt may take long (a server that does not answer): the
		// reader is polled meanwhile.
		res := make(chan attempt, 1)
		actx, cancel := context.WithTimeout(ctx, l.wait)
		go func() {
			conn, err := l.p.Listen(actx)
			res <- attempt{conn, err}
		}()
		var a attempt
	trying:
		for {
			select {
			case a = <-res:
				break trying
			case <-poll.C:
				w.wake()
			}
		}
		cancel()
		if a.err == nil {
			if ctx.Err() != nil {
				closeConn(a.conn)
				return nil
			}
			return a.conn
		}
		if ctx.Err() != nil {
			return nil
		}
		w.set(false, a.err, 0)
	}
}

// closeConn ends a LISTEN connection, telling the server when it still
// can (within a second).
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}
