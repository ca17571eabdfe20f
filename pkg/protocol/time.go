package protocol

import "time"

// TimestampLayout is the only accepted timestamp spelling: UTC with exactly
// three fractional digits, e.g. 2026-09-04T09:00:00.000Z
// (docs/protocol.md#identifiers-and-text-fields).
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in UTC with millisecond precision (truncated).
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format(TimestampLayout)
}

// ParseTime parses a timestamp that must round-trip exactly through
// FormatTime; anything else is an exit-4 data error.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimestampLayout, s)
	if err != nil || FormatTime(t) != s {
		return time.Time{}, Errorf(ReasonInvalidRecord, "timestamp %q must be UTC with milliseconds, like 2026-09-04T09:00:00.000Z", s)
	}
	return t, nil
}

// IsTimestamp reports whether s is a valid timestamp.
func IsTimestamp(s string) bool { _, err := ParseTime(s); return err == nil }
