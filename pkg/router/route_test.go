package router

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// fakeTransport accepts or refuses as told and counts its offers.
type fakeTransport struct {
	accept bool
	code   string
	err    error
	offers int
}

func (f *fakeTransport) Name() string { return "fake-push" }
func (f *fakeTransport) Offer(context.Context, Binding, *protocol.Message) (bool, string, error) {
	f.offers++
	return f.accept, f.code, f.err
}

func TestRouteTable(t *testing.T) {
	question := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	note := &protocol.Message{MessageID: "message_n", Kind: protocol.KindNote, ToParticipantIDs: []string{"bob"}}
	room := &protocol.Message{MessageID: "message_r", Kind: protocol.KindNote, ToParticipantIDs: []string{}}
	hooked := Session{SessionID: "s1", Harness: "claude", NextTurn: true}
	manual := Session{SessionID: "s2", Harness: "cli"}
	bound := Session{SessionID: "s3", Harness: "claude", NextTurn: true, LivePush: true, Live: &Binding{Transport: "fake-push", Endpoint: "e"}}
	stale := Session{SessionID: "s5", Harness: "claude", NextTurn: true, LivePush: true, Live: &Binding{Transport: "fake-push", Endpoint: "e", Stale: true}}
	unproven := Session{SessionID: "s4", Harness: "claude", NextTurn: true, Live: &Binding{Transport: "fake-push", Endpoint: "e"}}
	rows := []struct {
		name      string
		m         *protocol.Message
		r         Recipient
		transport *fakeTransport
		outcome   string
		via       string
		code      string // "" = none
		offers    int
		recorded  bool
	}{
		{name: "receipt already past queued", m: question, r: Recipient{ParticipantID: "bob", Receipt: protocol.ReceiptRetrieved, Sessions: []Session{hooked}},
			outcome: "retrieved", via: TransportDurable},
		{name: "a superseded decision, repeated", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", NotPending: true, Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportDurable},
		{name: "no live session", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued"},
			outcome: "queued", via: TransportDurable, code: ErrRecipientUnavailable},
		{name: "client next turn not proven", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{manual}},
			outcome: "queued", via: TransportDurable, code: ErrUnsupportedClientVersion},
		{name: "next turn", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{hooked}},
			outcome: "queued", via: TransportNextTurn},
		{name: "next turn, one of two sessions proven", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{manual, hooked}},
			outcome: "queued", via: TransportNextTurn},
		{name: "live push accepted", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyActionable},
			transport: &fakeTransport{accept: true}, outcome: "offered", via: "fake-push", offers: 1, recorded: true},
		{name: "live push policy off", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyOff},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrDeliveryDisabled},
		{name: "live push: a note under actionable", m: note, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyActionable},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrDeliveryDisabled},
		{name: "live push: a note under all", m: note, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "offered", via: "fake-push", offers: 1, recorded: true},
		{name: "live push: room message", m: room, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrRoomMessage},
		{name: "live push: two live sessions", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound, hooked}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrAmbiguousSessions},
		{name: "live push refused with a safe code", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{code: ErrRecipientBusy}, outcome: "queued", via: TransportNextTurn, code: ErrRecipientBusy, offers: 1},
		{name: "live push refused with another code", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{code: "socket path /run/x"}, outcome: "queued", via: TransportNextTurn, code: ErrTransportRejected, offers: 1},
		{name: "live push failed", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			transport: &fakeTransport{err: errors.New("broken pipe")}, outcome: "queued", via: TransportNextTurn, code: ErrTransportError, offers: 1},
		{name: "live push: the client's live push is not proven", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{unproven}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrUnsupportedClientVersion},
		{name: "live push: a binding of a replaced generation", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{stale}, Policy: PolicyAll},
			transport: &fakeTransport{accept: true}, outcome: "queued", via: TransportNextTurn, code: ErrRecipientUnavailable},
		{name: "live push: transport not available here", m: question, r: Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: []Session{bound}, Policy: PolicyAll},
			outcome: "queued", via: TransportNextTurn, code: ErrUnsupportedClientVersion},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rt := Router{Transports: map[string]Transport{}}
			if row.transport != nil {
				rt.Transports["fake-push"] = row.transport
			}
			recorded := false
			rt.Offered = func(context.Context, *protocol.Message, string, string) error { recorded = true; return nil }
			d := rt.Route(context.Background(), row.m, []Recipient{row.r})[0]
			got := ""
			if d.ErrorCode != nil {
				got = *d.ErrorCode
			}
			if d.RecipientParticipantID != "bob" || d.Outcome != row.outcome || d.Transport != row.via || got != row.code {
				t.Errorf("got %s via %s (%q), want %s via %s (%q)", d.Outcome, d.Transport, got, row.outcome, row.via, row.code)
			}
			if row.transport != nil && row.transport.offers != row.offers {
				t.Errorf("%d offers, want %d", row.transport.offers, row.offers)
			}
			if recorded != row.recorded {
				t.Errorf("offer recorded %v, want %v", recorded, row.recorded)
			}
		})
	}
}

// TestRouteRemoteRecipient: a session on another host or in another PID
// namespace is never offered to, whatever its binding, client and policy:
// the message takes the path that serves the session where it runs (its
// next turn, its busy turn's post-tool or stop hook, or its inbox), the
// reason is recipient_remote, no reservation is taken and no transport is
// asked. A reason that holds before the host matters (policy, a room
// message, several sessions, a replaced binding) is reported as before.
func TestRouteRemoteRecipient(t *testing.T) {
	question := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	room := &protocol.Message{MessageID: "message_r", Kind: protocol.KindNote, ToParticipantIDs: []string{}}
	working := &protocol.Activity{State: protocol.ActivityWorking, Since: "2026-12-02T09:00:00.000Z"}
	remote := Session{SessionID: "s1", Harness: "claude", NextTurn: true, LivePush: true, Remote: true, Live: &Binding{Transport: "fake-push", Endpoint: "e", PID: 4242}}
	noNextTurn := remote
	noNextTurn.NextTurn = false
	busy := remote
	busy.MidTurn, busy.Activity = true, working
	busyEnd := remote
	busyEnd.EndOfTurn, busyEnd.Activity = true, working
	stale := remote
	stale.Live = &Binding{Transport: "fake-push", Endpoint: "e", Stale: true}
	other := Session{SessionID: "s2", Harness: "claude", NextTurn: true}
	for _, c := range []struct {
		name     string
		m        *protocol.Message
		sessions []Session
		policy   string
		via      string
		code     string
	}{
		{"idle, next turn proven", question, []Session{remote}, PolicyAll, TransportNextTurn, ErrRecipientRemote},
		{"next turn not proven: the inbox", question, []Session{noNextTurn}, PolicyAll, TransportDurable, ErrRecipientRemote},
		{"busy, mid-turn: live push not even tried", question, []Session{busy}, PolicyAll, TransportMidTurn, ""},
		{"busy, end of turn", question, []Session{busyEnd}, PolicyAll, TransportEndOfTurn, ErrRecipientRemote},
		{"policy off comes first", question, []Session{remote}, PolicyOff, TransportNextTurn, ErrDeliveryDisabled},
		{"room message comes first", room, []Session{remote}, PolicyAll, TransportNextTurn, ErrRoomMessage},
		{"several sessions come first", question, []Session{remote, other}, PolicyAll, TransportNextTurn, ErrAmbiguousSessions},
		{"a replaced binding comes first", question, []Session{stale}, PolicyAll, TransportNextTurn, ErrRecipientUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeTransport{accept: true}
			reserved, recorded := 0, false
			rt := Router{Transports: map[string]Transport{"fake-push": ft},
				Reserve: func(context.Context, *protocol.Message, string) (func(), string, error) {
					reserved++
					return func() {}, protocol.ReceiptQueued, nil
				},
				Offered: func(context.Context, *protocol.Message, string, string) error { recorded = true; return nil }}
			r := Recipient{ParticipantID: "bob", Receipt: "queued", Policy: c.policy, Sessions: c.sessions,
				MidTurn: PolicyActionable, EndOfTurn: PolicyActionable}
			d := rt.Route(context.Background(), c.m, []Recipient{r})[0]
			code := ""
			if d.ErrorCode != nil {
				code = *d.ErrorCode
			}
			if d.Outcome != OutcomeQueued || d.Transport != c.via || code != c.code {
				t.Errorf("got %s via %s (%q), want queued via %s (%q)", d.Outcome, d.Transport, code, c.via, c.code)
			}
			if ft.offers != 0 || reserved != 0 || recorded {
				t.Errorf("a remote session was offered to: %d offers, %d reservations, recorded %v", ft.offers, reserved, recorded)
			}
		})
	}
	// The same session on this host is pushed to: the rows above fail
	// only for the host.
	local := remote
	local.Remote = false
	ft := &fakeTransport{accept: true}
	d := Router{Transports: map[string]Transport{"fake-push": ft}}.Route(context.Background(), question,
		[]Recipient{{ParticipantID: "bob", Receipt: "queued", Policy: PolicyAll, Sessions: []Session{local}}})[0]
	if d.Outcome != OutcomeOffered || ft.offers != 1 {
		t.Fatalf("the same session on this host: %+v, %d offers", d, ft.offers)
	}
	if ReasonText(ErrRecipientRemote) == ErrRecipientRemote || !strings.Contains(ReasonText(ErrRecipientRemote), "another machine") {
		t.Errorf("no words for %s: %q", ErrRecipientRemote, ReasonText(ErrRecipientRemote))
	}
}

// An offer the store cannot record is not reported offered.
func TestRouteOfferNotRecorded(t *testing.T) {
	m := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	rt := Router{Transports: map[string]Transport{"fake-push": &fakeTransport{accept: true}},
		Offered: func(context.Context, *protocol.Message, string, string) error { return errors.New("store busy") }}
	d := rt.Route(context.Background(), m, []Recipient{{ParticipantID: "bob", Receipt: "queued", Policy: PolicyAll,
		Sessions: []Session{{SessionID: "s", NextTurn: true, LivePush: true, Live: &Binding{Transport: "fake-push"}}}}})[0]
	if d.Outcome != OutcomeQueued || d.ErrorCode == nil || *d.ErrorCode != ErrTransportError {
		t.Errorf("%+v", d)
	}
}

func TestAdmits(t *testing.T) {
	for _, c := range []struct {
		policy, kind string
		room, want   bool
	}{
		{PolicyOff, protocol.KindQuestion, false, false},
		{"", protocol.KindQuestion, false, false},
		{PolicyActionable, protocol.KindQuestion, false, true},
		{PolicyActionable, protocol.KindRequest, false, true},
		{PolicyActionable, protocol.KindAnswer, false, true},
		{PolicyActionable, protocol.KindDecision, false, true},
		{PolicyActionable, protocol.KindHandoff, false, true},
		{PolicyActionable, protocol.KindHandoff, true, false},
		{PolicyActionable, protocol.KindNote, false, false},
		{PolicyAll, protocol.KindNote, false, true},
	} {
		to := []string{"bob"}
		if c.room {
			to = []string{}
		}
		if got := Admits(c.policy, &protocol.Message{Kind: c.kind, ToParticipantIDs: to}); got != c.want {
			t.Errorf("%s %s room=%v: %v", c.policy, c.kind, c.room, got)
		}
	}
}

// blockingTransport waits in Offer until every expected offer has begun or
// its context ends, and records each context's deadline.
type blockingTransport struct {
	mu        sync.Mutex
	arrived   int
	all       chan struct{}
	want      int
	deadlines []time.Time
}

func (b *blockingTransport) Name() string { return "fake-push" }
func (b *blockingTransport) Offer(ctx context.Context, _ Binding, _ *protocol.Message) (bool, string, error) {
	b.mu.Lock()
	d, _ := ctx.Deadline()
	b.deadlines = append(b.deadlines, d)
	if b.arrived++; b.arrived == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true, "", nil
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}

// TestRouteBoundsTheWholeSend: the recipients of one send are offered to
// at once, under one deadline of SendBound for them all, so the sender's
// wait does not grow with the number of recipients. Three offers that
// each wait for the other two all succeed: they ran together.
func TestRouteBoundsTheWholeSend(t *testing.T) {
	bt := &blockingTransport{all: make(chan struct{}), want: 3}
	rt := Router{Transports: map[string]Transport{"fake-push": bt}}
	m := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"a", "b", "c"}}
	var rs []Recipient
	for _, p := range m.ToParticipantIDs {
		rs = append(rs, Recipient{ParticipantID: p, Receipt: "queued", Policy: PolicyAll,
			Sessions: []Session{{SessionID: "s-" + p, NextTurn: true, LivePush: true, Live: &Binding{Transport: "fake-push"}}}})
	}
	before := time.Now()
	for i, d := range rt.Route(context.Background(), m, rs) {
		if d.Outcome != OutcomeOffered {
			t.Errorf("recipient %d: %+v (offered one after another, not together)", i, d)
		}
	}
	if len(bt.deadlines) != 3 {
		t.Fatalf("%d offers", len(bt.deadlines))
	}
	for _, d := range bt.deadlines {
		if d != bt.deadlines[0] || d.IsZero() || d.After(before.Add(SendBound+time.Second)) {
			t.Errorf("deadlines %v: want one shared deadline of SendBound", bt.deadlines)
			break
		}
	}
}

// TestRouteReserve: an offer is made only under the reservation; when the
// receipt moved meanwhile (another send pushed it) nothing is offered and
// the recipient is reported offered; a reservation that cannot be had is
// transport_error.
func TestRouteReserve(t *testing.T) {
	m := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	r := Recipient{ParticipantID: "bob", Receipt: "queued", Policy: PolicyAll,
		Sessions: []Session{{SessionID: "s", NextTurn: true, LivePush: true, Live: &Binding{Transport: "fake-push"}}}}
	for name, c := range map[string]struct {
		state   string
		err     error
		outcome string
		code    string
		offers  int
	}{
		"reserved":              {state: protocol.ReceiptQueued, outcome: OutcomeOffered, offers: 1},
		"already offered":       {state: protocol.ReceiptOffered, outcome: OutcomeOffered},
		"read by the recipient": {state: protocol.ReceiptRetrieved, outcome: protocol.ReceiptRetrieved},
		"cannot reserve":        {err: errors.New("lock busy"), outcome: OutcomeQueued, code: ErrTransportError},
	} {
		ft := &fakeTransport{accept: true}
		released := 0
		rt := Router{Transports: map[string]Transport{"fake-push": ft}, Reserve: func(context.Context, *protocol.Message, string) (func(), string, error) {
			if c.err != nil {
				return nil, "", c.err
			}
			return func() { released++ }, c.state, nil
		}}
		d := rt.Route(context.Background(), m, []Recipient{r})[0]
		code := ""
		if d.ErrorCode != nil {
			code = *d.ErrorCode
		}
		if d.Outcome != c.outcome || code != c.code || ft.offers != c.offers || (c.err == nil && released != 1) {
			t.Errorf("%s: %+v code %q, %d offers, released %d", name, d, code, ft.offers, released)
		}
	}
}

// TestRouteTurnRows: a busy recipient (a session in a turn) is reached
// after its next tool call where mid-turn delivery is proven and its
// policy admits the kind, else when it is about to stop where end-of-turn
// is proven and admits it (never a note), else at its next turn; an idle
// one always at its next turn. None of these rows reports the receipt
// offered.
func TestRouteTurnRows(t *testing.T) {
	question := &protocol.Message{MessageID: "message_q", Kind: protocol.KindQuestion, ToParticipantIDs: []string{"bob"}}
	note := &protocol.Message{MessageID: "message_n", Kind: protocol.KindNote, ToParticipantIDs: []string{"bob"}}
	working := &protocol.Activity{State: protocol.ActivityWorking, Since: "2026-12-02T09:00:00.000Z"}
	idle := &protocol.Activity{State: protocol.ActivityIdle, Since: "2026-12-02T09:00:00.000Z"}
	both := Session{SessionID: "s1", Harness: "claude", NextTurn: true, MidTurn: true, EndOfTurn: true, Activity: working}
	endOnly := Session{SessionID: "s2", Harness: "claude", NextTurn: true, EndOfTurn: true, Activity: working}
	idleBoth := both
	idleBoth.Activity = idle
	unknown := both
	unknown.Activity = nil
	unproven := Session{SessionID: "s3", Harness: "claude", NextTurn: true, Activity: working}
	manual := Session{SessionID: "s4", Harness: "cli"}
	bound := both
	bound.LivePush, bound.Live = true, &Binding{Transport: "fake-push", Endpoint: "e"}
	rows := []struct {
		name     string
		m        *protocol.Message
		sessions []Session
		mid, end string
		live     *fakeTransport
		via      string
		code     string
	}{
		{"busy, mid-turn proven and admitted", question, []Session{both}, PolicyActionable, PolicyActionable, nil, TransportMidTurn, ""},
		{"busy, one of two sessions", question, []Session{manual, both}, PolicyActionable, PolicyActionable, nil, TransportMidTurn, ""},
		{"busy, a note under actionable: next turn", note, []Session{both}, PolicyActionable, PolicyActionable, nil, TransportNextTurn, ""},
		{"busy, a note under all: mid-turn", note, []Session{both}, PolicyAll, PolicyActionable, nil, TransportMidTurn, ""},
		{"busy, mid-turn off: end of turn", question, []Session{both}, PolicyOff, PolicyActionable, nil, TransportEndOfTurn, ""},
		{"busy, only end of turn proven", question, []Session{endOnly}, PolicyAll, PolicyActionable, nil, TransportEndOfTurn, ""},
		{"busy, end of turn never takes a note", note, []Session{endOnly}, PolicyAll, PolicyActionable, nil, TransportNextTurn, ""},
		{"busy, both off: next turn", question, []Session{both}, PolicyOff, PolicyOff, nil, TransportNextTurn, ""},
		{"busy, policies unset: next turn", question, []Session{both}, "", "", nil, TransportNextTurn, ""},
		{"busy, neither proven: next turn", question, []Session{unproven}, PolicyAll, PolicyActionable, nil, TransportNextTurn, ""},
		{"idle: next turn", question, []Session{idleBoth}, PolicyAll, PolicyActionable, nil, TransportNextTurn, ""},
		{"activity unknown: next turn", question, []Session{unknown}, PolicyAll, PolicyActionable, nil, TransportNextTurn, ""},
		{"busy, the installation turns mid-turn off", question, []Session{withPolicy(both, PolicyOff, "")}, PolicyAll, PolicyActionable, nil, TransportEndOfTurn, ""},
		{"busy, the installation narrows all to actionable", note, []Session{withPolicy(both, PolicyActionable, "")}, PolicyAll, PolicyActionable, nil, TransportNextTurn, ""},
		{"busy, the installation cannot widen the room's", question, []Session{withPolicy(both, PolicyAll, PolicyActionable)}, PolicyOff, PolicyOff, nil, TransportNextTurn, ""},
		{"busy, each session's own installation counts", question, []Session{manual, withPolicy(endOnly, "", PolicyOff), both}, PolicyActionable, PolicyActionable, nil, TransportMidTurn, ""},
		{"manual only: inbox", question, []Session{manual}, PolicyAll, PolicyActionable, nil, TransportDurable, ErrUnsupportedClientVersion},
		{"live push bound, busy: mid-turn, never pushed", question, []Session{bound}, PolicyActionable, PolicyActionable, &fakeTransport{accept: true}, TransportMidTurn, ""},
		{"live push failing, busy: mid-turn, never tried", question, []Session{bound}, PolicyActionable, PolicyActionable, &fakeTransport{err: errors.New("x")}, TransportMidTurn, ""},
		{"live push off, busy, mid-turn off: end of turn keeps why", question, []Session{bound}, PolicyOff, PolicyActionable, &fakeTransport{accept: true}, TransportEndOfTurn, ErrDeliveryDisabled},
		{"live push failed, busy, mid-turn off: end of turn keeps why", question, []Session{bound}, PolicyOff, PolicyActionable, &fakeTransport{err: errors.New("x")}, TransportEndOfTurn, ErrTransportError},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rt := Router{Transports: map[string]Transport{}}
			r := Recipient{ParticipantID: "bob", Receipt: "queued", Sessions: row.sessions, MidTurn: row.mid, EndOfTurn: row.end}
			if row.live != nil {
				rt.Transports["fake-push"] = row.live
				r.Policy = PolicyActionable
				if row.code == ErrDeliveryDisabled {
					r.Policy = PolicyOff
				}
			}
			d := rt.Route(context.Background(), row.m, []Recipient{r})[0]
			got := ""
			if d.ErrorCode != nil {
				got = *d.ErrorCode
			}
			if d.Outcome != OutcomeQueued || d.Transport != row.via || got != row.code {
				t.Errorf("got %s via %s (%q), want queued via %s (%q)", d.Outcome, d.Transport, got, row.via, row.code)
			}
			// A session reached mid-turn is never pushed to: its client
			// would hold the push until the turn ends.
			if row.live != nil && row.via == TransportMidTurn && row.live.offers != 0 {
				t.Errorf("a busy session reached mid-turn was pushed to (%d offers)", row.live.offers)
			}
		})
	}
}

// TestNarrower: the narrower of a workspace's and an installation's
// turn policy applies; an unset one leaves the other; neither set, or
// an unknown value, is off.
func TestNarrower(t *testing.T) {
	for _, c := range [][3]string{
		{PolicyAll, "", PolicyAll}, {"", PolicyOff, PolicyOff}, {"", "", PolicyOff}, {"bogus", PolicyAll, PolicyOff},
		{PolicyAll, PolicyActionable, PolicyActionable}, {PolicyActionable, PolicyAll, PolicyActionable},
		{PolicyActionable, PolicyOff, PolicyOff}, {PolicyOff, PolicyAll, PolicyOff},
	} {
		if got := Narrower(c[0], c[1]); got != c[2] {
			t.Errorf("Narrower(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func withPolicy(s Session, mid, end string) Session {
	s.MidTurnPolicy, s.EndOfTurnPolicy = mid, end
	return s
}
