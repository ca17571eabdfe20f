package storage

import (
	"os"
	"syscall"
)

// Failpoints are named steps at which a test can crash a real acc process
// (STYLE item 16). When the environment variable ACC_FAILPOINT equals a
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
)

// Failpoint crashes the process if ACC_FAILPOINT names point; otherwise it
// does nothing. It costs one environment lookup.
func Failpoint(point string) {
	if os.Getenv("ACC_FAILPOINT") != point {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; wait for it to land
}
