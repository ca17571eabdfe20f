// Package watch tells long-lived readers of a workspace's store (acc wait,
// acc top, acc-mcp's resource subscriptions) that the store may have
// changed. A wake-up is only a hint: the reader re-reads the store and
// decides. It rests on fsnotify watching the store's directory (SQLite in
// WAL mode writes acc.db-wal on every commit), with a bounded poll as a
// safety net, and a poll alone when the directory cannot be watched
// (missing, or inotify exhausted) or the watcher overflows.
package watch

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Poll intervals: Backstop while the watcher works, Fallback without it;
// Trail1 and Trail2 are the wake-ups after a burst of file events.
var (
	Backstop = 2 * time.Second
	Fallback = 250 * time.Millisecond
	Trail1   = 20 * time.Millisecond
	Trail2   = 150 * time.Millisecond
)

// Watcher delivers wake-ups on C (buffered: several changes coalesce into
// one pending wake-up) until its context ends.
type Watcher struct {
	C <-chan struct{}
	// Watching is false when only polling (the directory could not be
	// watched); Err says why.
	Watching bool
	Err      error
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
