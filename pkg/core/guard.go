package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// GuardInput is a write a client is about to make (docs/hooks.md#what-the-guard-sees).
type GuardInput struct {
	// SessionID is the writing session ("" when the client is not bound:
	// every claim then belongs to someone else).
	SessionID string
	// Cwd is the directory the client's payload states; relative targets
	// are resolved against it, never against the hook process's directory.
	Cwd string
	// Targets are the paths the call writes, as the client gave them.
	Targets []string
	// Unknown, when not empty, says why the call may write somewhere
	// Targets does not name (a shell command too large for the guard to
	// read, docs/hooks.md): any live guarded claim of another session then
	// denies the call, since the write could land in it.
	Unknown string
	// Hidden are writes whose targets cannot be known before the command
	// runs (a command substitution, a variable set outside the command,
	// inline interpreter code): each denies the call when one of its hints
	// reaches a live guarded claim of another session, and is allowed
	// otherwise (docs/hooks.md#how-the-guard-reads-a-shell-command).
	Hidden []HiddenWrite
	// HintReaches decides whether a hint could name a workspace-relative
	// path (the adapter's generous matcher); nil: only a hint that is the
	// path itself, or a directory above it, reaches it.
	HintReaches func(hint, path string) bool
	// Git are the effects of git commands in this room's worktrees
	// (GitTouched): a path one would change or sweep that a live guarded
	// claim of another session covers denies the call, naming the paths
	// and a command that stays clear of them
	// (docs/hooks.md#git-commands-the-guard-looks-into).
	Git []GitWrite
}

// HiddenWrite is a write whose target acc cannot know before it runs.
type HiddenWrite struct {
	// Why says in plain words what hides the target ("python3 -c runs code
	// acc cannot read"); it names at most a program.
	Why string
	// Hints are literal fragments of the command that could name what it
	// writes.
	Hints []string
}

// GitWrite is one git command of a shell call and what it would do.
type GitWrite struct {
	// Command names it for the model: "git" and its subcommand.
	Command string
	// Dir is the absolute directory git runs in: the {paths} of
	// Effect.Clear are written relative to it.
	Dir    string
	Effect *GitEffect
}

// guardStoreReserve is the part of the caller's deadline that naming the
// targets leaves for reading the claims: once less than this remains,
// the targets not yet named count as unknown (GuardInput.Unknown).
const guardStoreReserve = time.Second

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
	// WorkspaceID names the room whose claim denied the write when it is
	// not the room of the client's directory (CheckWriteRooms).
	WorkspaceID string `json:"workspaceId,omitempty"`
	// Resources are the targets' canonical names; Outside lists targets
	// outside the workspace, which no claim can cover (allowed, reported).
	Resources []string `json:"resources"`
	Outside   []string `json:"outside,omitempty"`
	// Unknown says why some targets were not checked ("" when all were);
	// an allowed call with Unknown set met no guarded claim of another
	// session at all.
	Unknown string `json:"unknown,omitempty"`
}

// CheckWrite decides a write with the one canonical name function
// (docs/decisions.md#8-one-canonical-path): it denies when a live guarded claim owned by another
// session overlaps any target's resource, and allows everything else — a
// session is never blocked by its own claim, and a target outside the
// workspace is allowed and reported. When some of the call's targets are
// unknown (in.Unknown, or the targets were not all named before the last
// second of ctx's deadline), any live guarded claim of another session
// denies it, with a reason that says why and what to do instead
// (docs/hooks.md#commands-too-large-to-read). A claim row whose record
// does not decode counts as a guarded claim on the resource its columns
// name (docs/hooks.md#a-damaged-claim). A claim, damaged or not, whose
// owner's process is gone past the workspace's orphan grace blocks nothing
// (docs/concepts.md#when-a-holder-dies). It only reads.
func (r *Room) CheckWrite(ctx context.Context, in GuardInput) (*GuardDecision, error) {
	d := &GuardDecision{Resources: []string{}}
	unknown := in.Unknown
	stop := time.Time{}
	if dl, ok := ctx.Deadline(); ok {
		stop = dl.Add(-guardStoreReserve)
	}
	bases := nameBases(r.WS)
	for i, t := range in.Targets {
		if i%64 == 63 && !stop.IsZero() && time.Now().After(stop) {
			if unknown == "" {
				unknown = fmt.Sprintf("its %d write targets took longer to check than the hook's budget allows", len(in.Targets))
			}
			break
		}
		if t == "" {
			continue
		}
		res, err := canonicalPathIn(r.WS, bases, t, in.Cwd)
		if err != nil {
			if protocol.IsReason(err, protocol.ReasonPathOutsideWorkspace) {
				d.Outside = append(d.Outside, t)
				continue
			}
			return nil, err
		}
		d.Resources = append(d.Resources, res)
	}
	d.Unknown = unknown
	if len(d.Resources) == 0 && unknown == "" && len(in.Hidden) == 0 && len(in.Git) == 0 {
		return d, nil
	}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		now := protocol.FormatTime(r.now())
		// A claim whose owner's process is gone past the orphan grace no
		// longer blocks (docs/concepts.md#when-a-holder-dies).
		orphans := r.orphans(tx, r.now())
		var blind *protocol.Claim  // the first claim an unknown target could reach
		var live []*protocol.Claim // every claim that blocks this writer
		for i := range claims {
			c := &claims[i]
			if c.Enforcement != protocol.EnforcementGuarded || c.ExpiresAt <= now || c.OwnerSessionID == in.SessionID || orphans.lapsed(c.OwnerSessionID) {
				continue
			}
			if blind == nil {
				blind = c
			}
			live = append(live, c)
			for _, res := range d.Resources {
				if !Overlaps(c.Resource, res) {
					continue
				}
				owner := r.claimOwner(tx, c)
				d.Deny, d.Resource, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, res, c.ClaimID, owner, c.OwnerSessionID
				// The paths come from the client's payload and a peer's claim:
				// shown by the one display rule (docs/concepts.md).
				// The target is the claimed file, lies inside a claimed
				// directory, or is a directory holding the claimed file.
				held := "is claimed"
				switch cp, rp := strings.TrimPrefix(c.Resource, "file:"), strings.TrimPrefix(res, "file:"); {
				case c.Resource == res:
				case covers(cp, rp):
					held = "is inside " + protocol.EscapeText(c.Resource, protocol.TextLine) + ", claimed"
				default:
					held = "holds " + protocol.EscapeText(c.Resource, protocol.TextLine) + ", which is claimed"
				}
				d.Reason = fmt.Sprintf("acc: %s %s by %s (session %s, guarded) until %s; "+
					"do not work around it: ask them with `acc message --to %s --type question …`, work on something else, or wait for its release%s",
					protocol.EscapeText(res, protocol.TextLine), held, owner, c.OwnerSessionID, c.ExpiresAt, owner, waitFor(res, in.SessionID))
				return nil
			}
		}
		if r.denyGit(tx, d, in, bases, live) || r.denyHidden(tx, d, in, live) {
			return nil
		}
		// A damaged claim row cannot say its enforcement: it is kept as
		// guarded by its own columns, so one damaged record never leaves a
		// guarded resource unguarded (docs/hooks.md#a-damaged-claim).
		var reach []string
		if unknown == "" {
			reach = d.Resources
		}
		if dc, res := damagedClaimIn(tx, now, in.SessionID, reach, orphans.lapsed); dc != nil && (unknown == "" || blind == nil) {
			owner := r.claimOwner(tx, &protocol.Claim{OwnerSessionID: dc.OwnerSessionID})
			d.Deny, d.Resource, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, res, dc.ClaimID, owner, dc.OwnerSessionID
			d.Reason = fmt.Sprintf("acc: this call was not run: claim %s on %s by %s (session %s) until %s is stored damaged, so acc cannot tell whether it guards %s; "+
				"run `acc doctor` and restore the store from a backup, ask them with `acc message --to %s --type question …`, or wait until it expires",
				dc.ClaimID, protocol.EscapeText(dc.Resource, protocol.TextLine), owner, protocol.EscapeText(dc.OwnerSessionID, protocol.TextLine),
				protocol.EscapeText(dc.ExpiresAt, protocol.TextLine), protocol.EscapeText(res, protocol.TextLine), owner)
			return nil
		}
		if unknown != "" && blind != nil {
			owner := r.claimOwner(tx, blind)
			d.Deny, d.Resource, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, blind.Resource, blind.ClaimID, owner, blind.OwnerSessionID
			d.Reason = fmt.Sprintf("acc: this call was not run: acc cannot tell where it writes (%s), and %s is claimed by %s (session %s, guarded) until %s; "+
				"split it into smaller commands or tool calls that each name the files they write, so that acc can check them",
				unknown, blind.Resource, owner, blind.OwnerSessionID, blind.ExpiresAt)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// claimOwner is the participant holding c (its session id when the
// session cannot be read).
func (r *Room) claimOwner(tx storage.ReadTx, c *protocol.Claim) string {
	if s, _, err := findSession(tx, c.OwnerSessionID); err == nil && s != nil {
		return s.ParticipantID
	}
	return c.OwnerSessionID
}
