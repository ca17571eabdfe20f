package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// The search index of schema version 3 (docs/protocol.md#search-index).
// Each message's indexed text is reduced in Go to its words
// (protocol.SearchDocument) before either engine sees it, so both
// engines hold the same words and a query finds the same messages on
// both: SQLite's FTS5 reads the words with its ascii tokenizer (spaces
// separate, every other byte of a word is kept), PostgreSQL receives a
// tsvector literal built here, never parsed by a text-search
// configuration.
const searchSchemaSQLite = `
CREATE TABLE search_docs (
  doc INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL UNIQUE REFERENCES messages(message_id)
);
CREATE VIRTUAL TABLE search_index USING fts5(subject, body, content = '', tokenize = 'ascii');
` + pendingSchemaSQLite

// pendingSchemaSQLite keeps the ids of messages written without being
// indexed: a trigger records every new message, and this acc's own
// insert removes the row again in the same transaction once the message
// is indexed. What remains was written by an acc of schema version 2
// that opened the store before it was upgraded and goes on writing
// (a long-running acc-mcp, say); the next search indexes it first
// (IndexPending), so no message is ever missing from the index.
const pendingSchemaSQLite = `
CREATE TABLE IF NOT EXISTS search_pending (message_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS search_pending_add AFTER INSERT ON messages
BEGIN
  INSERT OR IGNORE INTO search_pending(message_id) VALUES (NEW.message_id);
END;
`

// searchSchemaPostgres is the PostgreSQL form: one row per message with
// its tsvector, under a GIN index.
const searchSchemaPostgres = `
CREATE TABLE search_docs (
  message_id TEXT COLLATE "C" PRIMARY KEY REFERENCES messages(message_id),
  doc tsvector NOT NULL
);
CREATE INDEX search_docs_doc ON search_docs USING GIN (doc);
` + pendingSchemaPostgres

// pendingSchemaPostgres is pendingSchemaSQLite's PostgreSQL form. The
// trigger's function resolves its table through the search path it was
// created with (the room's schema), whatever the writer's session has.
const pendingSchemaPostgres = `
CREATE TABLE IF NOT EXISTS search_pending (message_id TEXT COLLATE "C" PRIMARY KEY);
CREATE OR REPLACE FUNCTION search_pending_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_pending(message_id) VALUES (NEW.message_id) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS search_pending_add ON messages;
CREATE TRIGGER search_pending_add AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION search_pending_add();
`

// Ranking weights: a word in the subject counts several times one in the
// body. bm25's column weights on SQLite; on PostgreSQL the subject's
// positions carry weight A, which ts_rank counts 1.0 against the body's
// 0.1 (weight D).
const (
	sqliteSearchRank = "bm25(search_index, 5.0, 1.0)"
	pgSearchRank     = "-ts_rank(s.doc, CAST(? AS tsquery))"
)

// pgMaxPosition and pgMaxPositions are PostgreSQL's limits on a tsvector:
// word positions run 1..16383 (later ones are counted at 16383) and a word
// keeps at most 256 of them.
const (
	pgMaxPosition  = 16383
	pgMaxPositions = 256
)

// tsvectorLiteral renders a document's words as PostgreSQL tsvector input:
// each distinct word once, quoted, with its positions, the subject's
// marked with weight A. The body's positions start one after a gap, so no
// phrase spans the two.
func tsvectorLiteral(subject, body []string) string {
	type posList struct{ pos []string }
	byWord := map[string]*posList{}
	var order []string
	add := func(w string, pos int, weight string) {
		pos = min(pos, pgMaxPosition)
		l := byWord[w]
		if l == nil {
			l = &posList{}
			byWord[w] = l
			order = append(order, w)
		}
		if len(l.pos) >= pgMaxPositions {
			return
		}
		p := strconv.Itoa(pos) + weight
		if n := len(l.pos); n > 0 && strings.TrimRight(l.pos[n-1], "A") == strconv.Itoa(pos) {
			return
		}
		l.pos = append(l.pos, p)
	}
	for i, w := range subject {
		if w != protocol.SearchGap {
			add(w, i+1, "A")
		}
	}
	for i, w := range body {
		if w != protocol.SearchGap {
			add(w, len(subject)+2+i, "")
		}
	}
	slices.Sort(order)
	var b strings.Builder
	for i, w := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(w))
		b.WriteString("':")
		b.WriteString(strings.Join(byWord[w].pos, ","))
	}
	return b.String()
}

// indexMessage adds m's words to the search index, inside t (the
// message's own transaction, or a migration's or copy's).
func (t *sqlTx) indexMessage(m *protocol.Message) error {
	if err := t.indexDocument(m.MessageID, m); err != nil {
		return err
	}
	return t.exec("index a message for search", "DELETE FROM search_pending WHERE message_id = ?", m.MessageID)
}

// indexDocument adds m's words to the index under id, the message's key
// in the messages table.
func (t *sqlTx) indexDocument(id string, m *protocol.Message) error {
	subject, body := protocol.SearchDocument(m)
	if t.pg != nil {
		return t.exec("index a message for search", "INSERT INTO search_docs(message_id, doc) VALUES (?, CAST(? AS tsvector))",
			id, tsvectorLiteral(subject, body))
	}
	res, err := t.q.ExecContext(t.ctx, "INSERT INTO search_docs(message_id) VALUES (?)", id)
	if err != nil {
		return t.mapErr(err, "index a message for search")
	}
	doc, err := res.LastInsertId()
	if err != nil {
		return t.mapErr(err, "index a message for search")
	}
	return t.exec("index a message for search", "INSERT INTO search_index(rowid, subject, body) VALUES (?, ?, ?)",
		doc, fts5Text(subject), fts5Text(body))
}

// fts5Gap is what a protocol.SearchGap becomes in FTS5's text: a token
// (the ascii tokenizer keeps every byte above 127 in a token) that no
// query word can equal or begin, since the section sign is no letter,
// digit or mark; it takes a position, so a phrase cannot step over it.
const fts5Gap = "§"

// fts5Text joins words for FTS5's ascii tokenizer, gaps as fts5Gap.
func fts5Text(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w == protocol.SearchGap {
			w = fts5Gap
		}
		b.WriteString(w)
	}
	return b.String()
}

// maxPendingCheck bounds PendingIndex's count: a search needs to know
// only whether any message waits.
const maxPendingCheck = 1000

// PendingIndex counts, up to 1,000, the messages written without being
// indexed (pendingSchemaSQLite); 0 is the common case and costs one read
// of an empty table.
func (t *sqlTx) PendingIndex() (int, error) {
	var n int
	err := t.q.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT 1 FROM search_pending LIMIT "+strconv.Itoa(maxPendingCheck)+") AS p").Scan(&n)
	if err != nil {
		return 0, t.mapErr(err, "look for messages not yet indexed")
	}
	return n, nil
}

// IndexPending indexes the messages written without being indexed and
// empties search_pending; it returns how many it indexed and how many it
// left out because their record does not decode
// (docs/design.md#damaged-records). A pending id already indexed, or no
// longer a message, is only cleared.
func (t *sqlTx) IndexPending() (indexed, skipped int, err error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT p.message_id, m.record FROM search_pending p JOIN messages m ON m.message_id = p.message_id
WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.message_id = p.message_id) ORDER BY p.message_id`)
	if err != nil {
		return 0, 0, t.mapErr(err, "read the messages not yet indexed")
	}
	var page [][2]string
	for rows.Next() {
		var id, rec string
		if err := rows.Scan(&id, &rec); err != nil {
			rows.Close()
			return 0, 0, t.mapErr(err, "read the messages not yet indexed")
		}
		page = append(page, [2]string{id, rec})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, t.mapErr(err, "read the messages not yet indexed")
	}
	for _, r := range page {
		m, err := decodeRecord[protocol.Message]("message", r[1])
		if err != nil || m.MessageID != r[0] {
			skipped++
			continue
		}
		if err := t.indexDocument(r[0], m); err != nil {
			return indexed, skipped, err
		}
		indexed++
	}
	if err := t.exec("clear the messages not yet indexed", "DELETE FROM search_pending"); err != nil {
		return indexed, skipped, err
	}
	return indexed, skipped, nil
}

// indexAll indexes every message of the room that t sees, in pages of
// message ids; progress, when set, is called after each page with the
// count so far. A record that does not decode, or names another id than
// its row's, is left out of the index, as it is out of every other read
// (docs/design.md#damaged-records), and counted in skipped.
func (t *sqlTx) indexAll(progress func(done int64)) (done, skipped int64, err error) {
	after := ""
	for {
		rows, err := t.q.QueryContext(t.ctx, "SELECT message_id, record FROM messages WHERE message_id > ? ORDER BY message_id LIMIT 500", after)
		if err != nil {
			return done, skipped, t.mapErr(err, "read the messages to index")
		}
		var page [][2]string
		for rows.Next() {
			var id, rec string
			if err := rows.Scan(&id, &rec); err != nil {
				rows.Close()
				return done, skipped, t.mapErr(err, "read the messages to index")
			}
			page = append(page, [2]string{id, rec})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, skipped, t.mapErr(err, "read the messages to index")
		}
		if len(page) == 0 {
			// Every message is indexed now, those the trigger recorded
			// on the way (a copy's) included.
			return done, skipped, t.exec("clear the messages not yet indexed", "DELETE FROM search_pending")
		}
		// On PostgreSQL one INSERT carries the page: a round trip per
		// message would make indexing a large room take minutes.
		var values []string
		var args []any
		for _, r := range page {
			m, err := decodeRecord[protocol.Message]("message", r[1])
			if err != nil || m.MessageID != r[0] {
				skipped++
				continue
			}
			if t.pg != nil {
				values = append(values, "(?, CAST(? AS tsvector))")
				subject, body := protocol.SearchDocument(m)
				args = append(args, r[0], tsvectorLiteral(subject, body))
			} else if err := t.indexDocument(r[0], m); err != nil {
				return done, skipped, err
			}
			done++
			if done == migrateFailpointAt {
				Failpoint(FailMigrating)
			}
		}
		if len(values) > 0 {
			if err := t.exec("index messages for search", "INSERT INTO search_docs(message_id, doc) VALUES "+strings.Join(values, ", "), args...); err != nil {
				return done, skipped, err
			}
		}
		after = page[len(page)-1][0]
		if progress != nil {
			progress(done)
		}
	}
}

// migrateFailpointAt is the message count after which FailMigrating
// fires: halfway through a test's 100,000-message store.
const migrateFailpointAt = 50_000

// SearchQuery selects the messages a search finds
// (docs/protocol.md#search-index). Match is required; every other field
// narrows the hits when set.
type SearchQuery struct {
	Match *protocol.SearchQuery
	// From keeps messages sent by any of these participants.
	From []string
	// To keeps messages addressed to this participant by name (not room
	// messages, though it holds a receipt of those too).
	To string
	// Kind keeps messages of this kind.
	Kind string
	// Since and Until keep messages sent at or after Since and strictly
	// before Until (RFC 3339 UTC times as stored).
	Since, Until string
	// ThreadID keeps one thread's messages.
	ThreadID string
	// CurrentDecisions keeps only decisions that are their group's current
	// head (docs/protocol.md#decisions).
	CurrentDecisions bool
	// After continues a list after this message: the hits ranked below it
	// (better ranks first; equal ranks newest first, then by id).
	After string
}

// SearchMessages calls fn for each message q finds, best ranked first,
// until fn returns false. The rank is each engine's own (bm25 on SQLite,
// ts_rank on PostgreSQL), so the order of hits may differ between engines
// while the set is the same. A q.After that is no hit of q.Match is
// invalid_cursor (exit 2). A record that does not decode is left out and
// named in Damaged.
func (t *sqlTx) SearchMessages(q SearchQuery, fn func(protocol.Message) bool) error {
	if q.Match == nil {
		return errors.New("storage: a search needs a query")
	}
	var match any = FTS5Match(q.Match)
	from := "(SELECT rowid AS doc, " + sqliteSearchRank + " AS score FROM search_index WHERE search_index MATCH ?) h " +
		"CROSS JOIN search_docs d ON d.doc = h.doc CROSS JOIN messages m ON m.message_id = d.message_id"
	score := "h.score"
	args := []any{match}
	if t.pg != nil {
		match = TSQuery(q.Match)
		from = "search_docs s JOIN messages m ON m.message_id = s.message_id"
		score = pgSearchRank
		args = []any{}
	}
	var where []string
	if t.pg != nil {
		where = append(where, "s.doc @@ CAST(? AS tsquery)")
		args = append(args, match)
	}
	if len(q.From) > 0 {
		where = append(where, "m.from_participant_id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(q.From)), ", ")+")")
		for _, f := range q.From {
			args = append(args, f)
		}
	}
	if q.To != "" {
		where = append(where, "EXISTS (SELECT 1 FROM receipts r WHERE r.message_id = m.message_id AND r.recipient_participant_id = ?)")
		args = append(args, q.To)
	}
	if q.Kind != "" {
		where = append(where, "m.kind = ?")
		args = append(args, q.Kind)
	}
	if q.Since != "" {
		where = append(where, "m.sent_at >= ?")
		args = append(args, q.Since)
	}
	if q.Until != "" {
		where = append(where, "m.sent_at < ?")
		args = append(args, q.Until)
	}
	if q.ThreadID != "" {
		where = append(where, "m.thread_id = ?")
		args = append(args, q.ThreadID)
	}
	if q.CurrentDecisions {
		where = append(where, "m.kind = 'decision'", "m.decision_head = 1")
	}
	if q.After != "" {
		anchor, sentAt, err := t.searchAnchor(q.After, match)
		if err != nil {
			return err
		}
		if err := t.checkAnchorFilters(q); err != nil {
			return err
		}
		if t.pg != nil {
			where = append(where, "("+score+" > ? OR ("+score+" = ? AND (m.sent_at, m.message_id) < (?, ?)))")
			args = append(args, match, anchor, match, anchor, sentAt, q.After)
		} else {
			where = append(where, "(h.score > ? OR (h.score = ? AND (m.sent_at, m.message_id) < (?, ?)))")
			args = append(args, anchor, anchor, sentAt, q.After)
		}
	}
	order := score + ", m.sent_at DESC, m.message_id DESC"
	if t.pg != nil {
		args = append(args, match)
	}
	query := "SELECT m.message_id, m.record FROM " + from
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY " + order
	if q.To != "" {
		// A room message gives every participant a receipt too; To keeps
		// the messages addressed to the participant by name.
		inner := fn
		fn = func(m protocol.Message) bool {
			if !slices.Contains(m.ToParticipantIDs, q.To) {
				return true
			}
			return inner(m)
		}
	}
	if t.pg != nil {
		return scanRecords(t, "message", "messages", query, args, fn)
	}
	// On SQLite the sort carries the ids only, and each record is read
	// once its hit is taken: sorted with its record, a search finding
	// every message of a 100,000-message room sorted 100 MB and took
	// three times as long. (PostgreSQL sorts what it needs itself.)
	rows, err := t.q.QueryContext(t.ctx, strings.Replace(query, "SELECT m.message_id, m.record FROM", "SELECT m.message_id FROM", 1), args...)
	if err != nil {
		return t.mapErr(err, "search messages")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return t.mapErr(err, "search messages")
		}
		rec, ok, err := t.getOne("message", "SELECT record FROM messages WHERE message_id = ?", id)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		m, err := decodeRecord[protocol.Message]("message", rec)
		if err != nil {
			if err := t.skipDamaged("messages", id, err, nil); err != nil {
				return err
			}
			continue
		}
		if !fn(*m) {
			return nil
		}
	}
	return t.mapErr(rows.Err(), "search messages")
}

// searchAnchor returns the rank and sentAt of the message id within the
// search match (an engine's query string): what a cursor continues after.
func (t *sqlTx) searchAnchor(id string, match any) (float64, string, error) {
	var score float64
	var sentAt string
	var err error
	if t.pg != nil {
		err = t.q.QueryRowContext(t.ctx, "SELECT "+pgSearchRank+", m.sent_at FROM search_docs s JOIN messages m ON m.message_id = s.message_id WHERE s.message_id = ? AND s.doc @@ CAST(? AS tsquery)",
			match, id, match).Scan(&score, &sentAt)
	} else {
		err = t.q.QueryRowContext(t.ctx, "SELECT "+sqliteSearchRank+", m.sent_at FROM search_index CROSS JOIN search_docs d ON d.doc = search_index.rowid CROSS JOIN messages m ON m.message_id = d.message_id WHERE search_index MATCH ? AND d.message_id = ?",
			match, id).Scan(&score, &sentAt)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", protocol.Errorf(protocol.ReasonInvalidCursor, "search cursor %s is not a hit of this search; start again without a cursor", id)
	}
	if err != nil {
		return 0, "", t.mapErr(err, "find the search cursor")
	}
	return score, sentAt, nil
}

// checkAnchorFilters refuses a cursor whose message the filters of q
// leave out (invalid_cursor): a page of one list continued from a hit of
// another would skip or repeat hits. A decision replaced since the page
// was read still continues a list of current decisions.
func (t *sqlTx) checkAnchorFilters(q SearchQuery) error {
	m, err := t.Message(q.After)
	if err != nil {
		return err
	}
	out := m == nil ||
		(len(q.From) > 0 && !slices.Contains(q.From, m.FromParticipantID)) ||
		(q.To != "" && !slices.Contains(m.ToParticipantIDs, q.To)) ||
		(q.Kind != "" && m.Kind != q.Kind) ||
		(q.CurrentDecisions && m.Kind != protocol.KindDecision) ||
		(q.ThreadID != "" && m.ThreadID != q.ThreadID) ||
		(q.Since != "" && m.SentAt < q.Since) ||
		(q.Until != "" && m.SentAt >= q.Until)
	if out {
		return protocol.Errorf(protocol.ReasonInvalidCursor, "search cursor %s is not a hit of this search with these filters; start again without a cursor", q.After)
	}
	return nil
}

// migrateSQLite upgrades a store of schema version 2 to 3 on conn: the
// search tables are created and every message indexed, and user_version
// set, in one transaction. Another process that upgraded it first is
// found by reading the version again under the write lock. ctx bounds
// only the wait for that lock; once it is held the upgrade runs to its
// end, since a deadline that cut it short would roll it back and leave
// the next command the same work. A crash at any point leaves version 2,
// whole (the transaction rolls back), for the next open to upgrade.
func (s *SQLite) migrateSQLite(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return mapErr(s.path, err, "lock the store to upgrade it to schema version 3")
	}
	held := context.WithoutCancel(ctx)
	committed := false
	defer func() {
		if !committed {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	version, _, err := readVersion(held, s.path, conn)
	if err != nil {
		return err
	}
	if version != 2 {
		committed = true
		_, err := conn.ExecContext(held, "COMMIT")
		return mapErr(s.path, err, "end the upgrade")
	}
	if _, err := conn.ExecContext(held, searchSchemaSQLite); err != nil {
		return mapErr(s.path, err, "create the search index")
	}
	t := &sqlTx{ctx: held, q: conn, path: s.path, ws: s.workspaceID, lastSeq: -1}
	if _, _, err := t.indexAll(nil); err != nil {
		return err
	}
	if _, err := conn.ExecContext(held, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return mapErr(s.path, err, "record schema version 3")
	}
	Failpoint(FailBeforeCommit)
	if _, err := conn.ExecContext(held, "COMMIT"); err != nil {
		return outcomeUnknown(mapErr(s.path, err, "commit the upgrade to schema version 3"))
	}
	committed = true
	s.wrote.Store(true)
	return nil
}

// migratePostgres upgrades a room of schema version 2 to 3 in one
// transaction under the room's write lock, as migrateSQLite does.
func (p *Postgres) migratePostgres(ctx context.Context, conn *sql.Conn) error {
	// READ COMMITTED, as every write: after the lock each statement sees
	// what a concurrent upgrader committed, where REPEATABLE READ would
	// fail on it.
	if _, err := conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED"); err != nil {
		return p.mapErr(err, "begin the upgrade to schema version 3")
	}
	committed := false
	defer func() {
		if !committed {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err := p.lockWriters(ctx, conn); err != nil {
		return err
	}
	held := context.WithoutCancel(ctx)
	var v string
	if err := conn.QueryRowContext(held, "SELECT value FROM meta WHERE key = 'schema_version'").Scan(&v); err != nil {
		return p.mapErr(err, "read the room's schema version")
	}
	if v != "2" {
		committed = true
		_, err := conn.ExecContext(held, "COMMIT")
		return p.mapErr(err, "end the upgrade")
	}
	if _, err := conn.ExecContext(held, searchSchemaPostgres); err != nil {
		return p.mapErr(err, "create the search index")
	}
	t := &sqlTx{ctx: held, q: pgQuerier{conn}, pg: p, ws: p.workspaceID, lastSeq: -1}
	if _, _, err := t.indexAll(nil); err != nil {
		return err
	}
	if _, err := conn.ExecContext(held, "UPDATE meta SET value = $1 WHERE key = 'schema_version'", strconv.Itoa(SchemaVersion)); err != nil {
		return p.mapErr(err, "record schema version 3")
	}
	Failpoint(FailBeforeCommit)
	if err := commit(held, conn); err != nil {
		committed = true
		return p.commitFailed(err)
	}
	committed = true
	return nil
}

// addPendingSQL records as pending every message the index lacks.
const addPendingSQL = `INSERT INTO search_pending(message_id)
SELECT m.message_id FROM messages m WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.message_id = m.message_id)`

// addPending gives a store of schema version 3 made before search_pending
// existed its table and trigger, and records as pending whatever the
// index lacks, in one transaction; the next search indexes those.
// Finding the table present costs one read of sqlite_master.
func (s *SQLite) addPending(ctx context.Context, conn *sql.Conn) error {
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'search_pending'").Scan(&n); err != nil {
		return mapErr(s.path, err, "look for the search index's pending table")
	}
	if n > 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return mapErr(s.path, err, "lock the store to add the search index's pending table")
	}
	committed := false
	defer func() {
		if !committed {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	held := context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(held, pendingSchemaSQLite); err != nil {
		return mapErr(s.path, err, "add the search index's pending table")
	}
	if _, err := conn.ExecContext(held, addPendingSQL+" ON CONFLICT DO NOTHING"); err != nil {
		return mapErr(s.path, err, "find the messages the search index lacks")
	}
	if _, err := conn.ExecContext(held, "COMMIT"); err != nil {
		return outcomeUnknown(mapErr(s.path, err, "commit the search index's pending table"))
	}
	committed = true
	s.wrote.Store(true)
	return nil
}

// addPending is SQLite.addPending on PostgreSQL, under the room's write
// lock.
func (p *Postgres) addPending(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED"); err != nil {
		return p.mapErr(err, "begin adding the search index's pending table")
	}
	committed := false
	defer func() {
		if !committed {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err := p.lockWriters(ctx, conn); err != nil {
		return err
	}
	held := context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(held, pendingSchemaPostgres); err != nil {
		return p.mapErr(err, "add the search index's pending table")
	}
	if _, err := conn.ExecContext(held, addPendingSQL+" ON CONFLICT DO NOTHING"); err != nil {
		return p.mapErr(err, "find the messages the search index lacks")
	}
	if err := commit(held, conn); err != nil {
		committed = true
		return p.commitFailed(err)
	}
	committed = true
	p.pendingMissing = false
	return nil
}
