package realclient

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// BenchmarkTurnTiming measures, for each client, the wall time of one
// scripted turn (the model runs `echo hi > out.txt` through the shell tool,
// then answers) without hooks and with acc's hooks (acc-hook itself on every
// event the client fires, in a room where another session is attached).
// Each iteration runs both variants, one after the other, each in a fresh
// HOME, and reports their means as ms/turn-plain and ms/turn-hooked; the
// numbers are reported, never asserted (docs/real-clients.md).
//
//	go test -run '^$' -bench TurnTiming -benchtime 3x ./internal/realclient/
func BenchmarkTurnTiming(b *testing.B) {
	for _, c := range Pinned {
		b.Run(c.Name, func(b *testing.B) {
			w := newWorld(b)
			w.attach(w.wt, "peer")
			var total [2]time.Duration
			for b.Loop() {
				for i, hooks := range []bool{false, true} {
					r := w.hooked(b, c, w.repo, fakemodel.Turn(fakemodel.Shell("echo hi > out.txt"), "Wrote out.txt."))
					// Hooks written by the harness, not acc install, so that
					// the plain run has none at all.
					r.setup.Install, r.setup.Hook = nil, nil
					if hooks {
						hook := filepath.Join(w.bin, "acc-hook")
						r.setup.Hook = func(event string) string { return ShellQuote(hook) + " " + c.Name + " " + event }
					}
					res, _ := r.exec("Please write hi into out.txt.")
					r.wantModelCalls(2)
					total[i] += res.Elapsed
				}
			}
			b.ReportMetric(float64(total[0].Milliseconds())/float64(b.N), "ms/turn-plain")
			b.ReportMetric(float64(total[1].Milliseconds())/float64(b.N), "ms/turn-hooked")
			b.ReportMetric(0, "ns/op")
		})
	}
}
