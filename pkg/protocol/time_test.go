package protocol

import (
	"testing"
	"time"
)

func TestTimestampRoundTrip(t *testing.T) {
	valid := []string{
		"2026-09-04T09:00:00.000Z",
		"2026-09-04T23:59:59.999Z",
		"1970-01-01T00:00:00.000Z",
		"2024-02-29T12:00:00.001Z",
		"9999-12-31T23:59:59.999Z",
	}
	for _, s := range valid {
		tm, err := ParseTime(s)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", s, err)
			continue
		}
		if got := FormatTime(tm); got != s {
			t.Errorf("FormatTime(ParseTime(%q)) = %q", s, got)
		}
		if !IsTimestamp(s) {
			t.Errorf("IsTimestamp(%q) = false", s)
		}
	}
	invalid := []string{
		"",
		"2026-09-04T09:00:00Z",          // missing milliseconds
		"2026-09-04T09:00:00.0Z",        // too few digits
		"2026-09-04T09:00:00.00Z",       // too few digits
		"2026-09-04T09:00:00.0000Z",     // extra digit
		"2026-09-04T09:00:00.000000Z",   // microseconds
		"2026-09-04T09:00:00.000+00:00", // not spelled with Z
		"2026-09-04T11:00:00.000+02:00", // not UTC
		"2026-09-04T09:00:00.000",       // no zone
		"2026-09-04T09:00:00.000z",      // lowercase z
		"2026-09-04 09:00:00.000Z",      // space instead of T
		"2026-9-4T09:00:00.000Z",        // unpadded
		"2026-02-30T09:00:00.000Z",      // no such day
		"2026-09-04T24:00:00.000Z",      // no such hour
		"2026-09-04T09:00:60.000Z",      // leap second
		" 2026-09-04T09:00:00.000Z",     // surrounding space
		"2026-09-04T09:00:00.000Z\n",
		"+2026-09-04T09:00:00.000Z",
	}
	for _, s := range invalid {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) accepted a non-canonical timestamp", s)
		} else if CodeOf(err) != ExitData {
			t.Errorf("ParseTime(%q) exit %d, want %d", s, CodeOf(err), ExitData)
		}
		if IsTimestamp(s) {
			t.Errorf("IsTimestamp(%q) = true", s)
		}
	}
}

func TestFormatTimeIsUTCAndTruncates(t *testing.T) {
	zone := time.FixedZone("x", 2*3600)
	tm := time.Date(2026, 9, 4, 11, 0, 0, 999_999_999, zone)
	if got, want := FormatTime(tm), "2026-09-04T09:00:00.999Z"; got != want {
		t.Fatalf("FormatTime = %q, want %q (UTC, truncated to milliseconds)", got, want)
	}
	now := time.Now()
	back, err := ParseTime(FormatTime(now))
	if err != nil {
		t.Fatal(err)
	}
	if d := now.Sub(back); d < 0 || d >= time.Millisecond {
		t.Fatalf("FormatTime lost %v, want less than a millisecond", d)
	}
}
