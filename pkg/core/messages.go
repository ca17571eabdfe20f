package core

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// SendInput is a message to record (docs/protocol.md#messages). To holds
// participant ids or client names; empty means a room message.
type SendInput struct {
	Caller          Caller
	To              []string
	Kind            string // note (default), question, request, decision
	Obligation      string // "" = the kind's default
	Subject, Body   string
	ClientMessageID string // "" = generated client_…
	Artifacts       []protocol.ArtifactRef
	// Supersedes or Withdraws (never both, decisions only) make the
	// decision a change of 1..16 earlier decisions (docs/protocol.md#decisions).
	Supersedes, Withdraws []string

	// set by Send from Supersedes or Withdraws
	change *protocol.DecisionChange
	// set by Reply and Finish only
	inReplyTo  *protocol.Message
	handoff    *protocol.HandoffPayload
	extensions protocol.Extensions
}

// SendResult is a recorded message and the recipients it was addressed to.
// Created is false when an idempotent retry returned the original message.
type SendResult struct {
	Message    protocol.Message `json:"message"`
	Recipients []string         `json:"-"`
	Created    bool             `json:"created"`
	// Receipt is the caller's receipt for the original message (reply only).
	Receipt *protocol.Receipt `json:"receipt,omitempty"`
	// ReleasedClaims and Session are set by Finish.
	ReleasedClaims []string      `json:"releasedClaims,omitempty"`
	Session        *DetachResult `json:"session,omitempty"`
}

// Send records a note, question, request or decision with one queued receipt
// per recipient, in one transaction, before anything delivers it
// (docs/protocol.md#record-then-offer).
// A decision with Supersedes or Withdraws is a decision change (docs/protocol.md#decisions): it
// also reaches every target's author and recipients, and its targets stop
// being heads. Errors: exit 2 for a kind this command cannot send (answer,
// handoff), a duplicate or ambiguous recipient, or supersedes/withdraws
// misused; exit 4 for invalid text, an unknown recipient, or change targets
// that are not 1..16 existing decisions; exit 5 for a stale generation or a
// clientMessageId reused with other content.
func (r *Room) Send(ctx context.Context, in SendInput) (*SendResult, error) {
	if err := CheckSend(in); err != nil {
		return nil, err
	}
	if in.Kind == "" {
		in.Kind = protocol.KindNote
	}
	if err := prepareDecisionChange(&in); err != nil {
		return nil, err
	}
	return r.record(ctx, in, "send a message")
}

// CheckSend applies every rule of Send that needs no store: the kind this
// command may send, the shape of a decision change, the text limits, the
// obligation the kind allows and, for a message to the room (no recipient
// and no change, whose recipients it would inherit), the room's rules.
// Surfaces that must refuse bad input before they resolve a session (MCP,
// A4) call it first; Send calls it too. Errors as Send's, exit 2 and 4.
func CheckSend(in SendInput) error {
	if in.Kind == "" {
		in.Kind = protocol.KindNote
	}
	switch in.Kind {
	case protocol.KindNote, protocol.KindQuestion, protocol.KindRequest, protocol.KindDecision:
	case protocol.KindAnswer:
		return protocol.Errorf(protocol.ReasonKindNotAllowed, "an answer is sent with %s, which keeps it in the thread", protocol.Step{Command: protocol.StepReply})
	case protocol.KindHandoff:
		return protocol.Errorf(protocol.ReasonKindNotAllowed, "a handoff is sent with %s, which carries its structured payload", protocol.Step{Command: protocol.StepFinish})
	default:
		return protocol.Errorf(protocol.ReasonKindNotAllowed, "message kind %q is not one of note, question, request, decision", in.Kind)
	}
	if err := prepareDecisionChange(&in); err != nil {
		return err
	}
	if err := checkMessageText(in); err != nil {
		return err
	}
	if in.Obligation != "" {
		if err := checkObligation(in.Kind, in.Obligation); err != nil {
			return err
		}
	}
	if len(in.To) == 0 && in.change == nil {
		ob := in.Obligation
		if ob == "" {
			ob = protocol.DefaultObligation(in.Kind, true)
		}
		if in.Kind != protocol.KindNote && in.Kind != protocol.KindDecision {
			return protocol.Errorf(protocol.ReasonInvalidInput, "a room message cannot have kind %s; address it with %s", in.Kind, protocol.Field("to"))
		}
		if in.Kind == protocol.KindDecision && ob != protocol.ObligationNone {
			return roomDecisionAck()
		}
		// A note's obligation was checked above; nothing else is left.
	}
	return nil
}

// checkObligation refuses an obligation the kind does not take
// (docs/protocol.md#kinds-and-obligations).
func checkObligation(kind, obligation string) error {
	if valid := protocol.ValidObligations[kind]; !slices.Contains(valid, obligation) {
		return protocol.Errorf(protocol.ReasonInvalidInput,
			"a %s cannot carry obligation %s; it takes %s (leave the obligation out to get the kind's default)",
			kind, obligation, strings.Join(valid, " or ")).With("kind", kind).With("obligation", obligation)
	}
	return nil
}

func roomDecisionAck() error {
	return protocol.Errorf(protocol.ReasonInvalidInput, "a room decision cannot ask for acknowledgement; address it with %s", protocol.Field("to"))
}

// CheckRequest is CheckSend for a request (Request's rules without a store).
func CheckRequest(in RequestInput) error {
	body := in.Detail
	if body == "" {
		body = in.Title
	}
	return CheckSend(SendInput{To: []string{in.To}, Kind: protocol.KindRequest, Subject: in.Title, Body: body, ClientMessageID: in.ClientMessageID})
}

// CheckReply applies Reply's rules that need no store: the message id, the
// client message id, the subject and body limits. Exit 4.
func CheckReply(in ReplyInput) error {
	if err := protocol.CheckPortableID("message", in.MessageID); err != nil {
		return err
	}
	if in.ClientMessageID != "" {
		if err := protocol.CheckPortableID("clientMessageId", in.ClientMessageID); err != nil {
			return err
		}
	}
	if in.Subject != "" {
		if err := protocol.CheckLine("subject", in.Subject, protocol.MaxLineText); err != nil {
			return err
		}
	}
	return protocol.CheckProse("body", in.Body, protocol.MaxProseText)
}

// record validates, resolves recipients, applies idempotency and commits.
func (r *Room) record(ctx context.Context, in SendInput, action string) (*SendResult, error) {
	if err := checkMessageText(in); err != nil {
		return nil, err
	}
	in.ClientMessageID = sendKey(in.ClientMessageID)
	var res *SendResult
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		var err error
		res, err = r.recordTx(tx, in, action)
		return err
	})
	return res, keyed(err, in.ClientMessageID)
}

// sendKey returns key, or a new client_… id when it is empty: every send
// has its clientMessageId before its transaction starts, so that a send
// whose outcome is unknown can name the key its retry must reuse
// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed).
func sendKey(key string) string {
	if key == "" {
		return protocol.NewID(protocol.KindClient)
	}
	return key
}

// keyed adds the send's clientMessageId to an outcome_unknown error (the
// detail clientMessageId); any other error is returned as it is.
func keyed(err error, key string) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Reason == protocol.ReasonOutcomeUnknown {
		pe.With("clientMessageId", key)
	}
	return err
}

func checkMessageText(in SendInput) error {
	if in.ClientMessageID != "" {
		if err := protocol.CheckPortableID("clientMessageId", in.ClientMessageID); err != nil {
			return err
		}
	}
	if err := protocol.CheckLine("subject", in.Subject, protocol.MaxLineText); err != nil {
		return err
	}
	return protocol.CheckProse("body", in.Body, protocol.MaxProseText)
}

func (r *Room) recordTx(tx storage.Tx, in SendInput, action string) (*SendResult, error) {
	me, _, err := requireOwner(tx, in.Caller, action)
	if err != nil {
		return nil, err
	}
	return r.recordAs(tx, me, in)
}

// recordAs records in as a message from session me (already verified).
func (r *Room) recordAs(tx storage.Tx, me *protocol.Session, in SendInput) (*SendResult, error) {
	at := protocol.FormatTime(r.now())
	var to []string
	var err error
	if in.inReplyTo != nil {
		to = []string{in.inReplyTo.FromParticipantID}
	} else {
		to, err = r.resolveRecipients(tx, me, in.To)
		if err != nil {
			return nil, err
		}
		if in.change != nil {
			// Inherited before the idempotency comparison
			// (docs/protocol.md#idempotency).
			if to, err = inheritRecipients(tx, me, in.change, to); err != nil {
				return nil, err
			}
		}
	}
	room := len(to) == 0
	obligation := in.Obligation
	if obligation == "" {
		obligation = protocol.DefaultObligation(in.Kind, room)
	} else if err := checkObligation(in.Kind, obligation); err != nil {
		return nil, err
	}
	m := protocol.Message{
		SchemaVersion: protocol.SchemaVersion, MessageID: protocol.NewID(protocol.KindMessage),
		ClientMessageID: in.ClientMessageID, WorkspaceID: r.WS.ID, FromParticipantID: me.ParticipantID,
		FromSessionID: me.SessionID, ToParticipantIDs: to, Kind: in.Kind, Obligation: obligation,
		Subject: in.Subject, Body: in.Body, Artifacts: in.Artifacts, Handoff: in.handoff, SentAt: at,
		DecisionChange: in.change, Extensions: in.extensions,
	}
	if m.Artifacts == nil {
		m.Artifacts = []protocol.ArtifactRef{}
	}
	if m.ToParticipantIDs == nil {
		m.ToParticipantIDs = []string{}
	}
	if in.inReplyTo != nil {
		m.InReplyTo = strPtr(in.inReplyTo.MessageID)
		m.ThreadID = in.inReplyTo.ThreadID
	} else {
		m.ThreadID = m.MessageID
	}
	if m.ClientMessageID == "" {
		m.ClientMessageID = protocol.NewID(protocol.KindClient)
	} else {
		prior, err := tx.MessageByClientKey(me.ParticipantID, m.ClientMessageID)
		if err != nil {
			return nil, err
		}
		if prior != nil {
			if !sameContent(prior, &m) {
				return nil, protocol.Errorf(protocol.ReasonClientMessageIDConflict,
					"clientMessageId %s was already used with different message content (message %s); use a new key for a new message", m.ClientMessageID, prior.MessageID).
					With("clientMessageId", m.ClientMessageID).With("messageId", prior.MessageID)
			}
			rcs, err := tx.ReceiptsByMessage(prior.MessageID)
			if err != nil {
				return nil, err
			}
			recipients := make([]string, 0, len(rcs))
			for _, rc := range rcs {
				recipients = append(recipients, rc.RecipientParticipantID)
			}
			return &SendResult{Message: *prior, Recipients: recipients, Created: false}, nil
		}
	}
	if room {
		if m.Kind == protocol.KindDecision && m.Obligation != protocol.ObligationNone {
			return nil, roomDecisionAck()
		}
		if err := m.Validate(); err != nil {
			return nil, err
		}
	} else if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := r.ensureMaterialised(tx, me.SessionID, at); err != nil {
		return nil, err
	}
	recipients := m.ToParticipantIDs
	if room {
		recipients, err = roomRecipients(tx, me.ParticipantID)
		if err != nil {
			return nil, err
		}
	}
	if err := tx.InsertMessage(&m); err != nil {
		return nil, err
	}
	storage.Failpoint(storage.FailAfterMessage)
	for _, p := range recipients {
		if err := tx.PutReceipt(&protocol.Receipt{SchemaVersion: protocol.SchemaVersion, MessageID: m.MessageID,
			WorkspaceID: r.WS.ID, RecipientParticipantID: p, State: protocol.ReceiptQueued, UpdatedAt: at}); err != nil {
			return nil, err
		}
	}
	if err := tx.AppendEvent(newEvent(at, me.SessionID, protocol.EventMessageRecorded, map[string]any{
		"messageId": m.MessageID, "threadId": m.ThreadID, "recipientParticipantIds": recipients,
	})); err != nil {
		return nil, err
	}
	if err := r.touch(tx, me.SessionID, at); err != nil {
		return nil, err
	}
	return &SendResult{Message: m, Recipients: recipients, Created: true}, nil
}

// touch refreshes an open session's heartbeat: a session that just wrote
// something is evidently there. It appends no event.
func (r *Room) touch(tx storage.Tx, sessionID, at string) error {
	s, area, err := findSession(tx, sessionID)
	if err != nil || s == nil || s.State != protocol.SessionOpen {
		return err
	}
	s.HeartbeatAt = at
	return tx.PutSession(area, s)
}

// sameContent compares the logical content of two messages for idempotency
// (docs/protocol.md#idempotency): recipients, kind, obligation, subject,
// body, inReplyTo, artifacts,
// handoff and decisionChange.
func sameContent(a, b *protocol.Message) bool {
	return reflect.DeepEqual(a.ToParticipantIDs, b.ToParticipantIDs) && a.Kind == b.Kind &&
		a.Obligation == b.Obligation && a.Subject == b.Subject && a.Body == b.Body &&
		reflect.DeepEqual(a.InReplyTo, b.InReplyTo) && reflect.DeepEqual(normArtifacts(a.Artifacts), normArtifacts(b.Artifacts)) &&
		reflect.DeepEqual(a.Handoff, b.Handoff) && reflect.DeepEqual(a.DecisionChange, b.DecisionChange)
}

func normArtifacts(a []protocol.ArtifactRef) []protocol.ArtifactRef {
	if len(a) == 0 {
		return nil
	}
	return a
}

// roomRecipients are the participants, other than the sender's, with an open
// session at commit (by record state, not presence; docs/protocol.md#recipients),
// sorted.
func roomRecipients(tx storage.ReadTx, sender string) ([]string, error) {
	ss, err := allSessions(tx, true)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, s := range ss {
		if s.ParticipantID != sender {
			set[s.ParticipantID] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// resolveRecipients maps each --to value to a participant id
// (docs/protocol.md#recipients): an exact
// participant id wins; otherwise a client name resolves when exactly one
// non-offline session of that client belongs to another participant.
func (r *Room) resolveRecipients(tx storage.ReadTx, me *protocol.Session, raw []string) ([]string, error) {
	if len(raw) == 0 {
		return []string{}, nil
	}
	var out, strangers []string
	seen := map[string]bool{}
	var live []protocol.Session
	liveLoaded := false
	for _, v := range raw {
		v = strings.TrimSpace(v)
		known, err := knownParticipant(tx, v)
		if err != nil {
			return nil, err
		}
		id := ""
		if known {
			id = v
		} else {
			if !liveLoaded {
				ss, err := allSessions(tx, true)
				if err != nil {
					return nil, err
				}
				now := r.now()
				for _, s := range ss {
					if Presence(&s, now, r.Probe) != PresenceOffline {
						live = append(live, s)
					}
				}
				liveLoaded = true
			}
			matches := map[string]bool{}
			for _, s := range live {
				if s.Harness == v && s.ParticipantID != me.ParticipantID {
					matches[s.ParticipantID] = true
				}
			}
			switch len(matches) {
			case 0:
				strangers = append(strangers, v)
				continue
			case 1:
				for p := range matches {
					id = p
				}
			default:
				names := make([]string, 0, len(matches))
				for p := range matches {
					names = append(names, p)
				}
				sort.Strings(names)
				return nil, protocol.Errorf(protocol.ReasonAmbiguousRecipient,
					"%s matches %d live %s sessions (%s); address one of them by participant id", protocol.FieldValue{Name: "to", Value: v}, len(names), v, strings.Join(names, ", ")).
					With("candidates", names)
			}
		}
		if seen[id] {
			return nil, protocol.Errorf(protocol.ReasonDuplicateRecipient, "a participant may be addressed only once; %s is named twice", id).With("participantId", id)
		}
		seen[id] = true
		out = append(out, id)
	}
	if len(strangers) > 0 {
		known, err := knownParticipantIDs(tx)
		if err != nil {
			return nil, err
		}
		sort.Strings(known)
		list := strings.Join(known, ", ")
		if list == "" {
			list = "nobody yet"
		}
		return nil, protocol.Errorf(protocol.ReasonUnknownRecipient,
			"no participant here is called %s. This workspace has: %s (see %s; a client name such as claude works while exactly one live session of that client is here)", strings.Join(strangers, ", "), list, protocol.Step{Command: protocol.StepStatus}).
			With("strangers", strangers).With("known", known)
	}
	return out, nil
}

// RequestInput is a request: one addressed message of kind request
// (docs/protocol.md#kinds-and-obligations).
type RequestInput struct {
	Caller          Caller
	To              string
	Title, Detail   string
	ClientMessageID string
}

// Request records a request; without a detail the title is the body
// (docs/decisions.md#18-details-the-original-left-open).
func (r *Room) Request(ctx context.Context, in RequestInput) (*SendResult, error) {
	if err := CheckRequest(in); err != nil {
		return nil, err
	}
	body := in.Detail
	if body == "" {
		body = in.Title
	}
	return r.record(ctx, SendInput{Caller: in.Caller, To: []string{in.To}, Kind: protocol.KindRequest,
		Subject: in.Title, Body: body, ClientMessageID: in.ClientMessageID}, "send a request")
}

// ReplyInput answers a message in its thread (docs/protocol.md#reply-and-acknowledge).
type ReplyInput struct {
	Caller          Caller
	MessageID       string
	Subject, Body   string // Subject "" = "Re: <original subject>"
	ClientMessageID string
}

// Reply records an answer to the original's author in the original's thread
// and acknowledges the caller's receipt for the original, in one
// transaction. A reply to an already acknowledged message adds an answer
// (docs/decisions.md#4-reply-and-ack). Errors: exit 4 when the message does not exist; exit 5
// when the caller's participant holds no receipt for it, or the generation is
// stale.
func (r *Room) Reply(ctx context.Context, in ReplyInput) (*SendResult, error) {
	if err := CheckReply(in); err != nil {
		return nil, err
	}
	in.ClientMessageID = sendKey(in.ClientMessageID)
	var res *SendResult
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, in.Caller, "reply")
		if err != nil {
			return err
		}
		orig, err := tx.Message(in.MessageID)
		if err != nil {
			return err
		}
		if orig == nil {
			return unknownMessage(in.MessageID)
		}
		rc, err := tx.Receipt(orig.MessageID, me.ParticipantID)
		if err != nil {
			return err
		}
		if rc == nil {
			hint, next := "you sent it; to add to the conversation send a new message to its recipients%s", any("")
			if orig.FromParticipantID != me.ParticipantID {
				hint, next = "send a new message with %s", protocol.Step{Command: protocol.StepMessage, Args: map[string]string{"to": orig.FromParticipantID}}
			}
			return protocol.Errorf(protocol.ReasonNotAddressed,
				"message %s is not addressed to %s, so it cannot be replied to from here; "+hint, orig.MessageID, me.ParticipantID, next).
				With("messageId", orig.MessageID)
		}
		subject := in.Subject
		if subject == "" {
			subject = replySubject(orig.Subject)
		}
		res, err = r.recordAs(tx, me, SendInput{Caller: in.Caller, Kind: protocol.KindAnswer, Subject: subject, Body: in.Body,
			ClientMessageID: in.ClientMessageID, inReplyTo: orig})
		if err != nil {
			return err
		}
		rc, err = r.advance(tx, me.SessionID, rc, protocol.ReceiptAcknowledged)
		if err != nil {
			return err
		}
		res.Receipt = rc
		return nil
	})
	return res, keyed(err, in.ClientMessageID)
}

func replySubject(s string) string {
	if strings.HasPrefix(s, "Re: ") {
		return s
	}
	out := "Re: " + s
	if utf8.RuneCountInString(out) > protocol.MaxLineText {
		rs := []rune(out)
		out = string(rs[:protocol.MaxLineText])
	}
	return out
}

// advance moves a receipt forward to state, appending the matching event
// only on a real change (docs/protocol.md#receipt-states).
func (r *Room) advance(tx storage.Tx, actor string, rc *protocol.Receipt, state string) (*protocol.Receipt, error) {
	changed, err := protocol.ReceiptTransition(rc.State, state)
	if err != nil || !changed {
		return rc, err
	}
	at := protocol.FormatTime(r.now())
	next := *rc
	next.State = state
	next.UpdatedAt = at
	if err := tx.PutReceipt(&next); err != nil {
		return nil, err
	}
	typ := map[string]string{
		protocol.ReceiptOffered:      protocol.EventMessageOffered,
		protocol.ReceiptRetrieved:    protocol.EventMessageRetrieved,
		protocol.ReceiptAcknowledged: protocol.EventMessageAcknowledged,
	}[state]
	if err := tx.AppendEvent(newEvent(at, actor, typ, map[string]any{"messageId": rc.MessageID, "recipientParticipantId": rc.RecipientParticipantID})); err != nil {
		return nil, err
	}
	if err := r.touch(tx, actor, at); err != nil {
		return nil, err
	}
	return &next, nil
}

// Ack acknowledges the caller's receipt for a message without answering it
// (docs/protocol.md#reply-and-acknowledge). Acknowledging twice is a no-op.
// Errors: exit 5 reply_required for a
// question or request not yet answered (its obligation is a reply), exit 5
// not_addressed when the caller holds no receipt, exit 5 for a stale
// generation.
func (r *Room) Ack(ctx context.Context, c Caller, messageID string) (*protocol.Receipt, error) {
	if err := protocol.CheckPortableID("message", messageID); err != nil {
		return nil, err
	}
	var out *protocol.Receipt
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, c, "acknowledge")
		if err != nil {
			return err
		}
		m, err := tx.Message(messageID)
		if err != nil {
			return err
		}
		if m == nil {
			return unknownMessage(messageID)
		}
		rc, err := tx.Receipt(messageID, me.ParticipantID)
		if err != nil {
			return err
		}
		if rc == nil {
			return protocol.Errorf(protocol.ReasonNotAddressed, "message %s is not addressed to %s; only a recipient can acknowledge it", messageID, me.ParticipantID).With("messageId", messageID)
		}
		if rc.State == protocol.ReceiptAcknowledged {
			out = rc
			return nil
		}
		if m.Obligation == protocol.ObligationReply {
			return protocol.Errorf(protocol.ReasonReplyRequired,
				"%s %s asks for a reply, not an acknowledgement; answer it with %s (a reply may also decline)", m.Kind, messageID,
				protocol.Step{Command: protocol.StepReply, Args: map[string]string{"messageId": messageID}}).
				With("messageId", messageID)
		}
		out, err = r.advance(tx, me.SessionID, rc, protocol.ReceiptAcknowledged)
		return err
	})
	return out, err
}

// FinishInput is a handoff that ends a session (docs/protocol.md#handoff).
type FinishInput struct {
	Caller          Caller
	Goal            string
	Status          string // complete, partial (default), blocked
	Completed       []string
	Remaining       []string
	Blockers        []string
	To              string // "" = a room (workspace) handoff
	ClientMessageID string
}

// CheckFinish applies Finish's rules that need no store: the status, the
// handoff lists and the goal's text. Errors as Finish's.
func CheckFinish(in FinishInput) error {
	_, err := prepareFinish(&in)
	return err
}

// prepareFinish checks in and builds the handoff's send.
func prepareFinish(in *FinishInput) (SendInput, error) {
	if in.Status == "" {
		in.Status = protocol.HandoffPartial
	}
	if err := protocol.CheckOneOf("status", in.Status, protocol.HandoffComplete, protocol.HandoffPartial, protocol.HandoffBlocked); err != nil {
		return SendInput{}, err
	}
	h := &protocol.HandoffPayload{Status: in.Status, Completed: orEmpty(in.Completed), Remaining: orEmpty(in.Remaining),
		Blockers: orEmpty(in.Blockers), Verification: []protocol.ArtifactRef{}}
	if err := h.Validate(); err != nil {
		return SendInput{}, err
	}
	send := SendInput{Caller: in.Caller, Kind: protocol.KindHandoff, Subject: in.Goal, Body: handoffBody(in.Goal, h),
		ClientMessageID: in.ClientMessageID, handoff: h}
	if in.To != "" {
		send.To = []string{in.To}
	}
	if err := checkMessageText(send); err != nil {
		return SendInput{}, err
	}
	return send, nil
}

// Finish records a handoff, releases every claim the session owns and closes
// the session, in one transaction. A retry with the same clientMessageId from
// the same session returns the original handoff even though the session is
// closed. Errors: exit 4 for invalid text or an unknown recipient; exit 5 for
// a stale generation, a closed session, or a key used by another session.
func (r *Room) Finish(ctx context.Context, in FinishInput) (*SendResult, error) {
	in.ClientMessageID = sendKey(in.ClientMessageID)
	send, err := prepareFinish(&in)
	if err != nil {
		return nil, err
	}
	var res *SendResult
	err = r.Store.Update(ctx, func(tx storage.Tx) error {
		s, _, err := findSession(tx, in.Caller.SessionID)
		if err != nil {
			return err
		}
		if s == nil {
			return protocol.Errorf(protocol.ReasonSessionNotOpen, "session %s is not open in this workspace; %s", in.Caller.SessionID, protocol.Step{Command: protocol.StepReattach})
		}
		if s.Generation != in.Caller.Generation {
			return staleGeneration("finish", s.SessionID)
		}
		if in.ClientMessageID != "" {
			prior, err := tx.MessageByClientKey(s.ParticipantID, in.ClientMessageID)
			if err != nil {
				return err
			}
			if prior != nil && prior.Kind == protocol.KindHandoff && prior.FromSessionID != s.SessionID {
				return protocol.Errorf(protocol.ReasonClientMessageIDConflict, "clientMessageId %s belongs to a different session's finish; use a new key", in.ClientMessageID).
					With("clientMessageId", in.ClientMessageID).With("messageId", prior.MessageID)
			}
			if prior != nil && s.State == protocol.SessionClosed {
				if prior.Kind == protocol.KindHandoff {
					send.extensions = prior.Extensions // what the first finish released
				}
				res, err = r.recordAs(tx, s, send)
				if err == nil {
					res.Session = &DetachResult{SessionID: s.SessionID, State: s.State}
					res.ReleasedClaims = releasedClaimsOf(&res.Message)
				}
				return err
			}
		}
		if s.State != protocol.SessionOpen {
			return protocol.Errorf(protocol.ReasonSessionNotOpen, "cannot finish: session %s is already closed; %s", s.SessionID,
				protocol.Step{Command: protocol.StepRepeatFinish}).With("sessionId", s.SessionID)
		}
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		var owned []protocol.Claim
		released := []any{}
		for _, c := range claims {
			if c.OwnerSessionID == s.SessionID {
				owned = append(owned, c)
				released = append(released, c.ClaimID)
			}
		}
		// A damaged claim row of this session is released too: its id and
		// owner are its own columns (docs/design.md#damaged-records).
		for _, d := range damagedClaims(tx) {
			if d.OwnerSessionID == s.SessionID {
				owned = append(owned, protocol.Claim{ClaimID: d.ClaimID, OwnerSessionID: d.OwnerSessionID})
				released = append(released, d.ClaimID)
			}
		}
		// The handoff records which claims it released, so a retry can say so.
		send.extensions = protocol.Extensions{"releasedClaims": released}
		res, err = r.recordAs(tx, s, send)
		if err != nil || !res.Created {
			return err
		}
		at := protocol.FormatTime(r.now())
		res.ReleasedClaims = []string{}
		for _, c := range owned {
			if err := tx.DeleteClaim(c.ClaimID); err != nil {
				return err
			}
			var gen any = c.Generation
			if c.Generation == "" {
				gen = nil // a damaged claim's generation is lost
			}
			if err := tx.AppendEvent(newEvent(at, s.SessionID, protocol.EventClaimReleased, map[string]any{
				"claimId": c.ClaimID, "authority": nil, "reason": nil, "replacedGeneration": gen})); err != nil {
				return err
			}
			res.ReleasedClaims = append(res.ReleasedClaims, c.ClaimID)
		}
		// recordAs materialised the room, so look the session up again.
		cur, curArea, err := findSession(tx, s.SessionID)
		if err != nil {
			return err
		}
		if err := r.closeSession(tx, cur, curArea, at); err != nil {
			return err
		}
		res.Session = &DetachResult{SessionID: s.SessionID, State: protocol.SessionClosed}
		return nil
	})
	return res, keyed(err, in.ClientMessageID)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// handoffBody renders the handoff's readable body: the goal, the status, and
// a section per non-empty list.
func handoffBody(goal string, h *protocol.HandoffPayload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goal: %s\nstatus: %s\n", goal, h.Status)
	for _, sec := range []struct {
		name  string
		items []string
	}{{"completed", h.Completed}, {"remaining", h.Remaining}, {"blockers", h.Blockers}} {
		if len(sec.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", sec.name)
		for _, it := range sec.items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// unknownMessage is the exit-4 refusal for a message id this workspace has
// never recorded.
func unknownMessage(id string) error {
	return protocol.Errorf(protocol.ReasonUnknownMessage, "message %s does not exist in this workspace; %s lists your pending messages with their ids", id, protocol.Step{Command: protocol.StepInbox}).With("messageId", id)
}

// releasedClaimsOf reads the claim ids a handoff recorded as released.
func releasedClaimsOf(m *protocol.Message) []string {
	out := []string{}
	list, _ := m.Extensions["releasedClaims"].([]any)
	for _, v := range list {
		if id, ok := v.(string); ok {
			out = append(out, id)
		}
	}
	return out
}

// staleGeneration is the exit-5 refusal of a generation that is not the
// session's current one.
func staleGeneration(action, sessionID string) error {
	return protocol.Errorf(protocol.ReasonStaleGeneration,
		"cannot %s from this session generation: it is not the current generation of %s (the session was reattached, or the value is mistyped); use the %s printed by the latest attach", action, sessionID, protocol.Field("generation")).
		With("sessionId", sessionID)
}

// PriorHandoff returns the handoff participant recorded with
// clientMessageID (acc_finish retried after its session closed), or nil.
func (r *Room) PriorHandoff(ctx context.Context, participant, clientMessageID string) (*SendResult, error) {
	var out *SendResult
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		m, err := tx.MessageByClientKey(participant, clientMessageID)
		if err != nil || m == nil || m.Kind != protocol.KindHandoff {
			return err
		}
		rcs, err := tx.ReceiptsByMessage(m.MessageID)
		if err != nil {
			return err
		}
		res := &SendResult{Message: *m}
		for _, rc := range rcs {
			res.Recipients = append(res.Recipients, rc.RecipientParticipantID)
		}
		out = res
		return nil
	})
	return out, err
}
