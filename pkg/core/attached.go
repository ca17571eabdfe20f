package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// AttachedSession names one session that a new config would orphan.
type AttachedSession struct {
	SessionID     string `json:"sessionId"`
	ParticipantID string `json:"participantId"`
	Harness       string `json:"harness"`
	Presence      string `json:"presence"`
}

// AttachedSessions lists the live (online or stale) sessions of the
// workspace that dir currently belongs to, for `acc config init`: writing a
// config changes the workspace id, and running sessions would stop seeing
// each other (docs/protocol.md#configuration-file). It never creates a store.
// When the workspace or its store cannot be opened it returns no sessions
// and no error: a workspace that cannot be opened has nobody to warn. A
// store that stays busy is store_busy (exit 3).
func AttachedSessions(ctx context.Context, o OpenOptions) ([]AttachedSession, error) {
	o.NoCreate = true
	r, err := Open(ctx, o)
	if err != nil {
		if protocol.IsReason(err, protocol.ReasonStoreBusy) {
			return nil, err
		}
		return nil, nil
	}
	defer r.Close()
	st, err := r.Status(ctx, StatusQuery{})
	if err != nil {
		return nil, err
	}
	out := []AttachedSession{}
	for _, p := range st.Participants {
		if p.Presence != PresenceOffline && p.State == protocol.SessionOpen {
			out = append(out, AttachedSession{SessionID: p.SessionID, ParticipantID: p.ParticipantID, Harness: p.Harness, Presence: p.Presence})
		}
	}
	return out, nil
}

// SessionsAttachedError is the refusal of `acc config init` while sessions
// are attached (exit 5 config_sessions_attached), naming each as
// "<participantId> (<harness>)".
func SessionsAttachedError(file string, sessions []AttachedSession) error {
	names := make([]string, len(sessions))
	for i, s := range sessions {
		names[i] = fmt.Sprintf("%s (%s)", s.ParticipantID, s.Harness)
	}
	return protocol.Errorf(protocol.ReasonConfigSessionsAttached,
		"%d session(s) are attached here and would stop seeing each other once %s gives the workspace a new id: %s; %s or pass %s",
		len(sessions), file, strings.Join(names, ", "), protocol.Step{Command: protocol.StepCloseSessions}, protocol.Field("force")).
		With("file", file).With("sessions", names)
}
