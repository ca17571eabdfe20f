// Package top is `acc top`: a live terminal view of one room — its
// sessions (presence, client, branch, intent), live claims (holder, time
// left) and open threads (obligation, each recipient's receipt) — updated
// as the store changes (internal/watch) and every second for the clocks.
// It only reads: opening a thread shows it through the history exact read,
// which moves no receipt. Built on charmbracelet/bubbletea.
package top

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/acc-go/acc/internal/watch"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// Snapshot is what one refresh reads.
type Snapshot struct {
	Status  *core.Status
	Threads []core.OpenThread
	Err     error
	At      time.Time
}

// Source reads the room; Thread reads one message with its receipts.
type Source interface {
	Read(ctx context.Context) Snapshot
	Thread(ctx context.Context, messageID string) (*core.SyncResult, error)
}

// roomSource reads a core.Room.
type roomSource struct{ r *core.Room }

// RoomSource reads r, each read bounded by 5 s.
func RoomSource(r *core.Room) Source { return roomSource{r} }

func (s roomSource) Read(ctx context.Context) Snapshot {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snap := Snapshot{At: time.Now()}
	snap.Status, snap.Err = s.r.Status(ctx, core.StatusQuery{})
	if snap.Err == nil {
		snap.Threads, snap.Err = s.r.OpenThreads(ctx, 30, 500)
	}
	return snap
}

func (s roomSource) Thread(ctx context.Context, id string) (*core.SyncResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.r.Sync(ctx, core.SyncQuery{Scope: core.SyncScopeHistory, MessageID: id})
}

type snapMsg Snapshot
type tickMsg time.Time
type wakeMsg struct{}
type threadMsg struct {
	res *core.SyncResult
	err error
}

// Model is the view's state.
type Model struct {
	ctx      context.Context
	src      Source
	wake     <-chan struct{}
	snap     Snapshot
	selected int
	open     *threadMsg
	width    int
	title    string
}

// New builds the view of a room named title, woken by wake.
func New(ctx context.Context, src Source, wake <-chan struct{}, title string) Model {
	return Model{ctx: ctx, src: src, wake: wake, title: title, width: 100}
}

// Run shows the view on the terminal until the person quits (q).
func Run(ctx context.Context, r *core.Room, title string) error {
	w := watch.StoreEvery(ctx, core.StorePath(r.DataHome, r.WS.ID), 15*time.Second)
	_, err := tea.NewProgram(New(ctx, RoomSource(r), w.C, title), tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(10)).Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

func (m Model) read() tea.Cmd {
	return func() tea.Msg { return snapMsg(m.src.Read(m.ctx)) }
}

func (m Model) waitWake() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-m.wake:
		case <-m.ctx.Done():
		}
		return wakeMsg{}
	}
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m Model) Init() tea.Cmd { return tea.Batch(m.read(), m.waitWake(), tick()) }

func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "esc":
			m.open = nil
		case "up", "k":
			if m.selected > 0 {
				m.selected--
			}
		case "down", "j":
			if m.selected < len(m.snap.Threads)-1 {
				m.selected++
			}
		case "enter":
			if m.selected < len(m.snap.Threads) {
				id := m.snap.Threads[m.selected].Message.MessageID
				src, ctx := m.src, m.ctx
				return m, func() tea.Msg {
					res, err := src.Thread(ctx, id)
					return threadMsg{res: res, err: err}
				}
			}
		}
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case snapMsg:
		m.snap = Snapshot(msg)
		if m.selected >= len(m.snap.Threads) {
			m.selected = max(0, len(m.snap.Threads)-1)
		}
	case wakeMsg:
		return m, tea.Batch(m.read(), m.waitWake())
	case tickMsg:
		return m, tick() // redraws the clocks
	case threadMsg:
		m.open = &msg
	}
	return m, nil
}

func (m Model) View() string {
	var b strings.Builder
	line := func(format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		if m.width > 0 && len([]rune(s)) > m.width {
			s = string([]rune(s)[:m.width-1]) + "…"
		}
		b.WriteString(s + "\n")
	}
	if m.open != nil {
		m.threadView(line)
		return b.String()
	}
	st := m.snap.Status
	if st == nil {
		if m.snap.Err != nil {
			line("acc top: %v", protocol.AsError(m.snap.Err).Message)
		} else {
			line("acc top: reading the room…")
		}
		line("q quits")
		return b.String()
	}
	line("acc top — %s (%s) — protection %s — %s", m.title, st.WorkspaceID, st.Protection, m.snap.At.Format("15:04:05"))
	if m.snap.Err != nil {
		line("  (last refresh failed: %s)", protocol.AsError(m.snap.Err).Message)
	}
	line("")
	line("SESSIONS")
	if len(st.Participants) == 0 {
		line("  nobody is here")
	}
	for _, p := range st.Participants {
		intent := ""
		if p.Intent != nil {
			intent = "  doing: " + *p.Intent
		}
		line("  %-16s %-8s %-7s %-12s%s", p.ParticipantID, p.Harness, p.Presence, deref(p.Branch, "-"), intent)
	}
	line("")
	line("CLAIMS")
	if len(st.Claims) == 0 {
		line("  none")
	}
	now := time.Now()
	for _, c := range st.Claims {
		left := "?"
		if t, err := time.Parse(time.RFC3339Nano, c.ExpiresAt); err == nil {
			left = t.Sub(now).Round(time.Second).String()
		}
		line("  %-40s %-9s %-9s held by %-14s %s left", c.Resource, c.Mode, c.Enforcement, c.OwnerParticipantID, left)
	}
	line("")
	line("OPEN THREADS (↑/↓ select, enter opens, q quits)")
	if len(m.snap.Threads) == 0 {
		line("  nothing is owed")
	}
	for i, t := range m.snap.Threads {
		mark := " "
		if i == m.selected {
			mark = ">"
		}
		var rs []string
		for _, rc := range t.Receipts {
			rs = append(rs, rc.RecipientParticipantID+":"+rc.State)
		}
		line("%s %-9s %-11s %s → %s  %q", mark, t.Message.Kind, t.Message.Obligation, t.Message.FromParticipantID, strings.Join(rs, " "), t.Message.Subject)
	}
	return b.String()
}

func (m Model) threadView(line func(string, ...any)) {
	if m.open.err != nil {
		line("cannot open the thread: %s", protocol.AsError(m.open.err).Message)
	} else if m.open.res != nil && m.open.res.Message != nil {
		e := m.open.res.Message
		msg := e.Items[0]
		line("%s  %s from %s at %s", msg.MessageID, msg.Kind, msg.FromParticipantID, msg.SentAt)
		line("subject: %s", msg.Subject)
		line("--- body (untrusted peer content) ---")
		for _, l := range strings.Split(core.EscapeControl(msg.Body), "\n") {
			line("%s", l)
		}
		line("--- receipts ---")
		for _, rc := range e.Receipts {
			line("  %s: %s", rc.RecipientParticipantID, rc.State)
		}
	}
	line("")
	line("esc goes back (reading here changes no receipt), q quits")
}

func deref(s *string, d string) string {
	if s == nil || *s == "" {
		return d
	}
	return *s
}
