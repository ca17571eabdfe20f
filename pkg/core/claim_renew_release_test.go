package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestRenewingAnExpiredClaimNeverMakesTwoHolders checks that renewing a
// claim by id after it expired, while another session has meanwhile claimed
// the resource, is a claim conflict: otherwise two live exclusive claims
// cover one file and each holder believes it alone may write.
func TestRenewingAnExpiredClaimNeverMakesTwoHolders(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	clock := time.Now()
	for _, r := range []*Room{w.main, w.side} {
		r.Now = func() time.Time { return clock }
	}
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex", CadenceMs: 300_000})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	res, _ = w.side.Attach(ctx, AttachInput{ParticipantID: "claude", CadenceMs: 300_000})
	b := Caller{SessionID: res.SessionID, Generation: res.Generation}
	held, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo, LeaseSeconds: 60, Enforcement: "guarded"})
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(61 * time.Second)
	if _, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:src/**", Cwd: w.wt, Enforcement: "guarded"}); err != nil {
		t.Fatalf("an expired claim must not block: %v", err)
	}
	fp, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx)
	_, err = w.main.RenewClaim(ctx, a, held.ClaimID, 60)
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	if fp2, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx); fp2 != fp {
		t.Fatal("a refused renewal changed the store")
	}
	st, _ := w.main.Status(ctx, StatusQuery{})
	if len(st.Claims) != 1 {
		t.Fatalf("one live claim, not %d: %+v", len(st.Claims), st.Claims)
	}
}

// TestClaimingAgainAfterExpiryRenewsTheClaim checks that a session claiming
// a resource again after its own claim on it expired renews that claim (same
// id), rather than adding a second record: two records of one session on one
// resource made `release --resource` remove one of them at random (the
// resource stayed claimed after "released") and kept claim_expired
// attention alive beside a live claim.
func TestClaimingAgainAfterExpiryRenewsTheClaim(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	clock := time.Now()
	w.main.Now = func() time.Time { return clock }
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex", CadenceMs: 300_000})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	first, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo, LeaseSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(61 * time.Second)
	again, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo})
	if err != nil {
		t.Fatal(err)
	}
	if again.ClaimID != first.ClaimID || !again.Renewed {
		t.Errorf("claiming again after expiry: id %s renewed %v, want the id %s renewed", again.ClaimID, again.Renewed, first.ClaimID)
	}
	st, err := w.main.Status(ctx, StatusQuery{Caller: &a})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range st.Attention {
		if at.Kind == AttentionClaimExpired {
			t.Errorf("claim_expired beside a live claim on the same resource: %+v", at)
		}
	}
	if _, err := w.main.Release(ctx, ReleaseInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo}); err != nil {
		t.Fatal(err)
	}
	if st, _ := w.main.Status(ctx, StatusQuery{}); len(st.Claims) != 0 {
		t.Fatalf("after release --resource the resource is still claimed: %+v", st.Claims)
	}
}

// TestReleaseByResourceHeldByTwoOthersNamesTheWayOut checks the refusal when
// two other sessions hold shared claims on the resource: --authority alone
// cannot say which to release, so the message must name --claim, and the
// store stays unchanged.
func TestReleaseByResourceHeldByTwoOthersNamesTheWayOut(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	var callers []Caller
	for _, p := range []string{"codex", "claude", "gemini"} {
		res, err := w.main.Attach(ctx, AttachInput{ParticipantID: p})
		if err != nil {
			t.Fatal(err)
		}
		callers = append(callers, Caller{SessionID: res.SessionID, Generation: res.Generation})
	}
	for _, c := range callers[:2] {
		if _, err := w.main.Claim(ctx, ClaimInput{Caller: c, Resource: "file:src/a.go", Cwd: w.repo, Mode: "shared"}); err != nil {
			t.Fatal(err)
		}
	}
	fp, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx)
	_, err := w.main.Release(ctx, ReleaseInput{Caller: callers[2], Resource: "file:src/a.go", Cwd: w.repo, Authority: "human", Reason: "the user said so"})
	if err == nil {
		t.Fatal("which of two claims? must be refused")
	}
	if msg := err.Error(); !strings.Contains(msg, "{field claim=ID}") {
		t.Errorf("the refusal must name the claim field (--claim ID), the only way to pick one: %v", msg)
	}
	if fp2, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx); fp2 != fp {
		t.Fatal("a refused release changed the store")
	}
}
