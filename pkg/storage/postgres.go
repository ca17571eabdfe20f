package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Postgres is the PostgreSQL implementation of Store: one room is one
// schema of the database a URL names, holding the same tables as a SQLite
// store (docs/protocol.md#storage-on-postgresql,
// docs/decisions.md#25-rooms-across-machines). Writers of a
// room are serialised by a transaction-scoped advisory lock, readers see one
// snapshot, and every committed write notifies the room's channel.
type Postgres struct {
	db          *sql.DB
	workspaceID string
	schema      string
	// version is the room's schema version as opened (SchemaVersion).
	version int
	// pendingMissing is set by checkMeta when the room lacks
	// search_pending (a room of schema version 3 made before it had one).
	pendingMissing bool
	// described is the URL without its password, for messages.
	described string
	// secret is the password the URL carries, "" when none: scrubbed from
	// every error text.
	secret string
	// writeKey and createKey are the advisory lock keys of the room's
	// writers and of its creation.
	writeKey, createKey int64
	offset              time.Duration
	// cfg is the parsed connection configuration, for Listen.
	cfg *pgx.ConnConfig
}

var _ Store = (*Postgres)(nil)

// Clock is implemented by a store that keeps its own time: a room on
// PostgreSQL takes lease and expiry times from the database clock, so
// machines with skewed clocks agree on who holds what
// (docs/decisions.md#25-rooms-across-machines).
type Clock interface {
	// Now is the store's current time, to the millisecond, in UTC.
	Now() time.Time
}

// PostgresOptions tune OpenPostgres.
type PostgresOptions struct {
	// NoCreate makes OpenPostgres return ErrRoomNotCreated, creating
	// nothing, when the room has no tables on the server yet.
	NoCreate bool
	// NoMigrate opens a room of schema version 2 as it is instead of
	// upgrading it (acc doctor's open): SchemaVersion then says 2, and the
	// handle must not be searched or written.
	NoMigrate bool
}

// ErrRoomNotCreated is returned (wrapped) by OpenPostgres with NoCreate when
// the room's tables do not exist yet on the server.
var ErrRoomNotCreated = errors.New("storage: the room has no tables on the PostgreSQL server yet")

// PostgresSchema is the schema that holds workspaceID's room: "acc_" and the
// first 24 hex digits of the SHA-256 of the id (28 bytes, a valid
// identifier whatever the id is).
func PostgresSchema(workspaceID string) string {
	sum := sha256.Sum256([]byte(workspaceID))
	return "acc_" + hex.EncodeToString(sum[:12])
}

// pgMaxConns bounds one process's connections: a command needs one at a
// time, a long-lived surface a few; hundreds of acc processes may share a
// server.
const pgMaxConns = 4

// OpenPostgres opens the room of workspaceID on the PostgreSQL server that
// url names (postgres:// or postgresql://, or a keyword/value string; the
// password, when not in it, comes from PGPASSWORD, the password file or a
// service file, as libpq would find it; TLS per sslmode). Without
// o.NoCreate a room that does not exist yet is created, tables and all, in
// one transaction that concurrent first opens wait for. The schema version
// and workspace identity are checked on every open, and a room that fails
// the check is left untouched.
//
// Errors (*protocol.Error): store_unreachable (exit 3) when the server
// cannot be reached; store_access_denied (exit 4) when it refuses the role;
// store_version_unknown (exit 4) for another schema version;
// store_foreign_workspace (exit 4) for a room of another workspace id;
// store_corrupt (exit 4) for a schema of acc's name without acc's tables;
// store_server_unsupported (exit 4) for a server older than PostgreSQL 12
// (MinServerVersionNum); store_busy (exit 3) when a concurrent creation outlasts ctx. With
// NoCreate and no room: an error wrapping ErrRoomNotCreated.
func OpenPostgres(ctx context.Context, rawURL, workspaceID string, o PostgresOptions) (*Postgres, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonStoreUnreachable,
			"the store URL cannot be used: %s", scrub(err.Error(), urlPassword(rawURL))).Wrap(err)
	}
	p := &Postgres{workspaceID: workspaceID, schema: PostgresSchema(workspaceID), secret: cfg.Password}
	p.described = describeConfig(cfg)
	sum := sha256.Sum256([]byte("acc room " + workspaceID))
	p.writeKey = int64(binary.BigEndian.Uint64(sum[0:8]))
	p.createKey = int64(binary.BigEndian.Uint64(sum[8:16]))
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["search_path"] = pgx.Identifier{p.schema}.Sanitize()
	cfg.RuntimeParams["application_name"] = "acc"
	cfg.RuntimeParams["timezone"] = "UTC"
	// One round trip per statement: a short-lived command would pay a
	// prepare for every statement it runs once.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	p.cfg = cfg.Copy()
	p.db = stdlib.OpenDB(*cfg)
	p.db.SetMaxOpenConns(pgMaxConns)
	p.db.SetMaxIdleConns(pgMaxConns)
	p.db.SetConnMaxIdleTime(time.Minute)
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	if err := p.checkOrInit(ctx, o); err != nil {
		p.db.Close()
		return nil, err
	}
	return p, nil
}

// describeConfig names a server as user@host:port/database, no password.
func describeConfig(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	} else {
		host = net.JoinHostPort(host, strconv.Itoa(int(cfg.Port)))
	}
	return fmt.Sprintf("postgres://%s@%s/%s", cfg.User, host, cfg.Database)
}

// urlPassword is the password a URL or keyword/value string carries, ""
// when none (or it does not parse).
func urlPassword(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
	}
	if cfg, err := pgconn.ParseConfig(raw); err == nil {
		return cfg.Password
	}
	return ""
}

// scrub removes secret from text, and makes it one line: the client
// library lists each address it tried on a line of its own, and acc's
// messages are one line (docs/exit-codes.md).
func scrub(text, secret string) string {
	if secret != "" {
		text = strings.ReplaceAll(text, secret, "********")
	}
	if strings.ContainsAny(text, "\r\n") {
		lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' })
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		text = strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " ")
	}
	return text
}

// Describe names the room's server and database without any password:
// postgres://user@host:port/database.
func (p *Postgres) Describe() string { return p.described }

// Schema is the PostgreSQL schema holding the room.
func (p *Postgres) Schema() string { return p.schema }

// Channel is the LISTEN/NOTIFY channel every committed write of the room
// notifies; the payload is the room's last event sequence after the write.
func (p *Postgres) Channel() string { return p.schema }

// Listen opens a connection of its own to the room's server and runs
// LISTEN on Channel, for a long-lived reader that wants to wake when the
// room changes (conn.WaitForNotification). The caller closes the
// connection; when it drops, Listen again (changes meanwhile are not
// replayed: re-read the room). Errors are those of OpenPostgres's
// connection (store_unreachable, store_access_denied), password-free.
func (p *Postgres) Listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return nil, p.mapConnErr(err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{p.Channel()}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, p.mapErr(err, "listen for the room's changes")
	}
	return conn, nil
}

// WorkspaceID implements Store.
func (p *Postgres) WorkspaceID() string { return p.workspaceID }

// Close implements Store.
func (p *Postgres) Close() error { return p.db.Close() }

// ClockOffset is how far the database clock was ahead of this machine's
// when the room was opened (negative when behind), measured against the
// midpoint of the round trip.
func (p *Postgres) ClockOffset() time.Duration { return p.offset }

// Now implements Clock: this machine's time corrected by ClockOffset, in UTC
// to the millisecond.
func (p *Postgres) Now() time.Time {
	return time.Now().Add(p.offset).UTC().Truncate(time.Millisecond)
}

// where names the room in messages.
func (p *Postgres) where() string {
	return fmt.Sprintf("the room %s on %s", p.schema, p.described)
}

func (p *Postgres) checkOrInit(ctx context.Context, o PostgresOptions) error {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return p.mapConnErr(err)
	}
	defer conn.Close()
	t0 := time.Now()
	var dbNow time.Time
	var versionNum int
	if err := conn.QueryRowContext(ctx, "SELECT clock_timestamp(), current_setting('server_version_num')::int").Scan(&dbNow, &versionNum); err != nil {
		return p.mapErr(err, "read the server's clock")
	}
	t1 := time.Now()
	p.offset = dbNow.Sub(t0.Add(t1.Sub(t0) / 2))
	if versionNum < MinServerVersionNum {
		return protocol.Errorf(protocol.ReasonStoreServerUnsupported,
			"%s runs PostgreSQL %d.%d; acc keeps rooms on PostgreSQL 12 or newer: upgrade the server, or point the store URL at another",
			p.described, versionNum/10000, versionNum%10000)
	}
	exists, err := p.schemaExists(ctx, conn)
	if err != nil {
		return err
	}
	if !exists {
		if o.NoCreate {
			return fmt.Errorf("%s: %w", p.where(), ErrRoomNotCreated)
		}
		if err := p.create(ctx, conn); err != nil {
			return err
		}
	}
	p.version = SchemaVersion
	err = p.checkMeta(ctx, conn)
	if pe := (*protocol.Error)(nil); errors.As(err, &pe) && pe.Reason == protocol.ReasonStoreVersionUnknown && pe.Details["schemaVersion"] == 2 {
		if o.NoMigrate {
			p.version = 2
			return nil
		}
		if err := p.migratePostgres(ctx, conn); err != nil {
			return err
		}
		// The upgrade may have outlasted ctx; the check after it gets
		// a wait of its own, so a committed upgrade is not reported as
		// a busy room.
		after, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultBusyWait)
		defer cancel()
		ctx = after
		err = p.checkMeta(ctx, conn)
	}
	if err == nil && p.pendingMissing && !o.NoMigrate {
		err = p.addPending(ctx, conn)
	}
	return err
}

// SchemaVersion is the room's schema version: SchemaVersion, or 2 for a
// room opened with NoMigrate as an older acc left it.
func (p *Postgres) SchemaVersion() int { return p.version }

func (p *Postgres) schemaExists(ctx context.Context, conn *sql.Conn) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", p.schema).Scan(&n)
	if err != nil {
		return false, p.mapErr(err, "look for the room")
	}
	return n > 0, nil
}

// create makes the room's schema and tables in one transaction, under the
// room's creation lock, so that of several first opens one creates the room
// and the others find it made.
func (p *Postgres) create(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return p.mapErr(err, "begin creating the room")
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", p.createKey); err != nil {
		return p.mapErr(err, "wait for the room's creation")
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", p.schema).Scan(&n); err != nil {
		return p.mapErr(err, "look for the room")
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "CREATE SCHEMA "+pgx.Identifier{p.schema}.Sanitize()); err != nil {
		return p.mapErr(err, "create the room's schema")
	}
	if _, err := tx.ExecContext(ctx, pgSchemaSQL+searchSchemaPostgres); err != nil {
		return p.mapErr(err, "create the room's tables")
	}
	now := protocol.FormatTime(time.Now())
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('schema_version', $1), ('workspace_id', $2), ('created_at', $3), ('message_count', '0')",
		strconv.Itoa(SchemaVersion), p.workspaceID, now); err != nil {
		return p.mapErr(err, "record the room's identity")
	}
	if err := tx.Commit(); err != nil {
		return p.mapErr(err, "commit the new room")
	}
	return nil
}

// checkMeta refuses a room of another schema version or workspace, or a
// schema of acc's name without acc's meta table, reading only.
func (p *Postgres) checkMeta(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('schema_version', 'workspace_id')
UNION ALL SELECT 'search_pending', CASE WHEN to_regclass('search_pending') IS NULL THEN 'missing' ELSE 'present' END`)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
			return protocol.Errorf(protocol.ReasonStoreCorrupt,
				"%s is not an acc room: the schema has no meta table; acc left it untouched (drop the schema, or point the store URL elsewhere)", p.where())
		}
		return p.mapErr(err, "read the room's identity")
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return p.mapErr(err, "read the room's identity")
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return p.mapErr(err, "read the room's identity")
	}
	id, ok := meta["workspace_id"]
	if !ok {
		return protocol.Errorf(protocol.ReasonStoreCorrupt, "%s has no workspace identity; acc left it untouched", p.where())
	}
	if id != p.workspaceID {
		return protocol.Errorf(protocol.ReasonStoreForeignWorkspace,
			"%s belongs to workspace %s, not %s; it was left untouched", p.where(), id, p.workspaceID).
			With("storeWorkspaceId", id)
	}
	p.pendingMissing = meta["search_pending"] == "missing"
	version, err := strconv.Atoi(meta["schema_version"])
	if err != nil {
		return protocol.Errorf(protocol.ReasonStoreCorrupt,
			"%s has no readable schema version (%q); acc left it untouched", p.where(), meta["schema_version"])
	}
	if version != SchemaVersion {
		return protocol.Errorf(protocol.ReasonStoreVersionUnknown,
			"%s has schema version %d; this acc reads version %d and left it untouched (upgrade acc)", p.where(), version, SchemaVersion).
			With("schemaVersion", version)
	}
	return nil
}

// Update implements Store. ctx bounds only the wait for the room's write
// lock (store_busy, exit 3, when it runs out; store_unreachable when the
// server cannot be reached): once the lock is held, fn and the COMMIT run
// to their end whatever ctx does. A COMMIT that fails leaves the outcome
// unknown (outcome_unknown, exit 4), as on SQLite
// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed).
func (p *Postgres) Update(ctx context.Context, fn func(Tx) error) error {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return p.mapConnErr(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED"); err != nil {
		return p.mapErr(err, "begin a write")
	}
	done := false
	defer func() {
		if !done {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err := p.lockWriters(ctx, conn); err != nil {
		return err
	}
	held := context.WithoutCancel(ctx)
	tx := &sqlTx{ctx: held, q: pgQuerier{conn}, pg: p, ws: p.workspaceID, lastSeq: -1}
	if err := fn(tx); err != nil {
		return err
	}
	last, err := tx.LastSequence()
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(held, "SELECT pg_notify($1, $2)", p.Channel(), strconv.FormatInt(last, 10)); err != nil {
		return p.mapErr(err, "notify the room")
	}
	Failpoint(FailBeforeCommit)
	stallFailpoint(ctx, FailStallBeforeCommit)
	if err := commit(held, conn); err != nil {
		done = true // the connection is unusable or the commit ran: no ROLLBACK
		return p.commitFailed(err)
	}
	done = true
	Failpoint(FailAfterCommit)
	stallFailpoint(ctx, FailStallAfterCommit)
	return nil
}

// lockWriters takes the room's write lock inside the open transaction,
// waiting at most until ctx's deadline.
func (p *Postgres) lockWriters(ctx context.Context, conn *sql.Conn) error {
	ms := int64(DefaultBusyWait / time.Millisecond)
	if d, ok := ctx.Deadline(); ok {
		ms = time.Until(d).Milliseconds()
		if ms < 1 {
			return busyError(context.DeadlineExceeded)
		}
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", ms)); err != nil {
		return p.mapErr(err, "bound the wait for writers")
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", p.writeKey); err != nil {
		return p.mapErr(err, "wait for other writers")
	}
	if _, err := conn.ExecContext(ctx, "SET LOCAL lock_timeout = 0"); err != nil {
		return p.mapErr(err, "begin a write")
	}
	return nil
}

// View implements Store: fn reads one snapshot (REPEATABLE READ, READ ONLY).
func (p *Postgres) View(ctx context.Context, fn func(ReadTx) error) error {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return p.mapConnErr(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return p.mapErr(err, "begin a read")
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	return fn(&sqlTx{ctx: ctx, q: pgQuerier{conn}, pg: p, ws: p.workspaceID, lastSeq: -1, readOnly: true})
}

// Drop removes the room — every table and record of it — from the server.
// It is for tests and for moving a room away; nothing can undo it.
func (p *Postgres) Drop(ctx context.Context) error {
	_, err := p.db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{p.schema}.Sanitize()+" CASCADE")
	return p.mapErr(err, "drop the room")
}

// Fingerprint returns a SHA-256 over every row of every table of the room,
// in primary key order, with the same meaning as (*SQLite).Fingerprint.
func (p *Postgres) Fingerprint(ctx context.Context) (string, error) {
	h := sha256.New()
	err := p.View(ctx, func(rt ReadTx) error {
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
	return hex.EncodeToString(h.Sum(nil)), p.mapErr(err, "fingerprint the room")
}

// DurableRowCount returns the number of rows in the durable-history tables:
// zero for a room that was never materialised.
func (p *Postgres) DurableRowCount(ctx context.Context) (int64, error) {
	var total int64
	err := p.View(ctx, func(rt ReadTx) error {
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
	return total, p.mapErr(err, "count the room's rows")
}

// commitFailed is the outcome_unknown of a COMMIT that failed: in the
// cause's own words, not mapErr's, whose "nothing was written" is exactly
// what cannot be told here.
func (p *Postgres) commitFailed(err error) error {
	return outcomeUnknown(fmt.Errorf("the COMMIT to %s got no answer: %s", p.described, scrub(err.Error(), p.secret)))
}

// mapConnErr maps a failure to get a connection. A connection attempt
// that ran out of time is the server not answering (store_unreachable),
// not other writers keeping the room busy (store_busy would say that).
func (p *Postgres) mapConnErr(err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return unreachable(p.described, "connect", "no answer before the deadline")
	}
	return p.mapErr(err, "connect")
}

// mapErr turns pgx errors into acc's (docs/exit-codes.md): a server that
// cannot be reached or dropped the connection store_unreachable (exit 3);
// authentication and privilege failures store_access_denied (exit 4);
// lock waits and cancelled statements store_busy (exit 3); a full disk
// store_full (exit 4). Anything else is wrapped (exit 1). Every text is
// scrubbed of the URL's password.
func (p *Postgres) mapErr(err error, doing string) error {
	if err == nil {
		return nil
	}
	var ae *protocol.Error
	if errors.As(err, &ae) {
		return err
	}
	text := scrub(err.Error(), p.secret)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "55P03" || pe.Code == "57014" || pe.Code == "40P01": // lock_not_available, query_canceled, deadlock
			return busyError(errors.New(text))
		case strings.HasPrefix(pe.Code, "28") || pe.Code == "42501": // invalid authorization, insufficient privilege
			return protocol.Errorf(protocol.ReasonStoreAccessDenied,
				"%s refused acc while trying to %s: %s; give the role's password through PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file, or a client certificate, and grant the role what docs/configuration.md lists",
				p.described, doing, pe.Message).Wrap(errors.New(text))
		case pe.Code == "53100": // disk_full
			return protocol.Errorf(protocol.ReasonStoreFull, "%s is out of disk space (%s); nothing was recorded: free space on the server", p.where(), pe.Message).Wrap(errors.New(text))
		case strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08") || pe.Code == "3D000": // shutdown, connection exceptions, no such database
			return unreachable(p.described, doing, text)
		}
		return fmt.Errorf("%s: %s", doing, text)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return busyError(errors.New(text))
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err) ||
		strings.Contains(text, "conn closed") || strings.Contains(text, "unexpected EOF") || strings.Contains(text, "broken pipe") || strings.Contains(text, "connection reset") {
		return unreachable(p.described, doing, text)
	}
	return fmt.Errorf("%s: %s", doing, text)
}

func unreachable(described, doing, cause string) error {
	return protocol.Errorf(protocol.ReasonStoreUnreachable,
		"cannot %s: the room's PostgreSQL server %s cannot be reached (%s); nothing was written — is the server running and reachable from here? Check ACC_STORE_URL or the workspace config's storeUrl, then run `acc doctor`",
		doing, described, cause)
}

// pgQuerier runs the SQLite-dialect statements of sqlTx on a PostgreSQL
// connection, translated by pgSQL.
type pgQuerier struct{ c *sql.Conn }

func (q pgQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.c.ExecContext(ctx, pgSQL(query), args...)
}

func (q pgQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.c.QueryContext(ctx, pgSQL(query), args...)
}

func (q pgQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.c.QueryRowContext(ctx, pgSQL(query), args...)
}

var pgSQLCache sync.Map

// pgSQL translates one of sqlTx's statements to PostgreSQL: `?`
// placeholders become $1, $2, …; `INSERT OR REPLACE INTO t(k, c…) VALUES
// (…)` becomes an insert that updates every other column when the key
// (the first column) exists; `CROSS JOIN` (SQLite's way to fix the join
// order) becomes JOIN. None of the statements has a `?` inside a string.
func pgSQL(q string) string {
	if v, ok := pgSQLCache.Load(q); ok {
		return v.(string)
	}
	out := q
	if rest, ok := strings.CutPrefix(out, "INSERT OR REPLACE INTO "); ok {
		open := strings.Index(rest, "(")
		closing := strings.Index(rest, ")")
		cols := strings.Split(rest[open+1:closing], ",")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		var set []string
		for _, c := range cols[1:] {
			set = append(set, c+" = EXCLUDED."+c)
		}
		out = "INSERT INTO " + rest + " ON CONFLICT (" + cols[0] + ") DO UPDATE SET " + strings.Join(set, ", ")
	}
	out = strings.ReplaceAll(out, "CROSS JOIN", "JOIN")
	var b strings.Builder
	n := 0
	for _, r := range out {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	out = b.String()
	pgSQLCache.Store(q, out)
	return out
}

// rowSource is what a scan reads rows from: *sql.Rows on SQLite, pagedRows
// on PostgreSQL.
type rowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// scanQuery runs a scan's query. On SQLite the rows stream. On PostgreSQL a
// connection runs one statement at a time, and a scan's callback may read
// through the same transaction (a decision's group, a message), so the rows
// come in pages read whole (pagedRows).
func (t *sqlTx) scanQuery(query string, args ...any) (rowSource, error) {
	if t.pg == nil {
		return t.q.QueryContext(t.ctx, query, args...)
	}
	r := &pagedRows{t: t, query: query, args: args, size: pgFirstPage}
	if strings.Contains(query, " LIMIT ") {
		r.size = 0 // bounded already: one page, all of it
	}
	if err := r.fetch(); err != nil {
		return nil, err
	}
	return r, nil
}

// Page sizes of pagedRows: a scan that stops early (an inbox page, a
// projection) reads one small page; a long one reads pages growing to
// pgMaxPage rows.
const (
	pgFirstPage = 64
	pgMaxPage   = 4096
)

// pagedRows reads a scan's ordered query in pages (LIMIT/OFFSET inside
// the scan's transaction, whose snapshot or serialised write lock keeps the
// rows in place; the callbacks only read). Every column is text.
type pagedRows struct {
	t      *sqlTx
	query  string
	args   []any
	size   int // rows per page; 0 reads everything at once
	offset int
	page   [][]string
	i      int
	last   bool
	err    error
}

func (r *pagedRows) fetch() error {
	q, args := r.query, r.args
	if r.size > 0 {
		q += " LIMIT ? OFFSET ?"
		args = append(slices.Clone(args), r.size, r.offset)
	}
	rows, err := r.t.q.QueryContext(r.t.ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	r.page, r.i = r.page[:0], 0
	for rows.Next() {
		row := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for j := range row {
			ptrs[j] = &row[j]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		r.page = append(r.page, row)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	r.offset += len(r.page)
	r.last = r.size == 0 || len(r.page) < r.size
	r.size = min(r.size*4, pgMaxPage)
	return nil
}

func (r *pagedRows) Next() bool {
	if r.err != nil {
		return false
	}
	r.i++
	if r.i <= len(r.page) {
		return true
	}
	if r.last {
		return false
	}
	if r.err = r.fetch(); r.err != nil {
		return false
	}
	r.i = 1
	return len(r.page) > 0
}

func (r *pagedRows) Scan(dest ...any) error {
	row := r.page[r.i-1]
	if len(dest) != len(row) {
		return fmt.Errorf("storage: scan of %d columns into %d values", len(row), len(dest))
	}
	for j, d := range dest {
		p, ok := d.(*string)
		if !ok {
			return fmt.Errorf("storage: paged rows scan only into *string, got %T", d)
		}
		*p = row[j]
	}
	return nil
}

func (r *pagedRows) Err() error   { return r.err }
func (r *pagedRows) Close() error { return nil }
