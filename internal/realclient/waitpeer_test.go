package realclient

import (
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestWaitPeer: `acc wait --idle P` and `acc wait --finished P`, run as
// processes of their own while P's real client is in a turn of four shell
// steps a second apart, return once the turn ended (the stop hook fired)
// and once the client exited (the session end hook fired), not before; a
// wait that runs out exits 3. The log gives how long after the hook each
// wait returned (docs/delivery.md, "Knowing when a peer is free"); the
// bound asserted is generous, for a loaded machine.
func TestWaitPeer(t *testing.T) {
	const bound = 10 * time.Second
	for _, c := range turnClients {
		t.Run(c.Name, func(t *testing.T) {
			w := newWorld(t)
			r := w.hooked(t, c, w.wt, nil)
			r.setup.Env = append(r.setup.Env, "ACC_PARTICIPANT=reviewer")
			var idle, finished, short *waiter
			var startedAt time.Time
			r.model.Play(fakemodel.Agenda{
				Steps: fakemodel.PacedSteps(4, time.Second),
				Final: "Review done.",
				React: func(req *fakemodel.Request) []fakemodel.Call {
					if idle == nil && afterStep(req, 1) {
						startedAt = time.Now()
						idle = w.startWait("--idle", "reviewer", "--timeout", "2m")
						finished = w.startWait("--finished", "reviewer", "--timeout", "2m")
						short = w.startWait("--idle", "reviewer", "--timeout", "1s")
					}
					return nil
				},
			})
			_, recs := r.exec("Review the change.")
			if idle == nil {
				t.Fatal("the waits were never started")
			}
			for _, wt := range []*waiter{idle, finished, short} {
				<-wt.done
			}
			if short.code != 3 {
				t.Errorf("acc wait --idle with 1s while the turn went on: exit %d, want 3\n%s", short.code, short.out.String())
			}
			stops, ends := recordsOf(recs, c.Stop), recordsOf(recs, c.SessionEnd)
			posts := recordsOf(recs, c.PostTool)
			if len(stops) != 1 || len(ends) != 1 || len(posts) != 4 {
				t.Fatalf("%s fired %d times, %s %d, %s %d; want 1, 1, 4", c.Stop, len(stops), c.SessionEnd, len(ends), c.PostTool, len(posts))
			}
			for _, x := range []struct {
				name  string
				wt    *waiter
				after HookRecord
			}{{"--idle", idle, stops[0]}, {"--finished", finished, ends[0]}} {
				switch {
				case x.wt.code != 0:
					t.Errorf("acc wait %s: exit %d\n%s", x.name, x.wt.code, x.wt.out.String())
				case x.wt.end.Before(x.after.Time):
					t.Errorf("acc wait %s returned %v before %s fired", x.name, x.after.Time.Sub(x.wt.end), x.after.Event)
				case x.wt.end.Sub(x.after.Time) > bound:
					t.Errorf("acc wait %s returned %v after %s fired; want within %v", x.name, x.wt.end.Sub(x.after.Time), x.after.Event, bound)
				default:
					t.Logf("acc wait %s returned %v after %s fired (started %v before it)", x.name,
						x.wt.end.Sub(x.after.Time).Round(time.Millisecond), x.after.Event, x.after.Time.Sub(startedAt).Round(time.Millisecond))
				}
			}
			if idle.end.Before(posts[3].Time) {
				t.Errorf("acc wait --idle returned during the turn, before the last tool call ended")
			}
		})
	}
}
