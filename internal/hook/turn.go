package hook

import (
	"context"
	"reflect"
	"time"

	"github.com/gofrs/flock"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// How long each hook waits for the participant's offer lock
// (core.Room.OfferLockPath) before it goes on without delivering: a
// post-tool hook runs after every tool call and must stay cheap; a
// turn-end hook lets the agent stop; a before-turn hook projects anyway.
const (
	midTurnLockWait = 250 * time.Millisecond
	turnEndLockWait = 500 * time.Millisecond
	turnLockWait    = time.Second
	lockRetry       = 5 * time.Millisecond
)

// offerLock takes participant's offer lock in room within wait; release is
// nil when it was not obtained.
func offerLock(ctx context.Context, room *core.Room, participant string, wait time.Duration) (release func(), ok bool) {
	if participant == "" {
		return nil, false
	}
	fl := flock.New(room.OfferLockPath(participant))
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if got, err := fl.TryLockContext(lctx, lockRetry); err != nil || !got {
		return nil, false
	}
	return func() { _ = fl.Unlock() }, true
}

// turnPolicies returns the effective policy.midTurn and policy.endOfTurn
// for adapterID: the narrower of the workspace's and the installation's,
// as read when the room was opened (core.Room.Install).
func (r *Runner) turnPolicies(adapterID string, room *core.Room) (midTurn, endOfTurn string) {
	midTurn, endOfTurn = room.WS.Policy.MidTurn, room.WS.Policy.EndOfTurn
	if room.Install.Turn != nil {
		m, e := room.Install.Turn(adapterID)
		midTurn, endOfTurn = core.NarrowerTurnPolicy(midTurn, m), core.NarrowerTurnPolicy(endOfTurn, e)
	}
	return midTurn, endOfTurn
}

// afterTool is the post-tool hook (docs/delivery.md#mid-turn). For a
// session whose client has Delivery.MidTurn proven, one admitted queued
// message is injected into the tool result, framed (core.ProjectMidTurn),
// holding the offer lock from the second read of the receipts until the
// offer (transport mid-turn) or the summary is recorded after the write.
// With nothing to deliver it reads once, refreshes a heartbeat older than
// toolHeartbeatMs, and answers exactly Allow. A lock not obtained leaves
// the message for the next hook.
func (r *Runner) afterTool(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room) (*result, error) {
	allow := &result{out: a.Allow(ev)}
	midTurn, _ := r.turnPolicies(a.ID(), room)
	o := core.TurnOptions{Policy: midTurn, HeartbeatOlderThanMs: toolHeartbeatMs}
	first, err := room.ProjectMidTurn(ctx, a.ID(), ev.SessionID, o)
	if err != nil || first.Session == nil {
		return allow, nil
	}
	hs := first.Session
	if hs.HeartbeatDue {
		_, _ = room.Heartbeat(ctx, hs.Caller)
	}
	if first.Text == "" || reflect.DeepEqual(a.Inject(ev, first.Text), allow.out) {
		return allow, nil
	}
	release, ok := offerLock(ctx, room, hs.ParticipantID, midTurnLockWait)
	if !ok {
		return allow, nil
	}
	got, err := room.ProjectMidTurn(ctx, a.ID(), ev.SessionID, o)
	if err != nil || got.Session == nil || got.Text == "" {
		release()
		return allow, nil
	}
	res := &result{out: a.Inject(ev, got.Text), release: release}
	res.afterOut = func(ctx context.Context) error {
		if len(got.Offered) > 0 {
			return room.MarkOffered(ctx, hs.Caller, got.Offered, "mid-turn", a.ID(), hs.ClientVersion)
		}
		return room.RememberSummary(ctx, hs.Caller, got.Summarised)
	}
	return res, nil
}

// turnEnd is the turn-end hook (docs/delivery.md#end-of-turn). When
// core.ProjectTurnEnd finds a message to hold the stopping agent for, it
// prints the adapter's Hold with the frame and the command that answers,
// under the offer lock, and records the hold (and the offer, transport
// end-of-turn) after the write; the session stays working. Otherwise, or
// when the client did not take the hold, the session is recorded idle and
// the answer is Allow.
func (r *Runner) turnEnd(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room) (*result, error) {
	allow := &result{out: a.Allow(ev)}
	_, endOfTurn := r.turnPolicies(a.ID(), room)
	o := core.TurnOptions{Policy: endOfTurn, StopHookActive: ev.StopHookActive}
	first, err := room.ProjectTurnEnd(ctx, a.ID(), ev.SessionID, o)
	if err != nil {
		return nil, err
	}
	if first.Session == nil {
		return allow, nil
	}
	hs := first.Session
	idle := func(ctx context.Context) { _, _ = room.SetActivity(ctx, hs.Caller, protocol.ActivityIdle) }
	if first.Text == "" || reflect.DeepEqual(a.Hold(ev, first.Text), allow.out) {
		idle(ctx)
		return allow, nil
	}
	release, ok := offerLock(ctx, room, hs.ParticipantID, turnEndLockWait)
	if !ok {
		idle(ctx)
		return allow, nil
	}
	got, err := room.ProjectTurnEnd(ctx, a.ID(), ev.SessionID, o)
	if err != nil || got.Session == nil || got.Text == "" {
		release()
		idle(ctx)
		return allow, nil
	}
	out := a.Hold(ev, got.Text)
	res := &result{out: out, release: release, unwritten: idle, answerOnStderr: len(out.Stdout) == 0 && len(out.Stderr) > 0}
	res.afterOut = func(ctx context.Context) error {
		return room.RecordHold(ctx, hs.Caller, got.Held, len(got.Offered) > 0, a.ID(), hs.ClientVersion)
	}
	return res, nil
}
