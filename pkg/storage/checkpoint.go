package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"reflect"
	"sync/atomic"
	"time"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// driverName is the database/sql driver acc's store files are opened with:
// modernc.org/sqlite's driver, registered privately so that its connection
// hook (noCheckpointOnClose) reaches acc's connections only.
const driverName = "acc-sqlite"

// walCheckpointBytes bounds the WAL
// (docs/design.md#durability-and-checkpoints). A commit writes its pages to
// acc.db-wal and fsyncs that file once. When a commit leaves the WAL larger
// than this, the same process, after the commit and still first in the writers'
// queue, copies the WAL into acc.db and empties it (checkpointAfterCommit).
// SQLite's own automatic checkpoint is off: it cannot empty the WAL, and
// because the first process to open a store rebuilds the WAL index from the
// WAL, forgetting what was already copied, it would copy the whole WAL again on
// every commit. The bound also bounds that rebuild, which every process that
// finds no other process using the store pays: reading at most this much.
const walCheckpointBytes = 1 << 20

// checkpointWait bounds how long a checkpoint waits for readers to leave
// the WAL; when they do not, the next commit tries again.
const checkpointWait = 250 * time.Millisecond

// checkpointAfterCommit empties the WAL into acc.db when it has grown past
// walCheckpointBytes: PRAGMA wal_checkpoint(TRUNCATE) on conn, which must be
// outside a transaction. It runs after a commit and never fails the caller:
// the commit is durable already, and a checkpoint that cannot finish (readers
// still in the WAL) is retried by the next commit.
func (s *SQLite) checkpointAfterCommit(conn *sql.Conn) {
	if s.path == "" {
		return
	}
	info, err := os.Stat(s.path + "-wal")
	if err != nil || info.Size() <= walCheckpointBytes {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkpointWait)
	defer cancel()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointWait.Milliseconds())); err != nil {
		return
	}
	var busy, frames, copied int
	_ = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied)
}

// checkpointOnCloseDisabled records whether the connection hook could turn
// off SQLite's checkpoint on close for the last connection it opened. Tests
// read it to tell a driver change that broke the hook from a regression.
var checkpointOnCloseDisabled atomic.Bool

func init() {
	var d sqlite.Driver
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		checkpointOnCloseDisabled.Store(setCheckpointOnClose(c, false))
		return nil
	})
	sql.Register(driverName, &d)
}

// setCheckpointOnClose sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on the driver
// connection c to !on. Off (the hook's choice), closing the last connection
// to a store in a process neither checkpoints the WAL (two fsyncs and a
// copy) nor deletes it; on is SQLite's default. The
// driver has no public call for sqlite3_db_config, so this reads the
// connection's SQLite handle and libc thread state by field name, checking
// their types; on any surprise it changes nothing and reports false, and the
// store keeps SQLite's default (checkpoint on close): slower, equally safe.
func setCheckpointOnClose(c any, on bool) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	db := v.Elem().FieldByName("db")
	tlsField := v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || db.Uint() == 0 ||
		!tlsField.IsValid() || tlsField.Type() != reflect.TypeFor[*libc.TLS]() || tlsField.IsNil() {
		return false
	}
	tls := (*libc.TLS)(tlsField.UnsafePointer())
	const vaSlot = 8 // libc.VaList stores every argument in 8 bytes
	bp := libc.Xmalloc(tls, 2*vaSlot)
	if bp == 0 {
		return false
	}
	defer libc.Xfree(tls, bp)
	var noCkpt int32 = 1
	if on {
		noCkpt = 0
	}
	rc := sqlite3.Xsqlite3_db_config(tls, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
		libc.VaList(bp, noCkpt, uintptr(0)))
	return rc == sqlite3.SQLITE_OK
}

// closeRefused closes db after OpenSQLiteExisting refused its store, or
// after a handle that wrote nothing. When the store had no WAL file before
// the open, the open made one (and its index): closing with SQLite's
// default checkpoint removes both, so the store is left as it was found. If
// another process committed into that WAL meanwhile, the checkpoint copies
// its pages into acc.db: the one close that costs fsyncs, and as safe.
func closeRefused(db *sql.DB, walExisted bool) {
	if !walExisted {
		if c, err := db.Conn(context.Background()); err == nil {
			_ = c.Raw(func(dc any) error {
				setCheckpointOnClose(dc, true)
				return nil
			})
			c.Close()
		}
	}
	db.Close()
}
