package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

func (a *app) syncCommand() *cli.Command {
	return &cli.Command{
		Name:     "sync",
		Category: "coordination",
		Usage:    "catch up with the room: events since a cursor, a full snapshot, or the message history",
		Description: "--scope delta (the default) returns the events after --cursor (a 16-digit sequence from the previous\n" +
			"sync), the live roster and, for a calling session, its attention; it prints nothing when you are alone.\n" +
			"--scope full adds a snapshot of every record. --scope history lists the workspace's messages as\n" +
			"summaries, newest first (room and addressed ones, also from before you joined), filtered by --type;\n" +
			"--current with --type decision lists decision heads only; --message ID reads one message with every\n" +
			"recipient's receipt. sync never changes a receipt and never shows a session generation.\n\n" +
			"  acc sync --scope history --type decision --current",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "scope", Value: core.SyncScopeDelta, DefaultText: core.SyncScopeDelta, Usage: "`SCOPE`: delta, full or history"},
			&cli.StringFlag{Name: "cursor", Usage: "continue after this `CURSOR`: a 16-digit sequence (delta, full) or a message id (history)"},
			&cli.IntFlag{Name: "limit", DefaultText: fmt.Sprintf("%d events, %d history items", core.DefaultSyncLimit, core.DefaultPageLimit), Usage: fmt.Sprintf("at most `N` events or history items, 1 to %d", core.MaxSyncLimit)},
			&cli.StringFlag{Name: "type", Usage: "history only: list messages of this `KIND` (note, question, request, answer, decision, handoff)"},
			&cli.StringFlag{Name: "message", Usage: "history only: read this message `ID` in full, with every recipient's receipt"},
			&cli.BoolFlag{Name: "current", Usage: "history only, with --type decision: list decision heads only"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q := core.SyncQuery{Scope: cmd.String("scope"), Cursor: cmd.String("cursor"), Limit: cmd.Int("limit"),
				Kind: cmd.String("type"), MessageID: cmd.String("message"), Current: cmd.Bool("current")}
			if cmd.IsSet("limit") && q.Limit == 0 {
				q.Limit = -1 // an explicit 0 is out of range, not "the default"; core refuses it by scope
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				if q.Scope == core.SyncScopeDelta || q.Scope == core.SyncScopeFull {
					// Public without a caller; a named caller must be right.
					c, err := a.caller(ctx, cmd, r)
					if err == nil {
						q.Caller = &c
					} else if cmd.String("session") != "" || cmd.String("generation") != "" {
						return err
					}
				}
				res, err := r.Sync(ctx, q)
				if err != nil {
					return err
				}
				return a.emit(res.Data(), func(w io.Writer) { printSync(w, q, res) })
			})
		},
	}
}

func printSync(w io.Writer, q core.SyncQuery, res *core.SyncResult) {
	switch {
	case res.Delta != nil:
		d := res.Delta
		if d.Snapshot == nil && d.Solo && len(d.Damaged) == 0 {
			return // alone in the room: nothing to say
		}
		fmt.Fprintf(w, "%d attention; %d session(s); cursor %s\n", len(d.Attention), len(d.Roster), d.Cursor)
		if s := d.Snapshot; s != nil {
			fmt.Fprintf(w, "snapshot: %d participant(s), %d session(s), %d intent(s), %d claim(s), %d message(s), %d receipt(s); --json prints the records\n",
				len(s.Participants), len(s.Sessions), len(s.Intents), len(s.Claims), len(s.Messages), len(s.Receipts))
		}
		printDamaged(w, d.Damaged)
	case res.History != nil:
		p := res.History
		defer printDamaged(w, p.Damaged)
		if len(p.Items) == 0 {
			fmt.Fprintln(w, "no messages")
			return
		}
		for _, m := range p.Items {
			line := fmt.Sprintf("%s  %s from %s at %s: %s", m.MessageID, m.Kind, m.FromParticipantID, m.SentAt, m.Subject)
			if st := m.DecisionStatus; st != nil {
				line += "  [" + decisionText(st) + "]"
			}
			fmt.Fprintln(w, line)
		}
		if p.NextCursor != nil {
			more := "acc sync --scope history"
			if q.Kind != "" {
				more += " --type " + q.Kind
			}
			if q.Current {
				more += " --current"
			}
			if q.Limit != 0 {
				more += fmt.Sprintf(" --limit %d", q.Limit)
			}
			fmt.Fprintf(w, "more: %s --cursor %s\n", more, *p.NextCursor)
		}
	case res.Message != nil:
		printHistoryMessage(w, res.Message)
	}
}

// decisionText says where a decision stands: its state, whether it is a
// head, and the competing heads when there are several.
func decisionText(st *core.DecisionStatus) string {
	parts := []string{st.State}
	if st.IsHead {
		parts = append(parts, "head")
	} else if st.CurrentMessageID != nil {
		parts = append(parts, "head is "+*st.CurrentMessageID)
	}
	if st.Conflicted {
		parts = append(parts, fmt.Sprintf("conflicted: %d heads", st.HeadCount))
	}
	return strings.Join(parts, ", ")
}

func printHistoryMessage(w io.Writer, h *core.HistoryMessage) {
	m := h.Items[0]
	to := "the room"
	if len(m.ToParticipantIDs) > 0 {
		to = strings.Join(m.ToParticipantIDs, ", ")
	}
	fmt.Fprintf(w, "message %s (%s, owes %s) in thread %s\n", m.MessageID, m.Kind, m.Obligation, m.ThreadID)
	fmt.Fprintf(w, "from %s (%s) to %s at %s\n", m.FromParticipantID, m.FromSessionID, to, m.SentAt)
	if m.InReplyTo != nil {
		fmt.Fprintf(w, "in reply to %s\n", *m.InReplyTo)
	}
	if dc := m.DecisionChange; dc != nil {
		verb := "supersedes"
		if dc.Action == protocol.DecisionWithdraw {
			verb = "withdraws"
		}
		fmt.Fprintf(w, "%s %s\n", verb, strings.Join(dc.MessageIDs, ", "))
	}
	if st := m.DecisionStatus; st != nil {
		fmt.Fprintf(w, "decision: %s (group %s)\n", decisionText(st), st.GroupID)
	}
	fmt.Fprintf(w, "subject: %s\n", m.Subject)
	if len(h.Receipts) == 0 {
		fmt.Fprintln(w, "receipts: none")
	}
	for _, rc := range h.Receipts {
		fmt.Fprintf(w, "receipt %s: %s at %s\n", rc.RecipientParticipantID, rc.State, rc.UpdatedAt)
	}
	// The same frame as an exact inbox read: the markers name the id, which
	// a body cannot know before it is recorded.
	fmt.Fprintf(w, "--- body of %s (%s) ---\n%s\n--- end of %s ---\n", m.MessageID, core.TrustLabel, m.Body, m.MessageID)
}
