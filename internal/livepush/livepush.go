// Package livepush holds the live-push transports of pkg/router: ways to
// make an idle session of a client start a turn through the client's own
// channel (docs/delivery.md#live-push-waking-an-idle-session). They are used
// only for a session whose client has live push proven for its version, whose
// binding is current, and whose owner's policy admits the message.
package livepush

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofrs/flock"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// Router is the delivery router with the live transports of this platform.
// A transport is only used where the recipient's client has live push
// proven for its version (pkg/router), so adding one here claims nothing.
func Router() router.Router {
	return router.Router{Transports: map[string]router.Transport{ClaudeInboxName: ClaudeInbox{}, CodexQueueName: CodexQueue{}}}
}

// transports maps an adapter id to its live transport.
var transports = map[string]string{"claude": ClaudeInboxName, "codex": CodexQueueName}

// Has reports whether adapter id has a live transport here.
func Has(id string) bool { return transports[id] != "" }

// TransportOf names adapter id's live transport, "" when none.
func TransportOf(id string) string { return transports[id] }

// ErrNoChannel: the hook's environment offers no live channel at all (a
// client process's environment does not change, so neither will later
// hooks of the same process).
var ErrNoChannel = errors.New("the client exports no live channel to its hooks")

// Endpoint returns the live transport and endpoint of the session
// clientSessionID of adapter id, whose client process pid gives (asked
// only when the environment offers a channel: it walks the process
// tree), from its hook's environment (getenv); an error says why it has
// none.
func Endpoint(id string, getenv func(string) string, clientSessionID string, pid func() int) (transport, endpoint string, err error) {
	switch id {
	case "claude":
		if getenv("CLAUDE_CODE_MESSAGING_SOCKET") == "" {
			return ClaudeInboxName, "", ErrNoChannel
		}
		endpoint, err = ClaudeEndpoint(getenv, clientSessionID, pid())
		return ClaudeInboxName, endpoint, err
	case "codex":
		if !threadPattern().MatchString(clientSessionID) {
			return CodexQueueName, "", errors.New("the session id is not a Codex thread id")
		}
		endpoint, err = CodexEndpoint(getenv, clientSessionID, pid())
		return CodexQueueName, endpoint, err
	}
	return "", "", fmt.Errorf("%s has no live transport", id)
}

// AfterSend is the one thing a surface does after it recorded a message
// (acc message, request, reply and finish, and acc-mcp's send tools): it
// decides how the recorded message m reaches each addressed recipient and
// makes the offers that decision calls for, and returns one
// router.Delivery per addressed recipient (none for a room message) for
// the surface to report (docs/delivery.md#where-delivery-is-decided). The
// client installations' policies are the room's one reading of them
// (core.Room.Install). The message is recorded whatever happens here, so
// ctx's deadline, which may have run out while the send waited for the
// store, does not apply: each step bounds itself (router.SendBound) and a
// failure leaves the recipient queued with the reason.
func AfterSend(ctx context.Context, room *core.Room, m *protocol.Message) []router.Delivery {
	return deliver(context.WithoutCancel(ctx), room, m, room.Install.LivePush, room.Install.Turn)
}

// deliver routes a committed send (router.Router.Deliver) with this
// platform's live transports, one offer per message and recipient at a
// time: an offer is made holding <workspace runtime dir>/live.<recipient>.lock
// (gofrs/flock) and only while the receipt is still queued, so a retry of
// a send racing the first cannot push it twice. policy gives the live-push
// policy recorded per client installation (nil: off), turn the
// turn-delivery policies (router.Router.TurnPolicy; nil leaves the
// room's alone).
func deliver(ctx context.Context, room *core.Room, m *protocol.Message, policy func(adapter string) string, turn func(adapter string) (midTurn, endOfTurn string)) []router.Delivery {
	rt := Router()
	rt.TurnPolicy = turn
	rt.Reserve = func(ctx context.Context, m *protocol.Message, participantID string) (func(), string, error) {
		fl := flock.New(room.OfferLockPath(participantID))
		ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
		if err != nil || !ok {
			return nil, "", fmt.Errorf("the live-offer lock: %v", err)
		}
		release := func() { _ = fl.Unlock() }
		state, err := room.ReceiptState(ctx, m.MessageID, participantID)
		if err != nil || state != protocol.ReceiptQueued {
			release()
			return func() {}, state, err
		}
		return release, state, nil
	}
	return rt.Deliver(ctx, room, m, policy)
}
