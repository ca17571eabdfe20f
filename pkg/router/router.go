// Package router decides, after a send has committed, which path may carry
// the message to each addressed recipient, and reports one delivery outcome
// per recipient (reference/core.md §8.10, reference/adapters.md §7).
//
// The durable record is the truth: a delivery outcome never changes whether
// a message was recorded, and a failed or skipped transport never changes a
// command's exit code. In this version no live transport exists yet, so
// every recipient's outcome is "queued" on the durable inbox, with the reason
// live delivery was not attempted; next-turn projection (acc-hook) and
// `acc inbox` carry the message from there.
package router

import "github.com/acc-go/acc/pkg/protocol"

// Outcomes and transports.
const (
	OutcomeQueued  = "queued"
	OutcomeOffered = "offered"

	TransportInbox = "inbox"
)

// Reasons a live delivery was not attempted or failed: the closed set of safe
// offer error codes (reference/core.md §8.10).
const (
	ErrDeliveryDisabled         = "delivery_disabled"
	ErrAmbiguousSessions        = "ambiguous_recipient_sessions"
	ErrRecipientBusy            = "recipient_busy"
	ErrRecipientUnavailable     = "recipient_unavailable"
	ErrTransportError           = "transport_error"
	ErrTransportRejected        = "transport_rejected"
	ErrUnsupportedClientVersion = "unsupported_client_version"
)

// Delivery is one recipient's outcome (SPEC decision 22):
// {recipientParticipantId, outcome, transport, errorCode}.
type Delivery struct {
	RecipientParticipantID string  `json:"recipientParticipantId"`
	Outcome                string  `json:"outcome"`
	Transport              string  `json:"transport"`
	ErrorCode              *string `json:"errorCode"`
}

// Plan returns one Delivery per recipient of m, in the order given. With no
// live transport enabled, each stays queued in the durable inbox with
// errorCode delivery_disabled.
func Plan(m *protocol.Message, recipients []string) []Delivery {
	out := make([]Delivery, 0, len(recipients))
	for _, p := range recipients {
		code := ErrDeliveryDisabled
		out = append(out, Delivery{RecipientParticipantID: p, Outcome: OutcomeQueued, Transport: TransportInbox, ErrorCode: &code})
	}
	return out
}
