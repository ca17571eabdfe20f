package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// SnippetCodePoints bounds a search hit's snippet: the window of stored
// text around the first matched word, in code points, "…" marks
// included (docs/protocol.md#search-results).
const SnippetCodePoints = 160

// SearchQuery is a search of the room's history (docs/protocol.md#search-results).
// Query is required; the filters narrow it when set.
type SearchQuery struct {
	// Query is the text in the language of docs/protocol.md#search-queries.
	Query string
	// From keeps messages sent by any of these participants; To keeps
	// messages addressed to this one. Each must be a participant of the
	// room (unknown_recipient, exit 4).
	From []string
	To   string
	// Kind keeps messages of one kind; Current keeps decisions that are
	// their group's head (it implies kind decision).
	Kind    string
	Current bool
	// Since and Until keep messages sent at or after Since and before
	// Until; the zero time leaves that side open.
	Since, Until time.Time
	// Thread keeps one thread's messages.
	Thread string
	// Cursor is a previous page's nextCursor: the message id the page
	// continues after. Limit is 0 for DefaultPageLimit, else 1..500.
	Cursor string
	Limit  int
}

// SearchHit is one message a search found: its summary, as history shows
// it, and a snippet of where it matched.
type SearchHit struct {
	Message Summary `json:"message"`
	Snippet Snippet `json:"snippet"`
}

// Snippet is a window of one field of a hit around its first matched
// word (docs/protocol.md#search-results).
type Snippet struct {
	// Field names where the window is from: subject, body,
	// handoff.completed, handoff.remaining or handoff.blockers.
	Field string `json:"field"`
	// Text is the stored text of the window, exactly as the peer wrote it
	// (JSON output is never escaped), with "…" where the field was cut.
	Text string `json:"text"`
	// Highlights are the matched words of Text, as [start, end) offsets
	// in code points, in order and never overlapping.
	Highlights [][2]int `json:"highlights"`
}

// SearchPage is one page of hits, best ranked first, within the page
// limit and PageBudgetBytes; NextCursor is the last hit's id when more
// remain.
type SearchPage struct {
	Query      string      `json:"query"`
	Items      []SearchHit `json:"items"`
	NextCursor *string     `json:"nextCursor"`
	// Damaged names the messages this page left out because they do not
	// decode (docs/design.md#damaged-records).
	Damaged []storage.DamagedRecord `json:"damaged,omitempty"`
}

// Search finds the room's messages that match q.Query, with the
// visibility of history: every message of the room, public to every
// participant (docs/protocol.md#sync-scopes). Search never writes.
//
// Errors: search_query_invalid (exit 2) for a query outside the
// language; invalid_flag_value (exit 2) for an unknown kind, Current
// with another kind, or Since not before Until;
// invalid_limit (exit 2); invalid_cursor (exit 2) for a cursor that is
// not a message id or not a hit of this query; unknown_recipient (exit 4)
// for a From or To that is no participant of the room;
// page_budget_exceeded (exit 4) for a hit whose summary alone exceeds the
// page budget.
func (r *Room) Search(ctx context.Context, q SearchQuery) (*SearchPage, error) {
	parsed, sq, limit, err := prepareSearch(q)
	if err != nil {
		return nil, err
	}
	page, err := r.search(ctx, q, parsed, sq, limit)
	if errors.Is(err, errIndexPending) {
		// Messages an older acc wrote after the upgrade are indexed
		// first, so the search misses none of them
		// (docs/protocol.md#search-index).
		err = r.Store.Update(ctx, func(tx storage.Tx) error {
			_, _, err := tx.IndexPending()
			return err
		})
		if err == nil {
			page, err = r.search(ctx, q, parsed, sq, limit)
		}
	}
	if err != nil {
		return nil, err
	}
	return page, nil
}

// errIndexPending ends a search's read when messages wait to be indexed.
var errIndexPending = errors.New("messages wait to be indexed")

// search is one read of Search: errIndexPending when messages wait to be
// indexed.
func (r *Room) search(ctx context.Context, q SearchQuery, parsed *protocol.SearchQuery, sq storage.SearchQuery, limit int) (*SearchPage, error) {
	page := &SearchPage{Query: q.Query, Items: []SearchHit{}}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		if n, err := tx.PendingIndex(); err != nil {
			return err
		} else if n > 0 {
			return errIndexPending
		}
		for _, id := range append(slices.Clone(q.From), q.To) {
			if id == "" {
				continue
			}
			p, err := tx.Participant(storage.Durable, id)
			if err != nil {
				return err
			}
			if p == nil {
				return unknownParticipant(tx, id)
			}
		}
		views := newDecisionViews(tx)
		var scanErr error
		err := tx.SearchMessages(sq, func(m protocol.Message) bool {
			if len(page.Items) == limit {
				page.NextCursor = &page.Items[len(page.Items)-1].Message.MessageID
				return false
			}
			hit := SearchHit{Message: Summarise(&m), Snippet: MakeSnippet(&m, parsed)}
			if hit.Message.DecisionStatus, scanErr = views.of(&m); scanErr != nil {
				return false
			}
			if !page.fits(hit) {
				if len(page.Items) == 0 {
					scanErr = protocol.Errorf(protocol.ReasonPageBudgetExceeded, "one search hit exceeds the page budget of %d bytes", PageBudgetBytes).With("messageId", m.MessageID)
					return false
				}
				page.NextCursor = &page.Items[len(page.Items)-1].Message.MessageID
				return false
			}
			page.Items = append(page.Items, hit)
			return true
		})
		page.Damaged = tx.Damaged()
		if err != nil {
			return err
		}
		return scanErr
	})
	if err != nil {
		return nil, err
	}
	if page.NextCursor != nil {
		id := *page.NextCursor
		page.NextCursor = &id
	}
	return page, nil
}

// fits reports whether the page plus h, with h's id as the next cursor,
// serialises within PageBudgetBytes.
func (p *SearchPage) fits(h SearchHit) bool {
	next := h.Message.MessageID
	b, err := protocol.MarshalIndent(SearchPage{Query: p.Query, Items: append(p.Items[:len(p.Items):len(p.Items)], h), NextCursor: &next})
	return err == nil && len(b) <= PageBudgetBytes
}

// MakeSnippet picks the field of m where q matched most — the body and the
// handoff lines before the subject, which every summary shows already —
// and returns a window of it of at most SnippetCodePoints code points
// around its first matched word, with every matched word highlighted. A
// hit found through its subject alone gets the subject.
func MakeSnippet(m *protocol.Message, q *protocol.SearchQuery) Snippet {
	type field struct{ name, text string }
	fields := []field{{"body", m.Body}}
	if h := m.Handoff; h != nil {
		for _, l := range []struct {
			name  string
			lines []string
		}{{"handoff.completed", h.Completed}, {"handoff.remaining", h.Remaining}, {"handoff.blockers", h.Blockers}} {
			for _, line := range l.lines {
				fields = append(fields, field{l.name, line})
			}
		}
	}
	fields = append(fields, field{"subject", m.Subject})
	best, bestSpans := -1, [][2]int(nil)
	for i, f := range fields {
		spans := matchedWords(f.text, q)
		if len(spans) > len(bestSpans) || (best < 0 && i == len(fields)-1) {
			best, bestSpans = i, spans
		}
	}
	return window(fields[best].name, fields[best].text, bestSpans)
}

// matchedWords returns the byte spans of the words of s that a term of q
// (not excluded) names: any word of a phrase, a word equal to a bare
// term, a word beginning with a prefix term's last word. Words are read
// by the rule of protocol.SearchWords, in the stored text.
func matchedWords(s string, q *protocol.SearchQuery) [][2]int {
	var spans [][2]int
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := protocol.SearchWords(s[start:end])
		if len(w) == 1 && termsMatch(w[0], q) {
			spans = append(spans, [2]int{start, end})
		}
		start = -1
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return spans
}

func termsMatch(word string, q *protocol.SearchQuery) bool {
	for _, t := range q.Terms {
		if t.Exclude {
			continue
		}
		for i, w := range t.Words {
			if word == w || (t.Prefix && i == len(t.Words)-1 && strings.HasPrefix(word, w)) {
				return true
			}
		}
	}
	return false
}

// window cuts text to at most SnippetCodePoints code points around its
// first span, starting a little before it, and converts the spans inside
// the window to code-point offsets of the result.
func window(name, text string, spans [][2]int) Snippet {
	total := utf8.RuneCountInString(text)
	if total <= SnippetCodePoints {
		return Snippet{Field: name, Text: text, Highlights: cpSpans(text, 0, len(text), 0, spans)}
	}
	// Byte offsets of each code point, to move between the two.
	offs := make([]int, 0, total+1)
	for i := range text {
		offs = append(offs, i)
	}
	offs = append(offs, len(text))
	first := 0
	if len(spans) > 0 {
		first = utf8.RuneCountInString(text[:spans[0][0]])
	}
	lead := SnippetCodePoints / 4
	from := max(0, first-lead)
	budget := SnippetCodePoints
	if from > 0 {
		budget-- // the leading …
	}
	to := min(total, from+budget)
	if to < total {
		to-- // the trailing …
	}
	// Start at a word boundary when one is near.
	for k := from; k > 0 && k < first && k < from+12; k++ {
		if r, _ := utf8.DecodeRuneInString(text[offs[k-1]:]); unicode.IsSpace(r) {
			from = k
			break
		}
	}
	prefix, suffix := "", ""
	if from > 0 {
		prefix = "…"
	}
	if to < total {
		suffix = "…"
	}
	var kept [][2]int
	for _, s := range spans {
		if s[0] >= offs[from] && s[1] <= offs[to] {
			kept = append(kept, s)
		}
	}
	shift := 0
	if prefix != "" {
		shift = 1
	}
	return Snippet{Field: name, Text: prefix + text[offs[from]:offs[to]] + suffix, Highlights: cpSpans(text, offs[from], offs[to], shift, kept)}
}

// cpSpans converts byte spans of text within [lo, hi) to code-point
// offsets from lo, plus shift.
func cpSpans(text string, lo, hi, shift int, spans [][2]int) [][2]int {
	out := [][2]int{}
	for _, s := range spans {
		if s[0] < lo || s[1] > hi {
			continue
		}
		a := shift + utf8.RuneCountInString(text[lo:s[0]])
		out = append(out, [2]int{a, a + utf8.RuneCountInString(text[s[0]:s[1]])})
	}
	return out
}

// unknownParticipant is the refusal of a filter naming no participant of
// the room (unknown_recipient, exit 4): it names who is there, up to
// twenty, so the fix is in the message.
func unknownParticipant(tx storage.ReadTx, id string) error {
	ps, err := tx.Participants(storage.Durable)
	if err != nil {
		return err
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.ParticipantID)
	}
	slices.Sort(names)
	known := "nobody has joined it yet"
	switch {
	case len(names) > 20:
		known = "its participants include " + strings.Join(names[:20], ", ") + fmt.Sprintf(" and %d more", len(names)-20)
	case len(names) > 0:
		known = "its participants are " + strings.Join(names, ", ")
	}
	return protocol.Errorf(protocol.ReasonUnknownRecipient, "no participant of this room is called %s; %s", id, known).With("participantId", id)
}

// CheckSearch refuses q as Search would, without a room: the query
// (search_query_invalid), kind, current and since/until
// (invalid_flag_value), limit (invalid_limit), cursor (invalid_cursor),
// thread (invalid_input), all exit 2. A caller checks first so that a
// bad search neither opens nor upgrades a store. The participants of
// From and To are checked by Search, which reads the room.
func CheckSearch(q SearchQuery) error {
	_, _, _, err := prepareSearch(q)
	return err
}

// prepareSearch checks q and returns its parsed query, the storage query
// and the page limit.
func prepareSearch(q SearchQuery) (*protocol.SearchQuery, storage.SearchQuery, int, error) {
	parsed, err := protocol.ParseSearch(q.Query)
	if err != nil {
		return nil, storage.SearchQuery{}, 0, err
	}
	if q.Kind != "" && !slices.Contains(protocol.MessageKinds, q.Kind) {
		return nil, storage.SearchQuery{}, 0, protocol.Errorf(protocol.ReasonInvalidFlagValue, "%s %q is not one of %s", protocol.Field("kind"), q.Kind, strings.Join(protocol.MessageKinds, ", ")).With("type", q.Kind)
	}
	if q.Current && q.Kind != "" && q.Kind != protocol.KindDecision {
		return nil, storage.SearchQuery{}, 0, protocol.Errorf(protocol.ReasonInvalidFlagValue, "%s keeps current decisions only; it cannot be combined with %s", protocol.Field("current"), protocol.FieldValue{Name: "kind", Value: q.Kind})
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return nil, storage.SearchQuery{}, 0, protocol.Errorf(protocol.ReasonInvalidFlagValue, "%s (%s) must be before %s (%s)", protocol.Field("since"), protocol.FormatTime(q.Since), protocol.Field("until"), protocol.FormatTime(q.Until))
	}
	limit, err := CheckLimit(q.Limit)
	if err != nil {
		return nil, storage.SearchQuery{}, 0, err
	}
	if q.Cursor != "" && !protocol.IsPortableID(q.Cursor) {
		return nil, storage.SearchQuery{}, 0, protocol.Errorf(protocol.ReasonInvalidCursor,
			"a search cursor is a message id (a previous page's nextCursor), not %q; start again without %s", q.Cursor, protocol.Field("cursor"))
	}
	if q.Thread != "" && !protocol.IsPortableID(q.Thread) {
		return nil, storage.SearchQuery{}, 0, protocol.Errorf(protocol.ReasonInvalidInput, "%s %q is not a thread id", protocol.Field("thread"), q.Thread)
	}
	sq := storage.SearchQuery{Match: parsed, From: q.From, To: q.To, Kind: q.Kind, ThreadID: q.Thread, CurrentDecisions: q.Current, After: q.Cursor}
	if !q.Since.IsZero() {
		sq.Since = protocol.FormatTime(q.Since)
	}
	if !q.Until.IsZero() {
		sq.Until = protocol.FormatTime(q.Until)
	}
	return parsed, sq, limit, nil
}
