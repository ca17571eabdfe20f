package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Page limits (docs/protocol.md#inbox-summary).
const (
	DefaultPageLimit    = 20
	MaxPageLimit        = 500
	PageBudgetBytes     = 12000
	SummarySubjectBytes = 160
	// TrustLabel marks every summary as peer content acc does not vouch for.
	TrustLabel = "untrusted peer content"
)

// Summary is the allow-listed view of a message in a page: never its body,
// artifacts, handoff payload or recipients (docs/protocol.md#inbox-summary).
type Summary struct {
	MessageID         string  `json:"messageId"`
	ThreadID          string  `json:"threadId"`
	FromParticipantID string  `json:"fromParticipantId"`
	FromSessionID     string  `json:"fromSessionId"`
	Kind              string  `json:"kind"`
	Obligation        string  `json:"obligation"`
	Subject           string  `json:"subject"`
	SentAt            string  `json:"sentAt"`
	InReplyTo         *string `json:"inReplyTo"`
	BodyBytes         int     `json:"bodyBytes"`
	ArtifactCount     int     `json:"artifactCount"`
	Trust             string  `json:"trust"`
	// DecisionStatus is set on decisions only (docs/protocol.md#decisions).
	DecisionStatus *DecisionStatus `json:"decisionStatus,omitempty"`
}

// Summarise builds the summary of m; the subject is cut to 160 UTF-8 bytes
// including a trailing "…" when shortened.
func Summarise(m *protocol.Message) Summary {
	return Summary{MessageID: m.MessageID, ThreadID: m.ThreadID, FromParticipantID: m.FromParticipantID,
		FromSessionID: m.FromSessionID, Kind: m.Kind, Obligation: m.Obligation,
		Subject: protocol.TruncateUTF8(m.Subject, SummarySubjectBytes), SentAt: m.SentAt, InReplyTo: m.InReplyTo,
		BodyBytes: len(m.Body), ArtifactCount: len(m.Artifacts), Trust: TrustLabel}
}

// InboxItem is one entry of an inbox page.
type InboxItem struct {
	Message Summary          `json:"message"`
	Receipt protocol.Receipt `json:"receipt"`
}

// InboxPage is a summary page: newest first, at most Limit items and
// PageBudgetBytes bytes; NextCursor is the last item's id when more remain.
type InboxPage struct {
	Items      []InboxItem `json:"items"`
	NextCursor *string     `json:"nextCursor"`
	// Participant is whose inbox this is, for the CLI's words; not in
	// the JSON (docs/cli.md's shapes).
	Participant string `json:"-"`
	// Damaged names the pending records of this page's range that do not
	// decode: they are left out of Items rather than failing the whole
	// page (docs/design.md); absent when there are none.
	Damaged []storage.DamagedRecord `json:"damaged,omitempty"`
}

// InboxQuery selects a page of the caller's pending messages.
type InboxQuery struct {
	Caller Caller
	Cursor string // a message id from a previous page's nextCursor
	Limit  int    // 0 = DefaultPageLimit; else 1..500
}

// CheckLimit validates a page limit: 0 means the default; anything outside
// 1..500 is exit 2 invalid_limit.
func CheckLimit(limit int) (int, error) {
	if limit == 0 {
		return DefaultPageLimit, nil
	}
	if limit < 1 || limit > MaxPageLimit {
		return 0, protocol.Errorf(protocol.ReasonInvalidLimit, "message list limit must be an integer from 1 to %d", MaxPageLimit)
	}
	return limit, nil
}

// Inbox lists the caller's pending messages as summaries
// (docs/protocol.md#pending-messages, docs/protocol.md#inbox-summary). It is
// read-only: no receipt moves and no event is appended. Errors: exit 2 for a
// bad limit or a cursor that is not a message of this participant's list;
// exit 4 when one summary alone exceeds the page budget; exit 5 for a stale
// generation or closed session.
func (r *Room) Inbox(ctx context.Context, q InboxQuery) (*InboxPage, error) {
	if err := CheckInbox(q); err != nil {
		return nil, err
	}
	limit, err := CheckLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	page := &InboxPage{Items: []InboxItem{}}
	err = r.Store.View(ctx, func(tx storage.ReadTx) error {
		me, _, err := requireOwner(tx, q.Caller, "read the inbox")
		if err != nil {
			return err
		}
		page.Participant = me.ParticipantID
		sq := storage.InboxQuery{Recipient: me.ParticipantID, ListableOnly: true}
		if q.Cursor != "" {
			m, err := tx.Message(q.Cursor)
			if err != nil {
				return err
			}
			var rc *protocol.Receipt
			if m != nil {
				rc, err = tx.Receipt(m.MessageID, me.ParticipantID)
				if err != nil {
					return err
				}
			}
			if rc == nil {
				return protocol.Errorf(protocol.ReasonInvalidCursor, "message cursor %s is not in this message list; start again without a cursor", q.Cursor)
			}
			sq.BeforeSentAt, sq.BeforeMessageID = m.SentAt, m.MessageID
		}
		var scanErr error
		full := false
		views := newDecisionViews(tx)
		err = tx.ScanInbox(sq, func(row storage.InboxRow) bool {
			item := InboxItem{Message: Summarise(&row.Message), Receipt: row.Receipt}
			if item.Message.DecisionStatus, scanErr = views.of(&row.Message); scanErr != nil {
				return false
			}
			if full || len(page.Items) == limit {
				full = true
				id := page.Items[len(page.Items)-1].Message.MessageID
				page.NextCursor = &id
				return false
			}
			if !fitsBudget(page.Items, item) {
				if len(page.Items) == 0 {
					scanErr = protocol.Errorf(protocol.ReasonPageBudgetExceeded, "one message summary exceeds the page budget of %d bytes", PageBudgetBytes).With("messageId", item.Message.MessageID)
					return false
				}
				id := page.Items[len(page.Items)-1].Message.MessageID
				page.NextCursor = &id
				return false
			}
			page.Items = append(page.Items, item)
			return true
		})
		page.Damaged = tx.Damaged()
		if err != nil {
			return err
		}
		return scanErr
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// DamagedLine is the one text line every text output prints for the
// records it left out because they do not decode
// (docs/design.md#damaged-records): "damaged: N stored record(s) could not
// be read and are not listed (TABLE KEY, …); run `acc doctor`", keys shown
// by the display rule.
func DamagedLine(damaged []storage.DamagedRecord) string {
	keys := make([]string, len(damaged))
	for i, d := range damaged {
		keys[i] = d.Table + " " + EscapePeerLine(d.Key)
	}
	return fmt.Sprintf("damaged: %d stored record(s) could not be read and are not listed (%s); run `acc doctor`", len(damaged), strings.Join(keys, ", "))
}

// fitsBudget reports whether items plus item, with item's id as the next
// cursor, serialise within PageBudgetBytes (docs/protocol.md#inbox-summary).
func fitsBudget(items []InboxItem, item InboxItem) bool {
	next := item.Message.MessageID
	b, err := protocol.MarshalIndent(InboxPage{Items: append(items[:len(items):len(items)], item), NextCursor: &next})
	return err == nil && len(b) <= PageBudgetBytes
}

// ExactItem is the result of an exact read: the complete message (with its
// decisionStatus when it is a decision) and the caller's receipt.
type ExactItem struct {
	Message MessageView      `json:"message"`
	Receipt protocol.Receipt `json:"receipt"`
}

// ReadMessage is the exact read (docs/protocol.md#exact-read): it returns the complete message (a
// replaced decision too, with its decisionStatus) and advances the caller's
// receipt to retrieved (one message.retrieved event, on
// the first read only). An acknowledged receipt is returned unchanged.
// Errors: exit 5 not_recoverable when the caller's participant holds no
// receipt for the message; exit 5 for a stale generation.
func (r *Room) ReadMessage(ctx context.Context, c Caller, messageID string) ([]ExactItem, error) {
	if err := CheckMessageID(messageID); err != nil {
		return nil, err
	}
	var out []ExactItem
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, c, "read a message")
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
			return protocol.Errorf(protocol.ReasonNotRecoverable,
				"message %s was not addressed to %s, so it cannot read it in full; %s lists what was", messageID, me.ParticipantID, protocol.Step{Command: protocol.StepInbox}).
				With("messageId", messageID)
		}
		if rc.State != protocol.ReceiptAcknowledged {
			rc, err = r.advance(tx, me.SessionID, rc, protocol.ReceiptRetrieved)
			if err != nil {
				return err
			}
		}
		mv, err := newDecisionViews(tx).view(m)
		if err != nil {
			return err
		}
		out = []ExactItem{{Message: mv, Receipt: *rc}}
		return nil
	})
	return out, err
}

// CheckInbox applies Inbox's rules that need no store: the limit range and
// the cursor's spelling (a message id). Exit 2.
func CheckInbox(q InboxQuery) error {
	if _, err := CheckLimit(q.Limit); err != nil {
		return err
	}
	if q.Cursor != "" && !protocol.IsPortableID(q.Cursor) {
		return protocol.Errorf(protocol.ReasonInvalidCursor, "cursor %q is not a message id; pass the nextCursor of a previous page, or start again without %s", q.Cursor, protocol.Field("cursor"))
	}
	return nil
}

// CheckMessageID refuses a message id that is not spelled as one. Exit 4.
func CheckMessageID(id string) error {
	if !protocol.IsPortableID(id) {
		return protocol.Errorf(protocol.ReasonInvalidInput, "%q is not a message id", id)
	}
	return nil
}

// InboxDigest summarises participantID's first inbox page for change
// detection: "<message id>:<receipt state> " for each pending item, newest
// first, at most limit of them. Unlike Inbox it needs no session (a
// participant whose session ended still receives), and it only reads.
func (r *Room) InboxDigest(ctx context.Context, participantID string, limit int) (string, error) {
	var b strings.Builder
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		n := 0
		// A damaged row is left out (tx.Damaged); acc inbox and acc doctor
		// name it.
		return tx.ScanInbox(storage.InboxQuery{Recipient: participantID, ListableOnly: true}, func(row storage.InboxRow) bool {
			b.WriteString(row.Message.MessageID + ":" + row.Receipt.State + " ")
			n++
			return n < limit
		})
	})
	return b.String(), err
}
