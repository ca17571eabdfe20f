package storage

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// Failpoints are named steps on the commit path at which a test can crash
// a real acc process. When the environment variable ACC_FAILPOINT equals a
// point's name, the process kills itself with SIGKILL there: no deferred
// cleanup, no rollback, exactly as a power cut or `kill -9` would.
const (
	// FailBeforeCommit fires inside a write transaction, after all its
	// statements ran and before COMMIT.
	FailBeforeCommit = "before-commit"
	// FailAfterCommit fires right after COMMIT returned, before the caller
	// learns of it (so the CLI never prints "recorded").
	FailAfterCommit = "after-commit"
	// FailAfterMessage fires after a message row is written and before its
	// receipts are (pkg/core's send path).
	FailAfterMessage = "after-message"
	// FailMigrating fires while a store is upgraded to schema version 3,
	// after 50,000 messages were indexed and before the upgrade commits.
	FailMigrating = "migrating"

	// The points below do not kill: they make a real process meet a fault
	// that cannot be staged from outside
	// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed).

	// FailCommitLanded runs the COMMIT, which lands, and then reports it
	// failed with an I/O error, as a disk can after the data is durable.
	FailCommitLanded = "commit-error-landed"
	// FailCommitLost reports an I/O error in place of the COMMIT, which
	// never runs: the write is rolled back.
	FailCommitLost = "commit-error-lost"
	// FailStallAfterCommit waits after the COMMIT until the caller's
	// deadline has passed, so everything after the commit meets an expired
	// deadline, as on a machine too loaded to finish in time.
	FailStallAfterCommit = "stall-after-commit"
	// FailStallBeforeCommit waits, holding the write lock, until the
	// caller's deadline has passed, and then commits: a deadline that runs
	// out after the lock was taken must not undo the write.
	FailStallBeforeCommit = "stall-before-commit"
)

// errInjectedIO is the I/O error FailCommitLanded and FailCommitLost report.
var errInjectedIO = errors.New("disk I/O error (injected by ACC_FAILPOINT)")

// commit runs COMMIT on conn, or stages a failed one (FailCommitLanded,
// FailCommitLost).
func commit(ctx context.Context, conn *sql.Conn) error {
	if armed(FailCommitLost) {
		return errInjectedIO
	}
	if armed(FailCommitLanded) {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return err
		}
		return errInjectedIO
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// stallFailpoint waits until ctx is done when ACC_FAILPOINT is point.
func stallFailpoint(ctx context.Context, point string) {
	if armed(point) {
		<-ctx.Done()
	}
}

// armed reports whether the process is at the failpoint ACC_FAILPOINT
// names: it is point, and this is not one of the first N arrivals there that
// ACC_FAILPOINT_SKIP=N lets pass (so a test can let an acc-mcp server open
// its session before the write it means to break). It costs one
// environment lookup when ACC_FAILPOINT is unset.
func armed(point string) bool {
	if os.Getenv("ACC_FAILPOINT") != point {
		return false
	}
	skip, _ := strconv.Atoi(os.Getenv("ACC_FAILPOINT_SKIP"))
	return arrivals.Add(1) > int64(skip)
}

// arrivals counts the process's arrivals at the armed failpoint.
var arrivals atomic.Int64

// Failpoint crashes the process if ACC_FAILPOINT names point; otherwise it
// does nothing.
func Failpoint(point string) {
	if !armed(point) {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; wait for it to land
}
