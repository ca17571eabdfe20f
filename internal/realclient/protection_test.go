package realclient

import (
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestProtection proves the last rule of docs/decisions.md#6-measured-capabilities
// with real clients:
// `acc status` reports protection guarded only while every live session's
// client has its guard proven and every live claim is guarded. Claude Code
// in worktree A, Codex and Kimi Code in worktree B are held mid-turn (their sessions
// live, attached as guarded by their evidence); with a guarded claim of
// A's, protection is guarded. A manual `acc attach` session (no guard of
// its own) makes it advisory; when that session detaches it is guarded
// again.
func TestProtection(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gates := map[string]*gate{}
	var runs []*run
	var waits []*pending
	for _, side := range []struct {
		c   Client
		dir string
	}{{Claude, w.repo}, {Codex, w.wt}, {Kimi, w.wt}} {
		g := newGate()
		r := w.hooked(t, side.c, side.dir, fakemodel.Script{g.hold(fakemodel.Say("Holding."))})
		p := r.start("Wait here.")
		defer g.release()
		g.waitAsked(t, p)
		gates[side.c.Name] = g
		runs = append(runs, r)
		waits = append(waits, p)
	}
	for _, r := range runs {
		if !expectGuarded(r.client) {
			if updatingEvidence() {
				t.Skipf("%s@%s has no guard evidence yet; rerun without %s once it is recorded", r.client.Name, r.client.Version, UpdateEvidenceEnv)
			}
			t.Fatalf("%s@%s: the adapter's evidence does not prove its guard (guardFiles and guardShell)", r.client.Name, r.client.Version)
		}
	}
	claude, err := w.shownCaller(gates["claude"].req, "claude")
	if err != nil {
		t.Fatal(err)
	}
	w.mustAcc(w.repo, append([]string{"claim", "--resource", "file:src/p.go", "--enforcement", "guarded"}, claude.args()...)...)

	wantProtection := func(want, when string) {
		t.Helper()
		st, err := w.status()
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, p := range st.Participants {
			if p.State == "open" && p.Presence != "offline" {
				live++
				t.Logf("%s: live %s session %s (%s)", when, p.Harness, p.SessionID, p.Enforcement)
			}
		}
		if st.Protection != want {
			t.Errorf("%s: protection %q, want %q (live sessions %d, claims %+v)", when, st.Protection, want, live, st.Claims)
		} else {
			t.Logf("%s: protection %s", when, st.Protection)
		}
	}
	wantProtection("guarded", "three hooked sessions and a guarded claim")
	manual := w.attach(w.wt, "person")
	wantProtection("advisory", "with a manual acc attach session")
	w.mustAcc(w.wt, append([]string{"detach"}, manual.args()...)...)
	wantProtection("guarded", "after the manual session detached")

	for i, r := range runs {
		gates[r.client.Name].release()
		r.wait(waits[i])
	}
}
