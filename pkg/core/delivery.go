package core

import (
	"context"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// DeliveryTarget is one recipient of a committed message as the delivery
// router sees it: the receipt's state and the participant's live sessions
// (open, not offline), read after the send committed.
type DeliveryTarget struct {
	ParticipantID string
	Receipt       string
	// Sessions are the participant's live sessions, never the session that
	// sent the message (a session does not deliver to itself).
	Sessions []protocol.Session
	// Live holds, by session id, the live-push binding of those of
	// Sessions that have one, current or Stale.
	Live map[string]LiveEndpoint
	// NotPending: the message is a decision a later change already names
	// (superseded or withdrawn), which no inbox lists and no projection
	// shows (docs/protocol.md#pending-messages); only an exact read
	// returns it.
	NotPending bool
}

// DeliveryTargets reads, in one read transaction, the receipt and the live
// sessions of each participant of messageID (the first two steps of
// docs/delivery.md#live-push-waking-an-idle-session). A participant
// without a receipt is reported with receipt "".
// An unknown messageID is an error (exit 4, message_not_found).
func (r *Room) DeliveryTargets(ctx context.Context, messageID string, participants []string) ([]DeliveryTarget, error) {
	out := make([]DeliveryTarget, 0, len(participants))
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		m, err := tx.Message(messageID)
		if err != nil {
			return err
		}
		if m == nil {
			return protocol.Errorf(protocol.ReasonUnknownMessage, "no message %s in this workspace", messageID)
		}
		st, err := newDecisionViews(tx).of(m)
		if err != nil {
			return err
		}
		// A decision some later change names (superseded or withdrawn) is
		// listed nowhere any more.
		replaced := st != nil && !st.IsHead
		sessions, err := allSessions(tx, true)
		if err != nil {
			return err
		}
		now := r.now()
		live := map[string][]protocol.Session{}
		for _, s := range sessions {
			if s.SessionID != m.FromSessionID && Presence(&s, now, r.Probe) != PresenceOffline {
				live[s.ParticipantID] = append(live[s.ParticipantID], s)
			}
		}
		for _, p := range participants {
			t := DeliveryTarget{ParticipantID: p, Sessions: live[p], NotPending: replaced, Live: map[string]LiveEndpoint{}}
			for i := range t.Sessions {
				l, err := liveOf(tx, &t.Sessions[i], now)
				if err != nil {
					return err
				}
				if l != nil {
					t.Live[t.Sessions[i].SessionID] = *l
				}
			}
			rc, err := tx.Receipt(messageID, p)
			if err != nil {
				return err
			}
			if rc != nil {
				t.Receipt = rc.State
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// ReceiptState returns participantID's receipt state for messageID ("" when
// it has none).
func (r *Room) ReceiptState(ctx context.Context, messageID, participantID string) (string, error) {
	state := ""
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		rc, err := tx.Receipt(messageID, participantID)
		if err == nil && rc != nil {
			state = rc.State
		}
		return err
	})
	return state, err
}

// RecordOffer moves participantID's receipt for messageID from queued to
// offered after a live transport accepted the message, with a
// message.offer_succeeded event naming the transport. A receipt already
// past queued is left as it is.
func (r *Room) RecordOffer(ctx context.Context, messageID, participantID, transport string) error {
	return r.Store.Update(ctx, func(tx storage.Tx) error {
		rc, err := tx.Receipt(messageID, participantID)
		if err != nil || rc == nil || rc.State != protocol.ReceiptQueued {
			return err
		}
		m, err := tx.Message(messageID)
		if err != nil || m == nil {
			return err
		}
		at := protocol.FormatTime(r.now())
		next := *rc
		next.State, next.UpdatedAt = protocol.ReceiptOffered, at
		if err := tx.PutReceipt(&next); err != nil {
			return err
		}
		// The offer is the sender's doing: its session is the event's actor.
		return tx.AppendEvent(newEvent(at, m.FromSessionID, protocol.EventMessageOfferSucceeded, map[string]any{
			"messageId": messageID, "recipientParticipantId": participantID, "transport": transport,
		}))
	})
}
