package storage

import (
	"context"
	"os"
	"syscall"
)

// queueForWrite makes writers wait for one another in the kernel rather
// than in SQLite's busy handler
// (docs/design.md#waiting-for-the-write-lock). SQLite's handler polls with
// growing sleeps (up to 100 ms), so a writer that has waited a while loses the
// lock again and again to writers that just arrived, and under a burst of
// writers some run out their deadline. Here each writer first takes an
// exclusive flock(2) on the file acc.db-lock beside the store; the kernel wakes
// a waiter as soon as the holder lets go, so the SQLite lock behind it is
// almost always free.
//
// The lock only orders acc's own writers: SQLite's lock still guarantees
// exclusion, and a writer that cannot open the lock file (a read-only
// directory) or that is not acc goes straight to SQLite. The wait is
// bounded by ctx (store_busy). release ends the turn; call it after COMMIT
// or ROLLBACK.
func (s *SQLite) queueForWrite(ctx context.Context) (release func(), err error) {
	if s.path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(s.path+"-lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}, nil
	}
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return func() { f.Close() }, nil
	}
	got := make(chan error, 1)
	go func() {
		for {
			err := syscall.Flock(fd, syscall.LOCK_EX)
			if err != syscall.EINTR {
				got <- err
				return
			}
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return func() {}, nil // no queue; SQLite's lock still decides
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		// The waiting flock cannot be cancelled: when it returns, let the
		// lock go at once.
		go func() {
			<-got
			f.Close()
		}()
		return nil, busyError(ctx.Err())
	}
}
