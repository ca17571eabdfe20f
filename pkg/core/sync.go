package core

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Sync scopes (docs/protocol.md#sync-scopes).
const (
	SyncScopeDelta   = "delta"
	SyncScopeFull    = "full"
	SyncScopeHistory = "history"
)

// Sync limits (docs/protocol.md#sync-scopes): delta and full pages of events; history pages of
// messages use DefaultPageLimit and MaxPageLimit like the inbox.
const (
	DefaultSyncLimit = 100
	MaxSyncLimit     = 500
)

// History views (docs/protocol.md#sync-scopes).
const (
	HistoryViewSummary = "summary"
	HistoryViewMessage = "message"
)

// SyncQuery selects what Sync returns. Zero values are the defaults: scope
// delta from the start of the log, the scope's default limit.
type SyncQuery struct {
	// Caller, when set, adds personal attention to delta and full and is
	// checked (exit 5 when its generation is stale). History ignores it:
	// history is public.
	Caller *Caller
	Scope  string // delta (default), full or history
	// Cursor is a 16-digit event sequence for delta and full, a message id
	// (a previous page's nextCursor) for history.
	Cursor string
	Limit  int // 0 = the scope's default
	// Kind, MessageID and Current apply to history only. Current (decision
	// heads only) needs Kind decision; MessageID is an exact read and takes
	// none of the others.
	Kind      string
	MessageID string
	Current   bool
}

// RosterRow is one live session as sync shows it: never its generation.
type RosterRow struct {
	SessionID       string  `json:"sessionId"`
	ParticipantID   string  `json:"participantId"`
	ParentSessionID *string `json:"parentSessionId"`
	Harness         string  `json:"harness"`
	Branch          *string `json:"branch"`
	Presence        string  `json:"presence"`
	// PIDJudged: the session's presence also follows its recorded process,
	// which this host may judge; false when it records no pid or recorded
	// it on another host or in another PID namespace
	// (docs/protocol.md#presence). As SessionRow.PIDJudged.
	PIDJudged bool `json:"pidJudged"`
	// Activity is the session's turn (working or idle, since when) as its
	// hooks last recorded it; absent when they never did
	// (docs/delivery.md#knowing-when-a-peer-is-free).
	Activity *protocol.Activity `json:"activity,omitempty"`
}

// SessionRecord is a session record without its generation (the secret
// proof of ownership) and without extensions.
type SessionRecord struct {
	SchemaVersion      int     `json:"schemaVersion"`
	SessionID          string  `json:"sessionId"`
	ParticipantID      string  `json:"participantId"`
	WorkspaceID        string  `json:"workspaceId"`
	Harness            string  `json:"harness"`
	State              string  `json:"state"`
	ParentSessionID    *string `json:"parentSessionId"`
	CheckoutRoot       *string `json:"checkoutRoot"`
	Branch             *string `json:"branch"`
	PID                *int    `json:"pid"`
	PIDStartedAt       *string `json:"pidStartedAt"`
	Enforcement        string  `json:"enforcement"`
	Lifecycle          string  `json:"lifecycle"`
	HeartbeatCadenceMs int64   `json:"heartbeatCadenceMs"`
	StartedAt          string  `json:"startedAt"`
	HeartbeatAt        string  `json:"heartbeatAt"`
	// Host is where the session runs, absent when its record does not say
	// (docs/protocol.md#session-and-generation).
	Host *protocol.SessionHost `json:"host,omitempty"`
}

// ClaimRecord is a claim record without the owner's generation and without
// extensions.
type ClaimRecord struct {
	SchemaVersion  int    `json:"schemaVersion"`
	ClaimID        string `json:"claimId"`
	WorkspaceID    string `json:"workspaceId"`
	OwnerSessionID string `json:"ownerSessionId"`
	Resource       string `json:"resource"`
	Mode           string `json:"mode"`
	Enforcement    string `json:"enforcement"`
	Reason         string `json:"reason"`
	AcquiredAt     string `json:"acquiredAt"`
	ExpiresAt      string `json:"expiresAt"`
}

// Snapshot is the whole room at one read, for forensics (scope full).
// Workspace is null before the room is materialised.
type Snapshot struct {
	Workspace    *protocol.Workspace    `json:"workspace"`
	Participants []protocol.Participant `json:"participants"`
	Sessions     []SessionRecord        `json:"sessions"`
	Intents      []protocol.Intent      `json:"intents"`
	Claims       []ClaimRecord          `json:"claims"`
	Messages     []protocol.Message     `json:"messages"`
	Receipts     []protocol.Receipt     `json:"receipts"`
}

// SyncDelta is the result of scopes delta and full
// (docs/protocol.md#sync-scopes, docs/protocol.md#events-since-a-cursor).
type SyncDelta struct {
	// Cursor is the last returned event's sequence, or the input cursor
	// when no event was returned.
	Cursor string `json:"cursor"`
	Scope  string `json:"scope"`
	// Solo is true when nobody else is here to coordinate with: no live
	// session but the caller's, no attention item, no claim at all.
	Solo      bool             `json:"solo"`
	Attention []Attention      `json:"attention"`
	Roster    []RosterRow      `json:"roster"`
	Events    []protocol.Event `json:"events"`
	Snapshot  *Snapshot        `json:"snapshot,omitempty"`
	// Damaged names the stored records this sync left out because they
	// do not decode (docs/design.md#damaged-records); the cursor still moves past
	// a damaged event.
	Damaged []storage.DamagedRecord `json:"damaged,omitempty"`
}

// HistoryPage is a page of workspace history as summaries (docs/protocol.md#sync-scopes).
type HistoryPage struct {
	Scope      string    `json:"scope"`
	View       string    `json:"view"`
	Items      []Summary `json:"items"`
	NextCursor *string   `json:"nextCursor"`
	// Damaged names the messages this page left out because they do not
	// decode (docs/design.md#damaged-records).
	Damaged []storage.DamagedRecord `json:"damaged,omitempty"`
}

// PublicReceipt is what history shows of one recipient's receipt
// (docs/decisions.md#18-details-the-original-left-open).
type PublicReceipt struct {
	RecipientParticipantID string `json:"recipientParticipantId"`
	State                  string `json:"state"`
	UpdatedAt              string `json:"updatedAt"`
}

// HistoryMessage is an exact history read: the complete message and every
// recipient's receipt, sorted by participant.
type HistoryMessage struct {
	Scope    string          `json:"scope"`
	View     string          `json:"view"`
	Items    []MessageView   `json:"items"`
	Receipts []PublicReceipt `json:"receipts"`
}

// SyncResult holds exactly one of its fields, by scope.
type SyncResult struct {
	Delta   *SyncDelta      // delta, full
	History *HistoryPage    // history
	Message *HistoryMessage // history with a message id
}

// Data returns the one result the query produced, for encoding.
func (s *SyncResult) Data() any {
	switch {
	case s.Delta != nil:
		return s.Delta
	case s.History != nil:
		return s.History
	default:
		return s.Message
	}
}

// Sync reads the room for a caller that keeps up with it
// (docs/protocol.md#sync-and-attention): scope delta
// returns the events after a cursor with the roster and the caller's
// attention; full adds a snapshot of every record; history lists the
// workspace's messages as summaries, or reads one completely with every
// recipient's receipt. Sync never writes, and no result ever carries a
// session generation. Errors: exit 2 for an unknown scope, a flag outside
// its scope, a malformed or foreign cursor or a limit outside its range;
// exit 4 for a history read of an unknown message or a summary larger than
// the page budget; exit 5 when the caller's generation is stale.
func (r *Room) Sync(ctx context.Context, q SyncQuery) (*SyncResult, error) {
	if q.Scope == "" {
		q.Scope = SyncScopeDelta
	}
	if err := CheckSyncQuery(q); err != nil {
		return nil, err
	}
	switch q.Scope {
	case SyncScopeDelta, SyncScopeFull:
		return r.syncDelta(ctx, q)
	case SyncScopeHistory:
		if q.MessageID != "" {
			return r.historyMessage(ctx, q)
		}
		return r.historyPage(ctx, q)
	}
	return nil, protocol.Errorf(protocol.ReasonSyncUsage, "scope is one of delta, full, history, not %q", q.Scope).With("scope", q.Scope)
}

// CheckSyncQuery applies Sync's shape rules without reading the store: the
// scope, the fields each scope takes, the cursor spelling and the limit
// range. Surfaces that must refuse a malformed query before they resolve a
// caller (acc-mcp) call it first; Sync calls it too.
func CheckSyncQuery(q SyncQuery) error {
	if q.Scope == "" {
		q.Scope = SyncScopeDelta
	}
	switch q.Scope {
	case SyncScopeDelta, SyncScopeFull:
		return checkDeltaQuery(q)
	case SyncScopeHistory:
		if q.MessageID != "" {
			return checkHistoryMessageQuery(q)
		}
		_, err := checkHistoryPageQuery(q)
		return err
	}
	return protocol.Errorf(protocol.ReasonSyncUsage, "%s is one of delta, full, history, not %q", protocol.Field("scope"), q.Scope).With("scope", q.Scope)
}

func checkDeltaQuery(q SyncQuery) error {
	var wrong []string
	if q.Kind != "" {
		wrong = append(wrong, "kind")
	}
	if q.MessageID != "" {
		wrong = append(wrong, "messageId")
	}
	if q.Current {
		wrong = append(wrong, "current")
	}
	if len(wrong) > 0 {
		return protocol.Errorf(protocol.ReasonSyncUsage, "only %s takes %s (this is %s); add %s", protocol.FieldValue{Name: "scope", Value: "history"}, protocol.FieldList{Conj: "and", Names: wrong}, protocol.FieldValue{Name: "scope", Value: q.Scope}, protocol.FieldValue{Name: "scope", Value: "history"})
	}
	if q.Cursor != "" && !protocol.IsSequence(q.Cursor) {
		return protocol.Errorf(protocol.ReasonInvalidCursor,
			"a cursor is the 16-digit sequence a previous sync returned, not %q; pass it as printed, or leave %s out to start from the beginning", q.Cursor, protocol.Field("cursor"))
	}
	if q.Limit < 0 || q.Limit > MaxSyncLimit {
		return protocol.Errorf(protocol.ReasonInvalidLimit, "sync limit must be an integer from 1 to %d (default %d)", MaxSyncLimit, DefaultSyncLimit)
	}
	return nil
}

func (r *Room) syncDelta(ctx context.Context, q SyncQuery) (*SyncResult, error) {
	after := int64(0)
	if q.Cursor != "" {
		n, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil {
			return nil, protocol.Errorf(protocol.ReasonInvalidCursor, "a cursor is the 16-digit sequence a previous sync returned, not %q", q.Cursor)
		}
		after = n
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultSyncLimit
	}
	out := &SyncDelta{Cursor: protocol.FormatSequence(after), Scope: q.Scope, Attention: []Attention{}, Roster: []RosterRow{}, Events: []protocol.Event{}}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		now := r.now()
		var me *protocol.Session
		if q.Caller != nil {
			// Like status: a closed session may still read; a stale
			// generation may not.
			s, _, err := findSession(tx, q.Caller.SessionID)
			if err != nil {
				return err
			}
			if s == nil {
				return protocol.Errorf(protocol.ReasonSessionNotOpen, "session %s is not in this workspace; %s without %s reads the room publicly", q.Caller.SessionID, protocol.Step{Command: protocol.StepSync}, protocol.Field("session")).
					With("sessionId", q.Caller.SessionID)
			}
			if s.Generation != q.Caller.Generation {
				return staleGeneration("sync", s.SessionID)
			}
			me = s
		}
		sessions, err := allSessions(tx, false)
		if err != nil {
			return err
		}
		presence := map[string]string{}
		others := 0
		for i := range sessions {
			s := &sessions[i]
			p := Presence(s, now, r.Probe)
			presence[s.SessionID] = p
			if p == PresenceOffline {
				continue
			}
			out.Roster = append(out.Roster, RosterRow{SessionID: s.SessionID, ParticipantID: s.ParticipantID,
				ParentSessionID: s.ParentSessionID, Harness: s.Harness, Branch: s.Branch, Presence: p, PIDJudged: PIDJudged(s, r.Probe),
				Activity: ActivityOf(s)})
			if me == nil || s.SessionID != me.SessionID {
				others++
			}
		}
		if me != nil {
			if out.Attention, err = r.attentionFor(tx, me, now, sessions, presence); err != nil {
				return err
			}
		} else if others > 0 {
			others-- // a public reader counts the one live session as "the caller's"
		}
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		out.Solo = others == 0 && len(out.Attention) == 0 && len(claims) == 0
		// Sequences only grow, so a cursor this room returned is never past
		// its last event; one that is belongs to another log.
		last, err := tx.LastSequence()
		if err != nil {
			return err
		}
		if after > last {
			return protocol.Errorf(protocol.ReasonInvalidCursor,
				"cursor %s is past the end of this room's event log (last %s), so no sync of this room returned it; leave %s out to start from the beginning",
				q.Cursor, protocol.FormatSequence(last), protocol.Field("cursor")).With("cursor", q.Cursor)
		}
		events, err := tx.Events(after, limit)
		if err != nil {
			return err
		}
		for _, e := range events {
			out.Events = append(out.Events, publicEvent(e))
			out.Cursor = e.Sequence
		}
		if q.Scope == SyncScopeFull {
			if out.Snapshot, err = snapshot(tx, sessions, claims); err != nil {
				return err
			}
		}
		out.Damaged = tx.Damaged()
		for _, d := range out.Damaged {
			// A damaged event is skipped for good: the cursor moves past it,
			// so a run of them never holds a reader in place.
			if n, err := strconv.ParseInt(d.Key, 10, 64); err == nil && d.Table == "events" && protocol.FormatSequence(n) > out.Cursor {
				out.Cursor = protocol.FormatSequence(n)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &SyncResult{Delta: out}, nil
}

// publicEvent returns e without the payload values that name a generation
// (session.opened's replaced, claim releases' replacedGeneration, offers'
// targetGeneration, and any other key that says generation): a generation
// still current would let a reader act as that session.
func publicEvent(e protocol.Event) protocol.Event {
	p := make(map[string]any, len(e.Payload))
	for k, v := range e.Payload {
		if k == "replaced" || strings.Contains(strings.ToLower(k), "generation") {
			continue
		}
		p[k] = v
	}
	e.Payload = p
	e.Extensions = nil
	return e
}

func sessionRecord(s *protocol.Session) SessionRecord {
	return SessionRecord{SchemaVersion: s.SchemaVersion, SessionID: s.SessionID, ParticipantID: s.ParticipantID,
		WorkspaceID: s.WorkspaceID, Harness: s.Harness, State: s.State, ParentSessionID: s.ParentSessionID,
		CheckoutRoot: s.CheckoutRoot, Branch: s.Branch, PID: s.PID, PIDStartedAt: s.PIDStartedAt,
		Enforcement: s.Enforcement, Lifecycle: s.Lifecycle, HeartbeatCadenceMs: s.HeartbeatCadenceMs,
		StartedAt: s.StartedAt, HeartbeatAt: s.HeartbeatAt, Host: protocol.SessionHostOf(s)}
}

func claimRecord(c *protocol.Claim) ClaimRecord {
	return ClaimRecord{SchemaVersion: c.SchemaVersion, ClaimID: c.ClaimID, WorkspaceID: c.WorkspaceID,
		OwnerSessionID: c.OwnerSessionID, Resource: c.Resource, Mode: c.Mode, Enforcement: c.Enforcement,
		Reason: c.Reason, AcquiredAt: c.AcquiredAt, ExpiresAt: c.ExpiresAt}
}

// snapshot reads every record of the room; messages oldest first.
func snapshot(tx storage.ReadTx, sessions []protocol.Session, claims []protocol.Claim) (*Snapshot, error) {
	snap := &Snapshot{Participants: []protocol.Participant{}, Sessions: []SessionRecord{}, Intents: []protocol.Intent{},
		Claims: []ClaimRecord{}, Messages: []protocol.Message{}, Receipts: []protocol.Receipt{}}
	var err error
	if snap.Workspace, err = tx.Workspace(); err != nil {
		return nil, err
	}
	for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
		ps, err := tx.Participants(a)
		if err != nil {
			return nil, err
		}
		snap.Participants = append(snap.Participants, ps...)
		is, err := tx.Intents(a)
		if err != nil {
			return nil, err
		}
		snap.Intents = append(snap.Intents, is...)
	}
	for i := range sessions {
		snap.Sessions = append(snap.Sessions, sessionRecord(&sessions[i]))
	}
	for i := range claims {
		snap.Claims = append(snap.Claims, claimRecord(&claims[i]))
	}
	if err := tx.ScanMessages(storage.MessageQuery{}, func(m protocol.Message) bool {
		snap.Messages = append(snap.Messages, m)
		return true
	}); err != nil {
		return nil, err
	}
	slices.Reverse(snap.Messages)
	if err := tx.ScanReceipts(func(rc protocol.Receipt) bool {
		snap.Receipts = append(snap.Receipts, rc)
		return true
	}); err != nil {
		return nil, err
	}
	return snap, nil
}

// historyPage lists the workspace's messages as summaries, newest first,
// within the page limit and byte budget, like the inbox
// (docs/protocol.md#inbox-summary, docs/protocol.md#sync-scopes).
func (r *Room) historyPage(ctx context.Context, q SyncQuery) (*SyncResult, error) {
	limit, err := checkHistoryPageQuery(q)
	if err != nil {
		return nil, err
	}
	page := &HistoryPage{Scope: SyncScopeHistory, View: HistoryViewSummary, Items: []Summary{}}
	err = r.Store.View(ctx, func(tx storage.ReadTx) error {
		mq := storage.MessageQuery{Kind: q.Kind, HeadsOnly: q.Current}
		if q.Cursor != "" {
			// The anchor must belong to the list before the heads filter, so
			// a decision superseded between two pages still continues it.
			m, err := tx.Message(q.Cursor)
			if err != nil {
				return err
			}
			if m == nil || (q.Kind != "" && m.Kind != q.Kind) {
				return protocol.Errorf(protocol.ReasonInvalidCursor, "message cursor %s is not in this message list; start again without a cursor", q.Cursor)
			}
			mq.BeforeSentAt, mq.BeforeMessageID = m.SentAt, m.MessageID
		}
		views := newDecisionViews(tx)
		var scanErr error
		err := tx.ScanMessages(mq, func(m protocol.Message) bool {
			if len(page.Items) == limit {
				page.NextCursor = &page.Items[len(page.Items)-1].MessageID
				return false
			}
			s := Summarise(&m)
			if s.DecisionStatus, scanErr = views.of(&m); scanErr != nil {
				return false
			}
			if !page.fits(s) {
				if len(page.Items) == 0 {
					scanErr = protocol.Errorf(protocol.ReasonPageBudgetExceeded, "one message summary exceeds the page budget of %d bytes", PageBudgetBytes).With("messageId", m.MessageID)
					return false
				}
				page.NextCursor = &page.Items[len(page.Items)-1].MessageID
				return false
			}
			page.Items = append(page.Items, s)
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
	if page.NextCursor != nil {
		id := *page.NextCursor // not an alias into Items
		page.NextCursor = &id
	}
	return &SyncResult{History: page}, nil
}

// fits reports whether the page plus s, with s's id as the next cursor,
// serialises within PageBudgetBytes; the scope and view count
// (docs/protocol.md#inbox-summary).
func (p *HistoryPage) fits(s Summary) bool {
	next := s.MessageID
	b, err := protocol.MarshalIndent(HistoryPage{Scope: p.Scope, View: p.View, Items: append(p.Items[:len(p.Items):len(p.Items)], s), NextCursor: &next})
	return err == nil && len(b) <= PageBudgetBytes
}

// historyMessage is the exact history read: public, read-only, for any
// message of the workspace (a replaced decision too).
func (r *Room) historyMessage(ctx context.Context, q SyncQuery) (*SyncResult, error) {
	if err := checkHistoryMessageQuery(q); err != nil {
		return nil, err
	}
	out := &HistoryMessage{Scope: SyncScopeHistory, View: HistoryViewMessage, Receipts: []PublicReceipt{}}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		m, err := tx.Message(q.MessageID)
		if err != nil {
			return err
		}
		if m == nil {
			return protocol.Errorf(protocol.ReasonUnknownMessage,
				"message %s does not exist in this workspace; %s lists its messages", q.MessageID, protocol.Step{Command: protocol.StepHistory}).With("messageId", q.MessageID)
		}
		mv, err := newDecisionViews(tx).view(m)
		if err != nil {
			return err
		}
		out.Items = []MessageView{mv}
		rcs, err := tx.ReceiptsByMessage(m.MessageID)
		if err != nil {
			return err
		}
		for _, rc := range rcs {
			out.Receipts = append(out.Receipts, PublicReceipt{RecipientParticipantID: rc.RecipientParticipantID, State: rc.State, UpdatedAt: rc.UpdatedAt})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &SyncResult{Message: out}, nil
}

// checkHistoryPageQuery validates a history list query and returns its
// effective limit.
func checkHistoryPageQuery(q SyncQuery) (int, error) {
	if q.Kind != "" && !slices.Contains(protocol.MessageKinds, q.Kind) {
		return 0, protocol.Errorf(protocol.ReasonInvalidFlagValue, "%s %q is not one of %s", protocol.Field("kind"), q.Kind, strings.Join(protocol.MessageKinds, ", ")).With("type", q.Kind)
	}
	if q.Current && q.Kind != protocol.KindDecision {
		return 0, protocol.Errorf(protocol.ReasonSyncUsage, "%s lists decision heads; add %s", protocol.Field("current"), protocol.FieldValue{Name: "kind", Value: protocol.KindDecision})
	}
	limit, err := CheckLimit(q.Limit)
	if err != nil {
		return 0, err
	}
	if q.Cursor != "" && !protocol.IsPortableID(q.Cursor) {
		return 0, protocol.Errorf(protocol.ReasonInvalidCursor,
			"a history cursor is a message id (a previous page's nextCursor), not %q; start again without %s", q.Cursor, protocol.Field("cursor"))
	}
	return limit, nil
}

// checkHistoryMessageQuery validates an exact history read.
func checkHistoryMessageQuery(q SyncQuery) error {
	if q.Kind != "" || q.Cursor != "" || q.Limit != 0 || q.Current {
		return protocol.Errorf(protocol.ReasonSyncUsage, "%s reads one message; it cannot be combined with %s", protocol.Field("messageId"), protocol.FieldList{Conj: "or", Names: []string{"kind", "cursor", "limit", "current"}})
	}
	if !protocol.IsPortableID(q.MessageID) {
		return protocol.Errorf(protocol.ReasonInvalidInput, "%q is not a message id", q.MessageID)
	}
	return nil
}
