package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestOrphanGraceBoundaries drives the clock across the grace: a claim of
// a session whose process is gone blocks while its heartbeat is at most
// the grace old and lapses just after; one whose process lives, or that
// recorded no pid, never lapses. The takeover ends the old row and
// records who took it.
func TestOrphanGraceBoundaries(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return now }
	tr.WS.Policy.OrphanGraceMs = 5000
	probe := mapProbe{}
	tr.Probe = probe
	ctx := context.Background()

	attach := func(p string, pid int) Caller {
		res, err := tr.Attach(ctx, AttachInput{ParticipantID: p, Harness: "cli", PID: pid})
		if err != nil {
			t.Fatal(err)
		}
		return Caller{SessionID: res.SessionID, Generation: res.Generation}
	}
	dead, alive, nopid := attach("dead", 900001), attach("alive", 900002), attach("nopid", 0)
	taker := attach("taker", 0)
	for c, res := range map[Caller]string{dead: "file:d.go", alive: "file:a.go", nopid: "file:n.go"} {
		if _, err := tr.Claim(ctx, ClaimInput{Caller: c, Resource: res, Cwd: tr.dir, Enforcement: protocol.EnforcementGuarded, LeaseSeconds: MaxLeaseSeconds}); err != nil {
			t.Fatal(err)
		}
	}
	probe[900001] = ProcessInfo{} // gone

	check := func(res string, wantDeny bool) {
		t.Helper()
		d, err := tr.CheckWrite(ctx, GuardInput{SessionID: taker.SessionID, Cwd: tr.dir, Targets: []string{strings.TrimPrefix(res, "file:")}})
		if err != nil || d.Deny != wantDeny {
			t.Fatalf("write into %s at %s: deny=%v (%v), want %v", res, now, d != nil && d.Deny, err, wantDeny)
		}
	}
	released := func(res string) bool {
		t.Helper()
		w, err := tr.CheckCondition(ctx, WaitQuery{For: WaitRelease, Resource: res, Cwd: tr.dir, Caller: &taker})
		if err != nil {
			t.Fatal(err)
		}
		return w.Satisfied
	}
	// Exactly the grace after the last heartbeat: still blocking, and
	// `acc wait --released` still waits.
	now = now.Add(5 * time.Second)
	check("file:d.go", true)
	if released("file:d.go") {
		t.Fatal("acc wait --released returned while the dead holder's grace runs")
	}
	fp := tr.fingerprint()
	_, err := tr.Claim(ctx, ClaimInput{Caller: taker, Resource: "file:d.go", Cwd: tr.dir})
	wantReason(t, err, protocol.ReasonClaimConflict, 5)
	if tr.fingerprint() != fp {
		t.Fatal("a refused claim changed the store")
	}

	// A millisecond later it has lapsed; the others never do.
	now = now.Add(time.Millisecond)
	check("file:d.go", false)
	if !released("file:d.go") || released("file:a.go") || released("file:n.go") {
		t.Fatal("acc wait --released should see only the dead holder's claim lapse")
	}
	now = now.Add(48 * time.Hour / 2)
	check("file:a.go", true)
	check("file:n.go", true)
	st, err := tr.Status(ctx, StatusQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Claims {
		if (c.Orphaned != nil) != (c.Resource == "file:d.go") {
			t.Fatalf("only file:d.go should be orphaned: %+v", c)
		}
	}

	res, err := tr.Claim(ctx, ClaimInput{Caller: taker, Resource: "file:d.go", Cwd: tr.dir, LeaseSeconds: 60})
	if err != nil || len(res.TakenOver) != 1 || res.TakenOver[0].PID != 900001 || res.TakenOver[0].MessageID == "" {
		t.Fatalf("the claim should take d.go over: %+v %v", res, err)
	}
	if err := tr.Store.View(ctx, func(tx storage.ReadTx) error {
		cl, err := tx.Claim(res.TakenOver[0].ClaimID)
		if err != nil || cl == nil || cl.ExpiresAt != protocol.FormatTime(now) || cl.Extensions["takenOver"] == nil {
			t.Fatalf("the old row should stay, ended now and marked: %+v %v", cl, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range tr.events() {
		if e.Type == protocol.EventClaimTakenOver {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("want one claim.taken_over event, got %d", n)
	}
	// The live holder's and the pid-less holder's claims still conflict.
	for _, r := range []string{"file:a.go", "file:n.go"} {
		_, err := tr.Claim(ctx, ClaimInput{Caller: taker, Resource: r, Cwd: tr.dir})
		wantReason(t, err, protocol.ReasonClaimConflict, 5)
	}
}
