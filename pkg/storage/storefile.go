package storage

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// OpenSQLite opens the database at path for the workspace workspaceID,
// creating it when no file is there (docs/design.md#the-store-file). The
// parent directory is created 0700 and the file 0600. A new store is written
// complete under a temporary name in the same directory and then linked into
// place without replacing anything, so acc.db never exists half made: when
// two processes create it at once, one link wins and both open the winner.
// Everything else is OpenSQLiteExisting's.
func OpenSQLite(ctx context.Context, path, workspaceID string) (*SQLite, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fileFault(path, "create the store directory "+dir, err)
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := orphanWAL(path); err != nil {
			return nil, err
		}
		if err := createStore(ctx, path, workspaceID); err != nil {
			return nil, err
		}
	}
	return OpenSQLiteExisting(ctx, path, workspaceID)
}

// orphanWAL refuses to create a store at path while a non-empty WAL of a
// store that is no longer there (moved aside or deleted without its
// acc.db-wal) lies beside it: SQLite would read that WAL's pages into the
// new store. A WAL is only ever written while its acc.db exists, so a
// non-empty one with no acc.db after it is an orphan.
func orphanWAL(path string) error {
	info, err := os.Lstat(path + "-wal")
	if err != nil || info.Size() == 0 {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return nil // another process created the store meanwhile
	}
	return protocol.Errorf(protocol.ReasonStoreCorrupt,
		"%s is missing but its write-ahead log %s-wal (%d bytes) is still there, from the store that was moved or deleted; a new store would read it. Move it to the old store's name too (mv %s-wal OLD-wal, beside OLD where acc.db went) or delete it if that store is gone for good, then run the command again",
		storeName(path), path, info.Size(), path).With("path", path)
}

// OpenSQLiteExisting opens the existing store at path for reading and
// writing, and creates nothing: no directory, no file and no schema. Checked
// before anything is written, and the file left as it was when refused:
//   - a directory or other non-file at path, an empty file, a file shorter
//     than its own header says, not a SQLite database, or a database without
//     acc's schema or workspace identity: store_corrupt;
//   - another schema version: store_version_unknown; another workspace's
//     store: store_foreign_workspace;
//   - a file or directory acc may not open or write: store_unwritable; a
//     full disk: store_full; any other I/O error: store_io_error.
//
// All are exit 4 and name path and the fix. Waiting for a writer is bounded
// by ctx (store_busy, exit 3).
func OpenSQLiteExisting(ctx context.Context, path, workspaceID string) (*SQLite, error) {
	return openSQLiteExisting(ctx, path, workspaceID, false)
}

// OpenSQLiteToInspect is OpenSQLiteExisting for a reader that must change
// nothing (acc doctor): a store of schema version 2 is opened as it is,
// not upgraded, and SchemaVersion says 2; such a handle must not be
// searched or written.
func OpenSQLiteToInspect(ctx context.Context, path, workspaceID string) (*SQLite, error) {
	return openSQLiteExisting(ctx, path, workspaceID, true)
}

func openSQLiteExisting(ctx context.Context, path, workspaceID string, noMigrate bool) (*SQLite, error) {
	short, err := checkStoreFile(path)
	if err != nil {
		return nil, err
	}
	_, walErr := os.Lstat(path + "-wal")
	walExisted := walErr == nil
	db, err := sql.Open(driverName, storeDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	s := &SQLite{db: db, path: path, workspaceID: workspaceID, noInit: true, walExisted: walExisted, noMigrate: noMigrate}
	if err := s.checkOrInit(ctx); err != nil {
		closeRefused(db, walExisted)
		if short != "" && protocol.IsReason(err, protocol.ReasonStoreCorrupt) {
			err = corrupt(path, "it looks truncated: "+short).Wrap(err)
		}
		return nil, err
	}
	if short != "" {
		if err := s.quickCheck(ctx, short); err != nil {
			closeRefused(db, walExisted)
			return nil, err
		}
	}
	return s, nil
}

// storeDSN opens an existing store file (mode=rw: SQLite never creates one)
// with synchronous=FULL, so a commit is durable once it returns, and without
// SQLite's automatic checkpoint (checkpointAfterCommit does that work).
func storeDSN(path string) string {
	return "file:" + uriPath(path) + "?mode=rw&_pragma=busy_timeout(5000)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)" +
		"&_pragma=wal_autocheckpoint(0)"
}

// minStoreSize is the smallest file a complete store can be: one page of
// the smallest page size SQLite writes.
const minStoreSize = 512

// checkStoreFile refuses what cannot be a complete store without opening it
// with SQLite: a missing or non-regular file, and a file shorter than one
// page. It returns a description when the file is shorter than its header's
// page count says, which a checkpoint in another process can also show for
// a moment; the caller settles that with quick_check.
func checkStoreFile(path string) (short string, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fileFault(path, "open the store", err)
	}
	if info.IsDir() {
		return "", corrupt(path, "it is a directory, not acc's store file")
	}
	if !info.Mode().IsRegular() {
		return "", corrupt(path, "it is not a regular file")
	}
	if info.Size() < minStoreSize {
		return "", corrupt(path, fmt.Sprintf("it is %d bytes long, too short for a database (acc writes a new store complete before it appears there, so this one was truncated or emptied)", info.Size()))
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fileFault(path, "open the store", err)
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return "", fileFault(path, "read the store header", err)
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return "", nil // SQLite's own check names it
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The header's page count is valid while its change counter and
	// version-valid-for number agree (section 1.3.7 of SQLite's file format document,
	// https://www.sqlite.org/fileformat.html).
	valid := binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96])
	if valid && pages > 0 && info.Size() < pages*pageSize {
		return fmt.Sprintf("its header counts %d pages of %d bytes (%d bytes) but the file has %d bytes", pages, pageSize, pages*pageSize, info.Size()), nil
	}
	return "", nil
}

// quickCheck runs PRAGMA quick_check on a store whose file looked shorter
// than its header (short describes how) and refuses it as store_corrupt when
// the check finds damage.
func (s *SQLite) quickCheck(ctx context.Context, short string) error {
	lines, err := s.checkLines(ctx, "PRAGMA quick_check")
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) && pe.Reason != protocol.ReasonStoreCorrupt {
			return err
		}
		return corrupt(s.path, "it looks truncated: "+short)
	}
	var first string
	n := 0
	for _, line := range lines {
		if line != "ok" {
			if n == 0 {
				first = line
			}
			n++
		}
	}
	if n > 0 {
		return corrupt(s.path, fmt.Sprintf("it looks truncated: %s, and quick_check found %d problem(s), first: %s", short, n, first))
	}
	return nil
}

// createStore writes a complete new store for workspaceID (schema, identity,
// WAL mode) under a temporary name beside path, then links it to path. An
// existing path is never replaced: if another process linked its store
// first, this one is discarded and the caller opens the winner.
func createStore(ctx context.Context, path, workspaceID string) error {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	removeAbandoned(path)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fileFault(path, "create a new store in "+filepath.Dir(path), err)
	}
	f.Close()
	defer func() {
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
	}()
	// The default driver: its close checkpoints and removes the temporary
	// file's WAL, so the linked file is complete on its own.
	db, err := sql.Open("sqlite", "file:"+uriPath(tmp)+"?_pragma=synchronous(FULL)&_pragma=foreign_keys(1)")
	if err != nil {
		return fmt.Errorf("create the store: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return mapErr(path, err, "create the store")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return mapErr(path, err, "create the store")
	}
	if err := createSchema(ctx, path, conn, workspaceID); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return mapErr(path, err, "create the store")
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil || mode != "wal" {
		if err == nil {
			err = fmt.Errorf("journal mode stayed %q", mode)
		}
		return mapErr(path, err, "set WAL mode")
	}
	conn.Close()
	if err := db.Close(); err != nil {
		return mapErr(path, err, "create the store")
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fileFault(path, "put the new store in place", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // make the new name durable; a failure leaves it to the OS
		d.Close()
	}
	return nil
}

// abandonedAfter is how old a temporary store file beside path must be for
// removeAbandoned to take it for the leftover of a creator that crashed: a
// creation takes well under a second, so an hour cannot be one in progress.
const abandonedAfter = time.Hour

// removeAbandoned removes the temporary files (.acc.db.new-… and their
// -journal, -wal, -shm) that a createStore killed before its cleanup left
// beside path, once they are older than abandonedAfter. The store never
// reads them; this only keeps them from piling up. Errors are ignored.
func removeAbandoned(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new-*"))
	for _, m := range matches {
		if info, err := os.Lstat(m); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > abandonedAfter {
			os.Remove(m)
		}
	}
}

// createSchema writes acc's schema, the workspace identity and the schema
// version inside the caller's write transaction on conn.
func createSchema(ctx context.Context, path string, conn *sql.Conn, workspaceID string) error {
	if _, err := conn.ExecContext(ctx, schemaSQL+searchSchemaSQLite); err != nil {
		return mapErr(path, err, "create the schema")
	}
	now := protocol.FormatTime(time.Now())
	if _, err := conn.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('workspace_id', ?), ('created_at', ?), ('message_count', '0')", workspaceID, now); err != nil {
		return mapErr(path, err, "record the workspace identity")
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return mapErr(path, err, "record the schema version")
	}
	return nil
}

// storeName is how messages name the store at path.
func storeName(path string) string {
	if path == "" {
		return "the in-memory store"
	}
	return "the store at " + path
}

// asideHint is the fix for a store file acc cannot use.
func asideHint(path string) string {
	if path == "" {
		return "run the command again"
	}
	return fmt.Sprintf("restore it from a backup, or move it aside with its write-ahead log (mv %s %s.bad; mv %s-wal %s.bad-wal if there) and run `acc attach` to start a new, empty store", path, path, path, path)
}

// corrupt is store_corrupt for the store at path; why says what is wrong.
func corrupt(path, why string) *protocol.Error {
	return protocol.Errorf(protocol.ReasonStoreCorrupt, "%s is unusable: %s; %s", storeName(path), why, asideHint(path)).
		With("path", path)
}

func storeFull(path, doing, cause string) *protocol.Error {
	return protocol.Errorf(protocol.ReasonStoreFull,
		"%s: could not %s: the disk is full (%s); free space on the file system holding %s, then run the command again",
		storeName(path), doing, cause, filepath.Dir(path)).With("path", path)
}

func unwritable(path, doing, cause string) *protocol.Error {
	return protocol.Errorf(protocol.ReasonStoreUnwritable,
		"%s: could not %s: permission denied or read-only (%s); make %s and the acc.db* files in it writable by this user, or set ACC_DATA_HOME to a writable directory",
		storeName(path), doing, cause, filepath.Dir(path)).With("path", path)
}

func ioError(path, doing, cause string) *protocol.Error {
	return protocol.Errorf(protocol.ReasonStoreIOError,
		"%s: could not %s: the operating system reported an I/O error (%s); check the disk holding it, then run `acc doctor`",
		storeName(path), doing, cause).With("path", path)
}

// fileFault maps an operating-system error met while doing something to
// the store at path onto the store's reasons: a full disk or quota is
// store_full; permission denied or a read-only file system store_unwritable;
// EIO store_io_error; a directory on the way that is a file store_corrupt.
// Anything else is returned wrapped (exit 1).
func fileFault(path, doing string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return storeFull(path, doing, errText(err)).Wrap(err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return unwritable(path, doing, errText(err)).Wrap(err)
	case errors.Is(err, syscall.EIO):
		return ioError(path, doing, errText(err)).Wrap(err)
	case errors.Is(err, syscall.ENOTDIR):
		return corrupt(path, "a file is in the way of its directory ("+errText(err)+")").Wrap(err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// errText is the operating system's words for err, without the path that
// the message names already.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// damageTables lists every table holding records, with the SQL expression
// of its key and the decoder of its record.
var damageTables = []struct {
	table, key string
	decode     func(string) error
}{
	{"workspace", "workspace_id", decodeAs[protocol.Workspace]("workspace")},
	{"participants", "participant_id", decodeAs[protocol.Participant]("participant")},
	{"eph_participants", "participant_id", decodeAs[protocol.Participant]("participant")},
	{"sessions", "session_id", decodeAs[protocol.Session]("session")},
	{"eph_sessions", "session_id", decodeAs[protocol.Session]("session")},
	{"intents", "session_id", decodeAs[protocol.Intent]("intent")},
	{"eph_intents", "session_id", decodeAs[protocol.Intent]("intent")},
	{"claims", "claim_id", decodeAs[protocol.Claim]("claim")},
	{"messages", "message_id", decodeAs[protocol.Message]("message")},
	{"receipts", "message_id || '/' || recipient_participant_id", decodeAs[protocol.Receipt]("receipt")},
	{"events", "sequence", decodeAs[protocol.Event]("event")},
	{"session_bindings", "binding_key", func(rec string) error {
		var b SessionBinding
		return protocol.DecodeStrict("session binding", []byte(rec), &b)
	}},
}

func decodeAs[T any](what string) func(string) error {
	return func(rec string) error {
		_, err := decodeRecord[T](what, rec)
		return err
	}
}

// DamagedRecords reads every record of the store and returns, in table
// order, up to limit of those that do not decode or validate, for acc
// doctor to name (docs/design.md). It reads the whole store: O(records).
func (s *SQLite) DamagedRecords(ctx context.Context, limit int) ([]DamagedRecord, error) {
	var out []DamagedRecord
	err := s.View(ctx, func(rt ReadTx) error {
		q := rt.(*sqlTx).q
		for _, dt := range damageTables {
			rows, err := q.QueryContext(ctx, "SELECT CAST("+dt.key+" AS TEXT), record FROM "+dt.table)
			if err != nil {
				return mapErr(s.path, err, "read the "+dt.table)
			}
			for rows.Next() && len(out) < limit {
				var key, rec string
				if err := rows.Scan(&key, &rec); err != nil {
					rows.Close()
					return mapErr(s.path, err, "read the "+dt.table)
				}
				if err := dt.decode(rec); err != nil {
					out = append(out, DamagedRecord{Table: dt.table, Key: key, Problem: damageText(err)})
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return mapErr(s.path, err, "read the "+dt.table)
			}
		}
		return nil
	})
	return out, err
}

// damageText is why a record does not decode, without the advice that
// decodeRecord adds for a refusal.
func damageText(err error) string {
	if cause := errors.Unwrap(err); cause != nil {
		return cause.Error()
	}
	return err.Error()
}
