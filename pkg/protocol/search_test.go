package protocol

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestParseSearch(t *testing.T) {
	t.Parallel()
	w := func(ws ...string) SearchTerm { return SearchTerm{Words: ws} }
	for _, c := range []struct {
		q    string
		want []SearchTerm
	}{
		{"auth", []SearchTerm{w("auth")}},
		{"  Auth   TOKENS ", []SearchTerm{w("auth"), w("tokens")}},
		{`"refresh flow" token`, []SearchTerm{w("refresh", "flow"), w("token")}},
		{`-draft auth`, []SearchTerm{{Words: []string{"draft"}, Exclude: true}, w("auth")}},
		{`auth -"old plan"`, []SearchTerm{w("auth"), {Words: []string{"old", "plan"}, Exclude: true}}},
		{`migrat*`, []SearchTerm{{Words: []string{"migrat"}, Prefix: true}}},
		{`auth-token`, []SearchTerm{w("auth", "token")}},
		{`OR AND NOT NEAR`, []SearchTerm{w("or"), w("and"), w("not"), w("near")}},
		{`café 数据库 v2`, []SearchTerm{w("café"), w("数据库"), w("v2")}},
		{`"a,b; c."`, []SearchTerm{w("a", "b", "c")}},
		{"tab\tseparated\nwords", []SearchTerm{w("tab"), w("separated"), w("words")}},
	} {
		got, err := ParseSearch(c.q)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		if diff := cmp.Diff(c.want, got.Terms); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.q, diff)
		}
	}
}

func TestParseSearchRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ q, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{`"unclosed`, "not closed"},
		{`"a"b`, "space after the closing quote"},
		{`ab"c`, "a quote inside"},
		{"-", "lone -"},
		{"- auth", "lone -"},
		{"-draft", "only excludes"},
		{`-a -"b c"`, "only excludes"},
		{"title:auth", `":"`},
		{"(auth OR token)", `"("`},
		{"auth^2", `"^"`},
		{"mig*rat", `"*"`},
		{"**", `"*"`},
		{"a*", "too short"},
		{"*", "no letter or digit"},
		{"!!!", `"!"`},
		{"...", "no letter or digit"},
		{`""`, "no letter or digit"},
		{"\u0301\u0301", "no letter or digit"},
		{"a\x00b", "control character"},
		{"\xff", "UTF-8"},
		{strings.Repeat("w ", MaxSearchTerms+1), "more than 32 terms"},
		{strings.Repeat("x", MaxSearchQueryBytes+1), "more than 1000"},
	} {
		_, err := ParseSearch(c.q)
		pe := AsError(err)
		if err == nil || pe.Reason != ReasonSearchQueryInvalid || pe.Code() != ExitUsage {
			t.Errorf("%q: %v; want search_query_invalid, exit 2", c.q, err)
			continue
		}
		if !strings.Contains(pe.Message, c.why) || !strings.Contains(pe.Message, searchExample) || strings.ContainsAny(pe.Message, "\r\n") {
			t.Errorf("%q: message %q; want one line naming %q, with the example", c.q, pe.Message, c.why)
		}
	}
}

// FuzzParseSearch: ParseSearch never panics, and what it accepts keeps
// its promises: 1..MaxSearchTerms terms, at least one not excluded, every
// word a non-empty run of lower-case letters and digits, and a prefix's
// last word at least MinSearchPrefix long.
func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{"auth", `"a b" -c d*`, "title:x", `"x`, "-", "a-b-c*", "数据*", "OR", "\"\"", "a\"b\"", "x *y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseSearch(s)
		if err != nil {
			if pe := AsError(err); pe.Reason != ReasonSearchQueryInvalid || strings.ContainsAny(pe.Message, "\r\n") {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		positive := false
		if len(q.Terms) == 0 || len(q.Terms) > MaxSearchTerms {
			t.Fatalf("%q: %d terms", s, len(q.Terms))
		}
		for _, term := range q.Terms {
			positive = positive || !term.Exclude
			if len(term.Words) == 0 {
				t.Fatalf("%q: a term without words", s)
			}
			for _, w := range term.Words {
				if w == "" || strings.ContainsFunc(w, notWordRune) || !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
					t.Fatalf("%q: word %q", s, w)
				}
			}
			if term.Prefix && len([]rune(term.Words[len(term.Words)-1])) < MinSearchPrefix {
				t.Fatalf("%q: short prefix %v", s, term.Words)
			}
		}
		if !positive {
			t.Fatalf("%q: only exclusions accepted", s)
		}
	})
}
