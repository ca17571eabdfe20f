package storage

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/jackc/pgx/v5"
)

// searchDocs are the documents the engines' checks search, by id.
var searchDocs = map[string]string{
	"d1": "Rotate the auth tokens before the refresh flow ships",
	"d2": "The refresh token flow is a draft",
	"d3": "Migration 0042 renames the tokens table",
	"d4": "Café menu: flat white, 数据库 notes, v2 plan",
	"d5": "OR and NOT are plain words here, near the end",
}

// searchCases are queries and the documents each must find, the same on
// both engines.
var searchCases = []struct {
	q    string
	want []string
}{
	{"tokens", []string{"d1", "d3"}},
	{"token", []string{"d2"}},
	{"token*", []string{"d1", "d2", "d3"}},
	{`"refresh flow"`, []string{"d1"}},
	{"refresh flow", []string{"d1", "d2"}},
	{"refresh -draft", []string{"d1"}},
	{`tok* -"tokens table" -draft`, []string{"d1"}},
	{"migrat* 0042", []string{"d3"}},
	{"CAFÉ", []string{"d4"}},
	// Accents count, on both engines: the words are acc's own
	// (protocol.SearchWords), which keep them (PostgreSQL's unaccent is an
	// extension acc's role may not install).
	{"cafe", nil},
	{"数据库", []string{"d4"}},
	{"OR NOT", []string{"d5"}},
	{"near", []string{"d5"}},
	{"flat-white", []string{"d4"}},
	{"nothing", nil},
}

// searchQueries are the table's queries and hostile shapes a person might
// type, each parsed first: whatever ParseSearch accepts must compile to
// an expression the engine takes.
func searchQueries(t *testing.T) []*protocol.SearchQuery {
	var out []*protocol.SearchQuery
	for _, c := range searchCases {
		out = append(out, mustParse(t, c.q))
	}
	for _, s := range []string{`a"b`, `"NEAR(a b)"`, "col-umn", `"x" OR "y"`, `-"a" b*`, `'quoted'`, `back\slash`, `semi;colon`, `$dollar`, "%percent", "#hash", "@at"} {
		if q, err := protocol.ParseSearch(s); err == nil {
			out = append(out, q)
		}
	}
	return out
}

func mustParse(t *testing.T, s string) *protocol.SearchQuery {
	t.Helper()
	q, err := protocol.ParseSearch(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return q
}

// TestFTS5MatchOnSQLite: every compiled expression is one SQLite's FTS5
// accepts, and the table's queries find what they should.
func TestFTS5MatchOnSQLite(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body, tokenize = 'ascii')`); err != nil {
		t.Fatalf("FTS5: %v", err)
	}
	for id, body := range searchDocs {
		if _, err := db.Exec(`INSERT INTO docs(id, body) VALUES (?, ?)`, id, strings.Join(protocol.SearchWords(body), " ")); err != nil {
			t.Fatal(err)
		}
	}
	find := func(q *protocol.SearchQuery) ([]string, error) {
		rows, err := db.Query(`SELECT id FROM docs WHERE docs MATCH ? ORDER BY id`, FTS5Match(q))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, rows.Err()
	}
	for _, q := range searchQueries(t) {
		if _, err := find(q); err != nil {
			t.Errorf("FTS5 refused %s (from %+v): %v", FTS5Match(q), q.Terms, err)
		}
	}
	for _, c := range searchCases {
		got, err := find(mustParse(t, c.q))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q (%s): %v, %v; want %v", c.q, FTS5Match(mustParse(t, c.q)), got, err, c.want)
		}
	}
}

// TestTSQueryOnPostgres: every compiled tsquery is one PostgreSQL
// accepts, and the table's queries find what they should, as on SQLite.
func TestTSQueryOnPostgres(t *testing.T) {
	t.Parallel()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ctx := context.Background()
	find := func(q *protocol.SearchQuery) ([]string, error) {
		var ids []string
		for id, body := range searchDocs {
			var hit bool
			if err := conn.QueryRow(ctx, `SELECT CAST($1 AS tsvector) @@ CAST($2 AS tsquery)`, tsvectorLiteral(nil, protocol.SearchWords(body)), TSQuery(q)).Scan(&hit); err != nil {
				return nil, err
			}
			if hit {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids, nil
	}
	for _, q := range searchQueries(t) {
		if _, err := find(q); err != nil {
			t.Errorf("PostgreSQL refused %s (from %+v): %v", TSQuery(q), q.Terms, err)
		}
	}
	for _, c := range searchCases {
		got, err := find(mustParse(t, c.q))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q (%s): %v, %v; want %v", c.q, TSQuery(mustParse(t, c.q)), got, err, c.want)
		}
	}
}

// FuzzFTS5Match: whatever protocol.ParseSearch accepts compiles to an
// expression SQLite's FTS5 runs without a syntax error (the refusal a
// person sees is always the query language's, never the engine's).
func FuzzFTS5Match(f *testing.F) {
	for _, s := range []string{"auth", `"a b" -c d*`, "NEAR", "a-b*", `x "OR" y`, "数据*"} {
		f.Add(s)
	}
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'ascii')`); err != nil {
		f.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO docs(body) VALUES ('the auth token flow')`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := protocol.ParseSearch(s)
		if err != nil {
			return
		}
		rows, err := db.Query(`SELECT rowid FROM docs WHERE docs MATCH ?`, FTS5Match(q))
		if err != nil {
			t.Fatalf("%q → %s: %v", s, FTS5Match(q), err)
		}
		rows.Close()
	})
}
