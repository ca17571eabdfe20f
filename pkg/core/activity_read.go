package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// PeerSession is one open session of a watched participant as a wait for
// idle or finished saw it
// (docs/delivery.md#knowing-when-a-peer-is-free).
type PeerSession struct {
	SessionID string `json:"sessionId"`
	Harness   string `json:"harness"`
	// Presence is online, stale or offline (Presence).
	Presence string `json:"presence"`
	// PIDJudged: the presence also follows the session's recorded process,
	// which this host may judge (PIDJudged; docs/protocol.md#presence).
	PIDJudged bool `json:"pidJudged"`
	// Activity is what the session's turn hooks last recorded; nil when
	// nothing was (acc attach, acc-mcp, or a client whose hooks report no
	// turns): such a session counts as not working.
	Activity *protocol.Activity `json:"activity,omitempty"`
}

// Working reports whether the session counts against idle: a session
// that is not offline and whose last recorded activity is a turn.
func (s PeerSession) Working() bool {
	return s.Presence != PresenceOffline && s.Activity != nil && s.Activity.State == protocol.ActivityWorking
}

// ActivityOf returns the session's recorded activity, nil when none
// (protocol.SessionActivity) or when the session is no longer open: a
// closed session is in no turn, whatever its hooks last recorded (one
// that ended mid-turn never recorded the turn's end).
func ActivityOf(s *protocol.Session) *protocol.Activity {
	a, ok := protocol.SessionActivity(s)
	if !ok || s.State != protocol.SessionOpen {
		return nil
	}
	return &a
}

// peerCondition evaluates a wait for idle or finished
// (docs/delivery.md#knowing-when-a-peer-is-free) into res:
//
//   - idle holds when q.Participant has at least one open session and none
//     of its open sessions that are not offline is working; a session with
//     no recorded activity counts as not working. With q.Since set, idle
//     also holds when it has no open session and the session of it closed
//     last closed at or after q.Since with its last recorded turn over
//     (idle): the turn ended, and the session ended moments later, between
//     two looks of the wait;
//   - finished holds when none of its sessions is open: each was finished,
//     detached or ended by its client's session-end hook. An open session
//     whose process is gone (offline) still counts as open.
//
// res.Sessions lists the participant's open sessions. Errors: exit 4
// unknown_recipient when no participant of the room has that id.
func (r *Room) peerCondition(tx storage.ReadTx, q WaitQuery, res *WaitResult) error {
	known, err := knownParticipant(tx, q.Participant)
	if err != nil {
		return err
	}
	if !known {
		return protocol.Errorf(protocol.ReasonUnknownRecipient,
			"no participant here is called %s; %s lists who is in the room", q.Participant, protocol.Step{Command: protocol.StepStatus, Args: map[string]string{"all": "true"}}).
			With("participant", q.Participant)
	}
	res.Participant = q.Participant
	sessions, err := allSessions(tx, !(q.For == WaitIdle && !q.Since.IsZero()))
	if err != nil {
		return err
	}
	now := r.now()
	res.Sessions = []PeerSession{}
	var lastClosed *protocol.Session
	for i := range sessions {
		s := &sessions[i]
		if s.ParticipantID != q.Participant {
			continue
		}
		if s.State != protocol.SessionOpen {
			if lastClosed == nil || s.HeartbeatAt > lastClosed.HeartbeatAt {
				lastClosed = s
			}
			continue
		}
		ps := PeerSession{SessionID: s.SessionID, Harness: s.Harness, Presence: Presence(s, now, r.Probe),
			PIDJudged: PIDJudged(s, r.Probe), Activity: ActivityOf(s)}
		if ps.Presence == PresenceOffline {
			// Its process is gone: in no turn, whatever its hooks last
			// recorded (as acc status shows it).
			ps.Activity = nil
		}
		res.Sessions = append(res.Sessions, ps)
	}
	switch q.For {
	case WaitIdle:
		res.Satisfied = len(res.Sessions) > 0
		for _, s := range res.Sessions {
			if s.Working() {
				res.Satisfied = false
			}
		}
		if len(res.Sessions) == 0 && lastClosed != nil {
			// A session closes with the activity its hooks last recorded
			// (heartbeatAt moves on close).
			a, ok := protocol.SessionActivity(lastClosed)
			closed, err := protocol.ParseTime(lastClosed.HeartbeatAt)
			res.Satisfied = ok && a.State == protocol.ActivityIdle && err == nil && !closed.Before(q.Since.Truncate(time.Millisecond))
		}
	case WaitFinished:
		res.Satisfied = len(res.Sessions) == 0
	}
	return nil
}

// ActivityWords says a recorded activity as acc's text output does:
// "working since 3m ago" or "idle since 12s ago" (the age rounded to the
// second, never negative), "" for nil. A since that does not parse is
// shown as recorded.
func ActivityWords(a *protocol.Activity, now time.Time) string {
	if a == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, a.Since)
	if err != nil {
		return a.State + " since " + a.Since
	}
	return a.State + " since " + ShortDuration(max(0, now.Sub(t)).Round(time.Second)) + " ago"
}

// RosterDigest is a fingerprint of the room's roster (acc sync's roster,
// the acc://roster resource): each session that is not offline, with its
// participant, client, branch, presence and activity. It changes when a
// session joins or leaves the roster, or its presence or turn activity
// changes, and not otherwise; acc-mcp compares it to tell a subscriber
// the roster changed. It only reads.
func (r *Room) RosterDigest(ctx context.Context) (string, error) {
	var rows []string
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		sessions, err := allSessions(tx, true)
		if err != nil {
			return err
		}
		now := r.now()
		for i := range sessions {
			s := &sessions[i]
			p := Presence(s, now, r.Probe)
			if p == PresenceOffline {
				continue
			}
			branch, act := "", ""
			if s.Branch != nil {
				branch = *s.Branch
			}
			if a := ActivityOf(s); a != nil {
				act = a.State + "@" + a.Since
			}
			rows = append(rows, fmt.Sprintf("%q %q %q %q %q %q", s.SessionID, s.ParticipantID, s.Harness, branch, p, act))
		}
		return nil
	})
	slices.Sort(rows)
	return strings.Join(rows, "\n"), err
}
