package top

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// fakeSource counts reads and serves a fixed room; it records the threads
// and the searches asked of it, and answers every search with page, or
// with refusal when that is set.
type fakeSource struct {
	snap     Snapshot
	thread   *core.SyncResult
	reads    int
	threads  []string
	page     *core.SearchPage
	refusal  error
	searches []core.SearchQuery
}

func (f *fakeSource) Read(context.Context) Snapshot { f.reads++; return f.snap }
func (f *fakeSource) Thread(_ context.Context, id string) (*core.SyncResult, error) {
	f.threads = append(f.threads, id)
	return f.thread, nil
}
func (f *fakeSource) Search(_ context.Context, q core.SearchQuery) (*core.SearchPage, error) {
	f.searches = append(f.searches, q)
	if f.refusal != nil {
		return nil, f.refusal
	}
	return f.page, nil
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// room builds a status with n sessions, n claims (one already expired)
// and n open threads.
func room(n int) Snapshot {
	st := &core.Status{WorkspaceID: "workspace_x", Protection: "advisory"}
	var threads []core.OpenThread
	for i := range n {
		st.Participants = append(st.Participants, core.SessionRow{ParticipantID: fmt.Sprintf("p%02d", i), Harness: "cli", Presence: "online"})
		exp := t0.Add(time.Duration(i) * time.Minute) // claim 0 expires at t0
		st.Claims = append(st.Claims, core.ClaimRow{Resource: fmt.Sprintf("file:c%02d.go", i), Mode: "exclusive", Enforcement: "advisory",
			OwnerParticipantID: "p00", ExpiresAt: protocol.FormatTime(exp)})
		threads = append(threads, core.OpenThread{Message: core.Summary{MessageID: fmt.Sprintf("message_%02d", i), Kind: "question",
			Obligation: "reply", FromParticipantID: "p00", Subject: fmt.Sprintf("subject %02d", i)}})
	}
	return Snapshot{Status: st, Threads: threads, At: t0}
}

func model(src Source, w, h int) Model {
	m := New(context.Background(), src, make(chan struct{}), "repo", w, h)
	m.now = func() time.Time { return t0 }
	return m
}

func update(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

// TestViewFitsTheTerminal: however long the lists, the view has at most
// the terminal's lines and cells per line, keeps every section's title,
// says how many rows it left out, and keeps the selected thread in sight.
func TestViewFitsTheTerminal(t *testing.T) {
	src := &fakeSource{snap: room(40)}
	for _, size := range [][2]int{{80, 24}, {60, 12}, {200, 50}, {30, 8}} {
		m := model(src, size[0], size[1])
		m, _ = update(t, m, snapMsg(src.snap))
		for range 35 {
			m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
		}
		lines := strings.Split(m.Render(), "\n")
		if len(lines) > size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > size[0] {
				t.Errorf("%v: line wider than the terminal: %q", size, l)
			}
		}
		v := m.Render()
		if size[1] >= 12 {
			for _, want := range []string{"acc top — repo", "SESSIONS", "CLAIMS", "OPEN THREADS", "more", "> question"} {
				if !strings.Contains(v, want) {
					t.Errorf("%v: the view lacks %q:\n%s", size, want, v)
				}
			}
		}
	}
	// A tall terminal shows everything, and the claim that expired at t0
	// is gone even before the next read.
	m := model(src, 200, 200)
	m, _ = update(t, m, snapMsg(src.snap))
	v := m.Render()
	if strings.Contains(v, "more") || !strings.Contains(v, "subject 39") || !strings.Contains(v, "file:c39.go") {
		t.Errorf("a tall terminal cut the lists:\n%s", v)
	}
	if strings.Contains(v, "file:c00.go") {
		t.Error("an expired claim is shown")
	}
}

// TestThreadViewHeaderFirst: an opened thread starts with the keys and the
// sender, shows receipts before the body, and scrolls a long body.
func TestThreadViewHeaderFirst(t *testing.T) {
	body := make([]string, 100)
	for i := range body {
		body[i] = fmt.Sprintf("line %03d", i)
	}
	res := &core.SyncResult{Message: &core.HistoryMessage{
		Items:    []core.MessageView{{Message: protocol.Message{MessageID: "message_00", Kind: "question", FromParticipantID: "p00", Subject: "s", Body: strings.Join(body, "\n")}}},
		Receipts: []core.PublicReceipt{{RecipientParticipantID: "p01", State: "queued"}},
	}}
	src := &fakeSource{snap: room(3), thread: res}
	m := model(src, 80, 20)
	m, _ = update(t, m, snapMsg(src.snap))
	m, cmd := update(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
	m, _ = update(t, m, cmd())
	lines := strings.Split(m.Render(), "\n")
	if len(lines) != 20 || !strings.HasPrefix(lines[0], "esc goes back") || !strings.Contains(lines[1], "from p00") ||
		!strings.Contains(m.Render(), "p01: queued") || !strings.Contains(lines[19], "more lines") {
		t.Fatalf("thread view:\n%s", m.Render())
	}
	for range 500 {
		m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	v := m.Render()
	if !strings.Contains(v, "line 099") || strings.Contains(v, "more lines") {
		t.Errorf("scrolled to the end:\n%s", v)
	}
	// Scrolling stops at the end: one ↑ after many ↓ moves the view.
	m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyUp})
	if v := m.Render(); !strings.Contains(v, "line 084") || strings.Contains(v, "line 099") {
		t.Errorf("one line up from the end:\n%s", v)
	}
	m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyEscape})
	if !strings.Contains(m.Render(), "OPEN THREADS") {
		t.Errorf("esc did not go back:\n%s", m.Render())
	}
}

// TestRereadOnTheClock: with no wake-up the room is re-read every Refresh
// (presence and expiry change with time), and every tick while waiting
// for the room to exist; q quits while waiting.
func TestRereadOnTheClock(t *testing.T) {
	src := &fakeSource{snap: room(2)}
	m := model(src, 80, 24)
	now := t0
	m.now = func() time.Time { return now }
	run := func(cmd tea.Cmd) {
		for _, msg := range flatten(cmd) {
			if s, ok := msg.(snapMsg); ok {
				m, _ = update(t, m, s)
			}
		}
	}
	m, cmd := update(t, m, tickMsg(now)) // the first read
	run(cmd)
	if src.reads != 1 {
		t.Fatalf("%d reads after the first tick", src.reads)
	}
	for i := 1; i < int(Refresh/time.Second); i++ {
		now = now.Add(time.Second)
		m, cmd = update(t, m, tickMsg(now))
		run(cmd)
	}
	if src.reads != 1 {
		t.Fatalf("%d reads within %v", src.reads, Refresh)
	}
	now = now.Add(time.Second)
	m, cmd = update(t, m, tickMsg(now))
	run(cmd)
	if src.reads != 2 {
		t.Fatalf("%d reads after %v", src.reads, Refresh)
	}

	src.snap = Snapshot{Waiting: true}
	now = now.Add(10 * time.Second)
	m, cmd = update(t, m, tickMsg(now))
	run(cmd)
	if !strings.Contains(m.Render(), "nobody has attached") {
		t.Fatalf("waiting view:\n%s", m.Render())
	}
	before := src.reads
	now = now.Add(time.Second)
	m, cmd = update(t, m, tickMsg(now))
	run(cmd)
	if src.reads != before+1 {
		t.Errorf("no read on the tick while waiting")
	}
	_, cmd = update(t, m, tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil {
		t.Fatal("q does nothing while waiting")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit while waiting")
	}
}

// flatten runs cmd and the commands of any batch it returns, except
// ticks and wake-up waits (which block).
func flatten(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if b, ok := msg.(tea.BatchMsg); ok {
			var out []tea.Msg
			for _, c := range b {
				out = append(out, flatten(c)...)
			}
			return out
		}
		return []tea.Msg{msg}
	case <-time.After(100 * time.Millisecond):
		return nil
	}
}

// TestSmallTerminalsKeepTheSelection: however small the terminal, the
// selected thread is on screen, marked, and the threads section stays.
func TestSmallTerminalsKeepTheSelection(t *testing.T) {
	src := &fakeSource{snap: room(5)}
	for _, size := range [][2]int{{60, 10}, {40, 8}, {40, 6}, {80, 12}} {
		m := model(src, size[0], size[1])
		m, _ = update(t, m, snapMsg(src.snap))
		for range 3 {
			m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
		}
		v := m.Render()
		if len(strings.Split(v, "\n")) > size[1] || !strings.Contains(v, "> question") || size[0] >= 60 && !strings.Contains(v, "subject 03") {
			t.Errorf("%v: the selected thread (subject 03) is not on screen:\n%s", size, v)
		}
	}
}

// TestSelectionFollowsTheThread: new threads arriving above the selected
// one leave the selection on the same thread.
func TestSelectionFollowsTheThread(t *testing.T) {
	src := &fakeSource{snap: room(3)}
	m := model(src, 100, 40)
	m, _ = update(t, m, snapMsg(src.snap))
	m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown}) // subject 01
	grown := room(3)
	grown.Threads = append([]core.OpenThread{{Message: core.Summary{MessageID: "message_new1", Kind: "question", Subject: "new one"}},
		{Message: core.Summary{MessageID: "message_new2", Kind: "question", Subject: "new two"}}}, grown.Threads...)
	m, _ = update(t, m, snapMsg(grown))
	if !strings.Contains(m.Render(), `> question  reply       p00 →   "subject 01"`) {
		t.Errorf("the selection moved off its thread:\n%s", m.Render())
	}
}

// TestOpenThreadRefreshes: an open thread is read again when the room
// changes, so a receipt that moved shows; esc before a read arrives does
// not reopen it.
func TestOpenThreadRefreshes(t *testing.T) {
	msg := func(state string) *core.SyncResult {
		return &core.SyncResult{Message: &core.HistoryMessage{
			Items:    []core.MessageView{{Message: protocol.Message{MessageID: "message_00", Kind: "question", FromParticipantID: "p00", Subject: "s", Body: "b"}}},
			Receipts: []core.PublicReceipt{{RecipientParticipantID: "p01", State: state}},
		}}
	}
	src := &fakeSource{snap: room(2), thread: msg("queued")}
	m := model(src, 80, 20)
	m, _ = update(t, m, snapMsg(src.snap))
	m, cmd := update(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
	m, _ = update(t, m, cmd())
	src.thread = msg("retrieved")
	m, cmd = update(t, m, snapMsg(src.snap)) // the room changed
	if cmd == nil {
		t.Fatal("a new snapshot does not read the open thread again")
	}
	m, _ = update(t, m, cmd())
	if !strings.Contains(m.Render(), "p01: retrieved") {
		t.Errorf("the open thread did not refresh:\n%s", m.Render())
	}
	_, cmd = update(t, m, snapMsg(src.snap))
	m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyEscape})
	m, _ = update(t, m, cmd()) // a read that arrives after esc
	if strings.Contains(m.Render(), "receipts:") {
		t.Errorf("a late read reopened the thread:\n%s", m.Render())
	}
}

// TestLongLinesWrapAndTextIsEscaped: a long body line wraps to the width
// rather than being cut; controls and bidirectional overrides in peer
// text (intent, subject, body) are shown escaped.
func TestLongLinesWrapAndTextIsEscaped(t *testing.T) {
	body := "START " + strings.Repeat("word ", 60) + "END"
	res := &core.SyncResult{Message: &core.HistoryMessage{
		Items: []core.MessageView{{Message: protocol.Message{MessageID: "message_00", Kind: "question", FromParticipantID: "p00",
			Subject: "evil\u202etxt.exe", Body: body + "\n\x1b[31mred\u009b"}}},
	}}
	snap := room(1)
	intent := "x\u009b31mred\u202eevil"
	snap.Status.Participants[0].Intent = &intent
	src := &fakeSource{snap: snap, thread: res}
	m := model(src, 200, 30)
	m, _ = update(t, m, snapMsg(src.snap))
	v := m.Render()
	if strings.ContainsAny(v, "\u009b\u202e\x1b") || !strings.Contains(v, `\u202e`) {
		t.Errorf("the room view shows raw controls:\n%q", v)
	}
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 40, Height: 30})
	m, cmd := update(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
	m, _ = update(t, m, cmd())
	v = m.Render()
	if !strings.Contains(v, "START") || !strings.Contains(v, "END") {
		t.Errorf("a long line was cut instead of wrapped:\n%s", v)
	}
	if strings.ContainsAny(v, "\u009b\u202e\x1b") {
		t.Errorf("the thread view shows raw controls:\n%q", v)
	}
}

// TestThreadViewShowsTabs: a tab in a body is shown as the spaces to the
// next tab stop (every 8 columns), so no character of the body silently
// disappears from the thread view, wrapped or not.
func TestThreadViewShowsTabs(t *testing.T) {
	res := &core.SyncResult{Message: &core.HistoryMessage{
		Items: []core.MessageView{{Message: protocol.Message{MessageID: "message_00", Kind: "note", FromParticipantID: "p00",
			Subject: "s", Body: "LS\tTAB\nab\tc\td\n\tlead"}}},
	}}
	src := &fakeSource{snap: room(1), thread: res}
	for _, width := range []int{80, 12} {
		m := model(src, width, 30)
		m, _ = update(t, m, snapMsg(src.snap))
		m, cmd := update(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
		m, _ = update(t, m, cmd())
		v := m.Render()
		for _, want := range []string{"LS      TAB", "ab      c       d", "        lead"} {
			if width < 20 && want != "LS      TAB" {
				continue
			}
			if !strings.Contains(v, want) {
				t.Errorf("width %d: the thread view should show %q:\n%q", width, want, v)
			}
		}
		if strings.Contains(v, "\t") || strings.Contains(v, "LSTAB") {
			t.Errorf("width %d: a tab reached the screen or vanished:\n%q", width, v)
		}
	}
}

// TestSessionsShowTheirTurn: a session whose hooks recorded a turn shows
// working or idle and for how long; one without shows "-".
func TestSessionsShowTheirTurn(t *testing.T) {
	snap := room(3)
	snap.Status.Participants[0].Activity = &protocol.Activity{State: protocol.ActivityWorking, Since: protocol.FormatTime(t0.Add(-3 * time.Minute))}
	snap.Status.Participants[1].Activity = &protocol.Activity{State: protocol.ActivityIdle, Since: protocol.FormatTime(t0.Add(-12 * time.Second))}
	src := &fakeSource{snap: snap}
	m := model(src, 200, 40)
	m, _ = update(t, m, snapMsg(src.snap))
	v := m.Render()
	for _, want := range []string{"p00              cli      online  working 3m", "p01              cli      online  idle 12s", "p02              cli      online  -"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in:\n%s", want, v)
		}
	}
}
