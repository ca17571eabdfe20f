package top

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// search is the view's search: the query prompt while it is open, and the
// page of hits shown in place of the room once a query ran.
type search struct {
	// prompting: the one-line prompt is open at the bottom of the screen
	// and every printable key edits input, the query being typed.
	prompting bool
	input     string
	// refusal is why the last search was refused, escaped for one line;
	// it is shown until the next search runs or the prompt is left.
	refusal string
	// asked numbers the searches run; an answer to an older one (one
	// cancelled with esc) is dropped. running: the answer to asked has
	// not arrived yet.
	asked   int
	running bool
	// page is the page of hits shown (nil: the room is shown), found by
	// query; pageNo counts the pages shown from 1; selected is the index
	// of the selected hit in page.Items.
	page     *core.SearchPage
	query    string
	pageNo   int
	selected int
}

// searchMsg is the answer to search number n, which asked q.
type searchMsg struct {
	n    int
	q    core.SearchQuery
	page *core.SearchPage
	err  error
}

// Highlighting of the matched words of a snippet: reverse video, always
// switched off again after the word, so no style leaks into the rest of
// the line. These are the only escape sequences the search view writes
// itself; every piece of peer text between them is escaped.
const (
	highlightOn  = "\x1b[7m"
	highlightOff = "\x1b[27m"
)

// runSearch asks the source for q as search number m.search.asked+1.
func (m Model) runSearch(q core.SearchQuery) (Model, tea.Cmd) {
	m.search.asked++
	m.search.running = true
	n, src, ctx := m.search.asked, m.src, m.ctx
	return m, func() tea.Msg {
		page, err := src.Search(ctx, q)
		return searchMsg{n: n, q: q, page: page, err: err}
	}
}

// searched takes the answer to a search: a page replaces the one shown
// (the first hit selected, the prompt closed); a refusal is shown on the
// prompt, which stays open with the query as typed, or above the hits for
// a next page that failed.
func (m Model) searched(msg searchMsg) Model {
	if msg.n != m.search.asked || !m.search.running {
		return m // an answer to a search left with esc
	}
	m.search.running = false
	if msg.err != nil {
		m.search.refusal = screenSafe(protocol.AsError(wording.CLIError(msg.err)).Message)
		return m
	}
	page := msg.page
	if page == nil {
		page = &core.SearchPage{Query: msg.q.Query}
	}
	if msg.q.Cursor == "" {
		m.search.pageNo = 1
	} else {
		m.search.pageNo++
	}
	m.search.page, m.search.query, m.search.selected = page, msg.q.Query, 0
	m.search.prompting, m.search.input, m.search.refusal = false, "", ""
	return m
}

// promptKey edits the open prompt: printable keys add to the query,
// backspace takes its last character away, ctrl+u empties it, enter runs
// it, esc closes the prompt (dropping a search still running).
func (m Model) promptKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "ctrl+c":
		return m, tea.Quit
	case "esc":
		m.search.prompting, m.search.input, m.search.refusal, m.search.running = false, "", "", false
	case "enter":
		if !m.search.running {
			m.search.refusal = ""
			return m.runSearch(core.SearchQuery{Query: m.search.input})
		}
	case "backspace":
		if _, size := utf8.DecodeLastRuneInString(m.search.input); size > 0 {
			m.search.input = m.search.input[:len(m.search.input)-size]
		}
	case "ctrl+u":
		m.search.input = ""
	default:
		if k.Text != "" && !k.Mod.Contains(tea.ModCtrl) && !k.Mod.Contains(tea.ModAlt) {
			m.search.input += k.Text
		}
	}
	return m, nil
}

// paste adds pasted text to the open prompt, its line breaks and tabs
// as spaces: the query is one line.
func (m Model) paste(text string) Model {
	if m.search.prompting {
		m.search.input += strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(text)
	}
	return m
}

// promptLines is what the open prompt shows at the bottom: the refusal of
// the last query, wrapped to the width, then the query being typed.
func (m Model) promptLines() []string {
	if !m.search.prompting {
		return nil
	}
	var out []string
	if m.search.refusal != "" {
		text := "refused: " + m.search.refusal
		if m.width > 0 {
			text = ansi.Wrap(text, m.width, "")
		}
		out = strings.Split(text, "\n")
	}
	hint := "  (enter searches, esc cancels)"
	if m.search.running {
		hint = "  searching…"
	}
	query := screenSafe(m.search.input) + "█"
	if m.width > 0 && 1+ansi.StringWidth(query+hint) > m.width {
		// The hint gives way first; then a query longer than the line
		// shows its end, where the typing is.
		hint = ""
		if room := m.width - 1; ansi.StringWidth(query) > room {
			query = ansi.TruncateLeft(query, ansi.StringWidth(query)-room+1, "…")
		}
	}
	return append(out, "/"+query+hint)
}

// searchKey handles the keys of the page of hits shown; it reports false
// for a key it leaves to the room view (q, ctrl+c).
func (m Model) searchKey(k tea.KeyPressMsg) (Model, tea.Cmd, bool) {
	items := m.search.page.Items
	switch k.String() {
	case "esc":
		m.search = search{asked: m.search.asked}
		m.opening = ""
	case "up", "k":
		m.search.selected = max(0, m.search.selected-1)
	case "down", "j":
		m.search.selected = max(0, min(m.search.selected+1, len(items)-1))
	case "enter":
		if m.search.selected < len(items) {
			m.opening = items[m.search.selected].Message.MessageID
			return m, m.fetch(m.opening), true
		}
	case "n":
		if next := m.search.page.NextCursor; next != nil && !m.search.running {
			m.search.refusal = ""
			m, cmd := m.runSearch(core.SearchQuery{Query: m.search.query, Cursor: *next})
			return m, cmd, true
		}
	default:
		return m, nil, false
	}
	return m, nil, true
}

// searchLines shows the page of hits in place of the room: what was
// searched and what to press, then one line per hit (kind, sender,
// subject) with its snippet below, the selected hit marked and kept in
// sight.
func (m Model) searchLines() []string {
	p := m.search.page
	count := "no messages match"
	switch n := len(p.Items); {
	case n == 1:
		count = "1 hit"
	case n > 1:
		count = fmt.Sprintf("%d hits", n)
	}
	if m.search.pageNo > 1 {
		count += fmt.Sprintf(" (page %d)", m.search.pageNo)
	}
	keys := "↑/↓ select, enter opens, / searches again, esc back to the room, q quits"
	if p.NextCursor != nil {
		count += "; more hits exist: n shows the next page"
		keys = "↑/↓ select, enter opens, n next page, / searches again, esc back to the room, q quits"
	}
	out := []string{fmt.Sprintf("acc top — %s — search %s: %s", screenSafe(m.title), screenSafe(m.search.query), count), keys}
	if m.search.refusal != "" && !m.search.prompting {
		out = append(out, "refused: "+m.search.refusal)
	}
	if len(p.Damaged) > 0 {
		out = append(out, core.DamagedLine(p.Damaged))
	}
	if len(p.Items) == 0 {
		return out
	}
	out = append(out, "")
	// Each hit takes two lines; when they do not all fit, a window of
	// them that holds the selection, then "… N more".
	shown, start := len(p.Items), 0
	if m.height > 0 {
		if room := m.height - len(out); 2*len(p.Items) > room {
			shown = max(1, (room-1)/2)
			if m.search.selected >= shown {
				start = m.search.selected - shown + 1
			}
		}
	}
	for i := start; i < start+shown; i++ {
		h := p.Items[i]
		mark := " "
		if i == m.search.selected {
			mark = ">"
		}
		out = append(out, fmt.Sprintf("%s %-9s %-16s \"%s\"", mark, screenSafe(h.Message.Kind), screenSafe(h.Message.FromParticipantID), screenSafe(h.Message.Subject)),
			fmt.Sprintf("      %s: %s", screenSafe(h.Snippet.Field), markSnippet(h.Snippet)))
	}
	if shown < len(p.Items) {
		out = append(out, fmt.Sprintf("  … %d more (↑/↓)", len(p.Items)-shown))
	}
	return out
}

// markSnippet shows a snippet on one line: each piece of its text escaped
// by the display rule, the highlighted words in reverse video. A
// highlight out of order or outside the text is left unmarked.
func markSnippet(s core.Snippet) string {
	var b strings.Builder
	runes := []rune(s.Text)
	at := 0
	for _, h := range s.Highlights {
		if h[0] < at || h[1] > len(runes) || h[0] >= h[1] {
			continue
		}
		b.WriteString(screenSafe(string(runes[at:h[0]])))
		b.WriteString(highlightOn + screenSafe(string(runes[h[0]:h[1]])) + highlightOff)
		at = h[1]
	}
	b.WriteString(screenSafe(string(runes[at:])))
	return b.String()
}
