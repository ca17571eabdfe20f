package core

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Claim leases (docs/protocol.md#acquiring-a-claim).
const (
	DefaultLeaseSeconds = 1800
	MaxLeaseSeconds     = 7 * 24 * 3600
	// DefaultClaimReason is recorded when a claim names no reason.
	DefaultClaimReason = "unspecified"
)

// ClaimInput acquires (or renews) a claim on a resource.
type ClaimInput struct {
	Caller Caller
	// Resource is as the caller typed it; Cwd is where (absolute).
	Resource, Cwd string
	// Mode is exclusive or shared; Enforcement advisory or guarded; Reason
	// one line. Left empty, each keeps the value of the claim being
	// renewed, else defaults: exclusive, the workspace's
	// policy.claimMode (else advisory), DefaultClaimReason.
	Mode         string
	Enforcement  string
	Reason       string
	LeaseSeconds int // 0 = DefaultLeaseSeconds
	// WaitFlags are the flags and values the front adds to the wait
	// command a conflict names, so that it runs where the claim ran and
	// for the same session (the CLI's --cwd, --workspace and --session,
	// docs/delivery.md#waiting-for-an-answer-without-polling); each is
	// quoted for the shell.
	WaitFlags []string
}

// ClaimResult is an acquired or renewed claim.
type ClaimResult struct {
	protocol.Claim
	OwnerParticipantID string `json:"ownerParticipantId"`
	Renewed            bool   `json:"renewed"`
	// TakenOver are the orphaned claims this claim took over (omitted
	// when none).
	TakenOver []TakenOver `json:"takenOver,omitempty"`
}

// CheckClaim applies Claim's rules that need no store: the resource's
// spelling and place in the workspace, the mode, enforcement, reason and
// lease. Surfaces that refuse bad input before resolving a session (MCP)
// call it; Claim applies the same rules. Errors as Claim's, exit 2 and 4.
func (r *Room) CheckClaim(in ClaimInput) error {
	_, _, err := r.prepareClaim(&in)
	return err
}

// prepareClaim checks in and fills its defaults; it returns the canonical
// resource and the lease.
func (r *Room) prepareClaim(in *ClaimInput) (string, time.Duration, error) {
	resource, err := CanonicalResource(r.WS, in.Resource, in.Cwd)
	if err != nil {
		return "", 0, err
	}
	if in.Mode == "" {
		in.Mode = protocol.ClaimExclusive
	}
	if in.Enforcement == "" {
		in.Enforcement = r.WS.Policy.ClaimMode
		if in.Enforcement == "" {
			in.Enforcement = protocol.EnforcementAdvisory
		}
	}
	if in.Reason == "" {
		in.Reason = DefaultClaimReason
	}
	lease, err := checkLease(in.LeaseSeconds)
	if err != nil {
		return "", 0, err
	}
	if err := firstError(
		protocol.CheckOneOf("mode", in.Mode, protocol.ClaimShared, protocol.ClaimExclusive),
		protocol.CheckOneOf("enforcement", in.Enforcement, protocol.EnforcementAdvisory, protocol.EnforcementGuarded),
		protocol.CheckLine("reason", in.Reason, protocol.MaxLineText),
	); err != nil {
		return "", 0, err
	}
	return resource, lease, nil
}

// Claim acquires a claim, or renews the caller's own claim on the identical
// resource (same claim id, acquiredAt kept, new expiry and claim generation;
// a mode, enforcement or reason left empty keeps the renewed claim's own),
// in one transaction with the overlap check (docs/protocol.md#acquiring-a-claim). It
// materialises the room. Errors: exit 2 for a resource spelling acc refuses
// or a path outside the workspace; exit 4 for invalid text or lease; exit 5
// claim_conflict when an overlapping live claim of another session is
// exclusive or the request is, naming the holder; exit 5 for a stale
// generation. An overlapping claim whose owner's process is gone past the
// workspace's orphan grace does not conflict: the new claim takes it over
// in the same transaction (takeOver;
// docs/concepts.md#when-a-holder-dies) and ClaimResult.TakenOver names it.
func (r *Room) Claim(ctx context.Context, in ClaimInput) (*ClaimResult, error) {
	// What the caller left out is kept from the claim it renews; the
	// defaults only apply to a new claim.
	given := in
	resource, lease, err := r.prepareClaim(&in)
	if err != nil {
		return nil, err
	}
	spelled := r.spelling(resource, in.Resource, in.Cwd)
	// A takeover's note carries `git diff --stat` of the paths taken, read
	// outside the write lock: the first pass that meets orphaned claims
	// stops, the stat is read, and the second pass uses it.
	var stat *takeoverStat
	for {
		out, need, err := r.claimOnce(ctx, in, given, resource, spelled, lease, stat)
		if errors.Is(err, errNeedStat) && stat == nil {
			stat = &takeoverStat{resources: need, text: r.uncommittedStat(ctx, need)}
			continue
		}
		return out, err
	}
}

// takeoverStat is the uncommitted-changes text read for resources.
type takeoverStat struct {
	resources []string
	text      string
}

// errNeedStat stops a claim transaction that would take over claims whose
// uncommitted changes have not been read yet.
var errNeedStat = errors.New("acc: the takeover's diff stat is not read yet")

// claimOnce is one transaction of Claim. It returns errNeedStat, with the
// resources to read, when it would take over orphaned claims and stat was
// not read for exactly those.
func (r *Room) claimOnce(ctx context.Context, in, given ClaimInput, resource, spelled string, lease time.Duration, stat *takeoverStat) (*ClaimResult, []string, error) {
	var out *ClaimResult
	var need []string
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, in.Caller, "claim")
		if err != nil {
			return err
		}
		now := r.now()
		at := protocol.FormatTime(now)
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		// mine is the caller's own claim on the identical resource, live or
		// expired: claiming again renews it, so one session never holds two
		// records of one resource (release --resource would pick one).
		var mine *protocol.Claim
		for i := range claims {
			c := &claims[i]
			if c.OwnerSessionID == me.SessionID && c.Resource == resource && (mine == nil || c.ExpiresAt > mine.ExpiresAt) {
				mine = c
			}
		}
		if mine != nil {
			if given.Mode == "" {
				in.Mode = mine.Mode
			}
			if given.Enforcement == "" {
				in.Enforcement = mine.Enforcement
			}
			if given.Reason == "" {
				in.Reason = mine.Reason
			}
		}
		// An overlapping claim of a session whose process is gone past the
		// grace does not conflict: it is taken over
		// (docs/concepts.md#when-a-holder-dies).
		judge := r.orphans(tx, now)
		var taken []*protocol.Claim
		for i := range claims {
			c := &claims[i]
			if c.OwnerSessionID == me.SessionID && c.Resource == resource {
				continue
			}
			if c.ExpiresAt <= at {
				continue
			}
			if c.OwnerSessionID != me.SessionID && Overlaps(c.Resource, resource) &&
				(c.Mode == protocol.ClaimExclusive || in.Mode == protocol.ClaimExclusive) {
				if judge.lapsed(c.OwnerSessionID) {
					taken = append(taken, c)
					continue
				}
				return r.claimConflict(tx, c, resource, spelled, in.WaitFlags, me, now)
			}
		}
		if d, _ := damagedClaimIn(tx, at, me.SessionID, []string{resource}, nil); d != nil {
			return damagedClaimRefusal(d, resource, "claim")
		}
		if err := r.ensureMaterialised(tx, me.SessionID, at); err != nil {
			return err
		}
		c := protocol.Claim{
			SchemaVersion: protocol.SchemaVersion, ClaimID: protocol.NewID(protocol.KindClaim), WorkspaceID: r.WS.ID,
			OwnerSessionID: me.SessionID, Resource: resource, Mode: in.Mode, Enforcement: in.Enforcement,
			Reason: in.Reason, AcquiredAt: at, ExpiresAt: protocol.FormatTime(now.Add(lease)),
			Generation: protocol.NewID(protocol.KindGeneration),
		}
		typ, payload := protocol.EventClaimAcquired, map[string]any{"claimId": c.ClaimID, "resource": resource, "mode": in.Mode}
		if mine != nil {
			c.ClaimID, c.AcquiredAt = mine.ClaimID, mine.AcquiredAt
			typ, payload = protocol.EventClaimRenewed, map[string]any{"claimId": c.ClaimID, "resource": resource, "mode": in.Mode}
		}
		var takenRes []string
		for _, t := range taken {
			takenRes = append(takenRes, t.Resource)
		}
		if len(taken) > 0 && (stat == nil || !sameStrings(stat.resources, takenRes)) {
			if stat == nil {
				need = takenRes
				return errNeedStat
			}
			// The orphaned claims changed between the two passes: the
			// note says so rather than show the stat of other paths.
			stat = &takeoverStat{resources: takenRes, text: "acc did not read them: the claims taken changed while it looked; run `git diff --stat HEAD` on those paths"}
		}
		if err := tx.PutClaim(&c); err != nil {
			return err
		}
		if err := tx.AppendEvent(newEvent(at, me.SessionID, typ, payload)); err != nil {
			return err
		}
		out = &ClaimResult{Claim: c, OwnerParticipantID: me.ParticipantID, Renewed: mine != nil}
		if len(taken) > 0 {
			if out.TakenOver, err = r.takeOver(tx, me, &c, taken, judge, stat.text, at); err != nil {
				return err
			}
		}
		if err := r.touch(tx, me.SessionID, at); err != nil {
			return err
		}
		return nil
	})
	return out, need, err
}

// takeOver ends each claim in taken, overtaken by the new claim c of
// session me: the record stays, ended at at and marked with who took it
// (extensions.takenOver), with a claim.taken_over event naming the new
// claim, the taker, the grace and the evidence; then each former
// participant other than me's own gets one note naming what was taken and
// stat, the uncommitted changes left in those paths.
func (r *Room) takeOver(tx storage.Tx, me *protocol.Session, c *protocol.Claim, taken []*protocol.Claim, judge *orphanJudge, stat, at string) ([]TakenOver, error) {
	var out []TakenOver
	byParticipant := map[string][]int{}
	var order []string
	for _, old := range taken {
		o := judge.of(old.OwnerSessionID)
		former := r.claimOwner(tx, old)
		replaced := old.Generation
		old.ExpiresAt = at
		if old.Extensions == nil {
			old.Extensions = protocol.Extensions{}
		}
		old.Extensions["takenOver"] = map[string]any{"byClaimId": c.ClaimID, "bySessionId": me.SessionID, "at": at}
		if err := tx.PutClaim(old); err != nil {
			return nil, err
		}
		if err := tx.AppendEvent(newEvent(at, me.SessionID, protocol.EventClaimTakenOver, map[string]any{
			"claimId": old.ClaimID, "resource": old.Resource, "byClaimId": c.ClaimID,
			"formerSessionId": old.OwnerSessionID, "formerParticipantId": former,
			"graceMs": o.GraceMs, "lastSeenAt": o.LastSeenAt, "evidence": o.Evidence(),
			"replacedGeneration": replaced,
		})); err != nil {
			return nil, err
		}
		if _, ok := byParticipant[former]; !ok {
			order = append(order, former)
		}
		byParticipant[former] = append(byParticipant[former], len(out))
		out = append(out, TakenOver{ClaimID: old.ClaimID, Resource: old.Resource, OwnerSessionID: old.OwnerSessionID,
			OwnerParticipantID: former, Orphan: *o})
	}
	for _, p := range order {
		if p == me.ParticipantID || !protocol.IsPortableID(p) {
			continue // the taker knows; a session without a participant has no inbox
		}
		var mine []TakenOver
		for _, i := range byParticipant[p] {
			mine = append(mine, out[i])
		}
		subject, body := takeoverNote(me, mine, stat)
		send := SendInput{To: []string{p}, Kind: protocol.KindNote, Subject: subject, Body: body,
			ClientMessageID: protocol.NewID(protocol.KindClient)}
		if checkMessageText(send) != nil {
			_, send.Body = takeoverNote(me, mine, "(the diff stat held text a message cannot carry; run `git diff --stat HEAD` on those paths)")
		}
		res, err := r.recordAs(tx, me, send)
		if err != nil {
			return nil, err
		}
		for _, i := range byParticipant[p] {
			out[i].MessageID = res.Message.MessageID
		}
	}
	return out, nil
}

// sameStrings reports whether a and b hold the same strings in the same
// order.
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// CheckLease refuses a lease outside 1..MaxLeaseSeconds seconds (0 means
// the default). Exit 4.
func CheckLease(seconds int) error {
	_, err := checkLease(seconds)
	return err
}

func checkLease(seconds int) (time.Duration, error) {
	if seconds == 0 {
		seconds = DefaultLeaseSeconds
	}
	if seconds < 1 || seconds > MaxLeaseSeconds {
		return 0, protocol.Errorf(protocol.ReasonInvalidInput, "a lease is 1 to %d seconds, not %d", MaxLeaseSeconds, seconds)
	}
	return time.Duration(seconds) * time.Second, nil
}

// claimConflict is the exit-5 refusal naming the holder of c and the
// three ways on: ask them, narrow the claim, or wait for its release. The
// wait is a protocol.StepWaitRelease carrying requested as the caller
// spelled it from its directory and waitFlags quoted for the shell; the CLI
// words it as an acc wait command, acc-mcp (which has no wait tool) as
// claiming again (docs/cli.md#refusal-details).
func (r *Room) claimConflict(tx storage.ReadTx, c *protocol.Claim, requested, spelled string, waitFlags []string, me *protocol.Session, now time.Time) error {
	owner, presence := c.OwnerSessionID, PresenceOffline
	if s, _, err := findSession(tx, c.OwnerSessionID); err == nil && s != nil {
		owner = s.ParticipantID
		presence = Presence(s, now, r.Probe)
	}
	return protocol.Errorf(protocol.ReasonClaimConflict,
		"%s is already claimed by %s (%s, %s, %s) until %s; ask them (%s), narrow your claim, or %s",
		requested, owner, c.OwnerSessionID, presence, c.Mode+" "+c.Resource, c.ExpiresAt,
		protocol.Step{Command: protocol.StepMessage, Args: map[string]string{"to": owner}},
		protocol.Step{Command: protocol.StepWaitRelease, Args: map[string]string{"resource": spelled, "flags": shellWords(waitFlags)}}).
		With("claimId", c.ClaimID).With("resource", c.Resource).With("ownerSessionId", c.OwnerSessionID).
		With("ownerParticipantId", owner).With("ownerPresence", presence).With("expiresAt", c.ExpiresAt).
		With("requestedBy", me.SessionID)
}

// RenewClaim extends the caller's claim by id (new expiry and claim
// generation, same id). Errors: exit 5 claim_not_found when no such claim
// exists, exit 5 claim_not_owner when another session owns it.
func (r *Room) RenewClaim(ctx context.Context, c Caller, claimID string, leaseSeconds int) (*ClaimResult, error) {
	lease, err := checkLease(leaseSeconds)
	if err != nil {
		return nil, err
	}
	var out *ClaimResult
	err = r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, c, "renew a claim")
		if err != nil {
			return err
		}
		cl, err := tx.Claim(claimID)
		if err != nil {
			return err
		}
		if cl == nil {
			return claimNotFound(claimID)
		}
		if cl.OwnerSessionID != me.SessionID {
			return protocol.Errorf(protocol.ReasonClaimNotOwner, "only the owning session generation may renew claim %s; claim the resource yourself once it is released", claimID).With("claimId", claimID)
		}
		now := r.now()
		at := protocol.FormatTime(now)
		// An expired claim may have been overtaken meanwhile: renewing it
		// must not make a second holder
		// (docs/protocol.md#acquiring-a-claim).
		claims, err := tx.Claims()
		if err != nil {
			return err
		}
		for i := range claims {
			c := &claims[i]
			if c.OwnerSessionID != me.SessionID && c.ExpiresAt > at && Overlaps(c.Resource, cl.Resource) &&
				(c.Mode == protocol.ClaimExclusive || cl.Mode == protocol.ClaimExclusive) {
				return r.claimConflict(tx, c, cl.Resource, cl.Resource, nil, me, now)
			}
		}
		if d, _ := damagedClaimIn(tx, at, me.SessionID, []string{cl.Resource}, nil); d != nil {
			return damagedClaimRefusal(d, cl.Resource, "renew the claim on")
		}
		cl.ExpiresAt = protocol.FormatTime(now.Add(lease))
		cl.Generation = protocol.NewID(protocol.KindGeneration)
		if err := tx.PutClaim(cl); err != nil {
			return err
		}
		if err := tx.AppendEvent(newEvent(at, me.SessionID, protocol.EventClaimRenewed, map[string]any{"claimId": claimID})); err != nil {
			return err
		}
		out = &ClaimResult{Claim: *cl, OwnerParticipantID: me.ParticipantID, Renewed: true}
		return nil
	})
	return out, err
}

func claimNotFound(id string) error {
	return protocol.Errorf(protocol.ReasonClaimNotFound, "the claim %s does not exist (it was released, or never made); %s lists live claims", id, protocol.Step{Command: protocol.StepStatus}).With("claimId", id)
}

// ReleaseInput names a claim by id or by resource (matched against the
// caller's own claims).
type ReleaseInput struct {
	Caller            Caller
	ClaimID           string
	Resource, Cwd     string
	Authority, Reason string // a forced release of another session's claim
}

// ReleaseResult reports a released claim.
type ReleaseResult struct {
	ClaimID   string  `json:"claimId"`
	Resource  string  `json:"resource"`
	Forced    bool    `json:"forced"`
	Authority *string `json:"authority"`
	// ToldMessageID is the note that told the holder of a claim released
	// by force ("" when it was the caller's own, or the holder has no
	// inbox).
	ToldMessageID string `json:"toldMessageId,omitempty"`
}

// Release removes a claim (docs/protocol.md#releasing-a-claim): the owner's release,
// expired or not, is claim.released; another session's claim needs
// --authority human or policy and a reason (claim.force_released), and
// policy authority covers only a claim whose lease has run out
// (docs/concepts.md#forced-release): a live claim is released by its
// holder or by a person. That human authority comes from a person at a
// terminal is the caller's to check (the CLI does, before calling).
// Errors: exit 5 claim_not_found, exit 5 force_release_authority (no
// authority, or policy on a live claim), exit 4 for a missing reason,
// exit 5 for a stale generation.
func (r *Room) Release(ctx context.Context, in ReleaseInput) (*ReleaseResult, error) {
	var resource string
	if in.ClaimID == "" {
		var err error
		if resource, err = CanonicalResource(r.WS, in.Resource, in.Cwd); err != nil {
			return nil, err
		}
	}
	if in.Authority != "" {
		if err := protocol.CheckOneOf("authority", in.Authority, "human", "policy"); err != nil {
			return nil, err
		}
		if in.Reason == "" {
			return nil, protocol.Errorf(protocol.ReasonInvalidInput, "a forced release needs %s describing the human decision or the policy that allows it", protocol.Field("reason"))
		}
	}
	if in.Reason != "" {
		if err := protocol.CheckLine("reason", in.Reason, protocol.MaxLineText); err != nil {
			return nil, err
		}
	}
	var out *ReleaseResult
	err := r.Store.Update(ctx, func(tx storage.Tx) error {
		me, _, err := requireOwner(tx, in.Caller, "release a claim")
		if err != nil {
			return err
		}
		var target *protocol.Claim
		if in.ClaimID != "" {
			if target, err = tx.Claim(in.ClaimID); err != nil {
				return err
			}
			if target == nil {
				return claimNotFound(in.ClaimID)
			}
		} else {
			claims, err := tx.Claims()
			if err != nil {
				return err
			}
			var others []protocol.Claim
			for i := range claims {
				if claims[i].Resource != resource {
					continue
				}
				if claims[i].OwnerSessionID == me.SessionID {
					// The caller's own claim, the live one when there are
					// several.
					if target == nil || claims[i].ExpiresAt > target.ExpiresAt {
						target = &claims[i]
					}
					continue
				}
				others = append(others, claims[i])
			}
			if target == nil && len(others) == 1 && in.Authority != "" {
				target = &others[0]
			}
			if target == nil {
				if len(others) > 1 {
					ids := make([]string, len(others))
					for i := range others {
						ids[i] = others[i].ClaimID
					}
					reason := protocol.ReasonForceReleaseAuthority
					if in.Authority != "" {
						reason = protocol.ReasonUsage
					}
					return protocol.Errorf(reason,
						"%s is held by %d other sessions (claims %s); name the one to release with %s (with %s and %s), or ask its holder", resource, len(others), strings.Join(ids, ", "),
						protocol.FieldValue{Name: "claim", Value: "ID"}, protocol.FieldValue{Name: "authority", Value: "human|policy"}, protocol.Field("reason")).
						With("claimIds", ids)
				}
				if len(others) > 0 {
					return protocol.Errorf(protocol.ReasonForceReleaseAuthority,
						"%s is held by another session (claim %s); releasing it needs %s and %s, or ask its holder", resource, others[0].ClaimID,
						protocol.FieldValue{Name: "authority", Value: "human|policy"}, protocol.Field("reason")).
						With("claimId", others[0].ClaimID)
				}
				return protocol.Errorf(protocol.ReasonClaimNotFound, "you hold no claim on %s; %s lists live claims", resource, protocol.Step{Command: protocol.StepStatus}).With("resource", resource)
			}
		}
		at := protocol.FormatTime(r.now())
		forced := target.OwnerSessionID != me.SessionID
		if forced && in.Authority == "" {
			return protocol.Errorf(protocol.ReasonForceReleaseAuthority,
				"claim %s on %s belongs to another session; %s", target.ClaimID, target.Resource, protocol.Step{Command: protocol.StepForceRelease}).
				With("claimId", target.ClaimID)
		}
		if forced && in.Authority == "policy" && target.ExpiresAt > at {
			return protocol.Errorf(protocol.ReasonForceReleaseAuthority,
				"claim %s on %s is live until %s: policy authority releases only a claim whose lease has run out, and an agent's word is not policy; "+
					"ask its holder to release it, or ask your human to run %s at a terminal",
				target.ClaimID, target.Resource, target.ExpiresAt, protocol.Step{Command: protocol.StepReleaseAsHuman, Args: map[string]string{"claimId": target.ClaimID}}).
				With("claimId", target.ClaimID).With("expiresAt", target.ExpiresAt)
		}
		if err := tx.DeleteClaim(target.ClaimID); err != nil {
			return err
		}
		typ := protocol.EventClaimReleased
		payload := map[string]any{"claimId": target.ClaimID, "authority": nil, "reason": nil, "replacedGeneration": target.Generation}
		res := &ReleaseResult{ClaimID: target.ClaimID, Resource: target.Resource, Forced: forced}
		if forced {
			typ = protocol.EventClaimForceReleased
			payload["authority"], payload["reason"] = in.Authority, in.Reason
			res.Authority = &in.Authority
		} else if in.Reason != "" {
			payload["reason"] = in.Reason
		}
		if err := tx.AppendEvent(newEvent(at, me.SessionID, typ, payload)); err != nil {
			return err
		}
		if forced {
			// The holder may still be editing under the claim: it is told,
			// in the same transaction (docs/concepts.md#forced-release).
			id, err := r.tellForced(tx, me, target, in.Authority, in.Reason)
			if err != nil {
				return err
			}
			res.ToldMessageID = id
		}
		out = res
		return nil
	})
	return out, err
}

// tellForced sends the holder of claim c, released by force by me, a note
// naming the claim, who released it, the authority and the reason, and
// returns its id; "" when the holder is me's own participant or has no
// inbox. A reason a message cannot carry is left out, never the note.
func (r *Room) tellForced(tx storage.Tx, me *protocol.Session, c *protocol.Claim, authority, reason string) (string, error) {
	holder := r.claimOwner(tx, c)
	if holder == me.ParticipantID || !protocol.IsPortableID(holder) {
		return "", nil
	}
	subject := "released your claim on " + c.Resource + " by force"
	body := func(why string) string {
		return fmt.Sprintf("%s released your claim %s on %s with %s authority%s. It no longer reserves the file: "+
			"check what changed before you go on, and claim it again (`acc claim --resource %s`) if you still need it.",
			me.ParticipantID, c.ClaimID, c.Resource, authority, why, ShellWord(c.Resource))
	}
	send := SendInput{To: []string{holder}, Kind: protocol.KindNote, Subject: subject, Body: body(": " + reason),
		ClientMessageID: protocol.NewID(protocol.KindClient)}
	if checkMessageText(send) != nil {
		send.Body = body("")
	}
	res, err := r.recordAs(tx, me, send)
	if err != nil {
		return "", err
	}
	return res.Message.MessageID, nil
}

// IntentInput publishes (or clears) the caller's intent
// (docs/protocol.md#intent-lifecycle).
type IntentInput struct {
	Caller  Caller
	Summary string
	Mode    string // default edit
	State   string // default active
	// Hints are resources as typed; Cwd is where.
	Hints []string
	Cwd   string
	Clear bool
}

// CheckWork applies Work's rules that need no store: the summary, mode and
// state, and each resource hint's spelling and place in the workspace.
// Errors as Work's.
func (r *Room) CheckWork(in IntentInput) error {
	_, err := r.prepareWork(&in)
	return err
}

// prepareWork checks in, fills its defaults and returns the canonical hints.
func (r *Room) prepareWork(in *IntentInput) ([]string, error) {
	hints := []string{}
	if !in.Clear {
		if in.Mode == "" {
			in.Mode = "edit"
		}
		if in.State == "" {
			in.State = "active"
		}
		if err := firstError(
			protocol.CheckLine("summary", in.Summary, protocol.MaxIntentText),
			protocol.CheckOneOf("mode", in.Mode, protocol.IntentModes...),
			protocol.CheckOneOf("state", in.State, protocol.IntentStates...),
		); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, h := range in.Hints {
			c, err := CanonicalResource(r.WS, h, in.Cwd)
			if err != nil {
				return nil, err
			}
			if !seen[c] {
				seen[c] = true
				hints = append(hints, c)
			}
		}
	}
	return hints, nil
}

// Work publishes the caller's intent, or clears it. While the room is not
// materialised the intent stays ephemeral (no event, no materialisation);
// afterwards it is durable with intent.published / intent.cleared. Hints are
// canonicalised like claims. Errors: exit 2 for a hint spelling acc refuses,
// exit 4 for invalid text, exit 5 for a stale generation.
func (r *Room) Work(ctx context.Context, in IntentInput) (*protocol.Intent, error) {
	hints, err := r.prepareWork(&in)
	if err != nil {
		return nil, err
	}
	var out *protocol.Intent
	err = r.Store.Update(ctx, func(tx storage.Tx) error {
		me, area, err := requireOwner(tx, in.Caller, "publish intent")
		if err != nil {
			return err
		}
		at := protocol.FormatTime(r.now())
		cur, err := tx.Intent(area, me.SessionID)
		if err != nil {
			return err
		}
		if in.Clear {
			if cur == nil {
				out = nil
				return nil
			}
			if area == storage.Ephemeral {
				out = cur
				return tx.DeleteIntent(storage.Ephemeral, me.SessionID)
			}
			cur.State, cur.UpdatedAt = "done", at
			if err := tx.PutIntent(storage.Durable, cur); err != nil {
				return err
			}
			out = cur
			return tx.AppendEvent(newEvent(at, me.SessionID, protocol.EventIntentCleared, nil))
		}
		i := &protocol.Intent{SchemaVersion: protocol.SchemaVersion, SessionID: me.SessionID, WorkspaceID: r.WS.ID,
			Summary: in.Summary, Mode: in.Mode, ResourceHints: hints, State: in.State, UpdatedAt: at}
		if err := tx.PutIntent(area, i); err != nil {
			return err
		}
		out = i
		if area == storage.Ephemeral {
			return nil
		}
		if err := tx.AppendEvent(newEvent(at, me.SessionID, protocol.EventIntentPublished, map[string]any{"mode": i.Mode, "state": i.State})); err != nil {
			return err
		}
		return r.touch(tx, me.SessionID, at)
	})
	return out, err
}

// spelling names the canonical resource so that it reads the same from
// cwd, for the refusal's `acc wait --released …` (acc reads a relative
// file: path from where it runs): the canonical name when it does (as at
// the checkout root), else the absolute path under this checkout, which
// reads the same from anywhere in the room, else raw as typed.
func (r *Room) spelling(resource, raw, cwd string) string {
	reads := func(s string) bool {
		again, err := CanonicalResource(r.WS, s, cwd)
		return err == nil && again == resource
	}
	if reads(resource) {
		return resource
	}
	if rel, ok := strings.CutPrefix(resource, "file:"); ok {
		if abs := "file:" + filepath.Join(r.WS.CheckoutRoot(), rel); reads(abs) {
			return abs
		}
	}
	return raw
}

// ShellWord is s as one word a POSIX shell passes on unchanged: as it is
// when it holds only safe characters, else single-quoted (file:src/** is
// quoted, so no shell option can expand its glob). A word holding a
// character the display rule escapes (protocol.EscapeText: controls, C1,
// bidi formatting, line separators, bytes that are not UTF-8) is written
// in ANSI-C quotes, $'…' with \xNN escapes: single quotes would be shown
// escaped, and pasting what was shown would pass other bytes — a
// different resource, say, that no claim holds.
func ShellWord(s string) string {
	if protocol.EscapeText(s, protocol.TextLine) != s {
		return ANSICQuote(s)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords joins words with spaces, each as ShellWord spells it.
func shellWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = ShellWord(w)
	}
	return strings.Join(out, " ")
}

// ANSICQuote writes s as $'…' (bash, zsh, ksh and POSIX.1-2024 sh):
// printable ASCII and every UTF-8 character the display rule keeps stay as
// they are; backslash and quote are escaped; every other byte is \xNN. The
// result survives the display rule unchanged and pastes back the same
// bytes.
func ANSICQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1, protocol.Escaped(r, protocol.TextLine):
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// damagedClaims returns the claim rows whose record does not decode that
// the transaction's Claims left out, by what their own columns say
// (docs/design.md#damaged-records).
func damagedClaims(tx storage.ReadTx) []storage.DamagedClaim {
	var out []storage.DamagedClaim
	for _, d := range tx.Damaged() {
		if d.Table == "claims" && d.Claim != nil {
			out = append(out, *d.Claim)
		}
	}
	return out
}

// damagedClaimIn returns the first damaged claim row that is live at now
// (an RFC 3339 UTC time), held by a session other than me (the empty
// string for no session), and whose resource overlaps one of resources,
// or any such row at all when resources is nil; nil when there is none.
// Its mode and enforcement are lost, so it is taken for exclusive and
// guarded: acc never grants or allows what it could have forbidden
// (docs/hooks.md#a-damaged-claim). A non-nil lapsed leaves out the rows
// of owners it reports true for (orphaned claims, orphanJudge.lapsed).
func damagedClaimIn(tx storage.ReadTx, now, me string, resources []string, lapsed func(owner string) bool) (*storage.DamagedClaim, string) {
	for _, d := range damagedClaims(tx) {
		if d.ExpiresAt <= now || d.OwnerSessionID == me || (lapsed != nil && lapsed(d.OwnerSessionID)) {
			continue
		}
		if resources == nil {
			return &d, d.Resource
		}
		for _, res := range resources {
			if Overlaps(d.Resource, res) {
				return &d, res
			}
		}
	}
	return nil, ""
}

// damagedClaimRefusal is the store_corrupt refusal of a command that
// must know what damaged claim d says before it can act on resource.
func damagedClaimRefusal(d *storage.DamagedClaim, resource, doing string) error {
	return protocol.Errorf(protocol.ReasonStoreCorrupt,
		"cannot %s %s: claim %s on %s (session %s, until %s) is stored damaged, so acc cannot tell its mode; %s names it; restore the store from a backup, or try again after it expires",
		doing, EscapePeerLine(resource), d.ClaimID, EscapePeerLine(d.Resource), EscapePeerLine(d.OwnerSessionID), EscapePeerLine(d.ExpiresAt), protocol.Step{Command: protocol.StepDoctor}).
		With("claimId", d.ClaimID)
}
