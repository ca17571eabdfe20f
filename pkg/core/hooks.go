package core

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// BindingKey is the session-binding key of a client's own session id: the
// first 32 hex digits of SHA-256 over "<adapter>:<client session id>"
// (docs/protocol.md#session-binding).
func BindingKey(adapter, clientSessionID string) string {
	sum := sha256.Sum256([]byte(adapter + ":" + clientSessionID))
	return hex.EncodeToString(sum[:])[:32]
}

// DefaultHookParticipant is the participant id of a hooked session when
// ACC_PARTICIPANT is unset: "<adapter>-" + the first 6 characters of
// base64url(SHA-256(client session id)) (docs/protocol.md#generated-ids).
func DefaultHookParticipant(adapter, clientSessionID string) string {
	sum := sha256.Sum256([]byte(clientSessionID))
	return adapter + "-" + base64.RawURLEncoding.EncodeToString(sum[:])[:6]
}

// HookAttachInput opens or resumes the acc session behind a client session.
type HookAttachInput struct {
	Adapter, ClientSessionID string
	// Participant is ACC_PARTICIPANT (sanitised) or "" for the default.
	Participant string
	PID         int
	Enforcement string // guarded only where the client's guard is proven
	Lifecycle   string // managed only where its session end is proven
	// ClientVersion and Capabilities are recorded on the session (and
	// refreshed on resume): what the client is and what is proven for it.
	ClientVersion string
	Capabilities  *protocol.DeclaredCapabilities
}

func (in HookAttachInput) extensions() protocol.Extensions {
	ext := protocol.Extensions{}
	if in.ClientVersion != "" {
		ext[protocol.ExtClientVersion] = in.ClientVersion
	}
	if in.Capabilities != nil {
		ext[protocol.ExtCapabilities] = asObject(*in.Capabilities)
	}
	if len(ext) == 0 {
		return nil
	}
	return ext
}

// asObject is v in the form a record read back from the store holds it: a
// JSON object, whose keys are written sorted. A resume that declares what
// was declared before then writes the session's row byte for byte as it
// was, instead of the same values in the struct's field order.
func asObject(v any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// HookAttachResult is the caller a hook acts as.
type HookAttachResult struct {
	Caller        Caller `json:"caller"`
	ParticipantID string `json:"participantId"`
	// Resumed is true when the bound session was still open at its
	// generation and was refreshed rather than reopened.
	Resumed bool `json:"resumed"`
}

// HookAttach is the session-start handler's rule
// (docs/hooks.md#what-each-event-does): a binding whose session is still
// open at the bound generation is
// resumed (pid with its host, enforcement, lifecycle and heartbeat
// refreshed; no event);
// otherwise a fresh session is opened and bound in one transaction.
func (r *Room) HookAttach(ctx context.Context, in HookAttachInput) (*HookAttachResult, error) {
	if in.Participant == "" {
		in.Participant = DefaultHookParticipant(in.Adapter, in.ClientSessionID)
	}
	key := BindingKey(in.Adapter, in.ClientSessionID)
	// Two processes may attach for one binding at once (two acc-mcp
	// servers of one participant, a hook racing its own retry). The new
	// session and its binding are written in one transaction that first
	// looks again: when another process bound a live session meanwhile, the
	// new one is rolled back and that session is resumed instead.
	for attempt := 0; ; attempt++ {
		out, err := r.resumeBinding(ctx, key, in)
		if err != nil || out != nil {
			return out, err
		}
		res, err := r.attach(ctx, AttachInput{ParticipantID: in.Participant, Harness: in.Adapter, PID: in.PID,
			Enforcement: in.Enforcement, Lifecycle: in.Lifecycle, CadenceMs: DefaultHookCadenceMs, Extensions: in.extensions()},
			func(tx storage.Tx, res *AttachResult) error {
				if live, err := liveBinding(tx, key); err != nil || live {
					if err == nil {
						err = errBindingTaken
					}
					return err
				}
				return tx.PutBinding(&storage.SessionBinding{Key: key, Harness: in.Adapter, HarnessSessionID: in.ClientSessionID,
					SessionID: res.SessionID, Generation: res.Generation, UpdatedAt: protocol.FormatTime(r.now())})
			})
		if errors.Is(err, errBindingTaken) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &HookAttachResult{Caller: Caller{SessionID: res.SessionID, Generation: res.Generation}, ParticipantID: res.ParticipantID}, nil
	}
}

// errBindingTaken rolls back a new session whose binding another process
// filled first.
var errBindingTaken = errors.New("the binding was taken by a concurrent attach")

// liveBinding reports whether key is bound to a session still open at the
// bound generation.
func liveBinding(tx storage.ReadTx, key string) (bool, error) {
	b, err := tx.Binding(key)
	if err != nil || b == nil {
		return false, err
	}
	s, _, err := findSession(tx, b.SessionID)
	if err != nil || s == nil {
		return false, err
	}
	return s.State == protocol.SessionOpen && s.Generation == b.Generation, nil
}

// resumeBinding resumes the session bound to key when it is still open at
// the bound generation (heartbeat, enforcement, lifecycle, pid), or returns
// nil.
func (r *Room) resumeBinding(ctx context.Context, key string, in HookAttachInput) (*HookAttachResult, error) {
	var out *HookAttachResult
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		b, err := tx.Binding(key)
		if err != nil || b == nil {
			return err
		}
		s, area, err := findSession(tx, b.SessionID)
		if err != nil || s == nil || s.State != protocol.SessionOpen || s.Generation != b.Generation {
			return err
		}
		s.HeartbeatAt = protocol.FormatTime(r.now())
		s.Enforcement, s.Lifecycle = in.Enforcement, in.Lifecycle
		for k, v := range in.extensions() {
			if s.Extensions == nil {
				s.Extensions = protocol.Extensions{}
			}
			s.Extensions[k] = v
		}
		if in.PID > 0 {
			// The pid is numbered where this hook runs: the host goes with it.
			pid := in.PID
			s.PID = &pid
			protocol.SetSessionHost(s, localHostRecord())
			s.PIDStartedAt = nil
			if t, ok := ProcessStart(in.PID); ok {
				s.PIDStartedAt = strPtr(protocol.FormatTime(t))
			}
		}
		if err := tx.PutSession(area, s); err != nil {
			return err
		}
		out = &HookAttachResult{Caller: Caller{SessionID: s.SessionID, Generation: s.Generation}, ParticipantID: s.ParticipantID, Resumed: true}
		return nil
	})
	return out, err
}

// HookCaller returns the open session bound to a client session, or nil
// when there is none (never bound, ended, or closed by finish).
func (r *Room) HookCaller(ctx context.Context, adapter, clientSessionID string) (*Caller, error) {
	var out *Caller
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		b, err := tx.Binding(BindingKey(adapter, clientSessionID))
		if err != nil || b == nil {
			return err
		}
		s, _, err := findSession(tx, b.SessionID)
		if err != nil || s == nil || s.State != protocol.SessionOpen || s.Generation != b.Generation {
			return err
		}
		out = &Caller{SessionID: s.SessionID, Generation: s.Generation}
		return nil
	})
	return out, err
}

// HookEnd is the session-end handler: it closes the bound session if it is
// still open at the bound generation, and removes the binding.
func (r *Room) HookEnd(ctx context.Context, adapter, clientSessionID string) error {
	key := BindingKey(adapter, clientSessionID)
	return r.Store.Update(ctx, func(tx storage.Tx) error {
		b, err := tx.Binding(key)
		if err != nil || b == nil {
			return err
		}
		s, area, err := findSession(tx, b.SessionID)
		if err != nil {
			return err
		}
		if s != nil && s.State == protocol.SessionOpen && s.Generation == b.Generation {
			if err := r.closeSession(tx, s, area, protocol.FormatTime(r.now())); err != nil {
				return err
			}
		}
		// The session's live binding goes with it.
		if err := tx.DeleteBinding(liveKey(b.SessionID)); err != nil {
			return err
		}
		return tx.DeleteBinding(key)
	})
}

// HeartbeatIfDue refreshes the caller's heartbeat when the last one is older
// than the given age in milliseconds (tool hooks during long turns).
func (r *Room) HeartbeatIfDue(ctx context.Context, c Caller, olderThanMs int64) error {
	due := false
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		s, _, err := findSession(tx, c.SessionID)
		if err != nil || s == nil {
			return err
		}
		t, err := protocol.ParseTime(s.HeartbeatAt)
		due = err != nil || r.now().Sub(t).Milliseconds() > olderThanMs
		return nil
	})
	if err != nil || !due {
		return err
	}
	_, err = r.Heartbeat(ctx, c)
	return err
}
