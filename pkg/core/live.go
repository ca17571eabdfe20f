package core

import (
	"context"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// LiveLease is how long the checks a session's hook made of its live
// channel stand on their own (docs/delivery.md#live-push-waking-an-idle-session); the
// hooks renew it at every turn. Past it the binding is Expired, not gone:
// an idle session is exactly the one to wake, so the sender revalidates
// the same endpoint before using it, as every transport
// does on each offer anyway.
const LiveLease = 10 * time.Minute

// liveKey is the binding key of session id's live-push binding. It shares
// the session bindings table: the harness field names the transport, the
// client-session field holds the endpoint, which acc never shows anyone.
func liveKey(sessionID string) string { return livePrefix + sessionID }

const livePrefix = "live:"

// isLiveKey reports whether a binding key is a live-push binding's.
func isLiveKey(key string) bool { return strings.HasPrefix(key, livePrefix) }

// LiveEndpoint is how a session can be woken by its client's own channel.
type LiveEndpoint struct {
	// Transport names the channel (claude-inbox, codex-queue).
	Transport string
	// Endpoint is the transport's own record of the channel (JSON: a
	// socket path, a thread…); private, never shown.
	Endpoint string
	// Stale: the binding is of a generation the session no longer has; it
	// is never used, only reported (recipient_unavailable).
	Stale bool
	// Expired: the hooks last renewed it more than LiveLease ago.
	Expired bool
	// LeaseUntil is when the binding lapses unless renewed.
	LeaseUntil string
}

// RecordLiveBinding records, or renews, how session c can be woken:
// through transport at endpoint. It is tied to c's generation and its
// hook's checks stand for LiveLease after each renewal (the session's
// hooks renew it each turn; an unchanged binding younger than half the
// lease is left as it is, without a write); a binding of another
// generation is never used. Errors: exit 5 for a session that is not
// open or a stale generation; exit 4 for an empty transport or endpoint.
func (r *Room) RecordLiveBinding(ctx context.Context, c Caller, transport, endpoint string) error {
	if transport == "" || endpoint == "" {
		return protocol.Errorf(protocol.ReasonInvalidInput, "a live binding needs a transport and an endpoint")
	}
	// Hooks renew at every turn: while the same binding is less than half
	// its lease old, there is nothing to write.
	fresh := false
	if err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		b, err := tx.Binding(liveKey(c.SessionID))
		if err != nil || b == nil {
			return err
		}
		s, _, err := findSession(tx, c.SessionID)
		if err != nil || s == nil || s.State != protocol.SessionOpen || s.Generation != c.Generation {
			return err // the write path says why
		}
		at, err := protocol.ParseTime(b.UpdatedAt)
		fresh = err == nil && b.Harness == transport && b.HarnessSessionID == endpoint && b.Generation == c.Generation &&
			b.SessionID == c.SessionID && r.now().Sub(at) < LiveLease/2 && !r.now().Before(at)
		return nil
	}); err != nil {
		return err
	}
	if fresh {
		return nil
	}
	return r.Store.Update(ctx, func(tx storage.Tx) error {
		if _, _, err := requireOwner(tx, c, "record a live binding"); err != nil {
			return err
		}
		return tx.PutBinding(&storage.SessionBinding{Key: liveKey(c.SessionID), Harness: transport, HarnessSessionID: endpoint,
			SessionID: c.SessionID, Generation: c.Generation, UpdatedAt: protocol.FormatTime(r.now())})
	})
}

// RetireLiveBinding removes session c's live binding, if any (its
// client's channel no longer checks out). Errors: as RecordLiveBinding.
func (r *Room) RetireLiveBinding(ctx context.Context, c Caller) error {
	var b *storage.SessionBinding
	if err := r.Store.View(ctx, func(tx storage.ReadTx) (err error) {
		b, err = tx.Binding(liveKey(c.SessionID))
		return err
	}); err != nil || b == nil {
		return err // nothing to retire: no write
	}
	return r.Store.Update(ctx, func(tx storage.Tx) error {
		if _, _, err := requireOwner(tx, c, "retire a live binding"); err != nil {
			return err
		}
		return tx.DeleteBinding(liveKey(c.SessionID))
	})
}

// currentLive returns s's live endpoint when its binding is of s's
// current generation (expired or not), else nil.
func currentLive(tx storage.ReadTx, s *protocol.Session, now time.Time) (*LiveEndpoint, error) {
	l, err := liveOf(tx, s, now)
	if err != nil || l == nil || l.Stale {
		return nil, err
	}
	return l, nil
}

// liveOf returns s's live binding, current or not (Stale, Expired set),
// nil when it has none.
func liveOf(tx storage.ReadTx, s *protocol.Session, now time.Time) (*LiveEndpoint, error) {
	b, err := tx.Binding(liveKey(s.SessionID))
	if err != nil || b == nil {
		return nil, err
	}
	l := &LiveEndpoint{Transport: b.Harness, Endpoint: b.HarnessSessionID}
	at, err := protocol.ParseTime(b.UpdatedAt)
	if err == nil {
		l.LeaseUntil = protocol.FormatTime(at.Add(LiveLease))
	}
	l.Stale = b.Generation != s.Generation || b.SessionID != s.SessionID
	l.Expired = err != nil || now.Sub(at) > LiveLease
	return l, nil
}

// LiveBound reports whether open session id has a live binding of its
// current generation (expired or not). Whether a send would push to it
// also depends on its client's capability and its owner's policy
// (Status's Reachable).
func (r *Room) LiveBound(ctx context.Context, id string) (bool, error) {
	ok := false
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		s, _, err := findSession(tx, id)
		if err != nil || s == nil || s.State != protocol.SessionOpen {
			return err
		}
		l, err := currentLive(tx, s, r.now())
		ok = l != nil
		return err
	})
	return ok, err
}
