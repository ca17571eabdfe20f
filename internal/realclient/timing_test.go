package realclient

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestTurnTiming measures, for each client, the wall time of one scripted
// turn (the model runs `echo hi > out.txt` through the shell tool, then
// answers) without hooks and with acc's hooks (acc-hook itself on every
// event the client fires, in a room where another session is attached).
// Each variant runs three times, alternating, each in a fresh HOME; the
// numbers are logged, never asserted (SPEC decision 20).
func TestTurnTiming(t *testing.T) {
	const reps = 3
	var report []string
	for _, c := range Pinned {
		t.Run(c.Name, func(t *testing.T) {
			w := newWorld(t)
			w.attach(w.wt, "peer")
			times := map[bool][]time.Duration{}
			for i := 0; i < reps; i++ {
				for _, hooks := range []bool{false, true} {
					r := w.hooked(t, c, w.repo, fakemodel.Turn(fakemodel.Shell("echo hi > out.txt"), "Wrote out.txt."))
					r.setup.Hook = nil
					if hooks {
						hook := filepath.Join(w.bin, "acc-hook")
						r.setup.Hook = func(event string) string { return ShellQuote(hook) + " " + c.Name + " " + event }
					}
					res, _ := r.exec("Please write hi into out.txt.")
					r.wantModelCalls(2)
					times[hooks] = append(times[hooks], res.Elapsed)
				}
			}
			line := fmt.Sprintf("%s@%s one scripted turn: without hooks %v, with acc's hooks %v; median %v → %v, minimum %v → %v",
				c.Name, c.Version, rounded(times[false]), rounded(times[true]),
				median(times[false]), median(times[true]), slices.Min(times[false]).Round(time.Millisecond), slices.Min(times[true]).Round(time.Millisecond))
			t.Log(line)
			report = append(report, line)
		})
	}
	t.Log("turn timing:\n  " + strings.Join(report, "\n  "))
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2].Round(time.Millisecond)
}
