package core

import (
	"context"
	"path/filepath"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// SetActivity records that session c's agent is in a turn
// (protocol.ActivityWorking) or between turns (protocol.ActivityIdle),
// and refreshes its heartbeat, in one write
// (docs/delivery.md#knowing-when-a-peer-is-free). Since moves only when the
// state changes, so a second before-turn hook inside one turn keeps the turn's
// start. It returns the activity as recorded. Errors: exit 2 invalid_input for
// a state other than those two; exit 5 when the session is closed, missing
// or replaced (requireOwner).
func (r *Room) SetActivity(ctx context.Context, c Caller, state string) (protocol.Activity, error) {
	return r.setActivity(ctx, c, state, false)
}

// BeginTurn records that session c's agent starts a new turn: working,
// since now, even when it was working already — a prompt after a turn
// that ended without a turn-end hook (the person interrupted it) starts
// afresh, so that turn's holds and start are not carried over
// (docs/delivery.md#knowing-when-a-peer-is-free). It refreshes the
// heartbeat too. Errors as SetActivity.
func (r *Room) BeginTurn(ctx context.Context, c Caller) (protocol.Activity, error) {
	return r.setActivity(ctx, c, protocol.ActivityWorking, true)
}

func (r *Room) setActivity(ctx context.Context, c Caller, state string, fresh bool) (protocol.Activity, error) {
	if state != protocol.ActivityWorking && state != protocol.ActivityIdle {
		return protocol.Activity{}, protocol.Errorf(protocol.ReasonInvalidInput, "activity %q is neither %s nor %s", state, protocol.ActivityWorking, protocol.ActivityIdle)
	}
	var out protocol.Activity
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		s, area, err := requireOwner(tx, c, "record activity")
		if err != nil {
			return err
		}
		now := protocol.FormatTime(r.now())
		s.HeartbeatAt = now
		out = protocol.Activity{State: state, Since: now}
		if prev, ok := protocol.SessionActivity(s); ok && prev.State == state && !fresh {
			out = prev
		}
		if s.Extensions == nil {
			s.Extensions = protocol.Extensions{}
		}
		s.Extensions[protocol.ExtActivity] = map[string]any{"state": out.State, "since": out.Since}
		return tx.PutSession(area, s)
	})
	if err != nil {
		return protocol.Activity{}, err
	}
	return out, nil
}

// OfferLockPath is the lock file (gofrs/flock) held while a message for
// participantID is offered by any path — a live push, or a hook printing
// it mid-turn, at the end of a turn or before one — in room: whoever holds
// it reads the receipt, offers and records the offer, so one message is
// offered to a recipient once (docs/delivery.md). The file sits in the
// workspace's runtime directory beside the store.
func (r *Room) OfferLockPath(participantID string) string {
	return filepath.Join(filepath.Dir(workspace.StorePath(r.DataHome, r.WS.ID)), "live."+participantID+".lock")
}
