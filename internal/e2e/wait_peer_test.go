package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// TestWaitIdleAndFinished: acc wait --idle in another process returns
// when the peer's turn ends (its activity recorded idle, as its turn-end
// hook does), naming the session; --finished when its last session
// closes; a peer still working runs a wait out (exit 3). The wake-up
// latencies are logged, not asserted
// (docs/delivery.md#knowing-when-a-peer-is-free).
func TestWaitIdleAndFinished(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "alice", "cli")
	b := sb.attach(repo, "bob", "claude")
	ctx := context.Background()
	r, err := core.Open(ctx, core.OpenOptions{Cwd: repo, Getenv: sb.getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bob := core.Caller{SessionID: b.SessionID, Generation: b.Generation}
	set := func(state string) time.Time {
		t.Helper()
		if _, err := r.SetActivity(ctx, bob, state); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}

	// Working: the wait runs out, exit 3.
	set(protocol.ActivityWorking)
	w := sb.startWait(repo, "--idle", "bob", "--timeout", "500ms")
	if !w.finished(t, 15*time.Second) || w.code != 3 {
		t.Fatalf("a wait for a working peer: exit %d, %s %s", w.code, w.out.String(), w.err.String())
	}

	var lat []time.Duration
	for i := 0; i < 5; i++ {
		set(protocol.ActivityWorking)
		w := sb.startWait(repo, "--idle", "bob", "--timeout", "20")
		time.Sleep(300 * time.Millisecond) // the waiter is watching by now
		if w.finished(t, 0) {
			t.Fatalf("acc wait --idle returned while bob works: %s %s", w.out.String(), w.err.String())
		}
		ended := set(protocol.ActivityIdle)
		if !w.finished(t, 10*time.Second) {
			t.Fatal("acc wait --idle did not wake within 10 s of the turn's end")
		}
		lat = append(lat, w.ended.Sub(ended))
		var env struct {
			OK   bool `json:"ok"`
			Data struct {
				Satisfied bool               `json:"satisfied"`
				Sessions  []core.PeerSession `json:"sessions"`
			} `json:"data"`
		}
		if err := json.Unmarshal(w.out.Bytes(), &env); err != nil || !env.OK || !env.Data.Satisfied || len(env.Data.Sessions) != 1 ||
			env.Data.Sessions[0].SessionID != b.SessionID || env.Data.Sessions[0].Activity == nil || env.Data.Sessions[0].Activity.State != protocol.ActivityIdle {
			t.Fatalf("acc wait --idle: exit %d, %s %s", w.code, w.out.String(), w.err.String())
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("acc wait --idle woke %v after the turn's end was recorded (sorted; median %v)", lat, lat[len(lat)/2])

	w = sb.startWait(repo, "--finished", "bob", "--timeout", "20")
	time.Sleep(300 * time.Millisecond)
	if w.finished(t, 0) {
		t.Fatalf("acc wait --finished returned while bob is open: %s %s", w.out.String(), w.err.String())
	}
	sb.as(b, "detach")
	closed := time.Now()
	if !w.finished(t, 10*time.Second) || w.code != 0 {
		t.Fatalf("acc wait --finished after the detach: exit %d, %s %s", w.code, w.out.String(), w.err.String())
	}
	t.Logf("acc wait --finished woke %v after acc detach returned", w.ended.Sub(closed).Round(time.Millisecond))
}
