package protocol

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a search query (docs/protocol.md#search-queries).
const (
	// MaxSearchQueryBytes bounds a whole query, in UTF-8 bytes.
	MaxSearchQueryBytes = 1000
	// MaxSearchTerms bounds how many terms (words, phrases, prefixes,
	// exclusions) one query holds.
	MaxSearchTerms = 32
	// MinSearchPrefix is the fewest letters or digits a prefix term
	// (tok*) keeps before its star: shorter ones match nearly everything.
	MinSearchPrefix = 2
	// MaxSearchWordBytes bounds an indexed word, in UTF-8 bytes: longer
	// runs of letters and digits (a hash, an encoded blob) are not
	// indexed, so no query finds them, on either engine.
	MaxSearchWordBytes = 255
)

// SearchTerm is one term of a search query: the words it stands for
// (lower-cased runs of letters and digits, in order), and how it matches.
type SearchTerm struct {
	// Words are the term's words: one for a word or a prefix, one or more
	// for a phrase (a word written with inner punctuation, auth-token, is
	// the phrase of its parts).
	Words []string `json:"words"`
	// Prefix: the last word matches any word it begins (tok* finds token).
	Prefix bool `json:"prefix,omitempty"`
	// Exclude: a hit must not match this term (-word, -"a phrase").
	Exclude bool `json:"exclude,omitempty"`
}

// SearchQuery is a parsed query: every term without Exclude must match,
// none with it may. At least one term is not excluded.
type SearchQuery struct {
	Terms []SearchTerm `json:"terms"`
}

// searchExample is the example every refusal of a query shows.
const searchExample = `auth token "refresh flow" -draft migrat*`

// ParseSearch reads a query in the language of
// docs/protocol.md#search-queries, meant to be guessed:
//
//   - words, separated by spaces, must all match (case and accents as the
//     engines fold them);
//   - "a phrase" matches those words in that order;
//   - -word or -"a phrase" excludes what matches it;
//   - tok* matches words that begin with tok (at least MinSearchPrefix
//     letters or digits before the star).
//
// A word is a run of letters and digits; other characters inside a bare
// word split it into a phrase of its parts (auth-token is "auth token").
// Characters the engines read as operators — ( ) : ^ + ~ * { } [ ] < > | &
// ! = — are refused where they would change the meaning, as are an
// unterminated quote, a term with no letter or digit, a query of
// exclusions alone, more than MaxSearchTerms terms and more than
// MaxSearchQueryBytes bytes. The refusal is search_query_invalid (exit 2)
// and shows an example; it never passes engine syntax through.
func ParseSearch(q string) (*SearchQuery, error) {
	bad := func(format string, args ...any) error {
		return Errorf(ReasonSearchQueryInvalid, "%s; write words, \"phrases\", -excluded and prefix* terms, such as: %s",
			fmt.Sprintf(format, args...), searchExample)
	}
	if !utf8.ValidString(q) {
		return nil, bad("the query is not valid UTF-8")
	}
	if len(q) > MaxSearchQueryBytes {
		return nil, bad("the query has %d bytes, more than %d", len(q), MaxSearchQueryBytes)
	}
	if strings.ContainsFunc(q, func(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }) {
		return nil, bad("the query holds a control character")
	}
	out := &SearchQuery{}
	rest := strings.TrimSpace(q)
	if rest == "" {
		return nil, bad("the query is empty")
	}
	for rest != "" {
		t := SearchTerm{}
		if strings.HasPrefix(rest, "-") {
			t.Exclude = true
			rest = rest[1:]
			if rest == "" || startsSpace(rest) {
				return nil, bad("a lone - excludes nothing; put it right before a word, as in -draft")
			}
		}
		var raw string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, bad("a quote is not closed")
			}
			raw, rest = rest[1:1+end], rest[2+end:]
			if rest != "" && !startsSpace(rest) {
				return nil, bad("put a space after the closing quote of %q", clipTerm(raw))
			}
			t.Words = searchWords(raw)
			if len(t.Words) == 0 {
				return nil, bad("the phrase %q has no letter or digit", clipTerm(raw))
			}
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			raw, rest = rest[:end], rest[end:]
			if strings.Contains(raw, `"`) {
				return nil, bad("a quote inside %q: quote whole phrases, as in \"refresh flow\"", clipTerm(raw))
			}
			word := raw
			if strings.HasSuffix(word, "*") {
				t.Prefix = true
				word = word[:len(word)-1]
			}
			if i := strings.IndexAny(word, "()*:^+~{}[]<>|&!="); i >= 0 {
				return nil, bad("%q holds %q, which this query language does not use (to find it as text, quote it: \"%s\")", clipTerm(raw), word[i:i+1], clipTerm(strings.ReplaceAll(word, `"`, "")))
			}
			t.Words = searchWords(word)
			if len(t.Words) == 0 {
				return nil, bad("%q has no letter or digit", clipTerm(raw))
			}
			if t.Prefix && utf8.RuneCountInString(t.Words[len(t.Words)-1]) < MinSearchPrefix {
				return nil, bad("the prefix %q is too short: give at least %d letters or digits before the *", clipTerm(raw), MinSearchPrefix)
			}
		}
		out.Terms = append(out.Terms, t)
		if len(out.Terms) > MaxSearchTerms {
			return nil, bad("the query has more than %d terms", MaxSearchTerms)
		}
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
	}
	for _, t := range out.Terms {
		if !t.Exclude {
			return out, nil
		}
	}
	return nil, bad("the query only excludes; give at least one word to find")
}

// SearchWords returns the words of s as search indexes and compares them
// (docs/protocol.md#search-queries): its runs of letters and digits, with
// the combining marks on them, lower-cased, in order; words longer than
// MaxSearchWordBytes are left out.
func SearchWords(s string) []string {
	return slices.DeleteFunc(searchWords(s), func(w string) bool { return len(w) > MaxSearchWordBytes })
}

// SearchGap stands in SearchDocument's word lists where a phrase must
// not continue: between the body and each handoff line, and in place of
// a word too long to index. No query word is ever SearchGap.
const SearchGap = ""

// MaxSearchDocumentBytes bounds what one message's index takes as
// PostgreSQL stores a tsvector, which it keeps under 1 MiB: each distinct
// word its bytes rounded up to even plus 4, each further occurrence 2
// (up to 256 per word).
const MaxSearchDocumentBytes = 1_000_000

// SearchDocument returns the words of m that search indexes
// (docs/protocol.md#search-index): those of the subject, and those of the
// body followed by the handoff's completed, remaining and blockers lines,
// a SearchGap before each line and in place of each word longer than
// MaxSearchWordBytes, so that no phrase spans two lines or a left-out
// word; a word met once the document has taken MaxSearchDocumentBytes
// is a gap too. A decision is indexed as any message is, by its subject and body.
func SearchDocument(m *Message) (subject, body []string) {
	subject = documentWords(m.Subject)
	body = documentWords(m.Body)
	if h := m.Handoff; h != nil {
		for _, list := range [][]string{h.Completed, h.Remaining, h.Blockers} {
			for _, line := range list {
				body = append(body, SearchGap)
				body = append(body, documentWords(line)...)
			}
		}
	}
	// Past MaxSearchDocumentBytes a word is a gap: PostgreSQL refuses a
	// larger tsvector, and both engines must hold the same words.
	positions := map[string]int{}
	total := 0
	for _, words := range [][]string{subject, body} {
		for i, w := range words {
			if w == SearchGap {
				continue
			}
			n, cost := positions[w], 0
			switch {
			case n == 0:
				cost = (len(w)+1)&^1 + 4
			case n < 256:
				cost = 2
			}
			if total+cost > MaxSearchDocumentBytes {
				words[i] = SearchGap
				continue
			}
			positions[w] = n + 1
			total += cost
		}
	}
	return subject, body
}

// documentWords is SearchWords with a SearchGap for each word it leaves
// out for its length.
func documentWords(s string) []string {
	words := searchWords(s)
	for i, w := range words {
		if len(w) > MaxSearchWordBytes {
			words[i] = SearchGap
		}
	}
	return words
}

// searchWords splits s into its runs of letters and digits (with the
// combining marks written on them, as the engines' tokenizers keep them),
// lower-cased.
func searchWords(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), notWordRune)
	return slices.DeleteFunc(words, func(w string) bool {
		return !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
	})
}

// notWordRune reports whether r separates words: anything but a letter, a
// digit or a combining mark.
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
}

func startsSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// clipTerm shortens a term quoted in a refusal.
func clipTerm(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	r := []rune(s)
	return string(r[:40]) + "…"
}
