package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/livepush"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/urfave/cli/v3"
)

// sendOutput is the JSON shape of every send (docs/protocol.md#record-then-offer):
// the recorded message and one delivery outcome per recipient.
type sendOutput struct {
	Message  protocol.Message  `json:"message"`
	Delivery []router.Delivery `json:"delivery"`
	Created  bool              `json:"created"`
	// Receipt is the caller's receipt for the original (reply only).
	Receipt *protocol.Receipt `json:"receipt,omitempty"`
	// ReleasedClaims and Session are reported by finish, always: a list
	// (empty when the session held no claims), or null on a retry that
	// returned the first handoff, whose released claims are not known here.
	ReleasedClaims *[]string          `json:"releasedClaims,omitempty"`
	Session        *core.DetachResult `json:"session,omitempty"`
	// recipients are the participants holding a receipt: for a room
	// message, those with a session open when it was recorded (text only).
	recipients []string
}

// newSendOutput has the committed send delivered (livepush.AfterSend, which
// runs within its own bound whatever is left of the command's deadline)
// and shapes the result.
func newSendOutput(ctx context.Context, r *core.Room, res *core.SendResult) *sendOutput {
	d := livepush.AfterSend(ctx, r, &res.Message)
	return &sendOutput{Message: res.Message, Delivery: d, Created: res.Created, Receipt: res.Receipt, Session: res.Session, recipients: res.Recipients}
}

func printSend(w io.Writer, out *sendOutput) {
	fmt.Fprintf(w, "recorded %s\n", out.Message.MessageID)
	if !out.Created {
		fmt.Fprintln(w, "  already recorded earlier with this clientMessageId and content; nothing new was sent")
	}
	fmt.Fprintf(w, "  sent as %s (%s)\n", out.Message.FromParticipantID, out.Message.FromSessionID)
	if out.Message.IsRoom() {
		fmt.Fprintf(w, "  room message: %s\n", roomReach(out.recipients, !out.Created))
	}
	for _, line := range deliveryLines(out.Delivery, out.Message.FromParticipantID) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// roomReach says who a room message reached: its recipients are fixed when
// it is recorded — every other participant with a session open then
// (docs/concepts.md) — so with none it reaches no inbox, and a session that
// opens later finds it only in the room's history. replay: this is a
// repeat of an earlier send (the same --client-message-id), whose
// recipients are those of that send, so it says what they were then, not
// who is open now.
func roomReach(recipients []string, replay bool) string {
	if replay {
		const repeat = " (this is a repeat of that send)"
		switch len(recipients) {
		case 0:
			return "no other participant had a session open when it was recorded, so it reached no inbox; it is in the room's history (acc sync --scope history)" + repeat
		case 1:
			return "it reached " + recipients[0] + "'s inbox when it was recorded" + repeat
		}
		return "it reached the inboxes of " + joinAnd(recipients) + " when it was recorded" + repeat
	}
	switch len(recipients) {
	case 0:
		return "no other participant has a session open, so it reaches no inbox; it stays in the room's history (acc sync --scope history)"
	case 1:
		return "it waits in the inbox of " + recipients[0] + ", the one other participant with a session open now (a hooked session shows it at its next turn)"
	}
	return fmt.Sprintf("it waits in the inboxes of %s, the %d other participants with a session open now (a hooked session shows it at its next turn)", joinAnd(recipients), len(recipients))
}

func (a *app) messageCommand() *cli.Command {
	return &cli.Command{
		Name:     "message",
		Category: "coordination",
		Usage:    "record a note, question, request or decision for participants or the room",
		Description: "The message and one queued receipt per recipient are recorded in one transaction before anything\n" +
			"tries to deliver it; `recorded message_…` is the guarantee. --to takes a participant id, or a client\n" +
			"name (claude, codex, …) when exactly one live session of that client is here. Without --to a note or\n" +
			"decision goes to the room. Reuse --client-message-id when retrying after an uncertain result.\n" +
			fmt.Sprintf("A decision with --supersedes ID (or --withdraws ID), repeated for up to %d earlier decisions, changes\n", core.MaxDecisionTargets) +
			"them: it also reaches their authors and recipients, and they stop being current (see `acc sync\n" +
			"--scope history --type decision --current`).\n\n" +
			"  acc message --to claude --type question --subject \"receipt wording\" --body \"offered or delivered?\"",
		Flags: append(ownerFlags(),
			&cli.StringSliceFlag{Name: "to", Usage: "recipient `PARTICIPANT` or client name"},
			&cli.StringFlag{Name: "type", Value: protocol.KindNote, DefaultText: protocol.KindNote, Usage: "message `KIND`: note, question, request or decision"},
			&cli.StringFlag{Name: "obligation", DefaultText: "reply for a question or request, else none", Usage: "`OBLIGATION` owed: none, acknowledge or reply"},
			&cli.StringFlag{Name: "subject", Required: true, Usage: fmt.Sprintf("one-line `TEXT` (at most %d characters)", protocol.MaxLineText)},
			&cli.StringFlag{Name: "body", Required: true, Usage: fmt.Sprintf("the message `TEXT` (at most %d characters)", protocol.MaxProseText)},
			&cli.StringFlag{Name: "client-message-id", Usage: "idempotency `KEY`: the same key and content return the first message"},
			&cli.StringSliceFlag{Name: "supersedes", Usage: fmt.Sprintf("with --type decision: the decision `ID` this one replaces (1 to %d)", core.MaxDecisionTargets)},
			&cli.StringSliceFlag{Name: "withdraws", Usage: fmt.Sprintf("with --type decision: the decision `ID` this one withdraws (1 to %d)", core.MaxDecisionTargets)},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				kind := cmd.String("type")
				if err := protocol.CheckOneOf("--type", kind, protocol.KindNote, protocol.KindQuestion, protocol.KindRequest, protocol.KindDecision, protocol.KindAnswer, protocol.KindHandoff); err != nil {
					return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--type %q is not one of note, question, request, decision", kind)
				}
				ob := cmd.String("obligation")
				if ob != "" {
					if err := protocol.CheckOneOf("--obligation", ob, protocol.ObligationNone, protocol.ObligationAcknowledge, protocol.ObligationReply); err != nil {
						return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--obligation %q is not one of none, acknowledge, reply", ob)
					}
				}
				res, err := r.Send(ctx, core.SendInput{Caller: c, To: cmd.StringSlice("to"), Kind: kind, Obligation: ob,
					Subject: cmd.String("subject"), Body: cmd.String("body"), ClientMessageID: cmd.String("client-message-id"),
					Supersedes: cmd.StringSlice("supersedes"), Withdraws: cmd.StringSlice("withdraws")})
				if err != nil {
					return err
				}
				out := newSendOutput(ctx, r, res)
				return a.emit(out, func(w io.Writer) { printSend(w, out) })
			})
		},
	}
}

func (a *app) requestCommand() *cli.Command {
	return &cli.Command{
		Name:     "request",
		Category: "coordination",
		Usage:    "ask one participant to do something; it owes a reply (not completion)",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "to", Required: true, Usage: "the `PARTICIPANT` (or client name) asked"},
			&cli.StringFlag{Name: "title", Required: true, Usage: "one-line `TEXT`; also the body when --detail is absent"},
			&cli.StringFlag{Name: "detail", Usage: "the request `TEXT`"},
			&cli.StringFlag{Name: "client-message-id", Usage: "idempotency `KEY`"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				res, err := r.Request(ctx, core.RequestInput{Caller: c, To: cmd.String("to"), Title: cmd.String("title"),
					Detail: cmd.String("detail"), ClientMessageID: cmd.String("client-message-id")})
				if err != nil {
					return err
				}
				out := newSendOutput(ctx, r, res)
				return a.emit(out, func(w io.Writer) { printSend(w, out) })
			})
		},
	}
}

func (a *app) replyCommand() *cli.Command {
	return &cli.Command{
		Name:     "reply",
		Category: "coordination",
		Usage:    "answer a message in its thread and acknowledge it, in one step",
		Description: "reply records an answer to the message's author in the same thread and moves your receipt for the\n" +
			"original to acknowledged, atomically. It says nothing about whether requested work is done.",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "message", Required: true, Usage: "the `ID` of the message answered"},
			&cli.StringFlag{Name: "body", Required: true, Usage: "the answer `TEXT`"},
			&cli.StringFlag{Name: "subject", DefaultText: "Re: <original subject>", Usage: "one-line `TEXT`"},
			&cli.StringFlag{Name: "client-message-id", Usage: "idempotency `KEY`"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				res, err := r.Reply(ctx, core.ReplyInput{Caller: c, MessageID: cmd.String("message"), Body: cmd.String("body"),
					Subject: cmd.String("subject"), ClientMessageID: cmd.String("client-message-id")})
				if err != nil {
					return err
				}
				out := newSendOutput(ctx, r, res)
				return a.emit(out, func(w io.Writer) {
					printSend(w, out)
					fmt.Fprintf(w, "acknowledged %s\n", res.Receipt.MessageID)
				})
			})
		},
	}
}

func (a *app) ackCommand() *cli.Command {
	return &cli.Command{
		Name:     "ack",
		Category: "coordination",
		Usage:    "acknowledge a message that asks for acknowledgement (questions and requests need a reply)",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "message", Required: true, Usage: "the message `ID`"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				rc, err := r.Ack(ctx, c, cmd.String("message"))
				if err != nil {
					return err
				}
				return a.emit(rc, func(w io.Writer) { fmt.Fprintf(w, "acknowledged %s\n", rc.MessageID) })
			})
		},
	}
}

func (a *app) finishCommand() *cli.Command {
	return &cli.Command{
		Name:     "finish",
		Category: "coordination",
		Usage:    "hand off: record what was done and what remains, release this session's claims, and close it",
		Description: "finish records a structured handoff (to one participant with --to, else to the room), releases every\n" +
			"claim of this session and closes its presence, in one transaction. It never closes the client itself.\n\n" +
			"  acc finish --goal \"update receipt rendering\" --status partial --completed \"CLI wording\" --remaining \"MCP docs\"",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "goal", Required: true, Usage: "one-line `TEXT`: what this session set out to do"},
			&cli.StringFlag{Name: "status", Value: "partial", DefaultText: "partial", Usage: "`STATUS`: complete, partial or blocked"},
			&cli.StringSliceFlag{Name: "completed", Usage: "a `LINE` that was done"},
			&cli.StringSliceFlag{Name: "remaining", Usage: "a `LINE` still to do"},
			&cli.StringSliceFlag{Name: "blocker", Usage: "a `LINE` that blocks progress"},
			&cli.StringFlag{Name: "to", Usage: "hand off to this `PARTICIPANT` (it owes an acknowledgement)"},
			&cli.StringFlag{Name: "client-message-id", Usage: "idempotency `KEY`"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				st := cmd.String("status")
				if err := protocol.CheckOneOf("--status", st, protocol.HandoffComplete, protocol.HandoffPartial, protocol.HandoffBlocked); err != nil {
					return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--status %q is not one of complete, partial, blocked", st)
				}
				res, err := r.Finish(ctx, core.FinishInput{Caller: c, Goal: cmd.String("goal"), Status: st,
					Completed: cmd.StringSlice("completed"), Remaining: cmd.StringSlice("remaining"), Blockers: cmd.StringSlice("blocker"),
					To: cmd.String("to"), ClientMessageID: cmd.String("client-message-id")})
				if err != nil {
					return err
				}
				out := newSendOutput(ctx, r, res)
				released := res.ReleasedClaims
				out.ReleasedClaims = &released
				return a.emit(out, func(w io.Writer) {
					printSend(w, out)
					for _, id := range res.ReleasedClaims {
						fmt.Fprintf(w, "released %s\n", id)
					}
					if res.Session != nil {
						fmt.Fprintf(w, "closed %s\n", res.Session.SessionID)
					}
				})
			})
		},
	}
}

func (a *app) inboxCommand() *cli.Command {
	return &cli.Command{
		Name:     "inbox",
		Category: "coordination",
		Usage:    "list pending messages (read-only), or read one in full with --message",
		Description: "Without --message, inbox lists summaries of pending messages, newest first, and changes nothing.\n" +
			fmt.Sprintf("Pages hold at most --limit items and %d bytes; continue with --cursor from the previous page.\n", core.PageBudgetBytes) +
			"--message ID prints the whole message and moves your receipt to retrieved.\n" +
			"A stored message or receipt that does not decode is left out of the list and named on a damaged: line\n" +
			"(in JSON, under damaged); `acc doctor` names every damaged record.",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "message", Usage: "read this message `ID` in full"},
			&cli.StringFlag{Name: "cursor", Usage: "continue after this message `ID` (a previous page's nextCursor)"},
			&cli.IntFlag{Name: "limit", DefaultText: strconv.Itoa(core.DefaultPageLimit), Usage: fmt.Sprintf("at most `N` items, 1 to %d", core.MaxPageLimit)},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.IsSet("message") && (cmd.IsSet("cursor") || cmd.IsSet("limit")) {
				return protocol.Errorf(protocol.ReasonUsage, "--message reads one message; it cannot be combined with --cursor or --limit")
			}
			if cmd.IsSet("limit") {
				if _, err := core.CheckLimit(cmd.Int("limit")); err != nil || cmd.Int("limit") == 0 {
					return protocol.Errorf(protocol.ReasonInvalidLimit, "message list limit must be an integer from 1 to %d", core.MaxPageLimit)
				}
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				if id := cmd.String("message"); id != "" {
					items, err := r.ReadMessage(ctx, c, id)
					if err != nil {
						return err
					}
					return a.emit(items, func(w io.Writer) { printExact(w, items[0]) })
				}
				page, err := r.Inbox(ctx, core.InboxQuery{Caller: c, Cursor: cmd.String("cursor"), Limit: cmd.Int("limit")})
				if err != nil {
					return err
				}
				return a.emit(page, func(w io.Writer) {
					if !a.callerNamed(cmd) {
						// Nothing named the session: say whose inbox this is.
						fmt.Fprintf(w, "inbox of %s (%s), found automatically: no --session or ACC_SESSION\n", page.Participant, c.SessionID)
					}
					printPage(w, page)
					printDamaged(w, page.Damaged)
				})
			})
		},
	}
}

func printPage(w io.Writer, page *core.InboxPage) {
	if len(page.Items) == 0 {
		fmt.Fprintln(w, "no pending messages")
		return
	}
	for _, it := range page.Items {
		m := it.Message
		fmt.Fprintf(w, "%s  %-9s %s from %s at %s: %s\n", m.MessageID, it.Receipt.State, m.Kind, m.FromParticipantID, m.SentAt, m.Subject)
	}
	if page.NextCursor != nil {
		fmt.Fprintf(w, "more: acc inbox --cursor %s\n", *page.NextCursor)
	}
	fmt.Fprintln(w, "read one: acc inbox --message ID")
}

// printDamaged prints the one line (core.DamagedLine) that names the
// records a text output left out because they do not decode, if any.
func printDamaged(w io.Writer, damaged []storage.DamagedRecord) {
	if len(damaged) > 0 {
		fmt.Fprintln(w, core.DamagedLine(damaged))
	}
}

func printExact(w io.Writer, it core.ExactItem) {
	m := it.Message
	to := "the room"
	if len(m.ToParticipantIDs) > 0 {
		to = strings.Join(m.ToParticipantIDs, ", ")
	}
	fmt.Fprintf(w, "message %s (%s, owes %s) in thread %s\n", m.MessageID, m.Kind, m.Obligation, m.ThreadID)
	fmt.Fprintf(w, "from %s (%s) to %s at %s\n", m.FromParticipantID, m.FromSessionID, to, m.SentAt)
	if m.InReplyTo != nil {
		fmt.Fprintf(w, "in reply to %s\n", *m.InReplyTo)
	}
	if st := m.DecisionStatus; st != nil {
		fmt.Fprintf(w, "decision: %s (group %s)\n", decisionText(st), st.GroupID)
	}
	fmt.Fprintf(w, "subject: %s\n", m.Subject)
	fmt.Fprintf(w, "receipt: %s\n", it.Receipt.State)
	// The markers name the message id, which is assigned when the message
	// is recorded: a body cannot contain its own closing marker, so it
	// cannot end the untrusted frame early and forge lines after it.
	fmt.Fprintf(w, "--- body of %s (%s) ---\n%s\n--- end of %s ---\n", m.MessageID, core.TrustLabel, m.Body, m.MessageID)
}

// deliveryLines says in words how the message reaches each recipient, one
// line per explanation: recipients whose copies travel the same way share
// a line ("bob, carol: queued; CLI sessions read it with acc inbox"). from
// is the sender's participant: its own session is never one of the
// recipient's (pkg/router), which the line to itself says. The outcomes
// themselves are in the JSON (docs/delivery.md).
func deliveryLines(ds []router.Delivery, from string) []string {
	type group struct {
		names []string
		many  bool
		d     router.Delivery
	}
	var order []string
	groups := map[string]*group{}
	for _, d := range ds {
		self := d.RecipientParticipantID == from
		key := deliveryText(d, self, false)
		g := groups[key]
		if g == nil {
			g = &group{d: d}
			groups[key] = g
			order = append(order, key)
		}
		g.names = append(g.names, d.RecipientParticipantID)
		g.many = g.many || len(g.names) > 1 || len(d.Sessions) > 1
	}
	lines := make([]string, 0, len(order))
	for _, key := range order {
		g := groups[key]
		lines = append(lines, strings.Join(g.names, ", ")+": "+deliveryText(g.d, g.d.RecipientParticipantID == from, g.many))
	}
	return lines
}

// deliveryText says how one recipient's copy travels: its outcome, then
// who or what brings it to them. self: the recipient is the sender's own
// participant. many words it for several sessions.
func deliveryText(d router.Delivery, self, many bool) string {
	code := ""
	if d.ErrorCode != nil {
		code = *d.ErrorCode
	}
	switch {
	case d.Outcome == router.OutcomeOffered && d.Transport != router.TransportDurable:
		return "offered live (" + d.Transport + "): their session takes it now, an idle one starts a turn"
	case d.Outcome != router.OutcomeQueued:
		// A repeated send: the receipt had moved on already.
		return "already " + d.Outcome
	case d.Transport == router.TransportNextTurn:
		return "queued; " + nextTurnText(d.Sessions, liveNote(code))
	case d.Transport == router.TransportMidTurn:
		return "queued; " + busyText(d.Sessions, "after its next tool call (mid-turn)", liveNote(code))
	case d.Transport == router.TransportEndOfTurn:
		return "queued; " + busyText(d.Sessions, "when it is about to stop (end of turn)", liveNote(code))
	case code == "":
		// Queued in the inbox with no reason is only ever a repeated send
		// of a decision replaced since (pkg/router's first row).
		return "queued; a later decision replaced it, so only an exact read shows it"
	case code == router.ErrRecipientUnavailable && len(d.Sessions) == 0 && self:
		// The sending session is live, but it is never the recipient's.
		return "queued; no live session of theirs apart from the sender, so it waits in their inbox"
	case code == router.ErrRecipientUnavailable && len(d.Sessions) == 0:
		return "queued; no live session, so it waits in their inbox"
	case len(d.Sessions) == 0:
		return "queued in their inbox (" + router.ReasonText(code) + ")"
	}
	note := ""
	if code != router.ErrUnsupportedClientVersion && code != "" {
		note = liveNote(code)
	}
	kind := sessionKind(d.Sessions[0])
	for _, s := range d.Sessions[1:] {
		if sessionKind(s) != kind {
			return "queued; their sessions read it with acc inbox or acc_inbox" + note
		}
	}
	switch {
	case kind == "cli" && many:
		return "queued; CLI sessions read it with acc inbox" + note
	case kind == "cli":
		return "queued; a CLI session reads it with acc inbox" + note
	case kind == "mcp" && many:
		return "queued; MCP sessions read it with acc_inbox" + note
	case kind == "mcp":
		return "queued; an MCP session reads it with acc_inbox" + note
	}
	return "queued; next-turn delivery is not proven for their " + clientName(d.Sessions[0]) + ", so it waits in their inbox" + note
}

// busyText names the recipient's busy session whose hook brings the
// message (the first one the route marked as carrying it: Carries), says
// when, then note; other sessions beside it may take the message first
// (a hook shows only a message still queued: docs/delivery.md).
func busyText(sessions []router.Session, when, note string) string {
	text := ""
	for _, s := range sessions {
		if s.Carries {
			text = "their busy " + clientName(s) + " shows it " + when + note
			break
		}
	}
	if len(sessions) > 1 {
		text += ", unless another of their sessions takes it first"
	}
	return text
}

// nextTurnText names the sessions whose hook shows the message at their
// next turn (those with next turn proven, wherever they are in the list),
// then note, then the recipient's other sessions. A hook shows only a
// message still queued, so the first session to take it decides: another
// hooked one at its own turn, or a session that reads it with acc inbox
// or acc_inbox (docs/delivery.md).
func nextTurnText(sessions []router.Session, note string) string {
	var hooked []string
	nHooked := 0
	var others []router.Session
	for _, s := range sessions {
		if !s.NextTurn {
			others = append(others, s)
			continue
		}
		nHooked++
		if name := clientName(s); !slices.Contains(hooked, name) {
			hooked = append(hooked, name)
		}
	}
	text := "their " + joinAnd(hooked) + " shows it at its next turn" + note
	if nHooked > 1 {
		text = "whichever of their " + joinAnd(hooked) + " sessions takes a turn first shows it" + note
	}
	if len(others) == 0 {
		return text
	}
	kind := sessionKind(others[0])
	for _, s := range others[1:] {
		if sessionKind(s) != kind {
			kind = ""
		}
	}
	switch {
	case kind == "cli" && len(others) > 1:
		return text + ", unless one of their CLI sessions reads it first with acc inbox"
	case kind == "cli":
		return text + ", unless their CLI session reads it first with acc inbox"
	case kind == "mcp" && len(others) > 1:
		return text + ", unless one of their MCP sessions reads it first with acc_inbox"
	case kind == "mcp":
		return text + ", unless their MCP session reads it first with acc_inbox"
	}
	return text + ", unless another of their sessions reads it first"
}

// joinAnd lists names: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sessionKind is cli for a session attached by hand, mcp for acc-mcp's,
// else the client and its version.
func sessionKind(s router.Session) string {
	switch {
	case s.Manual:
		return "cli"
	case s.Harness == "mcp":
		return "mcp"
	}
	return s.Harness + " " + s.ClientVersion
}

// clientName names a session's client, with its version:
// "Claude Code 2.1.332", "Gemini CLI (version unknown)", "ACP agent".
func clientName(s router.Session) string {
	name := s.Harness
	switch a := clients.Get(s.Harness); {
	case a != nil:
		name = a.DisplayName()
	case s.Harness == "acp":
		name = "ACP agent"
	}
	if s.ClientVersion == "" {
		return name + " (version unknown)"
	}
	return name + " " + s.ClientVersion
}

// liveNote says, in a parenthesis, why a message was not pushed live.
func liveNote(code string) string {
	switch code {
	case "":
		return ""
	case router.ErrDeliveryDisabled:
		return " (their live-push policy does not cover it)"
	case router.ErrRecipientUnavailable:
		return " (not pushed live: their live channel is gone, stale or not theirs)"
	case router.ErrUnsupportedClientVersion:
		return " (live push is not proven for their version)"
	case router.ErrAmbiguousSessions:
		return " (several live sessions, so none is pushed to)"
	case router.ErrRecipientRemote:
		return " (not pushed live: their session runs on another host or container)"
	}
	return " (not pushed live: " + router.ReasonText(code) + ")"
}
