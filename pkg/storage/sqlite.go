package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultBusyWait bounds the wait for the write lock when the caller's
// context has no deadline (docs/decisions.md#16-store-busy).
const DefaultBusyWait = 5 * time.Second

// SQLite is the SQLite implementation of Store: one database file per
// workspace (docs/decisions.md#1-storage-engine,
// docs/decisions.md#15-storage-layout).
type SQLite struct {
	db          *sql.DB
	path        string
	workspaceID string
	// noInit makes checkOrInit refuse a database without the schema
	// (store_corrupt) instead of creating it: every store file; only the
	// in-memory store is initialised in place.
	noInit bool
	// walExisted records that acc.db-wal was there when the store was
	// opened, and wrote that this handle committed a write: a handle that
	// found no WAL and wrote nothing removes the empty WAL it made on Close.
	walExisted bool
	wrote      atomic.Bool
	// noMigrate opens a store of schema version 2 as it is instead of
	// upgrading it (acc doctor's open); version is then 2.
	noMigrate bool
	version   int
}

// SchemaVersion is the store's schema version: SchemaVersion, or 2 for a
// store OpenSQLiteToInspect left as an older acc wrote it (it has no
// search index).
func (s *SQLite) SchemaVersion() int { return s.version }

var _ Store = (*SQLite)(nil)

// OpenSQLiteEmpty returns an empty store for workspaceID that lives in
// memory and vanishes on Close. Readers use it when a workspace has no store
// file yet, so a command that only reads (or is refused) never creates one.
func OpenSQLiteEmpty(ctx context.Context, workspaceID string) (*SQLite, error) {
	db, err := sql.Open("sqlite", "file::memory:?_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("open an empty store: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	s := &SQLite{db: db, workspaceID: workspaceID}
	if err := s.checkOrInit(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// uriPath escapes path for a SQLite "file:" URI, where '?' starts the query,
// '#' the fragment and '%' an escape: unescaped, a data home such as
// /home/u/my#data would open the file /home/u/my instead.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Path returns the database file path ("" for an in-memory store).
func (s *SQLite) Path() string { return s.path }

// WorkspaceID implements Store.
func (s *SQLite) WorkspaceID() string { return s.workspaceID }

// Close implements Store. It does not checkpoint (docs/design.md), except
// that a handle which found no WAL file and committed nothing leaves the
// files as it found them: SQLite then removes the empty WAL it opened.
func (s *SQLite) Close() error {
	if s.path != "" && !s.walExisted && !s.wrote.Load() {
		closeRefused(s.db, false)
		return nil
	}
	return s.db.Close()
}

func (s *SQLite) checkOrInit(ctx context.Context) error {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return mapErr(s.path, err, "open the store")
	}
	defer conn.Close()
	version, tables, err := readVersion(ctx, s.path, conn)
	if err != nil {
		return err
	}
	if version == 0 && tables == 0 && s.noInit {
		return corrupt(s.path, "it is a SQLite database without acc's schema (acc writes a new store complete before it appears there, so this one was emptied or never was acc's)")
	}
	if version == 0 && tables == 0 {
		if err := setWAL(ctx, s.path, conn); err != nil {
			return err
		}
		if err := setBusy(ctx, s.path, conn); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return mapErr(s.path, err, "lock the new store")
		}
		committed := false
		defer func() {
			if !committed {
				conn.ExecContext(context.Background(), "ROLLBACK")
			}
		}()
		version, tables, err = readVersion(ctx, s.path, conn)
		if err != nil {
			return err
		}
		if version == 0 && tables == 0 {
			if err := createSchema(ctx, s.path, conn, s.workspaceID); err != nil {
				return err
			}
			version = SchemaVersion
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return mapErr(s.path, err, "commit the new store")
		}
		committed = true
	}
	if version == foreignTables {
		return corrupt(s.path, "it is a SQLite database with tables that are not acc's; acc left it untouched")
	}
	s.version = SchemaVersion
	if version == 2 && s.noMigrate {
		s.version = 2
		version = SchemaVersion
	}
	if version == 2 {
		if err := s.checkIdentity(ctx, conn); err != nil {
			return err
		}
		if err := s.migrateSQLite(ctx, conn); err != nil {
			return err
		}
		// The upgrade may have outlasted ctx; what follows is local
		// reads, and a committed upgrade must not be reported as a busy
		// store.
		ctx = context.WithoutCancel(ctx)
		version = SchemaVersion
	}
	if version != SchemaVersion {
		return protocol.Errorf(protocol.ReasonStoreVersionUnknown,
			"the store at %s has schema version %d; this acc reads version %d and left it untouched (upgrade acc, or move the file aside)", s.path, version, SchemaVersion).
			With("schemaVersion", version)
	}
	if err := s.checkIdentity(ctx, conn); err != nil {
		return err
	}
	if s.version == SchemaVersion {
		if err := s.addPending(ctx, conn); err != nil {
			return err
		}
	}
	s.addLaterIndexes(ctx, conn)
	return nil
}

// checkIdentity refuses a store of another workspace
// (store_foreign_workspace) or without an identity (store_corrupt).
func (s *SQLite) checkIdentity(ctx context.Context, conn *sql.Conn) error {
	var id string
	err := conn.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'workspace_id'").Scan(&id)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			return mapErr(s.path, err, "read the workspace identity")
		}
		return corrupt(s.path, "it has no workspace identity").Wrap(err)
	}
	if id != s.workspaceID {
		return protocol.Errorf(protocol.ReasonStoreForeignWorkspace,
			"the store at %s belongs to workspace %s, not %s; it was left untouched", s.path, id, s.workspaceID).
			With("storeWorkspaceId", id)
	}
	return nil
}

// laterIndexes are indexes of schema version 1 that stores created by
// earlier builds lack; each name maps to its statement (schemaSQL has
// the same). They change no record, so the schema version stays.
var laterIndexes = map[string]string{
	"receipts_queued": "CREATE INDEX IF NOT EXISTS receipts_queued ON receipts(recipient_participant_id, state, sent_at DESC, message_id DESC, kind) WHERE state = 'queued'",
}

// addLaterIndexes creates the laterIndexes a store lacks. Finding them
// present costs one read; creating one is tried for at most a quarter of
// a second, and a store too busy for that is read without it this time
// (the queries are the same, only slower).
func (s *SQLite) addLaterIndexes(ctx context.Context, conn *sql.Conn) {
	for name, stmt := range laterIndexes {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?", name).Scan(&n); err != nil || n > 0 {
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		if _, err := conn.ExecContext(ictx, stmt); err == nil {
			s.wrote.Store(true)
		}
		cancel()
	}
}

// setWAL switches a new database to WAL mode. SQLite answers SQLITE_BUSY at
// once, without waiting in the busy handler, while another connection is
// switching the same new file; so retry until ctx runs out.
func setWAL(ctx context.Context, path string, conn *sql.Conn) error {
	for {
		var mode string
		err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil && (mode == "wal" || mode == "memory") {
			return nil
		}
		var se *sqlite.Error
		busy := err == nil || errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
		if !busy {
			return mapErr(path, err, "set WAL mode")
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("journal mode stayed %q", mode)
			}
			return busyError(fmt.Errorf("set WAL mode: %w", err))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func readVersion(ctx context.Context, path string, conn *sql.Conn) (version, tables int, err error) {
	// One statement, so one snapshot: read separately, a store another
	// process creates in between would show version 0 next to its tables
	// and be taken for someone else's database.
	err = conn.QueryRowContext(ctx, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)").Scan(&version, &tables)
	if err != nil {
		return 0, 0, mapErr(path, err, "read the schema version")
	}
	if version == 0 && tables > 0 {
		version = foreignTables
	}
	return version, tables, nil
}

// foreignTables is the version readVersion reports for a database that has
// tables but no schema version: someone else's database, not an acc store.
const foreignTables = -1

func withDefaultDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultBusyWait)
}

// setBusy makes SQLite's own busy handler wait until the context deadline.
func setBusy(ctx context.Context, path string, conn *sql.Conn) error {
	ms := int64(DefaultBusyWait / time.Millisecond)
	if d, ok := ctx.Deadline(); ok {
		ms = time.Until(d).Milliseconds()
		if ms < 1 {
			return busyError(context.DeadlineExceeded)
		}
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", ms)); err != nil {
		return mapErr(path, err, "set the busy timeout")
	}
	return nil
}

func busyError(cause error) error {
	return protocol.Errorf(protocol.ReasonStoreBusy, "the store stayed busy with other writers until the deadline; try again").Wrap(cause)
}

// mapErr turns driver errors on the store at path into acc errors
// (docs/exit-codes.md): busy and interrupted waits are store_busy (exit 3);
// "not a database" and corruption store_corrupt, a full disk store_full,
// a file or directory that cannot be opened or written store_unwritable and
// any other I/O error store_io_error (exit 4), each naming path and the fix.
// Anything else is returned wrapped (exit 1).
func mapErr(path string, err error, doing string) error {
	if err == nil {
		return nil
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return busyError(err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT:
			return busyError(err)
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return corrupt(path, fmt.Sprintf("it is not a readable acc database (%s)", se.Error())).Wrap(err)
		case sqlite3.SQLITE_FULL:
			return storeFull(path, doing, se.Error()).Wrap(err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH:
			return unwritable(path, doing, se.Error()).Wrap(err)
		case sqlite3.SQLITE_IOERR:
			return ioError(path, doing, se.Error()).Wrap(err)
		}
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// fullDisk reports whether err is SQLite's SQLITE_FULL.
func fullDisk(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// Update implements Store. ctx bounds only the wait for the write lock
// (BEGIN IMMEDIATE under SQLite's busy handler, store_busy when it runs
// out): once the lock is held, fn and the COMMIT run to their end whatever
// ctx does, so a deadline can never turn a committed write into a refusal
// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed). A COMMIT
// that itself fails leaves the outcome unknown — outcome_unknown (exit 4),
// wrapping ErrOutcomeUnknown — except on a full disk, where SQLite stops
// before the commit mark and rolls back: store_full (exit 4), nothing
// recorded.
func (s *SQLite) Update(ctx context.Context, fn func(Tx) error) (err error) {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return mapErr(s.path, err, "wait for the store")
	}
	defer conn.Close()
	release, err := s.queueForWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := setBusy(ctx, s.path, conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return mapErr(s.path, err, "begin a write")
	}
	// The lock is held: from here on nothing is cut short by ctx. The
	// driver reports ctx's end as the error of a statement that was running
	// then, even one that completed, such as a COMMIT already on disk.
	held := context.WithoutCancel(ctx)
	done := false
	defer func() {
		if !done {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	tx := &sqlTx{ctx: held, q: conn, path: s.path, ws: s.workspaceID, lastSeq: -1}
	if err := fn(tx); err != nil {
		return err
	}
	Failpoint(FailBeforeCommit)
	stallFailpoint(ctx, FailStallBeforeCommit)
	if err := commit(held, conn); err != nil {
		fault := mapErr(s.path, err, "commit")
		if fullDisk(err) {
			// SQLite writes a commit's pages to the WAL in order and
			// marks the commit on the last one; a full disk stops the
			// writing before that mark is complete, and SQLite rolls the
			// transaction back: nothing was recorded
			// (docs/design.md#durability-and-checkpoints).
			return fault
		}
		// Any other failure (an I/O error, the fsync itself) may come after
		// the commit mark reached the disk: the store fault is named inside
		// the outcome_unknown message, with its fix.
		return outcomeUnknown(fault)
	}
	done = true
	s.wrote.Store(true)
	Failpoint(FailAfterCommit)
	stallFailpoint(ctx, FailStallAfterCommit)
	s.checkpointAfterCommit(conn)
	return nil
}

// ErrOutcomeUnknown is wrapped by the outcome_unknown error Update returns
// when its COMMIT failed: the write may or may not be in the store.
var ErrOutcomeUnknown = errors.New("storage: the commit failed; whether it was recorded is unknown")

func outcomeUnknown(cause error) error {
	return protocol.Errorf(protocol.ReasonOutcomeUnknown,
		"the store failed while committing this write (%v), so acc cannot tell whether it was recorded", cause).
		Wrap(fmt.Errorf("%w: %w", ErrOutcomeUnknown, cause))
}

// View implements Store.
func (s *SQLite) View(ctx context.Context, fn func(ReadTx) error) error {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return mapErr(s.path, err, "wait for the store")
	}
	defer conn.Close()
	if err := setBusy(ctx, s.path, conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return mapErr(s.path, err, "begin a read")
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	return fn(&sqlTx{ctx: ctx, q: conn, path: s.path, ws: s.workspaceID, lastSeq: -1, readOnly: true})
}

// Fingerprint returns a SHA-256 over every row of every table, in primary
// key order. Two equal fingerprints mean the store content is identical; tests
// use it to prove that a refused command changed nothing.
func (s *SQLite) Fingerprint(ctx context.Context) (string, error) {
	h := sha256.New()
	err := s.View(ctx, func(rt ReadTx) error {
		tx := rt.(*sqlTx)
		for _, t := range allTables {
			rows, err := tx.q.QueryContext(ctx, "SELECT * FROM "+t+" ORDER BY 1, 2")
			if err != nil {
				return err
			}
			if err := hashRows(h, t, rows); err != nil {
				return err
			}
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// hashRows writes table's name and then each of rows, formatted, to w, and
// closes rows.
func hashRows(w io.Writer, table string, rows *sql.Rows) error {
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	fmt.Fprintf(w, "table %s\n", table)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Fprintf(w, "%v\n", vals)
	}
	return rows.Err()
}

// DurableRowCount returns the number of rows in the durable-history tables
// (workspace, participants, sessions, intents, claims, messages, receipts,
// events): zero for a room that was never materialised.
func (s *SQLite) DurableRowCount(ctx context.Context) (int64, error) {
	var total int64
	err := s.View(ctx, func(rt ReadTx) error {
		tx := rt.(*sqlTx)
		for _, t := range durableTables {
			var n int64
			if err := tx.q.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// IntegrityCheck runs SQLite's integrity_check and returns its findings
// ("ok" when healthy).
func (s *SQLite) IntegrityCheck(ctx context.Context) ([]string, error) {
	out, err := s.checkLines(ctx, "PRAGMA integrity_check")
	return out, mapErr(s.path, err, "check integrity")
}

// checkLines runs a checking pragma (integrity_check, quick_check) and
// returns the lines it reports ("ok" alone when healthy); the error is the
// driver's, not yet mapped.
//
// For a store file the pragma runs on a connection of its own, opened for
// it: FTS5's check of the search index reads the index layout this
// handle's connection cached, which is not refreshed when other processes
// have merged the index since (checked with acc's own processes writing:
// a connection kept open across their sends reported "corruption" in an
// index a new connection found whole, and its searches were right).
func (s *SQLite) checkLines(ctx context.Context, pragma string) ([]string, error) {
	var out []string
	run := func(q querier) error {
		rows, err := q.QueryContext(ctx, pragma)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			out = append(out, line)
		}
		return rows.Err()
	}
	if s.path == "" {
		err := s.View(ctx, func(rt ReadTx) error { return run(rt.(*sqlTx).q) })
		return out, err
	}
	db, err := sql.Open(driverName, storeDSN(s.path))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	return out, run(db)
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlTx struct {
	ctx context.Context
	q   querier
	// path is the SQLite store file, for error messages ("" in memory).
	path string
	// pg is the PostgreSQL store this transaction runs on, nil on SQLite:
	// it maps the server's errors, and q then translates each statement
	// (pgQuerier).
	pg       *Postgres
	ws       string
	lastSeq  int64
	readOnly bool
	// damaged collects, once each, the records lists and scans left out
	// because they do not decode (see skipDamaged).
	damaged []DamagedRecord
}

// skipDamaged decides what a list or scan does with a row of table whose
// record does not decode (err, a store_corrupt error): in a read
// transaction, and for claims in any transaction, the row is left out and
// named in Damaged, so one damaged record does not take a whole listing
// down (docs/design.md#damaged-records); a write transaction's other lists stay
// whole or fail, since a write decided on a partial list could be wrong.
// claim carries a damaged claim row's own columns. It returns err when the
// scan must fail.
func (t *sqlTx) skipDamaged(table, key string, err error, claim *DamagedClaim) error {
	if !t.readOnly && table != "claims" {
		return err
	}
	for _, d := range t.damaged {
		if d.Table == table && d.Key == key {
			return nil
		}
	}
	t.damaged = append(t.damaged, DamagedRecord{Table: table, Key: key, Problem: damageText(err), Claim: claim})
	return nil
}

func (t *sqlTx) Damaged() []DamagedRecord { return slices.Clone(t.damaged) }

// mapErr maps a driver error of this transaction's engine to acc's errors
// (mapErr for SQLite, pgMapErr for PostgreSQL).
func (t *sqlTx) mapErr(err error, doing string) error {
	if t.pg != nil {
		return t.pg.mapErr(err, doing)
	}
	return mapErr(t.path, err, doing)
}

func table(a Area, name string) string {
	if a == Ephemeral {
		return "eph_" + name
	}
	return name
}

type validator interface{ Validate() error }

func decodeRecord[T any](what, data string) (*T, error) {
	v := new(T)
	if err := protocol.DecodeRecord(what, []byte(data), v); err != nil {
		return nil, protocol.Errorf(protocol.ReasonStoreCorrupt, "stored %s record is unreadable: %v; `acc doctor` names the damaged record(s), and the fix is to restore the store from a backup", what, err).Wrap(err)
	}
	if val, ok := any(v).(validator); ok {
		if err := val.Validate(); err != nil {
			return nil, protocol.Errorf(protocol.ReasonStoreCorrupt, "stored %s record is invalid: %v; `acc doctor` names the damaged record(s), and the fix is to restore the store from a backup", what, err).Wrap(err)
		}
	}
	return v, nil
}

func encodeRecord(v validator) (string, error) {
	if err := v.Validate(); err != nil {
		return "", err
	}
	b, err := protocol.MarshalCompact(v)
	return string(b), err
}

func (t *sqlTx) getOne(what, query string, args ...any) (string, bool, error) {
	var rec string
	err := t.q.QueryRowContext(t.ctx, query, args...).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, t.mapErr(err, "read "+what)
	}
	return rec, true, nil
}

func getRecord[T any](t *sqlTx, what, query string, args ...any) (*T, error) {
	rec, ok, err := t.getOne(what, query, args...)
	if err != nil || !ok {
		return nil, err
	}
	return decodeRecord[T](what, rec)
}

func listRecords[T any](t *sqlTx, what, table, query string, args ...any) ([]T, error) {
	var out []T
	err := scanRecords(t, what, table, query, args, func(v T) bool { out = append(out, v); return true })
	return out, err
}

// strictRecords lists the one-column record rows of query and fails whole
// with store_corrupt on one that does not decode: for the records of one
// message, which a command needs every one of.
func strictRecords[T any](t *sqlTx, what, query string, args ...any) ([]T, error) {
	rows, err := t.q.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, t.mapErr(err, "read "+what+"s")
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, t.mapErr(err, "read "+what+"s")
		}
		v, err := decodeRecord[T](what, rec)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, t.mapErr(rows.Err(), "read "+what+"s")
}

func (t *sqlTx) exec(doing, query string, args ...any) error {
	if t.readOnly {
		return errors.New("storage: write inside View")
	}
	_, err := t.q.ExecContext(t.ctx, query, args...)
	return t.mapErr(err, doing)
}

func (t *sqlTx) Workspace() (*protocol.Workspace, error) {
	return getRecord[protocol.Workspace](t, "workspace", "SELECT record FROM workspace LIMIT 1")
}

func (t *sqlTx) Participant(a Area, id string) (*protocol.Participant, error) {
	return getRecord[protocol.Participant](t, "participant", "SELECT record FROM "+table(a, "participants")+" WHERE participant_id = ?", id)
}

func (t *sqlTx) Participants(a Area) ([]protocol.Participant, error) {
	return listRecords[protocol.Participant](t, "participant", table(a, "participants"), "SELECT participant_id, record FROM "+table(a, "participants")+" ORDER BY participant_id")
}

func (t *sqlTx) Session(a Area, id string) (*protocol.Session, error) {
	return getRecord[protocol.Session](t, "session", "SELECT record FROM "+table(a, "sessions")+" WHERE session_id = ?", id)
}

func (t *sqlTx) Sessions(a Area, openOnly bool) ([]protocol.Session, error) {
	q := "SELECT session_id, record FROM " + table(a, "sessions")
	if openOnly {
		q += " WHERE state = 'open'"
	}
	return listRecords[protocol.Session](t, "session", table(a, "sessions"), q+" ORDER BY started_at, session_id")
}

func (t *sqlTx) Intent(a Area, sessionID string) (*protocol.Intent, error) {
	return getRecord[protocol.Intent](t, "intent", "SELECT record FROM "+table(a, "intents")+" WHERE session_id = ?", sessionID)
}

func (t *sqlTx) Intents(a Area) ([]protocol.Intent, error) {
	return listRecords[protocol.Intent](t, "intent", table(a, "intents"), "SELECT session_id, record FROM "+table(a, "intents")+" ORDER BY session_id")
}

func (t *sqlTx) Claim(id string) (*protocol.Claim, error) {
	return getRecord[protocol.Claim](t, "claim", "SELECT record FROM claims WHERE claim_id = ?", id)
}

func (t *sqlTx) Claims() ([]protocol.Claim, error) {
	rows, err := t.q.QueryContext(t.ctx, "SELECT claim_id, owner_session_id, resource, expires_at, record FROM claims ORDER BY claim_id")
	if err != nil {
		return nil, t.mapErr(err, "scan claims")
	}
	defer rows.Close()
	var out []protocol.Claim
	for rows.Next() {
		var dc DamagedClaim
		var rec string
		if err := rows.Scan(&dc.ClaimID, &dc.OwnerSessionID, &dc.Resource, &dc.ExpiresAt, &rec); err != nil {
			return nil, t.mapErr(err, "scan claims")
		}
		c, err := decodeRecord[protocol.Claim]("claim", rec)
		if err != nil {
			if err := t.skipDamaged("claims", dc.ClaimID, err, &dc); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, *c)
	}
	return out, t.mapErr(rows.Err(), "scan claims")
}

func (t *sqlTx) Message(id string) (*protocol.Message, error) {
	return getRecord[protocol.Message](t, "message", "SELECT record FROM messages WHERE message_id = ?", id)
}

func (t *sqlTx) MessageByClientKey(from, key string) (*protocol.Message, error) {
	return getRecord[protocol.Message](t, "message", "SELECT record FROM messages WHERE from_participant_id = ? AND client_message_id = ?", from, key)
}

func (t *sqlTx) Receipt(messageID, recipient string) (*protocol.Receipt, error) {
	return getRecord[protocol.Receipt](t, "receipt", "SELECT record FROM receipts WHERE message_id = ? AND recipient_participant_id = ?", messageID, recipient)
}

func (t *sqlTx) ReceiptsByMessage(messageID string) ([]protocol.Receipt, error) {
	return strictRecords[protocol.Receipt](t, "receipt", "SELECT record FROM receipts WHERE message_id = ? ORDER BY recipient_participant_id", messageID)
}

func (t *sqlTx) ScanInbox(q InboxQuery, fn func(InboxRow) bool) error {
	args := []any{q.Recipient}
	if q.Kind != "" {
		args = append(args, q.Kind)
	}
	if q.BeforeMessageID != "" {
		args = append(args, q.BeforeSentAt, q.BeforeMessageID)
	}
	rows, err := t.scanQuery(inboxQuery(q), args...)
	if err != nil {
		return t.mapErr(err, "scan the inbox")
	}
	return t.scanRows(rows, "scan the inbox", fn)
}

// inboxQuery is ScanInbox's statement for q; its arguments are the
// recipient, then the kind when q.Kind is set, then the cursor when
// q.BeforeMessageID is set.
func inboxQuery(q InboxQuery) string {
	var where []string
	where = append(where, "r.recipient_participant_id = ?")
	switch {
	case q.QueuedOnly && q.ListableOnly:
		// A queued receipt is listable exactly when it heads its decision
		// group; said so, the partial index receipts_queued serves it.
		where = append(where, "r.state = 'queued'", "r.decision_head = 1")
	case q.QueuedOnly:
		where = append(where, "r.state = 'queued'")
	case q.ListableOnly:
		where = append(where, "r.listable = 1")
	}
	if q.Kind != "" {
		where = append(where, "r.kind = ?")
	}
	if q.BeforeMessageID != "" {
		where = append(where, "(r.sent_at, r.message_id) < (?, ?)")
	}
	return "SELECT m.record, r.record, r.message_id, r.recipient_participant_id FROM receipts r JOIN messages m ON m.message_id = r.message_id WHERE " +
		strings.Join(where, " AND ") + " ORDER BY r.sent_at DESC, r.message_id DESC"
}

// decodeRow decodes one row of a message joined with its receipt for
// recipient; a row whose message or receipt does not decode is nil, named
// by skipDamaged, or an error where it must fail.
func (t *sqlTx) decodeRow(mrec, rrec, messageID, recipient string) (*InboxRow, error) {
	m, err := decodeRecord[protocol.Message]("message", mrec)
	if err != nil {
		return nil, t.skipDamaged("messages", messageID, err, nil)
	}
	r, err := decodeRecord[protocol.Receipt]("receipt", rrec)
	if err != nil {
		return nil, t.skipDamaged("receipts", messageID+"/"+recipient, err, nil)
	}
	return &InboxRow{Message: *m, Receipt: *r}, nil
}

// queryOwed lists what a recipient owes; it walks the partial index
// receipts_owed (see TestQueriesUseTheirIndexes).
const queryOwed = `SELECT m.record, r.record, r.message_id, r.recipient_participant_id FROM receipts r
		JOIN messages m ON m.message_id = r.message_id
		WHERE r.recipient_participant_id = ? AND r.state <> 'acknowledged' AND r.obligation <> 'none' AND r.decision_head = 1
		ORDER BY r.sent_at DESC, r.message_id DESC`

// queryOutstanding lists what a sender is still owed (replaced decisions
// excluded: they leave attention, docs/protocol.md#decisions). CROSS JOIN keeps
// receipts as the outer loop, so the partial index receipts_outstanding
// drives the query rather than the sender's history.
const queryOutstanding = `SELECT m.record, r.record, r.message_id, r.recipient_participant_id FROM receipts r
		CROSS JOIN messages m ON m.message_id = r.message_id
		WHERE r.state <> 'acknowledged' AND r.obligation <> 'none' AND r.decision_head = 1 AND m.from_participant_id = ?
		ORDER BY r.message_id, r.recipient_participant_id`

func (t *sqlTx) ScanOwedSeen(recipient string, fn func(InboxRow) bool) error {
	rows, err := t.scanQuery(strings.Replace(queryOwed, "AND r.decision_head = 1", "AND r.decision_head = 1 AND r.state <> 'queued'", 1), recipient)
	if err != nil {
		return t.mapErr(err, "scan owed receipts")
	}
	return t.scanRows(rows, "scan", fn)
}

func (t *sqlTx) ScanOwed(recipient string, fn func(InboxRow) bool) error {
	rows, err := t.scanQuery(queryOwed, recipient)
	if err != nil {
		return t.mapErr(err, "scan owed receipts")
	}
	return t.scanRows(rows, "scan", fn)
}

func (t *sqlTx) ScanOutstanding(from string, fn func(InboxRow) bool) error {
	rows, err := t.scanQuery(queryOutstanding, from)
	if err != nil {
		return t.mapErr(err, "scan outstanding receipts")
	}
	return t.scanRows(rows, "scan", fn)
}

// scanRows calls fn with each decoded row of rows (message record, receipt
// record, message id, recipient), skipping a damaged one (decodeRow), until
// fn returns false; doing names the scan in an error.
func (t *sqlTx) scanRows(rows rowSource, doing string, fn func(InboxRow) bool) error {
	defer rows.Close()
	for rows.Next() {
		var mrec, rrec, id, recipient string
		if err := rows.Scan(&mrec, &rrec, &id, &recipient); err != nil {
			return t.mapErr(err, doing)
		}
		row, err := t.decodeRow(mrec, rrec, id, recipient)
		if err != nil {
			return err
		}
		if row == nil {
			continue
		}
		if !fn(*row) {
			return nil
		}
	}
	return t.mapErr(rows.Err(), doing)
}

func (t *sqlTx) ScanMessages(q MessageQuery, fn func(protocol.Message) bool) error {
	where := []string{"1 = 1"}
	var args []any
	if q.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, q.Kind)
	}
	if q.HeadsOnly {
		where = append(where, "decision_head = 1")
	}
	if q.ThreadID != "" {
		where = append(where, "thread_id = ?")
		args = append(args, q.ThreadID)
	}
	if q.BeforeMessageID != "" {
		where = append(where, "(sent_at, message_id) < (?, ?)")
		args = append(args, q.BeforeSentAt, q.BeforeMessageID)
	}
	return scanRecords(t, "message", "messages", "SELECT message_id, record FROM messages WHERE "+strings.Join(where, " AND ")+
		" ORDER BY sent_at DESC, message_id DESC", args, fn)
}

func (t *sqlTx) ScanReceipts(fn func(protocol.Receipt) bool) error {
	return scanRecords(t, "receipt", "receipts", "SELECT message_id || '/' || recipient_participant_id, record FROM receipts ORDER BY message_id, recipient_participant_id", nil, fn)
}

// scanRecords streams the (key, record) rows of query over table, decoded
// and validated, to fn until it returns false; a record that does not
// decode goes to skipDamaged under its key.
func scanRecords[T any](t *sqlTx, what, table, query string, args []any, fn func(T) bool) error {
	rows, err := t.scanQuery(query, args...)
	if err != nil {
		return t.mapErr(err, "scan "+what+"s")
	}
	defer rows.Close()
	for rows.Next() {
		var key, rec string
		if err := rows.Scan(&key, &rec); err != nil {
			return t.mapErr(err, "scan "+what+"s")
		}
		v, err := decodeRecord[T](what, rec)
		if err != nil {
			if err := t.skipDamaged(table, key, err, nil); err != nil {
				return err
			}
			continue
		}
		if !fn(*v) {
			return nil
		}
	}
	return t.mapErr(rows.Err(), "scan "+what+"s")
}

// queryDecisionGroup walks decision_links both ways from one decision (the
// primary key serves from → to, decision_links_by_target to → from); UNION
// keeps each member once, so the walk ends.
const queryDecisionGroup = `WITH RECURSIVE grp(id) AS (
		SELECT ?
		UNION SELECT l.to_id FROM decision_links l JOIN grp ON l.from_id = grp.id
		UNION SELECT l.from_id FROM decision_links l JOIN grp ON l.to_id = grp.id
	)
	SELECT from_id, to_id, action FROM decision_links WHERE from_id IN (SELECT id FROM grp) ORDER BY from_id, to_id`

func (t *sqlTx) DecisionGroup(messageID string) ([]DecisionLink, error) {
	q := queryDecisionGroup
	if t.pg != nil {
		q = pgQueryDecisionGroup
	}
	rows, err := t.q.QueryContext(t.ctx, q, messageID)
	if err != nil {
		return nil, t.mapErr(err, "read a decision group")
	}
	defer rows.Close()
	var out []DecisionLink
	for rows.Next() {
		var l DecisionLink
		if err := rows.Scan(&l.From, &l.To, &l.Action); err != nil {
			return nil, t.mapErr(err, "read a decision group")
		}
		out = append(out, l)
	}
	return out, t.mapErr(rows.Err(), "read a decision group")
}

func (t *sqlTx) Events(after int64, limit int) ([]protocol.Event, error) {
	return listRecords[protocol.Event](t, "event", "events", "SELECT sequence, record FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?", after, limit)
}

func (t *sqlTx) LastSequence() (int64, error) {
	if t.lastSeq >= 0 {
		return t.lastSeq, nil
	}
	var n int64
	if err := t.q.QueryRowContext(t.ctx, "SELECT coalesce(max(sequence), 0) FROM events").Scan(&n); err != nil {
		return 0, t.mapErr(err, "read the last sequence")
	}
	if !t.readOnly {
		t.lastSeq = n
	}
	return n, nil
}

func (t *sqlTx) Counts() (Counts, error) {
	var c Counts
	// Both are O(1): the message count is kept in meta by InsertMessage, and
	// the last sequence is the events table's largest key.
	// A store written before the count was kept has no row: count instead.
	err := t.q.QueryRowContext(t.ctx, "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'message_count'), (SELECT count(*) FROM messages)), (SELECT coalesce(max(sequence), 0) FROM events)").Scan(&c.Messages, &c.Events)
	return c, t.mapErr(err, "count")
}

func (t *sqlTx) Binding(key string) (*SessionBinding, error) {
	rec, ok, err := t.getOne("binding", "SELECT record FROM session_bindings WHERE binding_key = ?", key)
	if err != nil || !ok {
		return nil, err
	}
	var b SessionBinding
	if err := protocol.DecodeStrict("session binding", []byte(rec), &b); err != nil {
		return nil, protocol.Errorf(protocol.ReasonStoreCorrupt, "stored session binding is unreadable: %v", err)
	}
	return &b, nil
}

func (t *sqlTx) Bindings() ([]SessionBinding, error) {
	rows, err := t.q.QueryContext(t.ctx, "SELECT record FROM session_bindings ORDER BY binding_key")
	if err != nil {
		return nil, t.mapErr(err, "list bindings")
	}
	defer rows.Close()
	var out []SessionBinding
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, t.mapErr(err, "list bindings")
		}
		var b SessionBinding
		if err := protocol.DecodeStrict("session binding", []byte(rec), &b); err != nil {
			return nil, protocol.Errorf(protocol.ReasonStoreCorrupt, "stored session binding is unreadable: %v", err)
		}
		out = append(out, b)
	}
	return out, t.mapErr(rows.Err(), "list bindings")
}

func (t *sqlTx) checkWorkspace(kind, id string) error {
	if id != t.ws {
		return protocol.Errorf(protocol.ReasonInvalidRecord, "%s belongs to workspace %s, not this store's %s", kind, id, t.ws)
	}
	return nil
}

func (t *sqlTx) PutWorkspace(w *protocol.Workspace) error {
	if err := t.checkWorkspace("workspace", w.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(w)
	if err != nil {
		return err
	}
	return t.exec("write the workspace", "INSERT OR REPLACE INTO workspace(workspace_id, record) VALUES (?, ?)", w.WorkspaceID, rec)
}

func (t *sqlTx) PutParticipant(a Area, p *protocol.Participant) error {
	if err := t.checkWorkspace("participant", p.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(p)
	if err != nil {
		return err
	}
	return t.exec("write a participant", "INSERT OR REPLACE INTO "+table(a, "participants")+"(participant_id, record) VALUES (?, ?)", p.ParticipantID, rec)
}

func (t *sqlTx) DeleteParticipant(a Area, id string) error {
	return t.exec("delete a participant", "DELETE FROM "+table(a, "participants")+" WHERE participant_id = ?", id)
}

func (t *sqlTx) PutSession(a Area, s *protocol.Session) error {
	if err := t.checkWorkspace("session", s.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(s)
	if err != nil {
		return err
	}
	return t.exec("write a session", "INSERT OR REPLACE INTO "+table(a, "sessions")+"(session_id, participant_id, state, started_at, record) VALUES (?, ?, ?, ?, ?)",
		s.SessionID, s.ParticipantID, s.State, s.StartedAt, rec)
}

func (t *sqlTx) DeleteSession(a Area, id string) error {
	return t.exec("delete a session", "DELETE FROM "+table(a, "sessions")+" WHERE session_id = ?", id)
}

func (t *sqlTx) PutIntent(a Area, i *protocol.Intent) error {
	if err := t.checkWorkspace("intent", i.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(i)
	if err != nil {
		return err
	}
	return t.exec("write an intent", "INSERT OR REPLACE INTO "+table(a, "intents")+"(session_id, record) VALUES (?, ?)", i.SessionID, rec)
}

func (t *sqlTx) DeleteIntent(a Area, sessionID string) error {
	return t.exec("delete an intent", "DELETE FROM "+table(a, "intents")+" WHERE session_id = ?", sessionID)
}

func (t *sqlTx) PutClaim(c *protocol.Claim) error {
	if err := t.checkWorkspace("claim", c.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(c)
	if err != nil {
		return err
	}
	return t.exec("write a claim", "INSERT OR REPLACE INTO claims(claim_id, owner_session_id, resource, expires_at, record) VALUES (?, ?, ?, ?, ?)",
		c.ClaimID, c.OwnerSessionID, c.Resource, c.ExpiresAt, rec)
}

func (t *sqlTx) DeleteClaim(id string) error {
	return t.exec("delete a claim", "DELETE FROM claims WHERE claim_id = ?", id)
}

func (t *sqlTx) InsertMessage(m *protocol.Message) error { return t.insertMessage(m, true) }

// insertMessage is InsertMessage; index false leaves the search index out,
// for the benchmark that measures what indexing adds to a send.
func (t *sqlTx) insertMessage(m *protocol.Message, index bool) error {
	if err := t.checkWorkspace("message", m.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(m)
	if err != nil {
		return err
	}
	if err := t.exec("record a message", "INSERT INTO messages(message_id, thread_id, from_participant_id, client_message_id, kind, obligation, sent_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		m.MessageID, m.ThreadID, m.FromParticipantID, m.ClientMessageID, m.Kind, m.Obligation, m.SentAt, rec); err != nil {
		return err
	}
	if index {
		if err := t.indexMessage(m); err != nil {
			return err
		}
	}
	if dc := m.DecisionChange; dc != nil {
		for _, target := range dc.MessageIDs {
			if err := t.exec("link a decision change", "INSERT INTO decision_links(from_id, to_id, action) VALUES (?, ?, ?)", m.MessageID, target, dc.Action); err != nil {
				return err
			}
			if err := t.MarkDecisionReplaced(target); err != nil {
				return err
			}
		}
	}
	res, err := t.q.ExecContext(t.ctx, "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'message_count'")
	if err != nil {
		return t.mapErr(err, "count a message")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// A store written before the count was kept: start it, once.
		return t.exec("count a message", "INSERT INTO meta(key, value) SELECT 'message_count', CAST(count(*) AS TEXT) FROM messages")
	}
	return nil
}

func (t *sqlTx) MarkDecisionReplaced(messageID string) error {
	if err := t.exec("mark a decision replaced", "UPDATE messages SET decision_head = 0 WHERE message_id = ? AND kind = 'decision'", messageID); err != nil {
		return err
	}
	return t.exec("mark a decision replaced", "UPDATE receipts SET decision_head = 0 WHERE message_id = ? AND kind = 'decision'", messageID)
}

func (t *sqlTx) PutReceipt(r *protocol.Receipt) error {
	if err := t.checkWorkspace("receipt", r.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(r)
	if err != nil {
		return err
	}
	if t.readOnly {
		return errors.New("storage: write inside View")
	}
	res, err := t.q.ExecContext(t.ctx, `INSERT INTO receipts(message_id, recipient_participant_id, state, sent_at, kind, obligation, decision_head, record)
		SELECT m.message_id, ?, ?, m.sent_at, m.kind, m.obligation, m.decision_head, ? FROM messages m WHERE m.message_id = ?
		ON CONFLICT (message_id, recipient_participant_id) DO UPDATE SET state = excluded.state, record = excluded.record`,
		r.RecipientParticipantID, r.State, rec, r.MessageID)
	if err != nil {
		return t.mapErr(err, "write a receipt")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return protocol.Errorf(protocol.ReasonUnknownMessage, "receipt for unknown message %s", r.MessageID)
	}
	return nil
}

func (t *sqlTx) AppendEvent(e *protocol.Event) error {
	last, err := t.LastSequence()
	if err != nil {
		return err
	}
	next := last + 1
	e.SchemaVersion = protocol.SchemaVersion
	e.Sequence = protocol.FormatSequence(next)
	if e.EventID == "" {
		e.EventID = protocol.NewID(protocol.KindEvent)
	}
	if e.WorkspaceID == "" {
		e.WorkspaceID = t.ws
	}
	if e.Payload == nil {
		e.Payload = map[string]any{}
	}
	if err := t.checkWorkspace("event", e.WorkspaceID); err != nil {
		return err
	}
	rec, err := encodeRecord(e)
	if err != nil {
		return err
	}
	if err := t.exec("append an event", "INSERT INTO events(sequence, event_id, type, record) VALUES (?, ?, ?, ?)", next, e.EventID, e.Type, rec); err != nil {
		return err
	}
	t.lastSeq = next
	return nil
}

func (t *sqlTx) PutBinding(b *SessionBinding) error {
	rec, err := protocol.MarshalCompact(b)
	if err != nil {
		return err
	}
	return t.exec("write a binding", "INSERT OR REPLACE INTO session_bindings(binding_key, session_id, record) VALUES (?, ?, ?)", b.Key, b.SessionID, string(rec))
}

func (t *sqlTx) DeleteBinding(key string) error {
	return t.exec("delete a binding", "DELETE FROM session_bindings WHERE binding_key = ?", key)
}
