// Package top is `acc top`: a live terminal view of one room — its
// sessions (presence, client, branch, intent), live claims (holder, time
// left) and open threads (obligation, each recipient's receipt) — updated
// as the store changes (internal/watch), re-read every few seconds for
// what changes with time alone (presence, expiry), and redrawn every
// second for the clocks. It only reads: opening a thread shows it through
// the history exact read, which moves no receipt. Built on
// charmbracelet/bubbletea; everything is fitted to the terminal's width
// (display cells) and height (lines).
package top

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/acc-go/acc/internal/watch"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// Refresh is how often the room is re-read when nothing wakes the view:
// presence and claims change with the clock alone.
const Refresh = 5 * time.Second

// Snapshot is what one refresh reads.
type Snapshot struct {
	// Waiting: the room has no store yet (nobody has attached); top
	// waits for the first attach and never creates one.
	Waiting bool
	Status  *core.Status
	Threads []core.OpenThread
	Err     error
	At      time.Time
}

// Source reads the room; Thread reads one message with its receipts;
// Search finds the room's messages that match a query, one page of hits
// at a time (core.Room.Search). None of them writes to the store.
type Source interface {
	Read(ctx context.Context) Snapshot
	Thread(ctx context.Context, messageID string) (*core.SyncResult, error)
	Search(ctx context.Context, q core.SearchQuery) (*core.SearchPage, error)
}

// Opener opens the room's store, or returns (nil, nil) while it does not
// exist yet.
type Opener func(ctx context.Context) (*core.Room, error)

// roomSource reads a room it opens on first need; once open, it starts
// the store watcher, whose wake-ups it forwards to wake.
type roomSource struct {
	ctx       context.Context
	open      Opener
	storePath string
	wake      chan struct{}
	mu        sync.Mutex
	r         *core.Room
}

func (s *roomSource) room(ctx context.Context) (*core.Room, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil {
		return s.r, nil
	}
	r, err := s.open(ctx)
	if err != nil || r == nil {
		return nil, err
	}
	s.r = r
	w := watch.Room(s.ctx, r.Store, s.storePath, 15*time.Second)
	go func() {
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-w.C:
			}
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}()
	return r, nil
}

func (s *roomSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil {
		s.r.Close()
	}
}

// Read reads the room, bounded by 5 s.
func (s *roomSource) Read(ctx context.Context) Snapshot {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snap := Snapshot{At: time.Now()}
	r, err := s.room(ctx)
	if err != nil || r == nil {
		snap.Waiting, snap.Err = err == nil, err
		return snap
	}
	snap.Status, snap.Err = r.Status(ctx, core.StatusQuery{LivePolicy: r.Install.LivePush})
	if snap.Err == nil {
		snap.Threads, snap.Err = r.OpenThreads(ctx, 30, 500)
	}
	return snap
}

func (s *roomSource) Thread(ctx context.Context, id string) (*core.SyncResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := s.room(ctx)
	if err != nil || r == nil {
		return nil, err
	}
	return r.Sync(ctx, core.SyncQuery{Scope: core.SyncScopeHistory, MessageID: id})
}

// Search runs q on the room, bounded by 5 s. A room with no store yet
// holds no message: a query its language accepts finds nothing there.
func (s *roomSource) Search(ctx context.Context, q core.SearchQuery) (*core.SearchPage, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := s.room(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil {
		if _, err := protocol.ParseSearch(q.Query); err != nil {
			return nil, err
		}
		return &core.SearchPage{Query: q.Query, Items: []core.SearchHit{}}, nil
	}
	return r.Search(ctx, q)
}

type snapMsg Snapshot
type tickMsg time.Time
type wakeMsg struct{}
type threadMsg struct {
	id  string
	res *core.SyncResult
	err error
}

// Model is the view's state.
type Model struct {
	ctx  context.Context
	src  Source
	wake <-chan struct{}
	// now is the clock (time.Now outside tests).
	now     func() time.Time
	snap    Snapshot
	reading bool
	// last is when the last read began.
	last time.Time
	// selected is the index of the selected thread; selectedID its
	// message, which the selection follows when the list changes.
	selected   int
	selectedID string
	open       *threadMsg
	opening    string // the thread asked for with enter, until it arrives
	scroll     int
	width      int
	height     int
	title      string
	// search is the query prompt and the hits shown in place of the room.
	search search
}

// New builds the view of a room named title, woken by wake; size is the
// terminal's until the first resize (0 = unbounded).
func New(ctx context.Context, src Source, wake <-chan struct{}, title string, width, height int) Model {
	return Model{ctx: ctx, src: src, wake: wake, title: title, width: width, height: height, now: time.Now}
}

// Run shows the view of the room at storePath on the terminal until the
// person quits (q or ctrl+c) or ctx ends. open is called until the store
// exists; the room it returns is closed when Run returns.
func Run(ctx context.Context, open Opener, storePath, title string) error {
	src := &roomSource{ctx: ctx, open: open, storePath: storePath, wake: make(chan struct{}, 1)}
	defer src.close()
	_, err := tea.NewProgram(New(ctx, src, src.wake, title, 0, 0), tea.WithContext(ctx), tea.WithFPS(10)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

func (m Model) read() (Model, tea.Cmd) {
	if m.reading {
		return m, nil
	}
	m.reading, m.last = true, m.now()
	src, ctx := m.src, m.ctx
	return m, func() tea.Msg { return snapMsg(src.Read(ctx)) }
}

// fetch reads thread id for the open view.
func (m Model) fetch(id string) tea.Cmd {
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		res, err := src.Thread(ctx, id)
		return threadMsg{id: id, res: res, err: err}
	}
}

func (m Model) waitWake() tea.Cmd {
	wake, ctx := m.wake, m.ctx
	return func() tea.Msg {
		select {
		case <-wake:
		case <-ctx.Done():
		}
		return wakeMsg{}
	}
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m Model) Init() tea.Cmd {
	m, read := m.read()
	return tea.Batch(read, m.waitWake(), tick())
}

func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg.Content), nil
	case searchMsg:
		return m.searched(msg), nil
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scroll = min(m.scroll, m.maxScroll())
	case snapMsg:
		m.reading = false
		m.snap = Snapshot(msg)
		m.follow()
		if m.open != nil {
			return m, m.fetch(m.open.id) // the open thread is read again too
		}
	case wakeMsg:
		if m.ctx.Err() != nil {
			return m, nil
		}
		m, read := m.read()
		return m, tea.Batch(read, m.waitWake())
	case tickMsg:
		// Redraw the clocks; re-read when the last read is old, and every
		// second while waiting for the room to exist.
		if m.snap.Waiting || m.now().Sub(m.last) >= Refresh {
			m, read := m.read()
			return m, tea.Batch(read, tick())
		}
		return m, tick()
	case threadMsg:
		same := m.open != nil && m.open.id == msg.id
		if !same && msg.id != m.opening {
			return m, nil // an answer for a view already left
		}
		if same && msg.err != nil && m.open.res != nil {
			return m, nil // a refresh that failed keeps what is shown
		}
		if !same {
			m.scroll = 0
		}
		m.open, m.opening = &msg, ""
		m.scroll = min(m.scroll, m.maxScroll())
	}
	return m, nil
}

// follow keeps the selection on the same thread when the list changes,
// or on the nearest row when that thread is gone.
func (m *Model) follow() {
	for i, t := range m.snap.Threads {
		if t.Message.MessageID == m.selectedID {
			m.selected = i
			return
		}
	}
	m.selected = min(m.selected, max(0, len(m.snap.Threads)-1))
	m.selectedID = ""
	if m.selected < len(m.snap.Threads) {
		m.selectedID = m.snap.Threads[m.selected].Message.MessageID
	}
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.search.prompting {
		return m.promptKey(k)
	}
	if k.String() == "/" && m.open == nil {
		// The prompt opens empty over what is shown; a thread asked for
		// or a next page still coming is forgotten.
		m.search.prompting, m.search.input, m.search.refusal, m.search.running = true, "", "", false
		m.opening = ""
		return m, nil
	}
	if m.open == nil && m.search.page != nil {
		if m, cmd, ok := m.searchKey(k); ok {
			return m, cmd
		}
	}
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "esc":
		m.open, m.opening, m.scroll = nil, "", 0
	case "up", "k":
		if m.open != nil {
			m.scroll = max(0, m.scroll-1)
		} else if m.selected > 0 {
			m.selected--
		}
	case "down", "j":
		if m.open != nil {
			m.scroll = min(m.scroll+1, m.maxScroll())
		} else if m.selected < len(m.snap.Threads)-1 {
			m.selected++
		}
	case "enter":
		if m.open == nil && m.selected < len(m.snap.Threads) {
			m.opening = m.snap.Threads[m.selected].Message.MessageID
			return m, m.fetch(m.opening)
		}
	}
	if m.selected < len(m.snap.Threads) {
		m.selectedID = m.snap.Threads[m.selected].Message.MessageID
	}
	return m, nil
}

// View draws the room, the hits of a search or the open thread, with the
// search prompt at the bottom while it is open, on the alternate screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render is the text of the view: the room, the hits of a search or the
// open thread, and the search prompt below while it is open, fitted
// within the terminal.
func (m Model) Render() string {
	bottom := m.promptLines()
	// What the prompt leaves of the height is the view's.
	v := m
	if m.height > 0 && len(bottom) > 0 {
		v.height = max(1, m.height-len(bottom))
	}
	var lines []string
	switch {
	case m.open != nil:
		lines = v.threadLines()
	case m.search.page != nil:
		lines = v.searchLines()
	default:
		lines = v.roomLines()
	}
	if v.height > 0 && len(lines) > v.height {
		lines = lines[:v.height]
	}
	lines = append(lines, bottom...)
	if m.height > 0 && len(lines) > m.height {
		lines = lines[len(lines)-m.height:] // the prompt stays in sight
	}
	for i, l := range lines {
		if m.width > 0 && ansi.StringWidth(l) > m.width {
			lines[i] = ansi.Truncate(l, m.width, "…")
		}
	}
	return strings.Join(lines, "\n")
}

// section is one titled list of the room view. focus is the row to keep
// in sight when the list is cut (-1: none).
type section struct {
	title string
	rows  []string
	empty string
	focus int
}

// lines renders s in at most keep lines below its title: when the rows
// do not fit, a window that holds the focus, then "… N more". keep 0
// leaves the section out.
func (s section) lines(keep int) []string {
	if keep <= 0 {
		return nil
	}
	out := []string{s.title}
	if len(s.rows) == 0 {
		return append(out, "  "+s.empty)
	}
	if len(s.rows) <= keep {
		return append(out, s.rows...)
	}
	shown := keep - 1
	start := 0
	if s.focus >= shown {
		start = s.focus - shown + 1
	}
	out = append(out, s.rows[start:start+shown]...)
	return append(out, fmt.Sprintf("  … %d more", len(s.rows)-shown))
}

func (s section) need() int { return max(1, len(s.rows)) }

// least is the fewest rows s can show usefully: the focused row and the
// "more" line for a list with a focus, else the "more" line.
func (s section) least() int {
	if s.focus >= 0 && len(s.rows) > 1 {
		return 2
	}
	return 1
}

// screenSafe shows text from the store on the terminal on one line, by the
// one display rule (protocol.EscapeText in TextLine mode, docs/concepts.md):
// controls, line separators and the bidirectional formatting characters
// that could disguise a line are written as \uXXXX, a newline as \n.
func screenSafe(s string) string { return protocol.EscapeText(s, protocol.TextLine) }

func (m Model) roomLines() []string {
	st := m.snap.Status
	if st == nil {
		switch {
		case m.snap.Err != nil:
			return []string{"acc top: " + screenSafe(protocol.AsError(wording.CLIError(m.snap.Err)).Message), "q quits"}
		case m.snap.Waiting:
			return []string{"acc top — " + screenSafe(m.title), "nobody has attached in this room yet; waiting for the first acc attach", "q quits"}
		}
		return []string{"acc top: reading the room…", "q quits"}
	}
	now := m.now()
	header := []string{fmt.Sprintf("acc top — %s (%s) — protection %s — %s", screenSafe(m.title), st.WorkspaceID, st.Protection, m.snap.At.Format("15:04:05"))}
	if m.snap.Err != nil {
		header = append(header, "  (last refresh failed: "+screenSafe(protocol.AsError(wording.CLIError(m.snap.Err)).Message)+")")
	}
	sessions := section{title: "SESSIONS", empty: "nobody is here", focus: -1}
	for _, p := range st.Participants {
		intent := ""
		if p.Intent != nil {
			intent = "  doing: " + screenSafe(*p.Intent)
		}
		// The turn: working or idle and for how long ("-" when its hooks
		// never said), so a glance tells who is busy.
		turn := "-"
		if a := core.ActivityWords(p.Activity, now); a != "" {
			turn = strings.TrimSuffix(strings.Replace(a, " since ", " ", 1), " ago")
		}
		sessions.rows = append(sessions.rows, fmt.Sprintf("  %-16s %-8s %-7s %-12s %-12s%s", p.ParticipantID, p.Harness, p.Presence, turn, screenSafe(deref(p.Branch, "-")), intent))
	}
	claims := section{title: "CLAIMS", empty: "none", focus: -1}
	for _, c := range st.Claims {
		t, err := time.Parse(time.RFC3339Nano, c.ExpiresAt)
		if err == nil && !t.After(now) {
			continue // expired since the last read
		}
		left := "?"
		if err == nil {
			left = t.Sub(now).Round(time.Second).String()
		}
		if c.Orphaned != nil {
			left = "orphaned (" + c.Orphaned.Evidence() + "), takeable;"
		} else {
			left += " left"
		}
		claims.rows = append(claims.rows, fmt.Sprintf("  %-40s %-9s %-9s held by %-14s %s", screenSafe(c.Resource), c.Mode, c.Enforcement, c.OwnerParticipantID, left))
	}
	threads := section{title: "OPEN THREADS (↑/↓ select, enter opens, / searches, q quits)", empty: "nothing is owed", focus: m.selected}
	for i, t := range m.snap.Threads {
		mark := " "
		if i == m.selected {
			mark = ">"
		}
		var rs []string
		for _, rc := range t.Receipts {
			rs = append(rs, rc.RecipientParticipantID+":"+rc.State)
		}
		threads.rows = append(threads.rows, fmt.Sprintf("%s %-9s %-11s %s → %s  \"%s\"", mark, t.Message.Kind, t.Message.Obligation, t.Message.FromParticipantID, strings.Join(rs, " "), screenSafe(t.Message.Subject)))
	}
	secs := []section{sessions, claims, threads}
	keep, blank := fit(secs, m.height-len(header), m.height > 0)
	out := header
	for i, s := range secs {
		if blank && keep[i] > 0 {
			out = append(out, "")
		}
		out = append(out, s.lines(keep[i])...)
	}
	return out
}

// fit shares room lines (≤ 0: unbounded) among the sections: each takes
// its title and its rows, with a blank line before it while there is
// space. The longest list gives way first, down to what it can least
// show; then the blank lines go; then the first sections are left out,
// so the threads, the part one acts on, stay.
func fit(secs []section, room int, bounded bool) (keep []int, blank bool) {
	keep = make([]int, len(secs))
	need := 0
	for i, s := range secs {
		keep[i] = s.need()
		need += keep[i] + 1 // the title
	}
	if !bounded {
		return keep, true
	}
	for need+len(secs) > room {
		big := -1
		for i, s := range secs {
			if keep[i] > s.least() && (big < 0 || keep[i] > keep[big]) {
				big = i
			}
		}
		if big < 0 {
			break
		}
		keep[big]--
		need--
	}
	if need+len(secs) <= room {
		return keep, true
	}
	for i := 0; need > room && i < len(secs)-1; i++ {
		need -= keep[i] + 1
		keep[i] = 0
	}
	return keep, false
}

// bodyRoom is how many lines the open message's body may take.
func (m Model) bodyRoom(body int) int {
	if m.height <= 0 {
		return body
	}
	return max(1, m.height-threadHeader)
}

// threadHeader is the number of lines above an open message's body.
const threadHeader = 5

// maxScroll is the last useful scroll position of the open message.
func (m Model) maxScroll() int {
	body := m.body()
	return max(0, len(body)-m.bodyRoom(len(body)))
}

// body is the open message's body as it is shown: escaped, and wrapped
// to the terminal's width.
func (m Model) body() []string {
	if m.open == nil || m.open.res == nil || m.open.res.Message == nil || len(m.open.res.Message.Items) == 0 {
		return nil
	}
	text := expandTabs(protocol.EscapeText(m.open.res.Message.Items[0].Body, protocol.TextBlock))
	if m.width > 0 {
		text = ansi.Wrap(text, m.width, "")
	}
	return strings.Split(text, "\n")
}

// tabStop is the column width of a tab stop in the thread view.
const tabStop = 8

// expandTabs replaces each tab of text with the spaces up to the next tab
// stop of its line (columns counted by display width): the screen
// renderer would drop a raw tab, and a body's character must never
// silently disappear (docs/concepts.md#peer-text-on-the-screen: the
// display rule keeps tabs in a body).
func expandTabs(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		var b strings.Builder
		col := 0
		for {
			j := strings.IndexByte(line, '\t')
			if j < 0 {
				b.WriteString(line)
				break
			}
			b.WriteString(line[:j])
			col += ansi.StringWidth(line[:j])
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			line = line[j+1:]
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}

// threadLines puts what to press and who the message is from first, the
// receipts next and the body last, wrapped and scrolled by ↑/↓; it is
// read again whenever the room changes.
func (m Model) threadLines() []string {
	out := []string{"esc goes back, ↑/↓ scroll, q quits (reading here changes no receipt)"}
	if m.open.err != nil && m.open.res == nil {
		return append(out, "cannot open the thread: "+screenSafe(protocol.AsError(wording.CLIError(m.open.err)).Message))
	}
	if m.open.res == nil || m.open.res.Message == nil || len(m.open.res.Message.Items) == 0 {
		return append(out, "the message is gone from this room")
	}
	e := m.open.res.Message
	msg := e.Items[0]
	out = append(out, fmt.Sprintf("%s  %s from %s at %s", msg.MessageID, msg.Kind, msg.FromParticipantID, msg.SentAt),
		"subject: "+screenSafe(msg.Subject))
	var rs []string
	for _, rc := range e.Receipts {
		rs = append(rs, rc.RecipientParticipantID+": "+rc.State)
	}
	out = append(out, "receipts: "+strings.Join(rs, ", "), "--- body (untrusted peer content) ---")
	body := m.body()
	room := m.bodyRoom(len(body))
	start := min(m.scroll, max(0, len(body)-room))
	end := min(len(body), start+room)
	if end < len(body) {
		end = max(start, end-1)
		out = append(out, body[start:end]...)
		return append(out, fmt.Sprintf("… %d more lines (↓)", len(body)-end))
	}
	return append(out, body[start:end]...)
}

func deref(s *string, d string) string {
	if s == nil || *s == "" {
		return d
	}
	return *s
}
