package storage

import (
	"context"

	"github.com/acc-go/acc/pkg/protocol"
)

// SchemaVersion is the database schema version kept in PRAGMA user_version.
// Version 2 added the decision_links table; version 3 the search index
// (docs/protocol.md#search-index), which opening a version 2 store adds.
const SchemaVersion = 3

// Area selects where participants, sessions and intents are kept.
type Area int

const (
	// Durable records are part of the materialised room and have events.
	Durable Area = iota
	// Ephemeral records belong to a room that is not materialised yet; they
	// have no events and leave no durable history.
	Ephemeral
)

// Store is a workspace's durable store. Implementations are safe for use by
// several goroutines and several processes at once.
type Store interface {
	// WorkspaceID is the workspace identity checked when the store was opened.
	WorkspaceID() string
	// Update runs fn in one write transaction: it commits when fn returns nil
	// and rolls back when fn returns an error or panics (the panic is
	// re-raised). Waiting for other writers is bounded by ctx; running out is
	// a store_busy *protocol.Error (exit 3).
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn against one consistent snapshot. It never writes.
	View(ctx context.Context, fn func(ReadTx) error) error
	// Close releases the store.
	Close() error
}

// InboxQuery selects a participant's receipts, newest message first.
type InboxQuery struct {
	Recipient string
	// ListableOnly keeps receipts that are still pending
	// (docs/protocol.md#pending-messages): queued or offered, or retrieved with an obligation, and not a
	// replaced decision.
	ListableOnly bool
	// QueuedOnly keeps receipts still in state queued (what a next-turn
	// projection may offer), filtered before any record is decoded.
	QueuedOnly bool
	// Kind, when set, keeps only messages of that kind.
	Kind string
	// Before, when set, keeps only messages strictly older, in newest-first
	// order, than the message with this sentAt and id.
	BeforeSentAt, BeforeMessageID string
}

// DamagedRecord names a stored record that does not decode or validate.
type DamagedRecord struct {
	Table string `json:"table"`
	// Key is the row's primary key: an id, or message id and recipient
	// joined by "/" for a receipt, or the sequence of an event.
	Key     string `json:"key"`
	Problem string `json:"problem"`
	// Claim, for a damaged claim row, holds what its own columns still
	// say, so a guard can keep it (docs/hooks.md).
	Claim *DamagedClaim `json:"-"`
}

// DamagedClaim is what a claim row whose record does not decode still
// says through its indexed columns: which claim, whose, on what, until
// when (an RFC 3339 UTC time as stored). Its mode and enforcement are lost.
type DamagedClaim struct {
	ClaimID, OwnerSessionID, Resource, ExpiresAt string
}

// MessageQuery selects workspace messages (history), newest first.
type MessageQuery struct {
	Kind                          string
	HeadsOnly                     bool
	BeforeSentAt, BeforeMessageID string
	// ThreadID, when set, keeps only that thread's messages (indexed).
	ThreadID string
}

// DecisionLink is one target of a decision change: the change From replaces
// or withdraws (Action) the decision To.
type DecisionLink struct {
	From, To, Action string
}

// InboxRow is one message with the recipient's receipt.
type InboxRow struct {
	Message protocol.Message
	Receipt protocol.Receipt
}

// Counts are cheap totals for status.
type Counts struct {
	Messages int64
	Events   int64
}

// SessionBinding maps a client's own session id to an acc session
// (docs/protocol.md#session-binding). Key is derived from the client and its id.
type SessionBinding struct {
	Key              string `json:"key"`
	Harness          string `json:"harness"`
	HarnessSessionID string `json:"harnessSessionId"`
	SessionID        string `json:"sessionId"`
	Generation       string `json:"generation"`
	UpdatedAt        string `json:"updatedAt"`
}

// ReadTx reads one consistent snapshot. Lookups of a missing record return
// (nil, nil).
type ReadTx interface {
	Workspace() (*protocol.Workspace, error)

	// Damaged names, in the order met and once each, the records the
	// lists and scans of this transaction left out because they do not
	// decode or validate (table and key; a claim row also its columns).
	// One damaged record does not take a listing down
	// (docs/design.md#damaged-records): in a read transaction every list
	// and scan leaves such a row out and names it here; in a write
	// transaction only Claims does (the claim code judges a damaged claim
	// by its columns), the others fail whole with store_corrupt, since a
	// write must not act on a partial list. ReceiptsByMessage and the single-record lookups always
	// fail with store_corrupt: a command needs that very record.
	Damaged() []DamagedRecord

	Participant(a Area, id string) (*protocol.Participant, error)
	Participants(a Area) ([]protocol.Participant, error)
	Session(a Area, id string) (*protocol.Session, error)
	// Sessions lists sessions ordered by startedAt then sessionId; openOnly
	// keeps those with state open.
	Sessions(a Area, openOnly bool) ([]protocol.Session, error)
	Intent(a Area, sessionID string) (*protocol.Intent, error)
	Intents(a Area) ([]protocol.Intent, error)

	Claim(id string) (*protocol.Claim, error)
	Claims() ([]protocol.Claim, error)

	Message(id string) (*protocol.Message, error)
	MessageByClientKey(fromParticipantID, clientMessageID string) (*protocol.Message, error)
	Receipt(messageID, recipient string) (*protocol.Receipt, error)
	ReceiptsByMessage(messageID string) ([]protocol.Receipt, error)
	// ScanInbox calls fn for each matching row, newest first, until fn
	// returns false. Its cost is proportional to the rows visited.
	ScanInbox(q InboxQuery, fn func(InboxRow) bool) error
	// ScanOwed calls fn, newest first, for each receipt of recipient that is
	// not yet acknowledged and whose message carries an obligation (reply or
	// acknowledge), replaced decisions excluded. Its cost is proportional to
	// what the recipient owes, not to its history.
	ScanOwed(recipient string, fn func(InboxRow) bool) error
	// ScanOwedSeen is ScanOwed without receipts still queued: the reminders
	// a next-turn projection needs, whose queued messages it carries whole.
	ScanOwedSeen(recipient string, fn func(InboxRow) bool) error
	// ScanOutstanding calls fn for each receipt not yet acknowledged of a
	// message from the participant that carries an obligation. Its cost is
	// proportional to the outstanding receipts of the whole room.
	ScanOutstanding(from string, fn func(InboxRow) bool) error
	// ScanMessages calls fn for each matching message, newest first, until fn
	// returns false.
	ScanMessages(q MessageQuery, fn func(protocol.Message) bool) error
	// ScanReceipts calls fn for every receipt of the workspace, ordered by
	// message id then recipient, until fn returns false.
	ScanReceipts(fn func(protocol.Receipt) bool) error
	// DecisionGroup returns every decision link of the connected group that
	// holds the decision messageID (links followed in both directions),
	// ordered by From then To; none when the decision was never changed nor
	// is a change. Its cost is proportional to the group, not the history.
	DecisionGroup(messageID string) ([]DecisionLink, error)
	// SearchMessages calls fn for each message the search q finds, best
	// ranked first, until fn returns false (docs/protocol.md#search-index).
	SearchMessages(q SearchQuery, fn func(protocol.Message) bool) error
	// PendingIndex counts, up to 1,000, the messages written without
	// being indexed (by an acc of schema version 2 still running after
	// the upgrade); a search indexes them first (Tx.IndexPending).
	PendingIndex() (int, error)

	// Events returns up to limit events with sequence > after, in order.
	Events(after int64, limit int) ([]protocol.Event, error)
	LastSequence() (int64, error)
	Counts() (Counts, error)

	Binding(key string) (*SessionBinding, error)
	Bindings() ([]SessionBinding, error)
}

// Tx is a write transaction. Records are validated before they are written;
// an invalid record is an exit-4 error and nothing of the transaction is kept.
type Tx interface {
	ReadTx

	PutWorkspace(w *protocol.Workspace) error
	PutParticipant(a Area, p *protocol.Participant) error
	DeleteParticipant(a Area, id string) error
	PutSession(a Area, s *protocol.Session) error
	DeleteSession(a Area, id string) error
	PutIntent(a Area, i *protocol.Intent) error
	DeleteIntent(a Area, sessionID string) error

	PutClaim(c *protocol.Claim) error
	DeleteClaim(id string) error

	// InsertMessage adds a new message; a message id or (sender,
	// clientMessageId) already present is an error. A message carrying a
	// decisionChange also records one decision link per target and marks
	// each target replaced (MarkDecisionReplaced), in the same transaction;
	// the targets must already be stored.
	InsertMessage(m *protocol.Message) error
	// MarkDecisionReplaced records that a decision has a successor, so it
	// leaves inbox listings (docs/protocol.md#decisions).
	MarkDecisionReplaced(messageID string) error
	// PutReceipt inserts or replaces a receipt; its message must exist.
	PutReceipt(r *protocol.Receipt) error

	// AppendEvent assigns e the next sequence (and an event id when empty)
	// and appends it.
	AppendEvent(e *protocol.Event) error

	// IndexPending indexes the messages PendingIndex counts and returns
	// how many it indexed and how many it left out as damaged records.
	IndexPending() (indexed, skipped int, err error)

	PutBinding(b *SessionBinding) error
	DeleteBinding(key string) error
}
