// Package router decides, after a send has committed, which path may carry
// the message to each addressed recipient, and reports one delivery outcome
// per recipient (docs/protocol.md#record-then-offer, docs/delivery.md).
//
// The durable record is the truth: a delivery outcome never changes whether
// a message was recorded, and a failed or skipped transport never changes a
// command's exit code. Each recipient's outcome names the path that carries
// the message — a live transport (where the recipient's client has live
// push proven and its owner opted in: internal/livepush), the recipient's
// next turn (acc-hook's projection, where the client
// has it proven), or the inbox — and, when the path is a fallback, why
// (route.go).
package router

// Outcomes and transports.
const (
	OutcomeQueued  = "queued"
	OutcomeOffered = "offered"

	// TransportDurable: the message waits in the recipient's inbox (the
	// durable record) for the recipient to read
	// (docs/protocol.md#record-then-offer).
	TransportDurable = "durable"
)

// Reasons a live delivery was not attempted or failed: the closed set of safe
// offer error codes (docs/protocol.md#record-then-offer).
const (
	ErrDeliveryDisabled         = "delivery_disabled"
	ErrAmbiguousSessions        = "ambiguous_recipient_sessions"
	ErrRecipientBusy            = "recipient_busy"
	ErrRecipientUnavailable     = "recipient_unavailable"
	ErrTransportError           = "transport_error"
	ErrTransportRejected        = "transport_rejected"
	ErrUnsupportedClientVersion = "unsupported_client_version"

	// ErrRecipientRemote: the recipient's session has a live-push binding
	// but runs on another host or in another PID namespace than the
	// sender (core.SameHost). Live push stays on the recipient's host
	// (docs/delivery.md#live-push-waking-an-idle-session): its endpoint is
	// a socket or a process there, which the sender can neither reach nor
	// check. The message takes the next path that serves the session.
	ErrRecipientRemote = "recipient_remote"
)

// Delivery is one recipient's outcome (docs/decisions.md#22-waiting):
// {recipientParticipantId, outcome, transport, errorCode}.
type Delivery struct {
	RecipientParticipantID string  `json:"recipientParticipantId"`
	Outcome                string  `json:"outcome"`
	Transport              string  `json:"transport"`
	ErrorCode              *string `json:"errorCode"`
	// Sessions are the recipient's live sessions as the route saw them,
	// so that a sender's words can say who reads the message and how
	// (acc message's text). They never go into JSON: a send reports its
	// outcomes, not its peers' sessions.
	Sessions []Session `json:"-"`
}
