package core

import (
	"context"
	"slices"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// What a wait waits for (docs/decisions.md#22-waiting).
const (
	WaitInbox   = "inbox"    // the caller's inbox holds a pending item (the default)
	WaitAnswer  = "answer"   // an answer in reply to a given message
	WaitAck     = "ack"      // every recipient of a given message acknowledged it
	WaitRelease = "released" // no live claim overlaps a resource (the caller's own aside, when there is a caller)
	// WaitIdle: a participant has an open session and none of its
	// reachable ones is in a turn (activity_read.go).
	WaitIdle = "idle"
	// WaitFinished: none of a participant's sessions is open any more.
	WaitFinished = "finished"
)

// WaitKinds lists them.
var WaitKinds = []string{WaitInbox, WaitAnswer, WaitAck, WaitRelease, WaitIdle, WaitFinished}

// WaitQuery is one condition.
type WaitQuery struct {
	For string
	// Caller is the waiting session (required for inbox; released
	// sets the caller's own claims aside, and with no caller counts every
	// session's: docs/delivery.md).
	Caller *Caller
	// MessageID is the message answered or acknowledged (answer, ack).
	MessageID string
	// Resource is the resource to see released, spelled as for acc claim,
	// relative to Cwd.
	Resource, Cwd string
	// Participant is the participant watched (idle, finished).
	Participant string
	// Since, when set, is when the wait began: idle then also holds for a
	// participant whose sessions all closed since, the last one to close
	// with its turn over — the turn's end came and went between two looks
	// (peerCondition). Zero leaves idle to the open sessions alone.
	Since time.Time
}

// WaitResult is one evaluation of a condition.
type WaitResult struct {
	For       string `json:"for"`
	Satisfied bool   `json:"satisfied"`
	// Cursor is the last event sequence seen.
	Cursor string `json:"cursor"`
	// Messages are the pending messages (inbox, newest first, one page)
	// or the answers (answer), as summaries; read one with acc inbox
	// --message.
	Messages []Summary `json:"messages"`
	// Receipts are the message's receipts (ack).
	Receipts []protocol.Receipt `json:"receipts"`
	// Resource and Claims: the canonical resource and the other sessions'
	// live claims still overlapping it (release).
	Resource string           `json:"resource,omitempty"`
	Claims   []protocol.Claim `json:"claims"`
	// Participant and Sessions: the participant watched and its open
	// sessions as the look saw them (idle, finished; activity_read.go).
	Participant string        `json:"participant,omitempty"`
	Sessions    []PeerSession `json:"sessions,omitempty"`
}

// CheckWait refuses a malformed condition before any wait (exit 2 usage;
// exit 4 for a message id that is not one; resource spelling as acc claim).
func (r *Room) CheckWait(q WaitQuery) error {
	if !slices.Contains(WaitKinds, q.For) {
		return protocol.Errorf(protocol.ReasonInvalidFlagValue, "wait %q is not one of %s", q.For, joinComma(WaitKinds))
	}
	switch q.For {
	case WaitAnswer, WaitAck:
		return CheckMessageID(q.MessageID)
	case WaitRelease:
		_, err := CanonicalResource(r.WS, q.Resource, q.Cwd)
		return err
	case WaitIdle, WaitFinished:
		if q.Participant == "" {
			return protocol.Errorf(protocol.ReasonMissingFlag, "wait for %s needs the participant it watches", q.For)
		}
	}
	return nil
}

// LastSequence is the sequence of the room's last event (0 when none).
func (r *Room) LastSequence(ctx context.Context) (int64, error) {
	var n int64
	err := r.Store.View(ctx, func(tx storage.ReadTx) (err error) {
		n, err = tx.LastSequence()
		return err
	})
	return n, err
}

// CheckCondition evaluates q once, read-only: it never moves a receipt.
// Errors: exit 4 for a message that does not exist (answer, ack) or that
// has no recipient to acknowledge it (ack); exit 5 for a caller whose
// session is not open or whose generation is stale (inbox, and released
// when a caller is given: only a verified session's own claims are set
// aside).
func (r *Room) CheckCondition(ctx context.Context, q WaitQuery) (*WaitResult, error) {
	res := &WaitResult{For: q.For, Messages: []Summary{}, Receipts: []protocol.Receipt{}, Claims: []protocol.Claim{}}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		if q.Caller != nil && q.For == WaitRelease {
			if _, _, err := requireOwner(tx, *q.Caller, "wait"); err != nil {
				return err
			}
		}
		last, err := tx.LastSequence()
		if err != nil {
			return err
		}
		res.Cursor = protocol.FormatSequence(last)
		switch q.For {
		case WaitInbox:
			return nil // read below, through Inbox
		case WaitIdle, WaitFinished:
			return r.peerCondition(tx, q, res)
		case WaitAnswer:
			orig, err := tx.Message(q.MessageID)
			if err != nil {
				return err
			}
			if orig == nil {
				return unknownMessage(q.MessageID)
			}
			// Answers live in their question's thread; the whole thread is
			// read (by its index), whatever the clocks said when each was sent.
			return tx.ScanMessages(storage.MessageQuery{Kind: protocol.KindAnswer, ThreadID: orig.ThreadID}, func(m protocol.Message) bool {
				if m.InReplyTo != nil && *m.InReplyTo == q.MessageID {
					res.Messages = append(res.Messages, Summarise(&m))
				}
				return true
			})
		case WaitAck:
			m, err := tx.Message(q.MessageID)
			if err != nil {
				return err
			}
			if m == nil {
				return unknownMessage(q.MessageID)
			}
			rcs, err := tx.ReceiptsByMessage(q.MessageID)
			if err != nil {
				return err
			}
			if len(rcs) == 0 {
				return protocol.Errorf(protocol.ReasonInvalidInput,
					"message %s has no recipients, so nobody can acknowledge it; wait for a reply with %s instead", q.MessageID, protocol.Field("answer")).With("messageId", q.MessageID)
			}
			res.Receipts = rcs
		case WaitRelease:
			resource, err := CanonicalResource(r.WS, q.Resource, q.Cwd)
			if err != nil {
				return err
			}
			res.Resource = resource
			claims, err := tx.Claims()
			if err != nil {
				return err
			}
			now := protocol.FormatTime(r.now())
			// A dead holder's claim past the orphan grace no longer holds
			// anything: the next claim takes it over
			// (docs/concepts.md#when-a-holder-dies); the watcher's backstop
			// poll sees it lapse.
			orphans := r.orphans(tx, r.now())
			for _, c := range claims {
				if c.ExpiresAt <= now || !Overlaps(c.Resource, resource) || orphans.lapsed(c.OwnerSessionID) {
					continue
				}
				if q.Caller != nil && c.OwnerSessionID == q.Caller.SessionID {
					continue
				}
				res.Claims = append(res.Claims, c)
			}
			mine := ""
			if q.Caller != nil {
				mine = q.Caller.SessionID
			}
			if d, _ := damagedClaimIn(tx, now, mine, []string{resource}, nil); d != nil {
				return damagedClaimRefusal(d, resource, "tell whether anyone holds")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if q.For == WaitInbox {
		page, err := r.Inbox(ctx, InboxQuery{Caller: *q.Caller})
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			res.Messages = append(res.Messages, it.Message)
		}
	}
	switch q.For {
	case WaitInbox, WaitAnswer:
		res.Satisfied = len(res.Messages) > 0
	case WaitAck:
		res.Satisfied = len(res.Receipts) > 0 && !slices.ContainsFunc(res.Receipts, func(rc protocol.Receipt) bool {
			return rc.State != protocol.ReceiptAcknowledged
		})
	case WaitRelease:
		res.Satisfied = len(res.Claims) == 0
	}
	// idle and finished decided in peerCondition
	return res, nil
}
