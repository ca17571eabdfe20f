package core

import (
	"context"
	"crypto/subtle"
	"maps"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Heartbeat cadences in milliseconds
// (docs/protocol.md#session-and-generation).
const (
	DefaultCLICadenceMs  = 30000
	DefaultHookCadenceMs = 60000
)

// AttachInput opens a session (docs/protocol.md#session-lifecycle).
type AttachInput struct {
	// ParticipantID is the address peers use with --to (a portable id).
	ParticipantID string
	// SessionID reuses a session id; "" generates session_…. Reopening a
	// session that exists needs proof that the caller is that session:
	// Generation, or the hook binding proof in Environ
	// (docs/concepts.md#reopening-a-session).
	SessionID string
	// Generation is the reopened session's last generation, the proof that
	// the caller is that session; "" when there is none. It is compared
	// with the recorded one in constant time and never echoed.
	Generation string
	// Environ is the caller's process environment ("KEY=value"): a value
	// equal to the client session id of a hook binding that the reopened
	// session's last generation holds proves the caller too, as it does
	// for ResolveCaller. nil proves nothing.
	Environ []string
	// Harness is the client id (claude, codex, copilot, droid, gemini, grok, kilo, kimi,
	// opencode, pi, qwen), cli or
	// mcp; "" keeps a reopened session's harness, else means cli.
	Harness         string
	ParentSessionID string
	// PID is the client process, 0 when unknown; its start time is recorded
	// so a reused pid is never taken for the client.
	PID         int
	Enforcement string // default advisory
	Lifecycle   string // default manual
	CadenceMs   int64  // default DefaultCLICadenceMs
	// Extensions are stored on the session record (a hooked session's
	// client version and proven capabilities, protocol.ExtClientVersion and
	// protocol.ExtCapabilities).
	Extensions protocol.Extensions
}

// AttachResult is what attach returns: the pair that proves ownership.
type AttachResult struct {
	SessionID     string  `json:"sessionId"`
	Generation    string  `json:"generation"`
	ParticipantID string  `json:"participantId"`
	Harness       string  `json:"harness"`
	WorkspaceID   string  `json:"workspaceId"`
	CheckoutRoot  *string `json:"checkoutRoot"`
	Branch        *string `json:"branch"`
	Materialised  bool    `json:"materialised"`
	// Replaced is the generation this open replaced (a reopened session), or nil.
	Replaced *string `json:"replaced"`
}

// Attach opens a session with a fresh generation, recording where it runs
// (LocalHost). Reopening an existing
// session id (a closed one, or one whose recorded process is gone) gives the
// new generation that session's claims, so it needs proof that the caller
// is that session (docs/concepts.md#reopening-a-session): its last
// generation (in.Generation) or the hook binding proof (in.Environ). Errors:
// exit 4 for an invalid participant id, harness or session id; exit 2
// generation_required when the session exists and neither proof holds (a
// wrong generation included; the right one is never shown); exit 5
// session_not_open when in.Generation names a session that does not exist
// here; exit 5 session_participant_mismatch when the session id belongs to
// another participant; exit 5 session_live when the session id is open and
// its process is not known to be dead (staleness alone never authorises a
// replacement; a process recorded on another host or PID namespace is
// never known dead here: RecordedProcessGone).
func (r *Room) Attach(ctx context.Context, in AttachInput) (*AttachResult, error) {
	return r.attach(ctx, in, nil)
}

// attach is Attach; then, when set, runs in the same transaction once the
// session is open (a hook binds it there, so a crash never leaves an open
// session without its binding).
func (r *Room) attach(ctx context.Context, in AttachInput, then func(tx storage.Tx, res *AttachResult) error) (*AttachResult, error) {
	if in.Enforcement == "" {
		in.Enforcement = protocol.EnforcementAdvisory
	}
	if in.Lifecycle == "" {
		in.Lifecycle = protocol.LifecycleManual
	}
	if in.CadenceMs == 0 {
		in.CadenceMs = DefaultCLICadenceMs
	}
	if err := CheckAttachInput(in); err != nil {
		return nil, err
	}
	sessionID := in.SessionID
	if sessionID == "" {
		sessionID = protocol.NewID(protocol.KindSession)
	}
	var pidStart *string
	var pid *int
	if in.PID > 0 {
		p := in.PID
		pid = &p
		if t, ok := ProcessStart(in.PID); ok {
			pidStart = strPtr(protocol.FormatTime(t))
		}
	}
	res := &AttachResult{}
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		now := r.now()
		at := protocol.FormatTime(now)
		ws, err := tx.Workspace()
		if err != nil {
			return err
		}
		area := storage.Ephemeral
		if ws != nil {
			area = storage.Durable
		}
		var replaced *string
		old, oldArea, err := findSession(tx, sessionID)
		if err != nil {
			return err
		}
		if old == nil && in.Generation != "" {
			return protocol.Errorf(protocol.ReasonSessionNotOpen,
				"no session %s in this workspace to reopen, so a generation proves nothing here; attach without %s to open a new session", sessionID, protocol.Field("session")).
				With("sessionId", sessionID)
		}
		if old != nil {
			proved, err := reopenProved(tx, old, in)
			if err != nil {
				return err
			}
			if !proved {
				return reopenRefused(sessionID, in.Generation != "")
			}
			if old.ParticipantID != in.ParticipantID {
				return protocol.Errorf(protocol.ReasonSessionParticipantMismatch,
					"session %s belongs to participant %s, not %s; reattach it with %s, or attach without %s to open a new session", sessionID, old.ParticipantID, in.ParticipantID, protocol.FieldValue{Name: "participant", Value: old.ParticipantID}, protocol.Field("session")).
					With("sessionId", sessionID).With("participantId", old.ParticipantID)
			}
			if in.Harness == "" {
				in.Harness = old.Harness
			}
			if old.State == protocol.SessionOpen && !RecordedProcessGone(old, r.Probe) {
				return protocol.Errorf(protocol.ReasonSessionLive,
					"session %s is already open and its process is not known to have exited; attach without %s to open a new one", sessionID, protocol.Field("session")).With("sessionId", sessionID)
			}
			replaced = strPtr(old.Generation)
			if oldArea != area {
				if err := tx.DeleteSession(oldArea, sessionID); err != nil {
					return err
				}
			}
		}
		if in.Harness == "" {
			in.Harness = "cli"
		}
		known, err := knownParticipant(tx, in.ParticipantID)
		if err != nil {
			return err
		}
		if !known {
			if err := tx.PutParticipant(area, &protocol.Participant{
				SchemaVersion: protocol.SchemaVersion, ParticipantID: in.ParticipantID, WorkspaceID: r.WS.ID,
				DisplayName: in.ParticipantID, Kind: protocol.ParticipantAgent, CreatedAt: at,
			}); err != nil {
				return err
			}
		}
		s := &protocol.Session{
			SchemaVersion: protocol.SchemaVersion, SessionID: sessionID, ParticipantID: in.ParticipantID,
			WorkspaceID: r.WS.ID, Generation: protocol.NewID(protocol.KindGeneration), Harness: in.Harness,
			State: protocol.SessionOpen, CheckoutRoot: strPtr(r.WS.CheckoutRoot()), Branch: r.WS.Branch(),
			PID: pid, PIDStartedAt: pidStart, Enforcement: in.Enforcement, Lifecycle: in.Lifecycle,
			HeartbeatCadenceMs: in.CadenceMs, StartedAt: at, HeartbeatAt: at, Extensions: maps.Clone(in.Extensions),
		}
		protocol.SetSessionHost(s, localHostRecord())
		if in.ParentSessionID != "" {
			s.ParentSessionID = strPtr(in.ParentSessionID)
		}
		if err := tx.PutSession(area, s); err != nil {
			return err
		}
		if area == storage.Durable {
			if err := tx.AppendEvent(newEvent(at, sessionID, protocol.EventSessionOpened, map[string]any{"replaced": replaced})); err != nil {
				return err
			}
		} else {
			open, err := tx.Sessions(storage.Ephemeral, true)
			if err != nil {
				return err
			}
			if len(open) > 1 {
				if err := r.materialise(tx, "second_live_session", sessionID, at); err != nil {
					return err
				}
			}
		}
		w, err := tx.Workspace()
		if err != nil {
			return err
		}
		*res = AttachResult{SessionID: sessionID, Generation: s.Generation, ParticipantID: in.ParticipantID,
			Harness: in.Harness, WorkspaceID: r.WS.ID, CheckoutRoot: s.CheckoutRoot, Branch: s.Branch,
			Materialised: w != nil, Replaced: replaced}
		if then != nil {
			return then(tx, res)
		}
		return nil
	})
	if protocol.IsReason(err, protocol.ReasonOutcomeUnknown) {
		// The retry advice needs the session id that may now be open
		// (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed).
		protocol.AsError(err).With("sessionId", sessionID)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// reopenProved reports whether in proves the caller is session old: its
// last generation, or a hook binding of it at that generation whose client
// session id is a value in in.Environ
// (docs/concepts.md#reopening-a-session).
func reopenProved(tx storage.ReadTx, old *protocol.Session, in AttachInput) (bool, error) {
	if in.Generation != "" {
		return subtle.ConstantTimeCompare([]byte(in.Generation), []byte(old.Generation)) == 1, nil
	}
	if len(in.Environ) == 0 {
		return false, nil
	}
	return boundInEnv(tx, old, in.Environ)
}

// reopenRefused is exit 2 generation_required for a reopen without proof
// (wrong: a generation was given and is not the session's last one). It
// names what is missing and the ways that remain, never the generation.
func reopenRefused(sessionID string, wrong bool) error {
	what, gen := "needs its last generation (%s, or ACC_SESSION and ACC_GENERATION naming that pair)", any(protocol.Field("generation"))
	if wrong {
		what, gen = "was refused: the generation given is not its last one%s", ""
	}
	return protocol.Errorf(protocol.ReasonGenerationRequired,
		"reopening session %s "+what+", since the reopened session takes over its claims and a session id is public; "+
			"attach without %s to open a new session; a session's claims pass to another only by release or takeover, or when their lease runs out", sessionID, gen, protocol.Field("session")).
		With("sessionId", sessionID)
}

// materialise promotes the ephemeral room to durable state in the caller's
// transaction: the workspace record, workspace.materialised, then every
// ephemeral participant, session (session.opened) and intent
// (intent.published), and removes the ephemeral copies
// (docs/protocol.md#lazy-materialisation).
func (r *Room) materialise(tx storage.Tx, reason, actor, at string) error {
	if err := tx.PutWorkspace(&protocol.Workspace{
		SchemaVersion: protocol.SchemaVersion, WorkspaceID: r.WS.ID, DisplayName: r.WS.DisplayName,
		Source: r.WS.Source, Roots: r.WS.Roots, CreatedAt: at,
	}); err != nil {
		return err
	}
	if err := tx.AppendEvent(newEvent(at, actor, protocol.EventWorkspaceMaterialised, map[string]any{"reason": reason})); err != nil {
		return err
	}
	ps, err := tx.Participants(storage.Ephemeral)
	if err != nil {
		return err
	}
	for i := range ps {
		if err := tx.PutParticipant(storage.Durable, &ps[i]); err != nil {
			return err
		}
		if err := tx.DeleteParticipant(storage.Ephemeral, ps[i].ParticipantID); err != nil {
			return err
		}
	}
	ss, err := tx.Sessions(storage.Ephemeral, false)
	if err != nil {
		return err
	}
	for i := range ss {
		if err := tx.PutSession(storage.Durable, &ss[i]); err != nil {
			return err
		}
		if err := tx.DeleteSession(storage.Ephemeral, ss[i].SessionID); err != nil {
			return err
		}
		if err := tx.AppendEvent(newEvent(at, ss[i].SessionID, protocol.EventSessionOpened, map[string]any{"sessionId": ss[i].SessionID, "replaced": nil})); err != nil {
			return err
		}
	}
	is, err := tx.Intents(storage.Ephemeral)
	if err != nil {
		return err
	}
	for i := range is {
		if err := tx.PutIntent(storage.Durable, &is[i]); err != nil {
			return err
		}
		if err := tx.DeleteIntent(storage.Ephemeral, is[i].SessionID); err != nil {
			return err
		}
		if err := tx.AppendEvent(newEvent(at, is[i].SessionID, protocol.EventIntentPublished, map[string]any{"sessionId": is[i].SessionID, "mode": is[i].Mode, "state": is[i].State})); err != nil {
			return err
		}
	}
	return nil
}

// ensureMaterialised materialises the room before its first durable object
// (a message or a claim) in the same transaction; reason durable_object.
func (r *Room) ensureMaterialised(tx storage.Tx, actor, at string) error {
	w, err := tx.Workspace()
	if err != nil || w != nil {
		return err
	}
	return r.materialise(tx, "durable_object", actor, at)
}

// Heartbeat refreshes the caller's heartbeatAt and returns it. It appends no
// event. Errors: exit 5 when the session is closed, missing or replaced.
func (r *Room) Heartbeat(ctx context.Context, c Caller) (string, error) {
	s, err := r.Beat(ctx, c)
	if err != nil {
		return "", err
	}
	return s.HeartbeatAt, nil
}

// Beat is Heartbeat returning the session as recorded: its participant,
// cadence and pid say how long it stays online (Presence).
func (r *Room) Beat(ctx context.Context, c Caller) (*protocol.Session, error) {
	var out *protocol.Session
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		s, area, err := requireOwner(tx, c, "heartbeat")
		if err != nil {
			return err
		}
		s.HeartbeatAt = protocol.FormatTime(r.now())
		out = s
		return tx.PutSession(area, s)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DetachResult reports a closed session.
type DetachResult struct {
	SessionID string `json:"sessionId"`
	State     string `json:"state"`
}

// Detach closes the caller's session (docs/protocol.md#session-lifecycle). An ephemeral
// session and its intent are deleted, leaving no trace; a durable one is
// marked closed with a session.closed event. Claims are not released.
// Errors: exit 5 when the session is closed, missing or replaced.
func (r *Room) Detach(ctx context.Context, c Caller) (*DetachResult, error) {
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		s, area, err := requireOwner(tx, c, "detach")
		if err != nil {
			return err
		}
		return r.closeSession(tx, s, area, protocol.FormatTime(r.now()))
	})
	if err != nil {
		return nil, err
	}
	return &DetachResult{SessionID: c.SessionID, State: protocol.SessionClosed}, nil
}

func (r *Room) closeSession(tx storage.Tx, s *protocol.Session, area storage.Area, at string) error {
	if area == storage.Ephemeral {
		if err := tx.DeleteSession(storage.Ephemeral, s.SessionID); err != nil {
			return err
		}
		return tx.DeleteIntent(storage.Ephemeral, s.SessionID)
	}
	s.State = protocol.SessionClosed
	s.HeartbeatAt = at
	if err := tx.PutSession(storage.Durable, s); err != nil {
		return err
	}
	return tx.AppendEvent(newEvent(at, s.SessionID, protocol.EventSessionClosed, nil))
}

func optionalID(field, s string) error {
	if s == "" {
		return nil
	}
	return protocol.CheckPortableID(field, s)
}

func firstError(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
