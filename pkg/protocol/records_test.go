package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const (
	testTime = "2026-09-04T09:00:00.000Z"
	testWS   = "workspace_test"
)

func ptr[T any](v T) *T { return &v }

func validWorkspace() *Workspace {
	return &Workspace{SchemaVersion: 3, WorkspaceID: testWS, DisplayName: "repo", Source: SourceGit, Roots: []string{"/src/repo"}, CreatedAt: testTime}
}

func validParticipant() *Participant {
	return &Participant{SchemaVersion: 3, ParticipantID: "claude-5P8POZ", WorkspaceID: testWS, DisplayName: "claude-5P8POZ", Kind: ParticipantAgent, CreatedAt: testTime}
}

func validSession() *Session {
	return &Session{
		SchemaVersion: 3, SessionID: "session_a", ParticipantID: "claude-5P8POZ", WorkspaceID: testWS,
		Generation: "generation_a", Harness: "claude", State: SessionOpen,
		ParentSessionID: ptr("session_parent"), CheckoutRoot: ptr("/src/repo"), Branch: ptr("main"),
		PID: ptr(4242), PIDStartedAt: ptr(testTime),
		Enforcement: EnforcementAdvisory, Lifecycle: LifecycleManaged, HeartbeatCadenceMs: 60000,
		StartedAt: testTime, HeartbeatAt: testTime,
	}
}

// testHost is a host record as Linux gives it.
var testHost = SessionHost{Name: "vm", MachineID: "3d1219c7c4c5404aaa1f6d2a48adfda4",
	BootID: "3783cf27-4879-417b-9d5d-74afd943c34d", PIDNamespace: "pid:[4026531836]"}

func validIntent() *Intent {
	return &Intent{SchemaVersion: 3, SessionID: "session_a", WorkspaceID: testWS, Summary: "fix the parser", Mode: "edit",
		ResourceHints: []string{"file:src/parser/**"}, State: "active", UpdatedAt: testTime}
}

func validClaim() *Claim {
	return &Claim{SchemaVersion: 3, ClaimID: "claim_a", WorkspaceID: testWS, OwnerSessionID: "session_a", Resource: "file:src/a.go",
		Mode: ClaimExclusive, Enforcement: EnforcementAdvisory, Reason: "unspecified", AcquiredAt: testTime,
		ExpiresAt: "2026-09-04T09:30:00.000Z", Generation: "generation_c"}
}

// validMessage is an addressed root note.
func validMessage() *Message {
	return &Message{
		SchemaVersion: 3, MessageID: "message_a", ThreadID: "message_a", ClientMessageID: "client_a", WorkspaceID: testWS,
		FromParticipantID: "claude-5P8POZ", FromSessionID: "session_a", ToParticipantIDs: []string{"codex-fbqX8o"},
		Kind: KindNote, Obligation: ObligationNone, Subject: "hello", Body: "line one\nline two",
		Artifacts: []ArtifactRef{{Kind: "file", URI: "file:src/a.go", Description: "the file", SHA256: ptr(strings.Repeat("ab", 32))}},
		SentAt:    testTime,
	}
}

func validHandoff() *HandoffPayload {
	return &HandoffPayload{Status: HandoffPartial, Completed: []string{"parser"}, Remaining: []string{"tests"}, Blockers: []string{},
		Verification: []ArtifactRef{{Kind: "report", URI: "file:report.txt", Description: "go test output"}}}
}

func validReceipt() *Receipt {
	return &Receipt{SchemaVersion: 3, MessageID: "message_a", WorkspaceID: testWS, RecipientParticipantID: "codex-fbqX8o", State: ReceiptQueued, UpdatedAt: testTime}
}

func validEvent() *Event {
	return &Event{SchemaVersion: 3, Sequence: "0000000000000001", EventID: "event_a", WorkspaceID: testWS, ActorSessionID: "session_a",
		Type: EventMessageRecorded, OccurredAt: testTime, Payload: map[string]any{"messageId": "message_a"}}
}

type validator interface{ Validate() error }

// breakCase mutates a valid record so that exactly one rule is broken; want
// is a fragment of the expected error message.
type breakCase[T validator] struct {
	name   string
	mutate func(T)
	want   string
}

func runBreaks[T validator](t *testing.T, valid func() T, cases []breakCase[T]) {
	t.Helper()
	if err := valid().Validate(); err != nil {
		t.Fatalf("the valid example is refused: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := valid()
			c.mutate(r)
			err := r.Validate()
			if err == nil {
				t.Fatalf("accepted")
			}
			if CodeOf(err) != ExitData {
				t.Errorf("exit %d (%s), want %d", CodeOf(err), AsError(err).Reason, ExitData)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestWorkspaceValidate(t *testing.T) {
	runBreaks(t, validWorkspace, []breakCase[*Workspace]{
		{"schemaVersion", func(w *Workspace) { w.SchemaVersion = 2 }, "schemaVersion"},
		{"workspaceId", func(w *Workspace) { w.WorkspaceID = "-bad" }, "workspace.workspaceId"},
		{"displayName", func(w *Workspace) { w.DisplayName = "" }, "workspace.displayName"},
		{"source", func(w *Workspace) { w.Source = "svn" }, "workspace.source"},
		{"roots nil", func(w *Workspace) { w.Roots = nil }, "workspace.roots"},
		{"roots empty", func(w *Workspace) { w.Roots = []string{} }, "workspace.roots"},
		{"root bad", func(w *Workspace) { w.Roots = []string{"/a\x00"} }, "workspace.roots"},
		{"createdAt", func(w *Workspace) { w.CreatedAt = "2026-09-04T09:00:00Z" }, "workspace.createdAt"},
	})
}

func TestParticipantValidate(t *testing.T) {
	runBreaks(t, validParticipant, []breakCase[*Participant]{
		{"schemaVersion", func(p *Participant) { p.SchemaVersion = 4 }, "schemaVersion"},
		{"participantId", func(p *Participant) { p.ParticipantID = "con" }, "participant.participantId"},
		{"workspaceId", func(p *Participant) { p.WorkspaceID = "" }, "participant.workspaceId"},
		{"displayName", func(p *Participant) { p.DisplayName = "a\nb" }, "participant.displayName"},
		{"kind", func(p *Participant) { p.Kind = "robot" }, "participant.kind"},
		{"createdAt", func(p *Participant) { p.CreatedAt = "yesterday" }, "participant.createdAt"},
	})
}

func TestSessionValidate(t *testing.T) {
	// The nullable fields may all be null.
	s := validSession()
	s.ParentSessionID, s.CheckoutRoot, s.Branch, s.PID, s.PIDStartedAt = nil, nil, nil, nil, nil
	if err := s.Validate(); err != nil {
		t.Fatalf("session with null optional fields refused: %v", err)
	}
	runBreaks(t, validSession, []breakCase[*Session]{
		{"schemaVersion", func(s *Session) { s.SchemaVersion = 0 }, "schemaVersion"},
		{"sessionId", func(s *Session) { s.SessionID = "a." }, "session.sessionId"},
		{"participantId", func(s *Session) { s.ParticipantID = "a b" }, "session.participantId"},
		{"workspaceId", func(s *Session) { s.WorkspaceID = "" }, "session.workspaceId"},
		{"generation", func(s *Session) { s.Generation = "" }, "session.generation"},
		{"harness", func(s *Session) { s.Harness = "claude code" }, "session.harness"},
		{"state", func(s *Session) { s.State = "gone" }, "session.state"},
		{"parentSessionId", func(s *Session) { s.ParentSessionID = ptr("") }, "session.parentSessionId"},
		{"checkoutRoot", func(s *Session) { s.CheckoutRoot = ptr("") }, "session.checkoutRoot"},
		{"checkoutRoot long", func(s *Session) { s.CheckoutRoot = ptr("/" + strings.Repeat("x", MaxPathBytes)) }, "session.checkoutRoot"},
		{"branch", func(s *Session) { s.Branch = ptr(" ") }, "session.branch"},
		{"pid zero", func(s *Session) { s.PID = ptr(0) }, "session.pid"},
		{"pid negative", func(s *Session) { s.PID = ptr(-1) }, "session.pid"},
		{"pidStartedAt", func(s *Session) { s.PIDStartedAt = ptr("now") }, "session.pidStartedAt"},
		{"enforcement", func(s *Session) { s.Enforcement = "strict" }, "session.enforcement"},
		{"lifecycle", func(s *Session) { s.Lifecycle = "owned" }, "session.lifecycle"},
		{"heartbeatCadenceMs", func(s *Session) { s.HeartbeatCadenceMs = 0 }, "session.heartbeatCadenceMs"},
		{"startedAt", func(s *Session) { s.StartedAt = "" }, "session.startedAt"},
		{"heartbeatAt", func(s *Session) { s.HeartbeatAt = "2026-09-04T09:00:00.000+00:00" }, "session.heartbeatAt"},
	})
	hostBreaks := []struct {
		name, field string
		edit        func(h *SessionHost)
	}{
		{"name blank", "session.host.name", func(h *SessionHost) { h.Name = " " }},
		{"machineId control", "session.host.machineId", func(h *SessionHost) { h.MachineID = "ab\ncd" }},
		{"bootId long", "session.host.bootId", func(h *SessionHost) { h.BootID = strings.Repeat("b", MaxLineText+1) }},
		{"pidNamespace invalid UTF-8", "session.host.pidNamespace", func(h *SessionHost) { h.PIDNamespace = "pid:[\xff]" }},
	}
	for _, c := range hostBreaks {
		h := testHost
		c.edit(&h)
		if err := h.Validate(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("host %s: %v; want a refusal naming %s", c.name, err, c.field)
		}
	}
	if err := (&SessionHost{}).Validate(); err != nil {
		t.Errorf("an empty host record (nothing could be read) refused: %v", err)
	}
}

// TestSessionHostRoundTrip: where a session runs is kept in its
// extensions (ExtHost), so a record carrying it stays one an acc built
// before it can decode; a record without it has no host (nil), and one
// whose host extension is not a valid host has an empty one, which names
// no machine.
func TestSessionHostRoundTrip(t *testing.T) {
	s := validSession()
	SetSessionHost(s, &testHost)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"extensions":{"acc.host":{"bootId":"3783cf27-4879-417b-9d5d-74afd943c34d","machineId":"3d1219c7c4c5404aaa1f6d2a48adfda4","name":"vm","pidNamespace":"pid:[4026531836]"}}`) {
		t.Fatalf("host encodes as %s", raw)
	}
	var back Session
	if err := DecodeRecord("session", raw, &back); err != nil || SessionHostOf(&back) == nil || *SessionHostOf(&back) != testHost {
		t.Fatalf("round trip: %v, %+v", err, SessionHostOf(&back))
	}
	SetSessionHost(s, &SessionHost{BootID: "b"})
	if raw, _ = json.Marshal(s); !strings.Contains(string(raw), `"acc.host":{"bootId":"b"}`) {
		t.Fatalf("empty host fields are not left out: %s", raw)
	}
	SetSessionHost(s, nil)
	if raw, _ = json.Marshal(s); strings.Contains(string(raw), `acc.host`) {
		t.Fatalf("a session without a host record writes one: %s", raw)
	}
	var legacy Session
	if err := DecodeRecord("session", raw, &legacy); err != nil || SessionHostOf(&legacy) != nil {
		t.Fatalf("a record without host: %v, %+v", err, SessionHostOf(&legacy))
	}
	for _, bad := range []any{"vm", map[string]any{"bootId": 7}, map[string]any{"bootId": "b", "machineId": "a\nb"}} {
		s.Extensions = Extensions{ExtHost: bad}
		if h := SessionHostOf(s); h == nil || *h != (SessionHost{}) {
			t.Errorf("host extension %v reads as %+v; want an empty host", bad, h)
		}
	}
}

func TestIntentValidate(t *testing.T) {
	for _, mode := range []string{"observe", "explore", "edit", "review", "coordinate", "wait"} {
		i := validIntent()
		i.Mode = mode
		if err := i.Validate(); err != nil {
			t.Errorf("mode %s refused: %v", mode, err)
		}
	}
	for _, state := range []string{"active", "blocked", "waiting", "done"} {
		i := validIntent()
		i.State = state
		if err := i.Validate(); err != nil {
			t.Errorf("state %s refused: %v", state, err)
		}
	}
	runBreaks(t, validIntent, []breakCase[*Intent]{
		{"schemaVersion", func(i *Intent) { i.SchemaVersion = 1 }, "schemaVersion"},
		{"sessionId", func(i *Intent) { i.SessionID = "" }, "intent.sessionId"},
		{"workspaceId", func(i *Intent) { i.WorkspaceID = "_x" }, "intent.workspaceId"},
		{"summary too long", func(i *Intent) { i.Summary = strings.Repeat("s", MaxIntentText+1) }, "intent.summary"},
		{"summary empty", func(i *Intent) { i.Summary = "" }, "intent.summary"},
		{"mode", func(i *Intent) { i.Mode = "sleep" }, "intent.mode"},
		{"resourceHints nil", func(i *Intent) { i.ResourceHints = nil }, "intent.resourceHints"},
		{"resourceHint bad", func(i *Intent) { i.ResourceHints = []string{"src/a.go"} }, "intent.resourceHints"},
		{"state", func(i *Intent) { i.State = "paused" }, "intent.state"},
		{"updatedAt", func(i *Intent) { i.UpdatedAt = "2026-09-04" }, "intent.updatedAt"},
	})
}

func TestClaimValidate(t *testing.T) {
	runBreaks(t, validClaim, []breakCase[*Claim]{
		{"schemaVersion", func(c *Claim) { c.SchemaVersion = 2 }, "schemaVersion"},
		{"claimId", func(c *Claim) { c.ClaimID = "" }, "claim.claimId"},
		{"workspaceId", func(c *Claim) { c.WorkspaceID = "ws/x" }, "claim.workspaceId"},
		{"ownerSessionId", func(c *Claim) { c.OwnerSessionID = "lpt1" }, "claim.ownerSessionId"},
		{"resource", func(c *Claim) { c.Resource = "src/a.go" }, "claim.resource"},
		{"mode", func(c *Claim) { c.Mode = "read" }, "claim.mode"},
		{"enforcement", func(c *Claim) { c.Enforcement = "" }, "claim.enforcement"},
		{"reason", func(c *Claim) { c.Reason = "" }, "claim.reason"},
		{"acquiredAt", func(c *Claim) { c.AcquiredAt = "x" }, "claim.acquiredAt"},
		{"expiresAt", func(c *Claim) { c.ExpiresAt = "2026-09-04T09:30:00.00Z" }, "claim.expiresAt"},
		{"generation", func(c *Claim) { c.Generation = "" }, "claim.generation"},
	})
}

func TestReceiptValidate(t *testing.T) {
	for _, st := range ReceiptStates {
		r := validReceipt()
		r.State = st
		if err := r.Validate(); err != nil {
			t.Errorf("state %s refused: %v", st, err)
		}
	}
	runBreaks(t, validReceipt, []breakCase[*Receipt]{
		{"schemaVersion", func(r *Receipt) { r.SchemaVersion = 99 }, "schemaVersion"},
		{"messageId", func(r *Receipt) { r.MessageID = "" }, "receipt.messageId"},
		{"workspaceId", func(r *Receipt) { r.WorkspaceID = "x." }, "receipt.workspaceId"},
		{"recipient", func(r *Receipt) { r.RecipientParticipantID = "a b" }, "receipt.recipientParticipantId"},
		{"state", func(r *Receipt) { r.State = "seen" }, "receipt.state"},
		{"updatedAt", func(r *Receipt) { r.UpdatedAt = "" }, "receipt.updatedAt"},
	})
}

func TestEventValidate(t *testing.T) {
	for _, typ := range EventTypes {
		e := validEvent()
		e.Type = typ
		if err := e.Validate(); err != nil {
			t.Errorf("type %s refused: %v", typ, err)
		}
	}
	e := validEvent()
	e.Payload = map[string]any{}
	if err := e.Validate(); err != nil {
		t.Errorf("empty payload refused: %v", err)
	}
	runBreaks(t, validEvent, []breakCase[*Event]{
		{"schemaVersion", func(e *Event) { e.SchemaVersion = 2 }, "schemaVersion"},
		{"sequence short", func(e *Event) { e.Sequence = "1" }, "event.sequence"},
		{"sequence long", func(e *Event) { e.Sequence = "00000000000000001" }, "event.sequence"},
		{"sequence letters", func(e *Event) { e.Sequence = "000000000000000a" }, "event.sequence"},
		{"eventId", func(e *Event) { e.EventID = "" }, "event.eventId"},
		{"workspaceId", func(e *Event) { e.WorkspaceID = "" }, "event.workspaceId"},
		{"actorSessionId", func(e *Event) { e.ActorSessionID = "-x" }, "event.actorSessionId"},
		{"type", func(e *Event) { e.Type = "message.seen" }, "event.type"},
		{"occurredAt", func(e *Event) { e.OccurredAt = "" }, "event.occurredAt"},
		{"payload", func(e *Event) { e.Payload = nil }, "event.payload"},
	})
}

func TestSequenceFormat(t *testing.T) {
	for _, n := range []int64{1, 42, 9999999999999999} {
		s := FormatSequence(n)
		if len(s) != 16 || !IsSequence(s) {
			t.Errorf("FormatSequence(%d) = %q", n, s)
		}
	}
	if FormatSequence(42) != "0000000000000042" {
		t.Errorf("FormatSequence(42) = %q", FormatSequence(42))
	}
	// Lexical order is numeric order.
	if !(FormatSequence(9) < FormatSequence(10) && FormatSequence(99) < FormatSequence(100)) {
		t.Error("sequences do not sort lexically in numeric order")
	}
}

func TestMessageFieldRules(t *testing.T) {
	runBreaks(t, validMessage, []breakCase[*Message]{
		{"schemaVersion", func(m *Message) { m.SchemaVersion = 2 }, "schemaVersion"},
		{"messageId", func(m *Message) { m.MessageID = "" }, "message.messageId"},
		{"threadId", func(m *Message) { m.ThreadID = "" }, "message.threadId"},
		{"clientMessageId", func(m *Message) { m.ClientMessageID = "a b" }, "message.clientMessageId"},
		{"workspaceId", func(m *Message) { m.WorkspaceID = "" }, "message.workspaceId"},
		{"fromParticipantId", func(m *Message) { m.FromParticipantID = "" }, "message.fromParticipantId"},
		{"fromSessionId", func(m *Message) { m.FromSessionID = "" }, "message.fromSessionId"},
		{"toParticipantIds nil", func(m *Message) { m.ToParticipantIDs = nil }, "message.toParticipantIds"},
		{"toParticipantIds bad", func(m *Message) { m.ToParticipantIDs = []string{"codex", "a b"} }, "message.toParticipantIds"},
		{"kind", func(m *Message) { m.Kind = "memo" }, "message.kind"},
		{"obligation", func(m *Message) { m.Obligation = "maybe" }, "message.obligation"},
		{"subject empty", func(m *Message) { m.Subject = "" }, "message.subject"},
		{"subject multi-line", func(m *Message) { m.Subject = "a\nb" }, "message.subject"},
		{"subject long", func(m *Message) { m.Subject = strings.Repeat("😀", MaxLineText+1) }, "message.subject"},
		{"body empty", func(m *Message) { m.Body = " \n " }, "message.body"},
		{"body long", func(m *Message) { m.Body = strings.Repeat("b", MaxProseText+1) }, "message.body"},
		{"body control", func(m *Message) { m.Body = "a\x1bb" }, "message.body"},
		{"inReplyTo", func(m *Message) { m.InReplyTo = ptr(""); m.ThreadID = "message_root" }, "message.inReplyTo"},
		{"artifacts nil", func(m *Message) { m.Artifacts = nil }, "message.artifacts"},
		{"artifact kind", func(m *Message) { m.Artifacts[0].Kind = "video" }, "message.artifacts[0].kind"},
		{"artifact uri", func(m *Message) { m.Artifacts[0].URI = "no scheme" }, "message.artifacts[0].uri"},
		{"artifact description", func(m *Message) { m.Artifacts[0].Description = "" }, "message.artifacts[0].description"},
		{"artifact sha256 upper", func(m *Message) { m.Artifacts[0].SHA256 = ptr(strings.Repeat("AB", 32)) }, "message.artifacts[0].sha256"},
		{"artifact sha256 short", func(m *Message) { m.Artifacts[0].SHA256 = ptr("abc") }, "message.artifacts[0].sha256"},
		{"sentAt", func(m *Message) { m.SentAt = "2026-09-04T09:00:00.000000Z" }, "message.sentAt"},
	})
	m := validMessage()
	m.Artifacts = []ArtifactRef{}
	m.Artifacts = append(m.Artifacts, ArtifactRef{Kind: "url", URI: "url:https://example.test", Description: "no hash"})
	if err := m.Validate(); err != nil {
		t.Errorf("artifact without sha256 refused: %v", err)
	}
}

// msg builds a message of a kind, addressed to the given recipients (none =
// room), as a root or as a reply.
func msg(kind, obligation string, to []string, reply bool) *Message {
	m := validMessage()
	m.Kind, m.Obligation, m.ToParticipantIDs = kind, obligation, to
	if reply {
		m.InReplyTo = ptr("message_root")
		m.ThreadID = "message_root"
	}
	if kind == KindHandoff {
		m.Handoff = validHandoff()
	}
	return m
}

// TestMessageObligationMatrix checks every kind × obligation × addressing
// combination against the table of docs/protocol.md#kinds-and-obligations, retyped here.
func TestMessageObligationMatrix(t *testing.T) {
	addressed := map[string][]string{
		KindNote:     {ObligationNone},
		KindQuestion: {ObligationReply},
		KindRequest:  {ObligationReply},
		KindAnswer:   {ObligationNone},
		KindDecision: {ObligationNone, ObligationAcknowledge},
		KindHandoff:  {ObligationAcknowledge},
	}
	room := map[string][]string{
		KindNote:     {ObligationNone},
		KindDecision: {ObligationNone},
		KindHandoff:  {ObligationNone},
	}
	for _, kind := range MessageKinds {
		for _, obl := range []string{ObligationNone, ObligationAcknowledge, ObligationReply} {
			for _, isRoom := range []bool{false, true} {
				var to []string
				allowed := addressed[kind]
				if isRoom {
					to, allowed = []string{}, room[kind]
				} else {
					to = []string{"codex-fbqX8o"}
				}
				want := false
				for _, a := range allowed {
					want = want || a == obl
				}
				m := msg(kind, obl, to, kind == KindAnswer)
				err := m.Validate()
				if (err == nil) != want {
					t.Errorf("%s/%s room=%v: Validate = %v, want ok=%v", kind, obl, isRoom, err, want)
				}
				if err != nil && CodeOf(err) != ExitData {
					t.Errorf("%s/%s room=%v: exit %d, want %d", kind, obl, isRoom, CodeOf(err), ExitData)
				}
			}
		}
	}
}

func TestMessageSemanticRules(t *testing.T) {
	to := []string{"codex-fbqX8o"}
	cases := []struct {
		name string
		m    func() *Message
		want string // "" = valid
		code ExitCode
	}{
		{"room note", func() *Message { return msg(KindNote, ObligationNone, []string{}, false) }, "", 0},
		{"room question", func() *Message { return msg(KindQuestion, ObligationReply, []string{}, false) }, "room message cannot have kind question", ExitData},
		{"room request", func() *Message { return msg(KindRequest, ObligationReply, []string{}, false) }, "room message cannot have kind request", ExitData},
		{"room answer", func() *Message { return msg(KindAnswer, ObligationNone, []string{}, true) }, "room message cannot have kind answer", ExitData},
		{"room decision acknowledge", func() *Message { return msg(KindDecision, ObligationAcknowledge, []string{}, false) }, "room message cannot carry obligation", ExitData},
		{"answer without inReplyTo", func() *Message { return msg(KindAnswer, ObligationNone, to, false) }, "answer must reply", ExitData},
		{"answer as reply", func() *Message { return msg(KindAnswer, ObligationNone, to, true) }, "", 0},
		{"root with other threadId", func() *Message { m := validMessage(); m.ThreadID = "message_other"; return m }, "thread root", ExitData},
		{"reply starting its own thread", func() *Message {
			m := validMessage()
			m.InReplyTo = ptr("message_root")
			return m
		}, "cannot start its own thread", ExitData},
		{"reply note", func() *Message { return msg(KindNote, ObligationNone, to, true) }, "", 0},
		{"handoff without payload", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff = nil
			return m
		}, "handoff needs its structured payload", ExitData},
		{"addressed handoff obligation none", func() *Message { return msg(KindHandoff, ObligationNone, to, false) }, "obligation acknowledge", ExitData},
		{"room handoff", func() *Message { return msg(KindHandoff, ObligationNone, []string{}, false) }, "", 0},
		{"note with handoff payload", func() *Message {
			m := msg(KindNote, ObligationNone, to, false)
			m.Handoff = validHandoff()
			return m
		}, "only a handoff carries", ExitData},
		{"handoff bad status", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Status = "done"
			return m
		}, "message.handoff.status", ExitData},
		{"handoff nil completed", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Completed = nil
			return m
		}, "message.handoff.completed", ExitData},
		{"handoff bad remaining", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Remaining = []string{""}
			return m
		}, "message.handoff.remaining", ExitData},
		{"handoff nil blockers", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Blockers = nil
			return m
		}, "message.handoff.blockers", ExitData},
		{"handoff nil verification", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Verification = nil
			return m
		}, "message.handoff.verification", ExitData},
		{"handoff bad verification", func() *Message {
			m := msg(KindHandoff, ObligationAcknowledge, to, false)
			m.Handoff.Verification[0].URI = "x"
			return m
		}, "message.handoff.verification[0].uri", ExitData},
		{"decision change on decision", func() *Message {
			m := msg(KindDecision, ObligationNone, []string{}, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"message_b", "message_c"}}
			return m
		}, "", 0},
		{"decision change acknowledged", func() *Message {
			m := msg(KindDecision, ObligationAcknowledge, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionWithdraw, MessageIDs: []string{"message_b"}}
			return m
		}, "", 0},
		{"decision change on note", func() *Message {
			m := msg(KindNote, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"message_b"}}
			return m
		}, "only a decision carries a decision change", ExitData},
		{"decision change bad action", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: "supersede", MessageIDs: []string{"message_b"}}
			return m
		}, "message.decisionChange.action", ExitData},
		{"decision change no ids", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{}}
			return m
		}, "1 to 16", ExitData},
		{"decision change 17 ids", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			ids := make([]string, 17)
			for i := range ids {
				ids[i] = fmt.Sprintf("message_%02d", i)
			}
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: ids}
			return m
		}, "1 to 16", ExitData},
		{"decision change 16 ids", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			ids := make([]string, 16)
			for i := range ids {
				ids[i] = fmt.Sprintf("message_%02d", i)
			}
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: ids}
			return m
		}, "", 0},
		{"decision change duplicate id", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"message_b", "message_b"}}
			return m
		}, "named twice", ExitData},
		{"decision change unsorted", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"message_c", "message_b"}}
			return m
		}, "sorted", ExitData},
		{"decision change bad id", func() *Message {
			m := msg(KindDecision, ObligationNone, to, false)
			m.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"a b"}}
			return m
		}, "message.decisionChange.messageIds", ExitData},
		{"duplicate recipient", func() *Message {
			return msg(KindNote, ObligationNone, []string{"codex-fbqX8o", "gemini-x", "codex-fbqX8o"}, false)
		}, "addressed only once", ExitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.m().Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if CodeOf(err) != c.code {
				t.Errorf("exit %d, want %d", CodeOf(err), c.code)
			}
		})
	}
	if err := msg(KindNote, ObligationNone, []string{"a", "a"}, false).Validate(); !IsReason(err, ReasonDuplicateRecipient) {
		t.Errorf("duplicate recipient reason = %v, want %s", err, ReasonDuplicateRecipient)
	}
}

func TestDefaultObligation(t *testing.T) {
	cases := []struct {
		kind string
		room bool
		want string
	}{
		{KindNote, false, ObligationNone},
		{KindNote, true, ObligationNone},
		{KindQuestion, false, ObligationReply},
		{KindRequest, false, ObligationReply},
		{KindAnswer, false, ObligationNone},
		{KindDecision, false, ObligationNone},
		{KindDecision, true, ObligationNone},
		{KindHandoff, false, ObligationAcknowledge},
		{KindHandoff, true, ObligationNone},
	}
	for _, c := range cases {
		if got := DefaultObligation(c.kind, c.room); got != c.want {
			t.Errorf("DefaultObligation(%s, room=%v) = %s, want %s", c.kind, c.room, got, c.want)
		}
		// A default is always a valid obligation for its message.
		to := []string{"codex-fbqX8o"}
		if c.room {
			to = []string{}
		}
		if err := msg(c.kind, c.want, to, c.kind == KindAnswer).Validate(); err != nil {
			t.Errorf("the default obligation of %s (room=%v) is refused: %v", c.kind, c.room, err)
		}
	}
}

// TestReceiptTransition walks the whole table of
// docs/protocol.md#receipt-states, retyped here: forward
// moves (skips included) change the receipt, the same state is a no-op,
// backward moves are exit 5, unknown states exit 4.
func TestReceiptTransition(t *testing.T) {
	order := []string{"queued", "offered", "retrieved", "acknowledged"}
	for i, from := range order {
		for j, to := range order {
			changed, err := ReceiptTransition(from, to)
			switch {
			case j > i:
				if err != nil || !changed {
					t.Errorf("%s → %s = (%v, %v), want an allowed change", from, to, changed, err)
				}
			case j == i:
				if err != nil || changed {
					t.Errorf("%s → %s = (%v, %v), want a no-op", from, to, changed, err)
				}
			default:
				if err == nil || changed {
					t.Errorf("%s → %s = (%v, %v), want refused", from, to, changed, err)
					continue
				}
				if CodeOf(err) != ExitConflict || !IsReason(err, ReasonIllegalReceiptTransition) {
					t.Errorf("%s → %s: %v exit %d, want exit 5 %s", from, to, err, CodeOf(err), ReasonIllegalReceiptTransition)
				}
				if want := "illegal receipt transition from " + from + " to " + to; err.Error() != want {
					t.Errorf("%s → %s: message %q, want %q", from, to, err, want)
				}
			}
		}
	}
	for _, pair := range [][2]string{{"seen", "queued"}, {"queued", "seen"}, {"", "offered"}, {"failed", "failed"}, {"Queued", "offered"}} {
		changed, err := ReceiptTransition(pair[0], pair[1])
		if err == nil || changed || CodeOf(err) != ExitData {
			t.Errorf("%q → %q = (%v, %v), want exit 4", pair[0], pair[1], changed, err)
		}
	}
}
