package top

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// The highlight as the terminal receives it: reverse video on, then off.
const (
	rev    = "\x1b[7m"
	revOff = "\x1b[27m"
)

// typeText presses the keys of s one by one, as a terminal sends them;
// none of them may ask for anything (a search runs on enter only).
func typeText(t *testing.T, m Model, s string) Model {
	t.Helper()
	for _, r := range s {
		var cmd tea.Cmd
		m, cmd = update(t, m, tea.KeyPressMsg{Code: r, Text: string(r)})
		if cmd != nil {
			t.Fatalf("typing %q into the prompt returned a command (%T)", r, cmd())
		}
	}
	return m
}

// press presses a special key.
func press(t *testing.T, m Model, code rune) (Model, tea.Cmd) {
	t.Helper()
	return update(t, m, tea.KeyPressMsg{Code: code})
}

// answer runs cmd, which must ask the source for something, and feeds
// the view its answer.
func answer(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to run")
	}
	m, _ = update(t, m, cmd())
	return m
}

// hits builds a page of n hits: message_h00… from p01, whose snippet
// highlights the word "token".
func hits(n int) *core.SearchPage {
	p := &core.SearchPage{Query: "auth token", Items: []core.SearchHit{}}
	for i := range n {
		p.Items = append(p.Items, core.SearchHit{
			Message: core.Summary{MessageID: fmt.Sprintf("message_h%02d", i), Kind: "note", FromParticipantID: "p01", Subject: fmt.Sprintf("hit subject %02d", i)},
			Snippet: core.Snippet{Field: "body", Text: "the auth token expires", Highlights: [][2]int{{4, 8}, {9, 14}}},
		})
	}
	return p
}

func threadOf(id, subject string) *core.SyncResult {
	return &core.SyncResult{Message: &core.HistoryMessage{
		Items: []core.MessageView{{Message: protocol.Message{MessageID: id, Kind: "note", FromParticipantID: "p01", Subject: subject, Body: "the body"}}},
	}}
}

// TestSearchFindsAndOpensAHit: / opens the prompt, where every key types
// (q and k included) and backspace deletes; enter searches for exactly
// what was typed; the hits replace the room, highlighted; ↓ and enter
// open the selected hit's thread through Source.Thread; esc goes back to
// the hits, and esc again to the room.
func TestSearchFindsAndOpensAHit(t *testing.T) {
	src := &fakeSource{snap: room(3), page: hits(3), thread: threadOf("message_h01", "hit subject 01")}
	m := model(src, 120, 30)
	m, _ = update(t, m, snapMsg(src.snap))
	m = typeText(t, m, "/")
	if v := m.Render(); !strings.HasSuffix(v, "/█  (enter searches, esc cancels)") || !strings.Contains(v, "OPEN THREADS") {
		t.Fatalf("/ does not open the prompt below the room:\n%s", v)
	}
	m = typeText(t, m, "quick auth tokenx")
	m, _ = press(t, m, tea.KeyBackspace)
	if v := m.Render(); !strings.Contains(v, "/quick auth token█") {
		t.Fatalf("the prompt does not show what was typed:\n%s", v)
	}
	m, cmd := press(t, m, tea.KeyEnter)
	if v := m.Render(); !strings.Contains(v, "searching…") {
		t.Errorf("no sign of the search running:\n%s", v)
	}
	m = answer(t, m, cmd)
	if len(src.searches) != 1 || src.searches[0].Query != "quick auth token" || src.searches[0].Cursor != "" {
		t.Fatalf("searches asked: %+v", src.searches)
	}
	v := m.Render()
	for _, want := range []string{
		`search quick auth token: 3 hits`,
		`> note      p01              "hit subject 00"`,
		`  note      p01              "hit subject 02"`,
		"      body: the " + rev + "auth" + revOff + " " + rev + "token" + revOff + " expires",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the hits lack %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "OPEN THREADS") || strings.Contains(v, "█") {
		t.Errorf("the room or the prompt is still shown with the hits:\n%s", v)
	}
	if strings.Contains(v, "more hits") {
		t.Errorf("a page without a next cursor says more exist:\n%s", v)
	}

	m, _ = press(t, m, tea.KeyDown)
	m, cmd = press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	if len(src.threads) != 1 || src.threads[0] != "message_h01" {
		t.Fatalf("threads asked: %v", src.threads)
	}
	if v := m.Render(); !strings.HasPrefix(v, "esc goes back") || !strings.Contains(v, "subject: hit subject 01") {
		t.Fatalf("the hit's thread is not shown:\n%s", v)
	}
	m, _ = press(t, m, tea.KeyEscape)
	if v := m.Render(); !strings.Contains(v, `> note      p01              "hit subject 01"`) {
		t.Fatalf("esc from the thread does not return to the hits, selection kept:\n%s", v)
	}
	m, _ = press(t, m, tea.KeyEscape)
	if v := m.Render(); !strings.Contains(v, "OPEN THREADS") || strings.Contains(v, "hit subject") {
		t.Fatalf("esc from the hits does not return to the room:\n%s", v)
	}
	// Enter there opens a thread of the room again, not a hit.
	_, cmd = press(t, m, tea.KeyEnter)
	answer(t, m, cmd)
	if src.threads[len(src.threads)-1] != "message_00" {
		t.Errorf("enter in the room asked for %v", src.threads)
	}
}

// TestSearchRefusalKeepsThePrompt: a refused query shows the refusal's
// message, escaped, above the prompt, which keeps the query for editing;
// the edited query runs. esc closes the prompt, and an answer to a search
// left with esc is dropped.
func TestSearchRefusalKeepsThePrompt(t *testing.T) {
	src := &fakeSource{snap: room(2), page: hits(1),
		refusal: protocol.Errorf(protocol.ReasonSearchQueryInvalid, "a quote is not closed\u202e; write words, such as: auth token")}
	m := model(src, 80, 20)
	m, _ = update(t, m, snapMsg(src.snap))
	m = typeText(t, m, `/"auth`)
	m, cmd := press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	v := m.Render()
	if !strings.Contains(v, `refused: a quote is not closed\u202e; write words, such as:`) || !strings.Contains(v, `/"auth█`) {
		t.Fatalf("the refusal or the query is not shown:\n%s", v)
	}
	if strings.ContainsRune(v, '\u202e') || len(strings.Split(v, "\n")) > 20 {
		t.Errorf("the refusal reached the screen raw, or the view is too tall:\n%q", v)
	}
	src.refusal = nil
	m = typeText(t, m, `"`)
	m, cmd = press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	if len(src.searches) != 2 || src.searches[1].Query != `"auth"` {
		t.Fatalf("searches asked: %+v", src.searches)
	}
	if v := m.Render(); !strings.Contains(v, "1 hit") || strings.Contains(v, "refused") {
		t.Fatalf("the edited query did not show its hit:\n%s", v)
	}

	// esc cancels a prompt, and the search it ran.
	m = typeText(t, m, "/other")
	m, cmd = press(t, m, tea.KeyEnter)
	m, _ = press(t, m, tea.KeyEscape)
	src.page = hits(2)
	m = answer(t, m, cmd)
	if v := m.Render(); !strings.Contains(v, "1 hit") || strings.Contains(v, "█") {
		t.Errorf("a search cancelled with esc changed the view:\n%s", v)
	}
}

// TestSearchNoHitsAndMore: no hits say so; a page with a next cursor says
// more exist, and n asks for the next page with the same query and that
// cursor.
func TestSearchNoHitsAndMore(t *testing.T) {
	src := &fakeSource{snap: room(2), page: &core.SearchPage{Query: "zebra", Items: []core.SearchHit{}}}
	m := model(src, 100, 20)
	m, _ = update(t, m, snapMsg(src.snap))
	m = typeText(t, m, "/zebra")
	m, cmd := press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	if v := m.Render(); !strings.Contains(v, "search zebra: no messages match") {
		t.Fatalf("zero hits:\n%s", v)
	}
	// Enter and n do nothing on an empty page.
	if _, cmd := press(t, m, tea.KeyEnter); cmd != nil {
		t.Error("enter on no hits asks for something")
	}

	next := "message_h01"
	src.page = hits(2)
	src.page.NextCursor = &next
	m = typeText(t, m, "/auth token")
	m, cmd = press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	if v := m.Render(); !strings.Contains(v, "2 hits; more hits exist: n shows the next page") {
		t.Fatalf("no word of more hits:\n%s", v)
	}
	// A next page refused shows why above the hits, which stay.
	src.refusal = protocol.Errorf(protocol.ReasonInvalidCursor, "the cursor is no hit of this query")
	m, cmd = update(t, m, tea.KeyPressMsg{Code: 'n', Text: "n"})
	m = answer(t, m, cmd)
	if v := m.Render(); !strings.Contains(v, "refused: the cursor is no hit of this query") || !strings.Contains(v, "hit subject 01") {
		t.Fatalf("a refused next page:\n%s", v)
	}
	src.refusal, src.page = nil, hits(1)
	m, cmd = update(t, m, tea.KeyPressMsg{Code: 'n', Text: "n"})
	m = answer(t, m, cmd)
	if last := src.searches[len(src.searches)-1]; last.Query != "auth token" || last.Cursor != "message_h01" {
		t.Fatalf("n asked %+v", last)
	}
	if v := m.Render(); !strings.Contains(v, "1 hit (page 2)") || strings.Contains(v, "more hits") || strings.Contains(v, "refused") {
		t.Errorf("the next page:\n%s", v)
	}
	if _, cmd := update(t, m, tea.KeyPressMsg{Code: 'n', Text: "n"}); cmd != nil {
		t.Error("n on the last page asks for something")
	}
}

// TestSearchTextIsEscaped: control characters, C1 controls, overrides and
// line separators in a hit's subject, snippet and sender, and in the
// query typed, reach the screen as visible escapes; the only escape
// sequences written are the highlight's.
func TestSearchTextIsEscaped(t *testing.T) {
	hostile := "\x1b[31mred\u009b2J\u202eevil\u2028x"
	text := "a " + hostile + " token"
	n := len([]rune(text))
	page := &core.SearchPage{Items: []core.SearchHit{{
		Message: core.Summary{MessageID: "message_h00", Kind: "note", FromParticipantID: "p\u009b01", Subject: hostile},
		// One highlight over the hostile text, one on the last word, one
		// outside the text (ignored).
		Snippet: core.Snippet{Field: "body", Text: text, Highlights: [][2]int{{2, 2 + len([]rune(hostile))}, {n - 5, n}, {n, n + 3}}},
	}}}
	src := &fakeSource{snap: room(1), page: page}
	m := model(src, 200, 20)
	m, _ = update(t, m, snapMsg(src.snap))
	m = typeText(t, m, "/")
	m, _ = update(t, m, tea.PasteMsg{Content: "red\u202e\x1b token"})
	typed := m.Render()
	m, cmd := press(t, m, tea.KeyEnter)
	m = answer(t, m, cmd)
	shown := m.Render()
	if !strings.Contains(shown, rev+"token"+revOff) || !strings.Contains(shown, rev+`\u001b[31mred\u009b2J\u202eevil\u2028x`+revOff) {
		t.Errorf("the highlights are not shown:\n%q", shown)
	}
	for _, v := range []string{typed, shown} {
		plain := strings.NewReplacer(rev, "", revOff, "").Replace(v)
		if i := strings.IndexFunc(plain, func(r rune) bool {
			return r == 0x1b || r >= 0x80 && r <= 0x9f || r == '\u202e' || r == '\u2028'
		}); i >= 0 {
			t.Errorf("a raw control reached the screen at %d:\n%q", i, v)
		}
	}
	for _, want := range []string{`"\u001b[31mred\u009b2J\u202eevil\u2028x"`, `p\u009b01`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the hit does not show %s:\n%q", want, shown)
		}
	}
	if !strings.Contains(typed, `/red\u202e\u001b token█`) {
		t.Errorf("the query typed is not shown escaped:\n%q", typed)
	}
}

// TestSearchFitsTheTerminal: many hits in a small terminal keep within
// its lines and cells, with the selected hit in sight and the prompt at
// the bottom when it is open.
func TestSearchFitsTheTerminal(t *testing.T) {
	src := &fakeSource{snap: room(5), page: hits(30)}
	for _, size := range [][2]int{{80, 24}, {50, 12}, {40, 8}} {
		m := model(src, size[0], size[1])
		m, _ = update(t, m, snapMsg(src.snap))
		m = typeText(t, m, "/auth token")
		m, cmd := press(t, m, tea.KeyEnter)
		m = answer(t, m, cmd)
		for range 20 {
			m, _ = press(t, m, tea.KeyDown)
		}
		check := func(v string) {
			t.Helper()
			lines := strings.Split(v, "\n")
			if len(lines) > size[1] {
				t.Errorf("%v: %d lines:\n%s", size, len(lines), v)
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size[0] {
					t.Errorf("%v: line wider than the terminal: %q", size, l)
				}
			}
			if !strings.Contains(v, `> note      p01`) || size[0] >= 50 && !strings.Contains(v, "hit subject 20") {
				t.Errorf("%v: the selected hit is not in sight:\n%s", size, v)
			}
		}
		check(m.Render())
		if !strings.Contains(m.Render(), "more (↑/↓)") {
			t.Errorf("%v: no word of the hits left out:\n%s", size, m.Render())
		}
		m = typeText(t, m, "/"+strings.Repeat("long query ", 10))
		v := m.Render()
		check(v)
		if lines := strings.Split(v, "\n"); !strings.Contains(lines[len(lines)-1], "query █") {
			t.Errorf("%v: the prompt's end is not on the last line:\n%s", size, v)
		}
	}
}

// TestSearchBeforeTheRoomExists: before anybody attached there is no
// store and no message (the opener returns no room): a valid query finds
// nothing, an invalid one is still refused.
func TestSearchBeforeTheRoomExists(t *testing.T) {
	opened := 0
	src := &roomSource{ctx: context.Background(), wake: make(chan struct{}, 1),
		open: func(context.Context) (*core.Room, error) { opened++; return nil, nil }}
	page, err := src.Search(context.Background(), core.SearchQuery{Query: "auth token"})
	if err != nil || page == nil || len(page.Items) != 0 || page.NextCursor != nil {
		t.Fatalf("a search before the store exists: %+v, %v", page, err)
	}
	_, err = src.Search(context.Background(), core.SearchQuery{Query: `"auth`})
	if pe := protocol.AsError(err); pe == nil || pe.Reason != protocol.ReasonSearchQueryInvalid {
		t.Fatalf("an invalid query before the store exists: %v", err)
	}
	if opened != 2 {
		t.Errorf("the room was asked for %d times, want 2", opened)
	}
}
