package router

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// TransportNextTurn is the path of a message that a recipient's hook puts
// before its model at the next turn (the receipt becomes offered when the
// client has taken the hook's output).
const TransportNextTurn = "next-turn"

// TransportMidTurn is the path of a message that a busy recipient's
// post-tool hook puts before its model after the session's next tool
// call, and TransportEndOfTurn the path of one that its stop hook shows
// when the agent is about to stop (docs/delivery.md#mid-turn,
// docs/delivery.md#end-of-turn). Like next-turn, the receipt stays queued
// until the client has taken the hook's output.
const (
	TransportMidTurn   = "mid-turn"
	TransportEndOfTurn = "end-of-turn"
)

// ErrRoomMessage: a room message is never pushed live; it reaches each
// recipient on its next turn or in its inbox.
const ErrRoomMessage = "room_message"

// Policies of live delivery a recipient consents to
// (docs/delivery.md#live-push-waking-an-idle-session), recorded per client installation by `acc install --delivery`.
const (
	PolicyOff        = "off"
	PolicyActionable = "actionable"
	PolicyAll        = "all"
)

// Binding is a live-push endpoint a session's hook recorded for it, to be
// used through its client's proven transport (internal/livepush: Claude
// Code's inbox socket, Codex's thread queue).
type Binding struct {
	// Transport names the transport that serves the endpoint.
	Transport string
	// Endpoint is the transport's opaque reference; never shown to senders.
	Endpoint string
	// Stale: the binding is of a generation the session no longer has;
	// it is never offered to (recipient_unavailable). A binding past its
	// lease is not stale: the transport revalidates the endpoint (the
	// recorded process still serves it) on every offer.
	Stale bool
	// PID is the recipient session's client process, as its session
	// records it (0 when unknown): a transport checks the endpoint is
	// that process's.
	PID int
}

// Session is one live (not offline) open session of a recipient.
type Session struct {
	SessionID, Harness, ClientVersion string
	// NextTurn: the session's client has next-turn projection proven for
	// its version (recorded at attach).
	NextTurn bool
	// LivePush: the session's client has live push proven for its
	// version; a binding of a client without it is never offered to.
	LivePush bool
	// Manual: the session was attached by hand (acc attach), not by a
	// client's hook, acc-mcp or acc acp, so nothing but its own acc inbox
	// brings it a message.
	Manual bool
	// Remote: the session runs on another host or in another PID
	// namespace than the router (core.SameHost false), so its live-push
	// binding is never offered to (ErrRecipientRemote); its own hooks
	// and inbox still bring it the message there.
	Remote bool
	// Live is the session's live-push binding, nil when none.
	Live *Binding
	// MidTurn and EndOfTurn: the session's client has delivery after a
	// tool call, and holding a stopping agent, proven for its version
	// (recorded at attach).
	MidTurn, EndOfTurn bool
	// Activity is the session's turn as its hooks last recorded it, nil
	// when they never did.
	Activity *protocol.Activity
	// MidTurnPolicy and EndOfTurnPolicy are what the recipient recorded
	// for this session's client installation (acc install --mid-turn,
	// --end-of-turn; "" when not set): they narrow the recipient's
	// room-wide MidTurn and EndOfTurn for this session (Narrower).
	MidTurnPolicy, EndOfTurnPolicy string
	// HoldsSpent: a send may not promise the session's stop hook holds
	// for it (policy.endOfTurnMaxHolds is 0, or its current turn was held
	// already: the proven clients mark the stop after a hold, which is let
	// through; core.EndOfTurnPromised).
	HoldsSpent bool
	// Carries: in a Delivery routed mid-turn or end-of-turn, this session
	// is one whose hook would show the message by that path (set by Route;
	// what the sender's words name).
	Carries bool
}

// Working reports whether the session's agent is in a turn, as its hooks
// last recorded.
func (s Session) Working() bool {
	return s.Activity != nil && s.Activity.State == protocol.ActivityWorking
}

// Recipient is what the router knows of one addressed participant after
// the send committed.
type Recipient struct {
	ParticipantID string
	// Receipt is the recipient's receipt state for the message.
	Receipt string
	// NotPending: the message no longer shows in any inbox or projection
	// (a decision superseded or withdrawn before this send was routed, as when a send
	// is repeated with its client message id).
	NotPending bool
	// Sessions are the participant's live sessions.
	Sessions []Session
	// Policy is the live-delivery policy recorded for the recipient's
	// client installation ("" is off).
	Policy string
	// MidTurn and EndOfTurn are the room's turn-delivery policies
	// (policy.midTurn: off, actionable, all; policy.endOfTurn: off,
	// actionable); each session's installation may narrow them
	// (Session.MidTurnPolicy). "" is off.
	MidTurn, EndOfTurn string
}

// Transport is a certified live-delivery transport.
type Transport interface {
	Name() string
	// Offer hands m to the endpoint. accepted true means the client took
	// it (the receipt may become offered); false with code is a refusal
	// (code from the closed set, else transport_rejected); err is a
	// failure (transport_error).
	Offer(ctx context.Context, b Binding, m *protocol.Message) (accepted bool, code string, err error)
}

// Router decides, per recipient, which path carries a committed message
// (docs/delivery.md; docs/protocol.md#record-then-offer): next-turn
// projection is a path of its own.
type Router struct {
	// Transports are the live transports by name (internal/livepush.Router
	// has this platform's).
	Transports map[string]Transport
	// Offered records a successful live offer (the receipt becomes
	// offered); when it fails the outcome falls back with transport_error.
	Offered func(ctx context.Context, m *protocol.Message, participantID, transport string) error
	// Reserve, when set, is taken before an offer and released after it
	// was recorded: it makes one offer per message and recipient out of
	// concurrent sends (a retry racing the first). It returns the
	// receipt's state as read under the reservation: only queued is
	// offered; any other state is reported as it is. An error is
	// transport_error.
	Reserve func(ctx context.Context, m *protocol.Message, participantID string) (release func(), state string, err error)
	// TurnPolicy gives the mid-turn and end-of-turn policies recorded for
	// a client installation (adapter id → off, actionable, all; "" when
	// not set, so the workspace's decides); nil means none recorded.
	TurnPolicy func(adapter string) (midTurn, endOfTurn string)
}

// Route returns one Delivery per recipient, in order. The table, first
// match wins:
//
//  1. the receipt is no longer queued (a repeated send): its state, inbox;
//     a message that is no longer pending (a replaced decision): queued,
//     inbox, with no reason — an exact read still returns it;
//  2. live push, for an addressed message whose recipient has exactly one
//     live session with a binding, a policy that admits the kind, the
//     session on this host and the binding's transport: offered via that
//     transport when it accepts; otherwise the reason is kept
//     (room_message, ambiguous_recipient_sessions, delivery_disabled,
//     recipient_remote, transport_rejected, transport_error, …) and the
//     next rows decide the path;
//  3. no live session: queued, inbox, recipient_unavailable;
//  4. a live session that is working (in a turn), whose client has
//     mid-turn delivery proven, with a mid-turn policy that admits the
//     kind: queued, mid-turn (its post-tool hook shows it after the next
//     tool call);
//  5. a live session that is working, whose client has end-of-turn
//     delivery proven, with an end-of-turn policy that admits the kind
//     (never a note), and whose turn may still be held
//     (policy.endOfTurnMaxHolds): queued, end-of-turn (its stop hook shows it when
//     the agent is about to stop);
//  6. a live session whose client has next-turn projection proven:
//     queued, next-turn (the receipt becomes offered only when the client
//     has taken the hook's output);
//  7. otherwise: queued, inbox, unsupported_client_version (the client's
//     next-turn delivery is not proven for its version).
//
// In rows 4 to 6 the reason live push was not used, if it was tried, is
// kept as the errorCode.
//
// A receipt is never reported offered without a transport's acceptance.
//
// The recipients are routed at once, and every live attempt of the send
// together is bounded by SendBound: the sender waits at most that long,
// however many recipients it addressed.
func (rt Router) Route(ctx context.Context, m *protocol.Message, recipients []Recipient) []Delivery {
	ctx, cancel := context.WithTimeout(ctx, SendBound)
	defer cancel()
	out := make([]Delivery, len(recipients))
	var wg sync.WaitGroup
	for i, r := range recipients {
		wg.Go(func() { out[i] = rt.route(ctx, m, r) })
	}
	wg.Wait()
	return out
}

// SendBound bounds the live attempts of one send, all recipients together
// (each transport also has its own, shorter or equal, bound).
const SendBound = 5 * time.Second

func (rt Router) route(ctx context.Context, m *protocol.Message, r Recipient) Delivery {
	d := Delivery{RecipientParticipantID: r.ParticipantID, Outcome: OutcomeQueued, Transport: TransportDurable, Sessions: r.Sessions}
	if r.Receipt != "" && r.Receipt != protocol.ReceiptQueued {
		d.Outcome = r.Receipt
		return d
	}
	if r.NotPending {
		return d
	}
	midTurn := func(s Session) bool {
		return r.MidTurn != "" && s.Working() && s.MidTurn && Admits(Narrower(r.MidTurn, s.MidTurnPolicy), m)
	}
	endOfTurn := func(s Session) bool {
		return r.EndOfTurn != "" && s.Working() && s.EndOfTurn && !s.HoldsSpent && AdmitsEndOfTurn(Narrower(r.EndOfTurn, s.EndOfTurnPolicy), m)
	}
	// A busy session that takes the message after its next tool call is
	// not pushed to: the post-tool hook brings it within the turn, in
	// acc's frame, while a push would mark it offered first, so that hook
	// would skip it — and Codex's queue holds a push until the turn ends
	// (docs/delivery.md#live-push-waking-an-idle-session).
	reason := noLive
	if !slices.ContainsFunc(r.Sessions, midTurn) {
		reason = rt.live(ctx, m, r)
	}
	switch {
	case reason == "":
		d.Outcome, d.Transport = OutcomeOffered, liveTransport(r)
		return d
	case strings.HasPrefix(reason, movedPrefix):
		// The receipt moved meanwhile (another send of it pushed it, or the
		// recipient read it): its state, as in row 1.
		d.Outcome = strings.TrimPrefix(reason, movedPrefix)
		return d
	}
	switch {
	case len(r.Sessions) == 0:
		d.ErrorCode = code(ErrRecipientUnavailable)
	case slices.ContainsFunc(r.Sessions, midTurn):
		d.Transport, d.Sessions = TransportMidTurn, carriers(r.Sessions, midTurn)
		if reason != noLive {
			d.ErrorCode = code(reason)
		}
	case slices.ContainsFunc(r.Sessions, endOfTurn):
		d.Transport, d.Sessions = TransportEndOfTurn, carriers(r.Sessions, endOfTurn)
		if reason != noLive {
			d.ErrorCode = code(reason)
		}
	case slices.ContainsFunc(r.Sessions, func(s Session) bool { return s.NextTurn }):
		d.Transport = TransportNextTurn
		if reason != noLive {
			d.ErrorCode = code(reason)
		}
	default:
		d.ErrorCode = code(ErrUnsupportedClientVersion)
		if reason != noLive {
			d.ErrorCode = code(reason)
		}
	}
	return d
}

// carriers is a copy of sessions with Carries set on those by.
func carriers(sessions []Session, by func(Session) bool) []Session {
	out := slices.Clone(sessions)
	for i := range out {
		out[i].Carries = by(out[i])
	}
	return out
}

// movedPrefix marks live's answer that the receipt moved past queued
// before the offer; the state follows it.
const movedPrefix = "+"

// noLive: no live-push binding at all, so nothing was attempted and there
// is no reason to report beyond the path taken.
const noLive = "-"

// live tries row 2 and returns "" when a transport accepted, else why not.
func (rt Router) live(ctx context.Context, m *protocol.Message, r Recipient) string {
	var bound []Session
	for _, s := range r.Sessions {
		if s.Live != nil {
			bound = append(bound, s)
		}
	}
	switch {
	case len(bound) == 0:
		return noLive
	case m.IsRoom():
		return ErrRoomMessage
	case len(r.Sessions) > 1:
		return ErrAmbiguousSessions
	case !Admits(r.Policy, m):
		return ErrDeliveryDisabled
	}
	b := *bound[0].Live
	switch {
	case b.Stale:
		return ErrRecipientUnavailable
	case bound[0].Remote:
		// Its endpoint is a socket or a process on its own host: nothing
		// here may reach or check it (docs/delivery.md#live-push-waking-an-idle-session).
		return ErrRecipientRemote
	}
	t, ok := rt.Transports[b.Transport]
	if !ok || !bound[0].LivePush {
		return ErrUnsupportedClientVersion
	}
	if rt.Reserve != nil {
		release, state, err := rt.Reserve(ctx, m, r.ParticipantID)
		if err != nil {
			return ErrTransportError
		}
		defer release()
		if state != protocol.ReceiptQueued {
			return movedPrefix + state
		}
	}
	accepted, c, err := t.Offer(ctx, b, m)
	switch {
	case err != nil:
		return ErrTransportError
	case !accepted:
		if slices.Contains(safeCodes, c) {
			return c
		}
		return ErrTransportRejected
	}
	if rt.Offered != nil {
		// The client took it: record that even when the send's bound has
		// just run out.
		if err := rt.Offered(context.WithoutCancel(ctx), m, r.ParticipantID, t.Name()); err != nil {
			return ErrTransportError
		}
	}
	return ""
}

func liveTransport(r Recipient) string {
	for _, s := range r.Sessions {
		if s.Live != nil {
			return s.Live.Transport
		}
	}
	return TransportDurable
}

// safeCodes are the refusal codes a transport may report to a sender.
var safeCodes = []string{ErrAmbiguousSessions, ErrDeliveryDisabled, ErrRecipientBusy, ErrRecipientUnavailable,
	ErrTransportError, ErrTransportRejected, ErrUnsupportedClientVersion}

// Admits reports whether a delivery policy lets an addressed message m
// reach a recipient outside its inbox and next turn
// (docs/delivery.md#live-push-waking-an-idle-session,
// docs/delivery.md#mid-turn): off never; actionable for questions,
// requests, answers, decisions and handoffs;
// all for every kind. A room message is never admitted: it reaches each
// recipient on its next turn. It is core.TurnAdmits, the rule the post-tool and
// stop hooks apply, so the router promises only what the hooks do.
func Admits(policy string, m *protocol.Message) bool { return core.TurnAdmits(policy, m) }

// AdmitsEndOfTurn reports whether an end-of-turn policy lets m hold a
// stopping agent: only actionable, and only for the kinds Admits takes
// as actionable — never a note, whatever the policy says.
func AdmitsEndOfTurn(policy string, m *protocol.Message) bool {
	return policy == PolicyActionable && Admits(PolicyActionable, m)
}

// Narrower returns the narrower of two turn-delivery policies (off <
// actionable < all), "" meaning not set: the other one decides, and an
// unknown value counts as off. It is core.NarrowerTurnPolicy, the rule
// the hooks apply (docs/delivery.md#mid-turn).
func Narrower(a, b string) string { return core.NarrowerTurnPolicy(a, b) }

func code(c string) *string { return &c }

// Deliver routes a committed send to its addressed recipients: it reads
// each one's receipt and live sessions from room (core.DeliveryTargets;
// a session whose host is not room.Probe's is Remote), the recorded live
// policy of each recipient's client through policy (adapter id → off,
// actionable or all; nil means off everywhere), the room's turn-delivery
// policies (policy.midTurn, policy.endOfTurn) and what each session's
// client installation narrows them to (rt.TurnPolicy), and applies Route. A
// failure to read the targets leaves every recipient queued in its inbox
// with transport_error: the message is recorded either way.
func (rt Router) Deliver(ctx context.Context, room *core.Room, m *protocol.Message, policy func(adapter string) string) []Delivery {
	// One entry per addressed recipient (docs/decisions.md#22-waiting): a room message
	// has none; it waits in each receipt holder's inbox and next turn.
	participants := m.ToParticipantIDs
	targets, err := room.DeliveryTargets(ctx, m.MessageID, participants)
	if err != nil {
		out := make([]Delivery, 0, len(participants))
		for _, p := range participants {
			out = append(out, Delivery{RecipientParticipantID: p, Outcome: OutcomeQueued, Transport: TransportDurable, ErrorCode: code(ErrTransportError)})
		}
		return out
	}
	if rt.Offered == nil {
		rt.Offered = func(ctx context.Context, m *protocol.Message, p, transport string) error {
			return room.RecordOffer(ctx, m.MessageID, p, transport)
		}
	}
	recipients := make([]Recipient, 0, len(targets))
	for _, t := range targets {
		rc := Recipient{ParticipantID: t.ParticipantID, Receipt: t.Receipt, NotPending: t.NotPending,
			MidTurn: room.WS.Policy.MidTurn, EndOfTurn: room.WS.Policy.EndOfTurn}
		for i := range t.Sessions {
			s := &t.Sessions[i]
			caps := protocol.SessionCapabilities(s).Delivery
			// Only an attach by a hook, acc-mcp or acc acp declares
			// capabilities; `acc attach` declares none.
			_, declared := s.Extensions[protocol.ExtCapabilities]
			rs := Session{SessionID: s.SessionID, Harness: s.Harness, Manual: !declared, Remote: !core.SameHost(protocol.SessionHostOf(s), room.Probe),
				ClientVersion: protocol.SessionClientVersion(s), NextTurn: caps.NextTurn, LivePush: caps.LivePush,
				MidTurn: caps.MidTurn, EndOfTurn: caps.EndOfTurn, HoldsSpent: !core.EndOfTurnPromised(s, room.WS.Policy.EndOfTurnMaxHolds)}
			if a, ok := protocol.SessionActivity(s); ok {
				rs.Activity = &a
			}
			if l, ok := t.Live[s.SessionID]; ok {
				rs.Live = &Binding{Transport: l.Transport, Endpoint: l.Endpoint, Stale: l.Stale}
				if s.PID != nil {
					rs.Live.PID = *s.PID
				}
			}
			if rt.TurnPolicy != nil {
				rs.MidTurnPolicy, rs.EndOfTurnPolicy = rt.TurnPolicy(s.Harness)
			}
			rc.Sessions = append(rc.Sessions, rs)
			if policy != nil && rc.Policy == "" {
				rc.Policy = policy(s.Harness)
			}
		}
		recipients = append(recipients, rc)
	}
	return rt.Route(ctx, m, recipients)
}

// ReasonText says what a fallback code means, for people.
func ReasonText(code string) string {
	switch code {
	case ErrRecipientUnavailable:
		return "no live session: they see it in their inbox when one starts"
	case ErrRecipientRemote:
		return "their session runs on another machine or in another PID namespace, where live push cannot reach it: it comes to them at their next turn or in their inbox"
	case ErrUnsupportedClientVersion:
		return "next-turn delivery is not proven for their sessions: they read it with acc inbox or acc_inbox"
	case ErrRoomMessage:
		return "room messages are never pushed"
	case ErrDeliveryDisabled:
		return "their live-push policy does not take it: off, or actionable and this is a note"
	case ErrAmbiguousSessions:
		return "they have several live sessions, so none is pushed to"
	case ErrTransportError:
		return "the live transport failed"
	case ErrTransportRejected:
		return "the live transport refused it"
	case ErrRecipientBusy:
		return "their session is busy"
	}
	return code
}
