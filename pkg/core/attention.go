package core

import (
	"fmt"
	"sort"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Attention kinds (docs/protocol.md#attention), in priority order.
const (
	AttentionReplyRequired           = "reply_required"
	AttentionAcknowledgementRequired = "acknowledgement_required"
	AttentionRecipientUnavailable    = "recipient_unavailable"
	AttentionClaimConflict           = "claim_conflict"
	AttentionClaimContended          = "claim_contended"
	AttentionClaimExpired            = "claim_expired"
)

// Attention computes what session me owes or should know, by exactly the six
// rules of docs/protocol.md#attention, sorted by priority then source id.
// Replaced decisions never appear. It reads only.
func (r *Room) Attention(tx storage.ReadTx, me *protocol.Session) ([]Attention, error) {
	sessions, err := allSessions(tx, false)
	if err != nil {
		return nil, err
	}
	now := r.now()
	presence := map[string]string{}
	for i := range sessions {
		presence[sessions[i].SessionID] = Presence(&sessions[i], now, r.Probe)
	}
	return r.attentionFor(tx, me, now, sessions, presence)
}

func (r *Room) attentionFor(tx storage.ReadTx, me *protocol.Session, now time.Time, sessions []protocol.Session, presence map[string]string) ([]Attention, error) {
	return r.attentionScan(tx, me, now, sessions, presence, tx.ScanOwed)
}

// attentionScan is attentionFor with the scan of rules 1 and 2 chosen by
// the caller: a projection passes ScanOwedSeen, since it carries queued
// messages whole and needs reminders only for the ones already seen.
func (r *Room) attentionScan(tx storage.ReadTx, me *protocol.Session, now time.Time, sessions []protocol.Session, presence map[string]string,
	owed func(string, func(storage.InboxRow) bool) error) ([]Attention, error) {
	out := []Attention{}
	// 1, 2: what the caller's participant owes.
	err := owed(me.ParticipantID, func(row storage.InboxRow) bool {
		m := row.Message
		switch m.Obligation {
		case protocol.ObligationReply:
			out = append(out, Attention{Kind: AttentionReplyRequired, Priority: 1, SourceID: m.MessageID,
				Summary: fmt.Sprintf("message %s from %s is a %s requiring a reply", m.MessageID, m.FromParticipantID, m.Kind)})
		case protocol.ObligationAcknowledge:
			out = append(out, Attention{Kind: AttentionAcknowledgementRequired, Priority: 2, SourceID: m.MessageID,
				Summary: fmt.Sprintf("message %s from %s is a %s requiring an acknowledgement", m.MessageID, m.FromParticipantID, m.Kind)})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	online := map[string]bool{}
	participantOf := map[string]string{}
	for _, s := range sessions {
		participantOf[s.SessionID] = s.ParticipantID
		if presence[s.SessionID] == PresenceOnline {
			online[s.ParticipantID] = true
		}
	}
	// 3: messages the caller sent that still owe something to a peer with no
	// online session (stale counts as unavailable).
	err = tx.ScanOutstanding(me.ParticipantID, func(row storage.InboxRow) bool {
		if row.Message.IsRoom() || online[row.Receipt.RecipientParticipantID] {
			return true
		}
		out = append(out, Attention{Kind: AttentionRecipientUnavailable, Priority: 3, SourceID: row.Message.MessageID,
			Summary: fmt.Sprintf("%s - %s is unavailable", row.Message.Subject, row.Receipt.RecipientParticipantID)})
		return true
	})
	if err != nil {
		return nil, err
	}
	// 4, 5, 6: claims against intents.
	claims, err := tx.Claims()
	if err != nil {
		return nil, err
	}
	if len(claims) > 0 {
		nowStr := protocol.FormatTime(now)
		intents, err := allIntents(tx)
		if err != nil {
			return nil, err
		}
		mine := intents[me.SessionID]
		var myHints []string
		if mine != nil && mine.State != "done" {
			myHints = mine.ResourceHints
		}
		type peerHint struct{ participant, resource string }
		var peers []peerHint
		for _, s := range sessions {
			if s.SessionID == me.SessionID || presence[s.SessionID] == PresenceOffline {
				continue
			}
			in := intents[s.SessionID]
			if in == nil || in.State == "done" {
				continue
			}
			for _, h := range in.ResourceHints {
				peers = append(peers, peerHint{s.ParticipantID, h})
			}
		}
		for _, c := range claims {
			live := c.ExpiresAt > nowStr
			switch {
			case c.OwnerSessionID != me.SessionID && live:
				for _, h := range myHints {
					if Overlaps(h, c.Resource) {
						owner := participantOf[c.OwnerSessionID]
						if owner == "" {
							owner = c.OwnerSessionID
						}
						out = append(out, Attention{Kind: AttentionClaimConflict, Priority: 4, SourceID: c.ClaimID,
							Summary: fmt.Sprintf("%s is claimed by %s", c.Resource, owner)})
						break
					}
				}
			case c.OwnerSessionID == me.SessionID && live:
				for _, p := range peers {
					if Overlaps(p.resource, c.Resource) {
						out = append(out, Attention{Kind: AttentionClaimContended, Priority: 5, SourceID: c.ClaimID,
							Summary: fmt.Sprintf("%s - %s means to work on what you hold", c.Resource, p.participant)})
						break
					}
				}
			case c.OwnerSessionID == me.SessionID:
				summary := fmt.Sprintf("%s - your claim has run out, and peers can write to it", c.Resource)
				if _, ok := c.Extensions["takenOver"]; ok {
					summary = fmt.Sprintf("%s - your claim was taken over while your process was gone; your inbox says by whom", c.Resource)
				}
				out = append(out, Attention{Kind: AttentionClaimExpired, Priority: 6, SourceID: c.ClaimID, Summary: summary})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		return out[i].SourceID < out[j].SourceID
	})
	return out, nil
}
