package core

import (
	"context"
	"fmt"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// GuardInput is a write a client is about to make (reference/adapters.md §5).
type GuardInput struct {
	// SessionID is the writing session ("" when the client is not bound:
	// every claim then belongs to someone else).
	SessionID string
	// Cwd is the directory the client's payload states; relative targets
	// are resolved against it, never against the hook process's directory.
	Cwd string
	// Targets are the paths the call writes, as the client gave them.
	Targets []string
}

// GuardDecision says whether the write may proceed.
type GuardDecision struct {
	Deny bool `json:"deny"`
	// Reason is what the model is told when denied.
	Reason string `json:"reason,omitempty"`
	// Resource, ClaimID, HolderParticipantID and HolderSessionID name the
	// claim that denied the write.
	Resource            string `json:"resource,omitempty"`
	ClaimID             string `json:"claimId,omitempty"`
	HolderParticipantID string `json:"holderParticipantId,omitempty"`
	HolderSessionID     string `json:"holderSessionId,omitempty"`
	// Resources are the targets' canonical names; Outside lists targets
	// outside the workspace, which no claim can cover (allowed, reported).
	Resources []string `json:"resources"`
	Outside   []string `json:"outside,omitempty"`
}

// CheckWrite decides a write with the one canonical name function
// (SPEC decision 8): it denies when a live guarded claim owned by another
// session overlaps any target's resource, and allows everything else — a
// session is never blocked by its own claim, and a target outside the
// workspace is allowed and reported. It only reads.
func (r *Room) CheckWrite(ctx context.Context, in GuardInput) (*GuardDecision, error) {
	d := &GuardDecision{Resources: []string{}}
	for _, t := range in.Targets {
		if t == "" {
			continue
		}
		res, err := r.WS.CanonicalPath(t, in.Cwd)
		if err != nil {
			if protocol.IsReason(err, protocol.ReasonPathOutsideWorkspace) {
				d.Outside = append(d.Outside, t)
				continue
			}
			return nil, err
		}
		d.Resources = append(d.Resources, res)
	}
	if len(d.Resources) == 0 {
		return d, nil
	}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		now := protocol.FormatTime(r.now())
		for _, c := range claims {
			if c.Enforcement != protocol.EnforcementGuarded || c.ExpiresAt <= now || c.OwnerSessionID == in.SessionID {
				continue
			}
			for _, res := range d.Resources {
				if !Overlaps(c.Resource, res) {
					continue
				}
				owner := c.OwnerSessionID
				if s, _, err := findSession(tx, c.OwnerSessionID); err == nil && s != nil {
					owner = s.ParticipantID
				}
				d.Deny, d.Resource, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, res, c.ClaimID, owner, c.OwnerSessionID
				// The paths come from the client's payload and a peer's claim:
				// shown by the one display rule (docs/concepts.md).
				held := "claimed"
				if c.Resource != res {
					held = "inside " + protocol.EscapeText(c.Resource, protocol.TextLine) + ", claimed"
				}
				d.Reason = fmt.Sprintf("acc: %s is %s by %s (session %s, guarded) until %s; "+
					"do not work around it: ask them with `acc message --to %s --type question …`, work on something else, or wait for its release",
					protocol.EscapeText(res, protocol.TextLine), held, owner, c.OwnerSessionID, c.ExpiresAt, owner)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
