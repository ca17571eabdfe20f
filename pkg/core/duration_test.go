package core

import (
	"testing"
	"time"
)

// TestShortDuration: a duration acc names (a --timeout certify suggests, a
// cadence) is written as a person types it, and parses back to the same
// value.
func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		6 * time.Second:                       "6s",
		3 * time.Second / 2:                   "1.5s",
		6 * time.Minute:                       "6m",
		90 * time.Second:                      "1m30s",
		2 * time.Hour:                         "2h",
		2*time.Hour + 30*time.Minute:          "2h30m",
		500 * time.Millisecond:                "500ms",
		2*time.Minute + 1500*time.Millisecond: "2m1.5s",
	} {
		got := ShortDuration(d)
		if got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != d {
			t.Errorf("%q parses back to %v (%v), want %v", got, back, err, d)
		}
	}
}
