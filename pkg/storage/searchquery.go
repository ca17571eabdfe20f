package storage

import (
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// FTS5Match renders q as an SQLite FTS5 MATCH expression
// (docs/protocol.md#search-queries). Every word is a double-quoted FTS5
// string, so no word of the query is ever read as FTS5 syntax (OR, NEAR,
// a column filter): terms are joined by FTS5's implicit AND, a phrase is
// one string of its words, a prefix ends its string with *, and each
// excluded term follows the others as NOT. q must come from
// protocol.ParseSearch (at least one term not excluded).
func FTS5Match(q *protocol.SearchQuery) string {
	var pos, neg []string
	for _, t := range q.Terms {
		s := `"` + strings.ReplaceAll(strings.Join(t.Words, " "), `"`, `""`) + `"`
		if t.Prefix {
			s += "*"
		}
		if t.Exclude {
			neg = append(neg, s)
		} else {
			pos = append(pos, s)
		}
	}
	expr := strings.Join(pos, " ")
	if len(pos) > 1 && len(neg) > 0 {
		expr = "(" + expr + ")"
	}
	for _, n := range neg {
		expr += " NOT " + n
	}
	return expr
}

// TSQuery renders q as PostgreSQL tsquery input, read with CAST(… AS
// tsquery) and so never through a text-search configuration
// (docs/protocol.md#search-queries): every word a quoted lexeme, as
// protocol.SearchWords wrote it into the index, terms
// joined by &, a phrase's words by <->, a prefix's last word marked :*,
// and excluded terms negated with !. Quoting keeps any character of a
// word from being read as tsquery syntax. q must come from
// protocol.ParseSearch.
func TSQuery(q *protocol.SearchQuery) string {
	parts := make([]string, 0, len(q.Terms))
	for _, t := range q.Terms {
		words := make([]string, len(t.Words))
		for i, w := range t.Words {
			words[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(w) + "'"
		}
		if t.Prefix {
			words[len(words)-1] += ":*"
		}
		s := strings.Join(words, " <-> ")
		if len(words) > 1 {
			s = "(" + s + ")"
		}
		if t.Exclude {
			s = "!" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " & ")
}
