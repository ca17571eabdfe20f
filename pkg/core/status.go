package core

import (
	"context"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// SessionRow is one session as status shows it: never its generation.
type SessionRow struct {
	SessionID       string  `json:"sessionId"`
	ParticipantID   string  `json:"participantId"`
	Harness         string  `json:"harness"`
	ParentSessionID *string `json:"parentSessionId"`
	CheckoutRoot    *string `json:"checkoutRoot"`
	Branch          *string `json:"branch"`
	Enforcement     string  `json:"enforcement"`
	Lifecycle       string  `json:"lifecycle"`
	// State is the record's state (open or closed); Presence is computed.
	State    string `json:"state"`
	Presence string `json:"presence"`
	// PIDJudged: the session records a pid that this host may judge
	// (PIDJudged: recorded on this machine, boot and PID namespace), so its
	// presence also follows that process; false when it records none, or
	// recorded it on another host or in another PID namespace, where its
	// presence rests on heartbeats alone (docs/protocol.md#presence).
	PIDJudged   bool    `json:"pidJudged"`
	HeartbeatAt string  `json:"heartbeatAt"`
	Intent      *string `json:"intent"`
	// Reachable: a message to this session would be pushed live now, where
	// the policy admits its kind (DeliveryBindingRow); the endpoint is
	// never shown. Never for a session on another host: live push stays on
	// the recipient's host (docs/delivery.md#live-push-waking-an-idle-session).
	Reachable bool `json:"reachable"`
	// LivePolicy is the owner's live-push policy for the session's client
	// when Reachable ("" otherwise).
	LivePolicy string `json:"livePolicy,omitempty"`
	// Activity is whether the session's agent is in a turn (working) or
	// between turns (idle), and since when, as its turn hooks last
	// recorded; absent when they never did, and for a session that is
	// offline (docs/delivery.md#knowing-when-a-peer-is-free).
	Activity *protocol.Activity `json:"activity,omitempty"`
}

// DeliveryBindingRow is one session's live-push binding as status shows
// it: the transport and whether it can be used now, never the endpoint
// (docs/delivery.md#live-push-waking-an-idle-session).
type DeliveryBindingRow struct {
	SessionID     string `json:"sessionId"`
	ParticipantID string `json:"participantId"`
	// Transport names the client's channel (claude-inbox, codex-queue).
	Transport string `json:"transport"`
	// Reachable: a send to this session would try live push now: the
	// participant's only live session, the binding of its current
	// generation, the session on this host (SameHost), live push
	// proven for its client's version and the policy not off (the sender
	// still checks, before writing, that the session's process serves
	// the endpoint).
	Reachable bool `json:"reachable"`
	// Proven: live push is proven for the session's client version.
	Proven bool `json:"proven"`
	// Policy is the owner's live-push policy for the client (off,
	// actionable, all).
	Policy string `json:"policy"`
	// LeaseUntil is until when the hook's own checks of the endpoint stand
	// (UTC, milliseconds); its hooks renew it at a turn once it is older
	// than half the lease, and past it a sender revalidates the endpoint
	// before using it.
	LeaseUntil string `json:"leaseUntil"`
}

// ClaimRow is one live claim with its owner's participant.
type ClaimRow struct {
	ClaimID            string `json:"claimId"`
	Resource           string `json:"resource"`
	Mode               string `json:"mode"`
	Enforcement        string `json:"enforcement"`
	OwnerSessionID     string `json:"ownerSessionId"`
	OwnerParticipantID string `json:"ownerParticipantId"`
	ExpiresAt          string `json:"expiresAt"`
	// Orphaned, when not null, says the claim blocks nothing any more: its
	// owner's process is gone and the grace has passed since the owner
	// last showed life; the next overlapping claim takes it over
	// (docs/concepts.md#when-a-holder-dies).
	Orphaned *Orphan `json:"orphaned"`
}

// Attention is one thing the caller owes or should know (docs/protocol.md#attention).
type Attention struct {
	Kind     string `json:"kind"`
	Priority int    `json:"priority"`
	SourceID string `json:"sourceId"`
	Summary  string `json:"summary"`
}

// StatusCounts are the totals status reports. Claims counts the live
// claims that still block; Orphaned the live claims that no longer do
// (ClaimRow.Orphaned).
type StatusCounts struct {
	Live     int   `json:"live"`
	Stale    int   `json:"stale"`
	Claims   int   `json:"claims"`
	Orphaned int   `json:"orphaned"`
	Messages int64 `json:"messages"`
}

// Status is the room as one read sees it (docs/protocol.md#status).
type Status struct {
	WorkspaceID  string       `json:"workspaceId"`
	DisplayName  string       `json:"displayName"`
	Source       string       `json:"source"`
	Materialised bool         `json:"materialised"`
	Protection   string       `json:"protection"`
	Participants []SessionRow `json:"participants"`
	Claims       []ClaimRow   `json:"claims"`
	Attention    []Attention  `json:"attention"`
	// DeliveryBindings are the sessions' live-push bindings
	// (docs/delivery.md#live-push-waking-an-idle-session), never their
	// endpoints.
	DeliveryBindings []DeliveryBindingRow `json:"deliveryBindings"`
	Counts           StatusCounts         `json:"counts"`
	// Caller is the session status was computed for, when one was identified.
	Caller *string `json:"callerSessionId"`
	// Damaged names the stored records status left out because they do
	// not decode (docs/design.md#damaged-records).
	Damaged []storage.DamagedRecord `json:"damaged,omitempty"`
}

// StatusQuery selects what status shows.
type StatusQuery struct {
	// Caller, when set, adds the caller's personal attention.
	Caller *Caller
	// All includes offline sessions (closed ones are kept for attribution).
	All bool
	// Participant keeps only that participant's sessions.
	Participant string
	// LivePolicy gives the live-push policy recorded for a client (adapter
	// id → off, actionable, all); nil is off everywhere. A session is
	// reachable live only where it is not off.
	LivePolicy func(adapter string) string
	// Sender, when set, is the session a send would come from (named
	// explicitly, not guessed): it never delivers to itself, so it is left
	// out of what is reachable.
	Sender *Caller
}

// Status reads the room (docs/protocol.md#status). It never writes. With a caller it also checks
// the caller's generation (exit 5 when stale).
func (r *Room) Status(ctx context.Context, q StatusQuery) (*Status, error) {
	st := &Status{WorkspaceID: r.WS.ID, DisplayName: r.WS.DisplayName, Source: r.WS.Source,
		Participants: []SessionRow{}, Claims: []ClaimRow{}, Attention: []Attention{}, DeliveryBindings: []DeliveryBindingRow{}}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		now := r.now()
		var me *protocol.Session
		if q.Caller != nil {
			// A closed session may still read status; a stale generation may not.
			s, _, err := findSession(tx, q.Caller.SessionID)
			if err != nil {
				return err
			}
			if s == nil {
				return protocol.Errorf(protocol.ReasonSessionNotOpen, "session %s is not in this workspace; %s without %s shows the room", q.Caller.SessionID, protocol.Step{Command: protocol.StepStatus}, protocol.Field("session"))
			}
			if s.Generation != q.Caller.Generation {
				return staleGeneration("read status", s.SessionID)
			}
			me = s
			st.Caller = &s.SessionID
		}
		ws, err := tx.Workspace()
		if err != nil {
			return err
		}
		st.Materialised = ws != nil
		sessions, err := allSessions(tx, false)
		if err != nil {
			return err
		}
		intents, err := allIntents(tx)
		if err != nil {
			return err
		}
		presence := map[string]string{}
		// Live sessions per participant, as a send from the sender would
		// count them: a session never delivers to itself, so the sender's
		// own session is left out (DeliveryTargets).
		liveCount := map[string]int{}
		for i := range sessions {
			p := Presence(&sessions[i], now, r.Probe)
			presence[sessions[i].SessionID] = p
			if p != PresenceOffline && (q.Sender == nil || sessions[i].SessionID != q.Sender.SessionID) {
				liveCount[sessions[i].ParticipantID]++
			}
		}
		participantOf := map[string]string{}
		protection := protocol.EnforcementGuarded
		anyLive := false
		for i := range sessions {
			s := &sessions[i]
			p := presence[s.SessionID]
			participantOf[s.SessionID] = s.ParticipantID
			if p != PresenceOffline {
				st.Counts.Live++
				anyLive = true
				if p == PresenceStale {
					st.Counts.Stale++
				}
				if s.Enforcement != protocol.EnforcementGuarded {
					protection = protocol.EnforcementAdvisory
				}
			}
			if (p == PresenceOffline && !q.All) || (q.Participant != "" && s.ParticipantID != q.Participant) {
				continue
			}
			row := SessionRow{SessionID: s.SessionID, ParticipantID: s.ParticipantID, Harness: s.Harness,
				ParentSessionID: s.ParentSessionID, CheckoutRoot: s.CheckoutRoot, Branch: s.Branch,
				Enforcement: s.Enforcement, Lifecycle: s.Lifecycle, State: s.State, Presence: p, PIDJudged: PIDJudged(s, r.Probe),
				HeartbeatAt: s.HeartbeatAt, Activity: ActivityOf(s)}
			if p == PresenceOffline {
				// Its process is gone: it is in no turn, whatever its hooks
				// last recorded (a crash mid-turn records no turn end).
				row.Activity = nil
			}
			intent := intents[s.SessionID]
			if intent != nil && intent.State != "done" {
				row.Intent = &intent.Summary
			}
			l, err := liveOf(tx, s, now)
			if err != nil {
				return err
			}
			if l != nil {
				policy := "off"
				if q.LivePolicy != nil {
					policy = q.LivePolicy(s.Harness)
				}
				// Reachable is what a sender's router would try: the
				// participant's only live session (besides the sender's, who
				// is never its own recipient), a binding of its generation,
				// on this host, live push proven for its client's version,
				// and a policy that is not off.
				proven := protocol.SessionCapabilities(s).Delivery.LivePush
				self := q.Sender != nil && s.SessionID == q.Sender.SessionID
				row.Reachable = p != PresenceOffline && !l.Stale && SameHost(protocol.SessionHostOf(s), r.Probe) && proven && policy != "off" &&
					liveCount[s.ParticipantID] == 1 && !self
				if row.Reachable {
					row.LivePolicy = policy
				}
				st.DeliveryBindings = append(st.DeliveryBindings, DeliveryBindingRow{SessionID: s.SessionID,
					ParticipantID: s.ParticipantID, Transport: l.Transport, Reachable: row.Reachable, Proven: proven,
					Policy: policy, LeaseUntil: l.LeaseUntil})
			}
			st.Participants = append(st.Participants, row)
		}
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		nowStr := protocol.FormatTime(now)
		orphans := r.orphans(tx, now)
		for _, c := range claims {
			if c.ExpiresAt <= nowStr {
				continue
			}
			owner := participantOf[c.OwnerSessionID]
			row := ClaimRow{ClaimID: c.ClaimID, Resource: c.Resource, Mode: c.Mode,
				Enforcement: c.Enforcement, OwnerSessionID: c.OwnerSessionID, OwnerParticipantID: owner, ExpiresAt: c.ExpiresAt}
			// An orphaned claim protects nothing, so it counts for
			// neither the claims nor the protection.
			if row.Orphaned = orphans.of(c.OwnerSessionID); row.Orphaned != nil {
				st.Counts.Orphaned++
			} else {
				st.Counts.Claims++
				if c.Enforcement != protocol.EnforcementGuarded {
					protection = protocol.EnforcementAdvisory
				}
			}
			st.Claims = append(st.Claims, row)
		}
		switch {
		case st.Counts.Claims == 0:
			st.Protection = "none"
		case !anyLive && protection == protocol.EnforcementGuarded:
			st.Protection = protocol.EnforcementGuarded
		default:
			st.Protection = protection
		}
		counts, err := tx.Counts()
		if err != nil {
			return err
		}
		st.Counts.Messages = counts.Messages
		if me != nil {
			att, err := r.attentionFor(tx, me, now, sessions, presence)
			if err != nil {
				return err
			}
			st.Attention = att
		}
		st.Damaged = tx.Damaged()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// allIntents maps session id to intent, over both areas, in two queries.
func allIntents(tx storage.ReadTx) (map[string]*protocol.Intent, error) {
	out := map[string]*protocol.Intent{}
	for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
		is, err := tx.Intents(a)
		if err != nil {
			return nil, err
		}
		for i := range is {
			out[is[i].SessionID] = &is[i]
		}
	}
	return out, nil
}
