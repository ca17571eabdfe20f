package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// CopyReport says what CopyRoom copied: rows per table, and the digest of
// the room's content, equal on both sides after a copy.
type CopyReport struct {
	Rows   map[string]int64 `json:"rows"`
	Digest string           `json:"digest"`
}

// copiedTables are the tables CopyRoom copies, parents before children;
// meta is the target's own (its schema version and identity), except
// message_count, which is carried over.
var copiedTables = []string{"workspace", "participants", "sessions", "intents", "eph_participants", "eph_sessions",
	"eph_intents", "claims", "messages", "receipts", "decision_links", "events", "session_bindings"}

// CopyRoom copies every record of src's room into dst, a store of the same
// workspace on either engine, in one write transaction of dst: ids,
// cursors, receipt states and event sequences stay as they are
// (docs/configuration.md#moving-a-room). src is read in one snapshot. dst
// must be empty — no row in any table — or the copy is refused with
// store_not_empty (exit 5) and dst is left unchanged; a copy that fails
// leaves dst as it was (the transaction rolls back). Before the commit
// the digest of the snapshot and of the copy are compared: a difference
// rolls the copy back and is an error (exit 1), which would be a bug. A
// COMMIT whose answer is lost is outcome_unknown, as for any write.
func CopyRoom(ctx context.Context, src, dst Store) (*CopyReport, error) {
	if src.WorkspaceID() != dst.WorkspaceID() {
		return nil, fmt.Errorf("storage: copy from workspace %s into %s", src.WorkspaceID(), dst.WorkspaceID())
	}
	report := &CopyReport{Rows: map[string]int64{}}
	err := src.View(ctx, func(rt ReadTx) error {
		from := rt.(*sqlTx)
		return dst.Update(ctx, func(wt Tx) error {
			to := wt.(*sqlTx)
			if err := checkEmpty(to); err != nil {
				return err
			}
			for _, table := range copiedTables {
				n, err := copyTable(from, to, table)
				if err != nil {
					return err
				}
				report.Rows[table] = n
			}
			if _, _, err := to.indexAll(nil); err != nil {
				return err
			}
			var count string
			err := from.q.QueryRowContext(from.ctx, "SELECT value FROM meta WHERE key = 'message_count'").Scan(&count)
			if err == sql.ErrNoRows {
				err = from.q.QueryRowContext(from.ctx, "SELECT CAST(count(*) AS TEXT) FROM messages").Scan(&count)
			}
			if err != nil {
				return from.mapErr(err, "read the message count")
			}
			if _, err := to.q.ExecContext(to.ctx, "UPDATE meta SET value = ? WHERE key = 'message_count'", count); err != nil {
				return to.mapErr(err, "write the message count")
			}
			// Both digests before the COMMIT: the source's in the snapshot
			// that was copied (a session writing since cannot make them
			// differ), the copy's as this transaction holds it. A
			// difference rolls the copy back; after the COMMIT nothing is
			// left to fail but the COMMIT itself.
			a, err := digestTx(from)
			if err != nil {
				return err
			}
			b, err := digestTx(to)
			if err != nil {
				return err
			}
			if a != b {
				return fmt.Errorf("storage: the copy differs from its source (digest %s, source %s) and was not committed; this is a bug in acc", b, a)
			}
			report.Digest = a
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

func checkEmpty(t *sqlTx) error {
	for _, table := range copiedTables {
		var n int64
		if err := t.q.QueryRowContext(t.ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			return t.mapErr(err, "look into the target")
		}
		if n > 0 {
			return protocol.Errorf(protocol.ReasonStoreNotEmpty,
				"the target already holds this room's records (%d in %s); acc copies only into an empty room and left it unchanged", n, table).
				With("table", table)
		}
	}
	return nil
}

// columns are table's stored columns in order (receipts' generated
// listable column is computed by each engine, never copied).
func columns(t *sqlTx, table string) ([]string, error) {
	rows, err := t.q.QueryContext(t.ctx, "SELECT * FROM "+table+" LIMIT 0")
	if err != nil {
		return nil, t.mapErr(err, "read the columns of "+table)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(cols, func(c string) bool { return c == "listable" }), nil
}

// copyBatch is how many rows one INSERT of copyTable carries: a round trip
// per row would make copying a large room onto a server over a network
// take minutes; 200 rows of at most 9 columns stay far below either
// engine's limit on parameters per statement.
const copyBatch = 200

func copyTable(from, to *sqlTx, table string) (int64, error) {
	cols, err := columns(from, table)
	if err != nil {
		return 0, err
	}
	list := strings.Join(cols, ", ")
	rows, err := from.q.QueryContext(from.ctx, "SELECT "+list+" FROM "+table+" ORDER BY 1, 2")
	if err != nil {
		return 0, from.mapErr(err, "read "+table)
	}
	defer rows.Close()
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	insert := func(n int) string {
		return "INSERT INTO " + table + "(" + list + ") VALUES " + strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")
	}
	full := insert(copyBatch)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	batch := make([]any, 0, copyBatch*len(cols))
	var n int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		stmt := full
		if len(batch) < cap(batch) {
			stmt = insert(len(batch) / len(cols))
		}
		if _, err := to.q.ExecContext(to.ctx, stmt, batch...); err != nil {
			return to.mapErr(err, "copy "+table)
		}
		n += int64(len(batch) / len(cols))
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, from.mapErr(err, "read "+table)
		}
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			batch = append(batch, v)
		}
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, from.mapErr(err, "read "+table)
	}
	return n, flush()
}

// RoomDigest is a SHA-256 over the room's records in a form both engines
// give alike: every copied table's stored columns, rows in key order, each
// value as text, and the message count. Two rooms with equal digests hold
// the same records, ids, states and sequences.
func RoomDigest(ctx context.Context, s Store) (string, error) {
	var d string
	err := s.View(ctx, func(rt ReadTx) error {
		var err error
		d, err = digestTx(rt.(*sqlTx))
		return err
	})
	return d, err
}

// digestTx is RoomDigest of what t sees.
func digestTx(t *sqlTx) (string, error) {
	h := sha256.New()
	for _, table := range copiedTables {
		cols, err := columns(t, table)
		if err != nil {
			return "", err
		}
		rows, err := t.q.QueryContext(t.ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+table+" ORDER BY 1, 2")
		if err != nil {
			return "", t.mapErr(err, "read "+table)
		}
		if err := digestRows(h, table, rows, len(cols)); err != nil {
			return "", t.mapErr(err, "read "+table)
		}
	}
	c, err := t.Counts()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "messages %d\n", c.Messages)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digestRows(w io.Writer, table string, rows *sql.Rows, n int) error {
	defer rows.Close()
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	fmt.Fprintf(w, "table %s\n", table)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			fmt.Fprintf(w, "%q ", fmt.Sprint(v))
		}
		fmt.Fprintln(w)
	}
	return rows.Err()
}
