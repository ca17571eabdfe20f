package protocol

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"sync"
)

// SchemaVersion is the record schema every durable record carries.
const SchemaVersion = 3

// Enumerations (docs/protocol.md#records).
const (
	SourceConfig    = "config"
	SourceGit       = "git"
	SourceDirectory = "directory"

	ParticipantAgent = "agent"
	ParticipantHuman = "human"

	SessionOpen   = "open"
	SessionClosed = "closed"

	EnforcementAdvisory = "advisory"
	EnforcementGuarded  = "guarded"

	LifecycleManual  = "manual"
	LifecycleManaged = "managed"

	ClaimShared    = "shared"
	ClaimExclusive = "exclusive"

	KindNote     = "note"
	KindQuestion = "question"
	KindRequest  = "request"
	KindAnswer   = "answer"
	KindDecision = "decision"
	KindHandoff  = "handoff"

	ObligationNone        = "none"
	ObligationAcknowledge = "acknowledge"
	ObligationReply       = "reply"

	HandoffComplete = "complete"
	HandoffPartial  = "partial"
	HandoffBlocked  = "blocked"

	DecisionReplace  = "replace"
	DecisionWithdraw = "withdraw"
)

// MessageKinds lists the six message kinds.
var MessageKinds = []string{KindNote, KindQuestion, KindRequest, KindAnswer, KindDecision, KindHandoff}

// IntentModes and IntentStates list the intent enumerations (docs/protocol.md#intent).
var (
	IntentModes  = []string{"observe", "explore", "edit", "review", "coordinate", "wait"}
	IntentStates = []string{"active", "blocked", "waiting", "done"}
)

// Extensions is the one open object every record may carry.
type Extensions map[string]any

// Workspace is the durable workspace record (docs/protocol.md#workspace), written once by
// materialisation and never removed.
type Workspace struct {
	SchemaVersion int        `json:"schemaVersion"`
	WorkspaceID   string     `json:"workspaceId"`
	DisplayName   string     `json:"displayName"`
	Source        string     `json:"source"`
	Roots         []string   `json:"roots"`
	CreatedAt     string     `json:"createdAt"`
	Extensions    Extensions `json:"extensions,omitempty"`
}

// Validate checks every field rule.
func (w *Workspace) Validate() error {
	return firstErr(
		checkSchema("workspace", w.SchemaVersion),
		CheckPortableID("workspace.workspaceId", w.WorkspaceID),
		CheckLine("workspace.displayName", w.DisplayName, MaxLineText),
		CheckOneOf("workspace.source", w.Source, SourceConfig, SourceGit, SourceDirectory),
		checkList("workspace.roots", w.Roots, 1, func(f, s string) error { return CheckPath(f, s) }),
		checkTime("workspace.createdAt", w.CreatedAt),
	)
}

// Participant is a stable address for messages (docs/protocol.md#participant).
type Participant struct {
	SchemaVersion int        `json:"schemaVersion"`
	ParticipantID string     `json:"participantId"`
	WorkspaceID   string     `json:"workspaceId"`
	DisplayName   string     `json:"displayName"`
	Kind          string     `json:"kind"`
	CreatedAt     string     `json:"createdAt"`
	Extensions    Extensions `json:"extensions,omitempty"`
}

// Validate checks every field rule.
func (p *Participant) Validate() error {
	return firstErr(
		checkSchema("participant", p.SchemaVersion),
		CheckPortableID("participant.participantId", p.ParticipantID),
		CheckPortableID("participant.workspaceId", p.WorkspaceID),
		CheckLine("participant.displayName", p.DisplayName, MaxLineText),
		CheckOneOf("participant.kind", p.Kind, ParticipantAgent, ParticipantHuman),
		checkTime("participant.createdAt", p.CreatedAt),
	)
}

// Session is one client conversation in the room
// (docs/protocol.md#session-and-generation). Generation is the
// secret proof of ownership; it is never shown by status or sent to peers.
//
// PIDStartedAt is acc's addition to the session record of
// docs/protocol.md#session-and-generation: the start time of
// the process PID named when it was recorded, so a reused pid is never taken
// for the client (docs/decisions.md#18-details-the-original-left-open).
//
// Where the session's process runs is kept in its extensions under
// ExtHost (SessionHostOf, SetSessionHost), so that a record carrying it
// stays readable by an acc built before it was recorded.
type Session struct {
	SchemaVersion      int        `json:"schemaVersion"`
	SessionID          string     `json:"sessionId"`
	ParticipantID      string     `json:"participantId"`
	WorkspaceID        string     `json:"workspaceId"`
	Generation         string     `json:"generation"`
	Harness            string     `json:"harness"`
	State              string     `json:"state"`
	ParentSessionID    *string    `json:"parentSessionId"`
	CheckoutRoot       *string    `json:"checkoutRoot"`
	Branch             *string    `json:"branch"`
	PID                *int       `json:"pid"`
	PIDStartedAt       *string    `json:"pidStartedAt"`
	Enforcement        string     `json:"enforcement"`
	Lifecycle          string     `json:"lifecycle"`
	HeartbeatCadenceMs int64      `json:"heartbeatCadenceMs"`
	StartedAt          string     `json:"startedAt"`
	HeartbeatAt        string     `json:"heartbeatAt"`
	Extensions         Extensions `json:"extensions,omitempty"`
}

// SessionHost says where a session's process runs
// (docs/protocol.md#session-and-generation): the machine, its current boot
// and the PID namespace whose numbers the session's pid is in. Each field
// is line text of at most MaxLineText code points, read from the running
// system; one that could not be read is empty and left out, never made
// up. Two records name the same PID numbering only when bootId is known
// and machineId, bootId and pidNamespace are each equal.
type SessionHost struct {
	// Name is the host name (os.Hostname), for people only: it proves
	// nothing, since two machines may share one.
	Name string `json:"name,omitempty"`
	// MachineID is the machine's id (Linux: /etc/machine-id, else
	// /var/lib/dbus/machine-id).
	MachineID string `json:"machineId,omitempty"`
	// BootID is the id of the machine's current boot (Linux:
	// /proc/sys/kernel/random/boot_id), new at every boot.
	BootID string `json:"bootId,omitempty"`
	// PIDNamespace names the PID namespace of the recording process
	// (Linux: the target of /proc/self/ns/pid, "pid:[4026531836]").
	PIDNamespace string `json:"pidNamespace,omitempty"`
}

// ExtHost is the session extension holding its SessionHost.
const ExtHost = "acc.host"

// SessionHostOf returns where s says it runs: nil when it says nothing (a
// record written before sessions said where they run), and an empty host —
// which names no machine, so no pid is judged by it — when the extension
// is there but is not a valid SessionHost.
func SessionHostOf(s *Session) *SessionHost {
	v, found := s.Extensions[ExtHost]
	if !found {
		return nil
	}
	var h SessionHost
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &h) != nil || h.Validate() != nil {
		return &SessionHost{}
	}
	return &h
}

// SetSessionHost records h on s (ExtHost); nil removes it.
func SetSessionHost(s *Session, h *SessionHost) {
	if h == nil {
		delete(s.Extensions, ExtHost)
		return
	}
	if s.Extensions == nil {
		s.Extensions = Extensions{}
	}
	m := map[string]any{}
	for k, v := range map[string]string{"name": h.Name, "machineId": h.MachineID, "bootId": h.BootID, "pidNamespace": h.PIDNamespace} {
		if v != "" {
			m[k] = v
		}
	}
	s.Extensions[ExtHost] = m
}

// Validate checks each field that is present: line text of at most
// MaxLineText code points (exit 4, invalid_input, naming the field).
func (h *SessionHost) Validate() error {
	check := func(field, v string) error {
		if v == "" {
			return nil
		}
		return CheckLine("session.host."+field, v, MaxLineText)
	}
	return firstErr(check("name", h.Name), check("machineId", h.MachineID), check("bootId", h.BootID),
		check("pidNamespace", h.PIDNamespace))
}

// Validate checks every field rule.
func (s *Session) Validate() error {
	var pid, parent, root, branch, pidStart error
	if s.PID != nil && *s.PID <= 0 {
		pid = Errorf(ReasonInvalidInput, "session.pid must be a positive integer")
	}
	if s.ParentSessionID != nil {
		parent = CheckPortableID("session.parentSessionId", *s.ParentSessionID)
	}
	if s.CheckoutRoot != nil {
		root = CheckPath("session.checkoutRoot", *s.CheckoutRoot)
	}
	if s.Branch != nil {
		branch = CheckLine("session.branch", *s.Branch, MaxLineText)
	}
	if s.PIDStartedAt != nil {
		pidStart = checkTime("session.pidStartedAt", *s.PIDStartedAt)
	}
	var cadence error
	if s.HeartbeatCadenceMs <= 0 {
		cadence = Errorf(ReasonInvalidInput, "session.heartbeatCadenceMs must be a positive integer")
	}
	return firstErr(
		checkSchema("session", s.SchemaVersion),
		CheckPortableID("session.sessionId", s.SessionID),
		CheckPortableID("session.participantId", s.ParticipantID),
		CheckPortableID("session.workspaceId", s.WorkspaceID),
		CheckPortableID("session.generation", s.Generation),
		CheckPortableID("session.harness", s.Harness),
		CheckOneOf("session.state", s.State, SessionOpen, SessionClosed),
		parent, root, branch, pid, pidStart,
		CheckOneOf("session.enforcement", s.Enforcement, EnforcementAdvisory, EnforcementGuarded),
		CheckOneOf("session.lifecycle", s.Lifecycle, LifecycleManual, LifecycleManaged),
		cadence,
		checkTime("session.startedAt", s.StartedAt),
		checkTime("session.heartbeatAt", s.HeartbeatAt),
	)
}

// Intent is a session's published awareness of what it is doing (docs/protocol.md#intent).
type Intent struct {
	SchemaVersion int        `json:"schemaVersion"`
	SessionID     string     `json:"sessionId"`
	WorkspaceID   string     `json:"workspaceId"`
	Summary       string     `json:"summary"`
	Mode          string     `json:"mode"`
	ResourceHints []string   `json:"resourceHints"`
	State         string     `json:"state"`
	UpdatedAt     string     `json:"updatedAt"`
	Extensions    Extensions `json:"extensions,omitempty"`
}

// Validate checks every field rule.
func (i *Intent) Validate() error {
	return firstErr(
		checkSchema("intent", i.SchemaVersion),
		CheckPortableID("intent.sessionId", i.SessionID),
		CheckPortableID("intent.workspaceId", i.WorkspaceID),
		CheckLine("intent.summary", i.Summary, MaxIntentText),
		CheckOneOf("intent.mode", i.Mode, IntentModes...),
		checkList("intent.resourceHints", i.ResourceHints, 0, CheckResource),
		CheckOneOf("intent.state", i.State, IntentStates...),
		checkTime("intent.updatedAt", i.UpdatedAt),
	)
}

// Claim reserves a resource for one session (docs/protocol.md#claim).
type Claim struct {
	SchemaVersion  int        `json:"schemaVersion"`
	ClaimID        string     `json:"claimId"`
	WorkspaceID    string     `json:"workspaceId"`
	OwnerSessionID string     `json:"ownerSessionId"`
	Resource       string     `json:"resource"`
	Mode           string     `json:"mode"`
	Enforcement    string     `json:"enforcement"`
	Reason         string     `json:"reason"`
	AcquiredAt     string     `json:"acquiredAt"`
	ExpiresAt      string     `json:"expiresAt"`
	Generation     string     `json:"generation"`
	Extensions     Extensions `json:"extensions,omitempty"`
}

// Validate checks every field rule.
func (c *Claim) Validate() error {
	return firstErr(
		checkSchema("claim", c.SchemaVersion),
		CheckPortableID("claim.claimId", c.ClaimID),
		CheckPortableID("claim.workspaceId", c.WorkspaceID),
		CheckPortableID("claim.ownerSessionId", c.OwnerSessionID),
		CheckResource("claim.resource", c.Resource),
		CheckOneOf("claim.mode", c.Mode, ClaimShared, ClaimExclusive),
		CheckOneOf("claim.enforcement", c.Enforcement, EnforcementAdvisory, EnforcementGuarded),
		CheckLine("claim.reason", c.Reason, MaxLineText),
		checkTime("claim.acquiredAt", c.AcquiredAt),
		checkTime("claim.expiresAt", c.ExpiresAt),
		CheckPortableID("claim.generation", c.Generation),
	)
}

// ArtifactRef points at something a message refers to (docs/protocol.md#message).
type ArtifactRef struct {
	Kind        string  `json:"kind"`
	URI         string  `json:"uri"`
	Description string  `json:"description"`
	SHA256      *string `json:"sha256,omitempty"`
}

var sha256Pattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// Validate checks every field rule.
func (a *ArtifactRef) Validate(field string) error {
	var sum error
	if a.SHA256 != nil && !sha256Pattern().MatchString(*a.SHA256) {
		sum = Errorf(ReasonInvalidInput, "%s.sha256 must be 64 lowercase hex digits", field)
	}
	return firstErr(
		CheckOneOf(field+".kind", a.Kind, "file", "git", "url", "report", "image", "data"),
		CheckResource(field+".uri", a.URI),
		CheckLine(field+".description", a.Description, MaxLineText),
		sum,
	)
}

// HandoffPayload is the structured part of a handoff (docs/protocol.md#message,
// docs/protocol.md#handoff).
type HandoffPayload struct {
	Status       string        `json:"status"`
	Completed    []string      `json:"completed"`
	Remaining    []string      `json:"remaining"`
	Blockers     []string      `json:"blockers"`
	Verification []ArtifactRef `json:"verification"`
}

// Validate checks every field rule.
func (h *HandoffPayload) Validate() error {
	line := func(f, s string) error { return CheckLine(f, s, MaxLineText) }
	errs := []error{
		CheckOneOf("message.handoff.status", h.Status, HandoffComplete, HandoffPartial, HandoffBlocked),
		checkList("message.handoff.completed", h.Completed, 0, line),
		checkList("message.handoff.remaining", h.Remaining, 0, line),
		checkList("message.handoff.blockers", h.Blockers, 0, line),
	}
	if h.Verification == nil {
		errs = append(errs, Errorf(ReasonInvalidInput, "message.handoff.verification must be a list"))
	}
	for i := range h.Verification {
		errs = append(errs, h.Verification[i].Validate(fmt.Sprintf("message.handoff.verification[%d]", i)))
	}
	return firstErr(errs...)
}

// DecisionChange links a decision to the decisions it replaces or withdraws
// (docs/protocol.md#decisions). MessageIDs are 1..16 unique ids, stored sorted.
type DecisionChange struct {
	Action     string   `json:"action"`
	MessageIDs []string `json:"messageIds"`
}

// Validate checks every field rule.
func (d *DecisionChange) Validate() error {
	if err := CheckOneOf("message.decisionChange.action", d.Action, DecisionReplace, DecisionWithdraw); err != nil {
		return err
	}
	if n := len(d.MessageIDs); n < 1 || n > 16 {
		return Errorf(ReasonInvalidInput, "a decision change names 1 to 16 decisions, not %d", n)
	}
	seen := map[string]bool{}
	for _, id := range d.MessageIDs {
		if err := CheckPortableID("message.decisionChange.messageIds", id); err != nil {
			return err
		}
		if seen[id] {
			return Errorf(ReasonInvalidInput, "decision %s is named twice", id)
		}
		seen[id] = true
	}
	if !sort.StringsAreSorted(d.MessageIDs) {
		return Errorf(ReasonInvalidInput, "message.decisionChange.messageIds must be sorted")
	}
	return nil
}

// Message is a durable, attributed message (docs/protocol.md#message). An empty ToParticipantIDs
// is a room record.
type Message struct {
	SchemaVersion     int             `json:"schemaVersion"`
	MessageID         string          `json:"messageId"`
	ThreadID          string          `json:"threadId"`
	ClientMessageID   string          `json:"clientMessageId"`
	WorkspaceID       string          `json:"workspaceId"`
	FromParticipantID string          `json:"fromParticipantId"`
	FromSessionID     string          `json:"fromSessionId"`
	ToParticipantIDs  []string        `json:"toParticipantIds"`
	Kind              string          `json:"kind"`
	Obligation        string          `json:"obligation"`
	Subject           string          `json:"subject"`
	Body              string          `json:"body"`
	InReplyTo         *string         `json:"inReplyTo"`
	Artifacts         []ArtifactRef   `json:"artifacts"`
	Handoff           *HandoffPayload `json:"handoff"`
	SentAt            string          `json:"sentAt"`
	DecisionChange    *DecisionChange `json:"decisionChange,omitempty"`
	Extensions        Extensions      `json:"extensions,omitempty"`
}

// IsRoom reports whether m is a room record (no addressed recipients).
func (m *Message) IsRoom() bool { return len(m.ToParticipantIDs) == 0 }

// CheckKindObligation applies the rules of docs/protocol.md#kinds-and-obligations to a message's kind and
// obligation: a room message (no addressed recipient) is a note, decision
// or handoff with obligation none, and each kind carries only its valid
// obligations. Errors are exit 4 invalid_input.
func CheckKindObligation(kind, obligation string, room bool) error {
	if room {
		switch kind {
		case KindNote, KindDecision, KindHandoff:
		default:
			return Errorf(ReasonInvalidInput, "a room message cannot have kind %s; address it to a participant", kind)
		}
		if obligation != ObligationNone {
			return Errorf(ReasonInvalidInput, "a room message cannot carry obligation %s", obligation)
		}
	}
	for _, o := range ValidObligations[kind] {
		if o == obligation {
			return nil
		}
	}
	return Errorf(ReasonInvalidInput, "a %s cannot carry obligation %s", kind, obligation)
}

// ValidObligations maps each kind to the obligations it may carry
// (docs/protocol.md#kinds-and-obligations).
var ValidObligations = map[string][]string{
	KindNote:     {ObligationNone},
	KindQuestion: {ObligationReply},
	KindRequest:  {ObligationReply},
	KindAnswer:   {ObligationNone},
	KindDecision: {ObligationNone, ObligationAcknowledge},
	KindHandoff:  {ObligationAcknowledge, ObligationNone},
}

// DefaultObligation returns the obligation a kind carries when none is given.
func DefaultObligation(kind string, room bool) string {
	switch kind {
	case KindQuestion, KindRequest:
		return ObligationReply
	case KindHandoff:
		if room {
			return ObligationNone
		}
		return ObligationAcknowledge
	}
	return ObligationNone
}

// Validate checks every field rule and the semantic rules of
// docs/protocol.md#message-rules.
func (m *Message) Validate() error {
	errs := []error{
		checkSchema("message", m.SchemaVersion),
		CheckPortableID("message.messageId", m.MessageID),
		CheckPortableID("message.threadId", m.ThreadID),
		CheckPortableID("message.clientMessageId", m.ClientMessageID),
		CheckPortableID("message.workspaceId", m.WorkspaceID),
		CheckPortableID("message.fromParticipantId", m.FromParticipantID),
		CheckPortableID("message.fromSessionId", m.FromSessionID),
		checkList("message.toParticipantIds", m.ToParticipantIDs, 0, CheckPortableID),
		CheckOneOf("message.kind", m.Kind, MessageKinds...),
		CheckOneOf("message.obligation", m.Obligation, ObligationNone, ObligationAcknowledge, ObligationReply),
		CheckLine("message.subject", m.Subject, MaxLineText),
		CheckProse("message.body", m.Body, MaxProseText),
		checkTime("message.sentAt", m.SentAt),
	}
	if m.InReplyTo != nil {
		errs = append(errs, CheckPortableID("message.inReplyTo", *m.InReplyTo))
	}
	if m.Artifacts == nil {
		errs = append(errs, Errorf(ReasonInvalidInput, "message.artifacts must be a list"))
	}
	for i := range m.Artifacts {
		errs = append(errs, m.Artifacts[i].Validate(fmt.Sprintf("message.artifacts[%d]", i)))
	}
	if m.Handoff != nil {
		errs = append(errs, m.Handoff.Validate())
	}
	if m.DecisionChange != nil {
		errs = append(errs, m.DecisionChange.Validate())
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	return m.checkSemantics()
}

func (m *Message) checkSemantics() error {
	seen := map[string]bool{}
	for _, to := range m.ToParticipantIDs {
		if seen[to] {
			return Errorf(ReasonDuplicateRecipient, "a participant may be addressed only once (%s)", to)
		}
		seen[to] = true
	}
	room := m.IsRoom()
	if err := CheckKindObligation(m.Kind, m.Obligation, room); err != nil {
		return err
	}
	if m.InReplyTo == nil {
		if m.ThreadID != m.MessageID {
			return Errorf(ReasonInvalidInput, "a thread root must have threadId equal to its messageId")
		}
		if m.Kind == KindAnswer {
			return Errorf(ReasonInvalidInput, "an answer must reply to a message")
		}
	} else if m.ThreadID == m.MessageID {
		return Errorf(ReasonInvalidInput, "a reply cannot start its own thread")
	}
	if m.Kind == KindHandoff {
		if m.Handoff == nil {
			return Errorf(ReasonInvalidInput, "a handoff needs its structured payload")
		}
		if !room && m.Obligation != ObligationAcknowledge {
			return Errorf(ReasonInvalidInput, "an addressed handoff carries obligation acknowledge")
		}
	} else if m.Handoff != nil {
		return Errorf(ReasonInvalidInput, "only a handoff carries a handoff payload")
	}
	if m.DecisionChange != nil && m.Kind != KindDecision {
		return Errorf(ReasonInvalidInput, "only a decision carries a decision change")
	}
	return nil
}

// Receipt states (docs/protocol.md#receipt-states).
const (
	ReceiptQueued       = "queued"
	ReceiptOffered      = "offered"
	ReceiptRetrieved    = "retrieved"
	ReceiptAcknowledged = "acknowledged"
)

// ReceiptStates lists the receipt states in their only order.
var ReceiptStates = []string{ReceiptQueued, ReceiptOffered, ReceiptRetrieved, ReceiptAcknowledged}

// Receipt is one recipient's progress on one message (docs/protocol.md#receipt).
type Receipt struct {
	SchemaVersion          int        `json:"schemaVersion"`
	MessageID              string     `json:"messageId"`
	WorkspaceID            string     `json:"workspaceId"`
	RecipientParticipantID string     `json:"recipientParticipantId"`
	State                  string     `json:"state"`
	UpdatedAt              string     `json:"updatedAt"`
	Extensions             Extensions `json:"extensions,omitempty"`
}

// Validate checks every field rule.
func (r *Receipt) Validate() error {
	return firstErr(
		checkSchema("receipt", r.SchemaVersion),
		CheckPortableID("receipt.messageId", r.MessageID),
		CheckPortableID("receipt.workspaceId", r.WorkspaceID),
		CheckPortableID("receipt.recipientParticipantId", r.RecipientParticipantID),
		CheckOneOf("receipt.state", r.State, ReceiptStates...),
		checkTime("receipt.updatedAt", r.UpdatedAt),
	)
}

func receiptRank(s string) int {
	for i, st := range ReceiptStates {
		if st == s {
			return i
		}
	}
	return -1
}

// ReceiptTransition decides a receipt move from one state to another: it
// returns changed=false for a same-state no-op, an exit-5
// illegal_receipt_transition error for a backward move, and an exit-4 error
// for an unknown state. Forward skips (queued → retrieved) are allowed.
func ReceiptTransition(from, to string) (changed bool, err error) {
	a, b := receiptRank(from), receiptRank(to)
	if a < 0 || b < 0 {
		return false, Errorf(ReasonInvalidInput, "unknown receipt state %q or %q", from, to)
	}
	if a == b {
		return false, nil
	}
	if b < a {
		return false, Errorf(ReasonIllegalReceiptTransition, "illegal receipt transition from %s to %s", from, to)
	}
	return true, nil
}

// Event types (docs/protocol.md#event).
const (
	EventWorkspaceMaterialised = "workspace.materialised"
	EventSessionOpened         = "session.opened"
	EventSessionClosed         = "session.closed"
	EventIntentPublished       = "intent.published"
	EventIntentCleared         = "intent.cleared"
	EventClaimAcquired         = "claim.acquired"
	EventClaimRenewed          = "claim.renewed"
	EventClaimReleased         = "claim.released"
	EventClaimForceReleased    = "claim.force_released"
	// EventClaimTakenOver ends a claim whose owner's process was gone past
	// the workspace's orphan grace, when another session claimed over it.
	EventClaimTakenOver        = "claim.taken_over"
	EventMessageRecorded       = "message.recorded"
	EventMessageOffered        = "message.offered"
	EventMessageRetrieved      = "message.retrieved"
	EventMessageAcknowledged   = "message.acknowledged"
	EventMessageOfferSucceeded = "message.offer_succeeded"
	EventMessageOfferFailed    = "message.offer_failed"
)

// EventTypes lists every accepted event type.
var EventTypes = []string{
	EventWorkspaceMaterialised, EventSessionOpened, EventSessionClosed, EventIntentPublished,
	EventIntentCleared, EventClaimAcquired, EventClaimRenewed, EventClaimReleased,
	EventClaimForceReleased, EventClaimTakenOver, EventMessageRecorded, EventMessageOffered, EventMessageRetrieved,
	EventMessageAcknowledged, EventMessageOfferSucceeded, EventMessageOfferFailed,
}

// Event is one immutable entry of the workspace's append-only log (docs/protocol.md#event).
// Sequence is 16 zero-padded decimal digits, gap-free from 0000000000000001.
type Event struct {
	SchemaVersion  int            `json:"schemaVersion"`
	Sequence       string         `json:"sequence"`
	EventID        string         `json:"eventId"`
	WorkspaceID    string         `json:"workspaceId"`
	ActorSessionID string         `json:"actorSessionId"`
	Type           string         `json:"type"`
	OccurredAt     string         `json:"occurredAt"`
	Payload        map[string]any `json:"payload"`
	Extensions     Extensions     `json:"extensions,omitempty"`
}

var sequencePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{16}$`) })

// IsSequence reports whether s is a 16-digit event cursor.
func IsSequence(s string) bool { return sequencePattern().MatchString(s) }

// FormatSequence renders n as a 16-digit cursor.
func FormatSequence(n int64) string { return fmt.Sprintf("%016d", n) }

// Validate checks every field rule.
func (e *Event) Validate() error {
	var seq, payload error
	if !IsSequence(e.Sequence) {
		seq = Errorf(ReasonInvalidInput, "event.sequence must be 16 decimal digits")
	}
	if e.Payload == nil {
		payload = Errorf(ReasonInvalidInput, "event.payload must be an object")
	}
	return firstErr(
		checkSchema("event", e.SchemaVersion),
		seq,
		CheckPortableID("event.eventId", e.EventID),
		CheckPortableID("event.workspaceId", e.WorkspaceID),
		CheckPortableID("event.actorSessionId", e.ActorSessionID),
		CheckOneOf("event.type", e.Type, EventTypes...),
		checkTime("event.occurredAt", e.OccurredAt),
		payload,
	)
}

func checkSchema(kind string, v int) error {
	if v != SchemaVersion {
		return Errorf(ReasonInvalidRecord, "%s has an unknown schemaVersion %d (this acc reads %d)", kind, v, SchemaVersion)
	}
	return nil
}

func checkTime(field, s string) error {
	if !IsTimestamp(s) {
		return Errorf(ReasonInvalidInput, "%s %q must be a UTC timestamp with milliseconds", field, s)
	}
	return nil
}

func checkList(field string, list []string, min int, check func(field, s string) error) error {
	if list == nil {
		return Errorf(ReasonInvalidInput, "%s must be a list", field)
	}
	if len(list) < min {
		return Errorf(ReasonInvalidInput, "%s needs at least %d entries", field, min)
	}
	for _, s := range list {
		if err := check(field, s); err != nil {
			return err
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
