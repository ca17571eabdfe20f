package protocol

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text limits in Unicode code points (SPEC decision 5, reference/core.md §1.1).
const (
	MaxLineText     = 500
	MaxIntentText   = 280
	MaxProseText    = 4000
	MaxResourceText = 1024
	MaxPathBytes    = 4096 // checkoutRoot and claim paths are bytes, not line text
)

// CheckLine validates a one-line text field: non-empty after trimming, at most
// max code points, no control characters (code points below 32, and 127).
// field names the field in the error ("message.subject").
func CheckLine(field, s string, max int) error {
	return checkText(field, s, max, false)
}

// CheckProse validates a multi-line text field (a message body): like
// CheckLine but LF, CR and TAB are allowed.
func CheckProse(field, s string, max int) error {
	return checkText(field, s, max, true)
}

func checkText(field, s string, max int, prose bool) error {
	if !utf8.ValidString(s) {
		return Errorf(ReasonInvalidInput, "%s must be valid UTF-8", field)
	}
	if strings.TrimSpace(s) == "" {
		return Errorf(ReasonInvalidInput, "%s must not be empty", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Errorf(ReasonInvalidInput, "%s is %d characters; the limit is %d", field, n, max).With("field", field).With("limit", max)
	}
	for _, r := range s {
		if r < 32 || r == 127 {
			if prose && (r == '\n' || r == '\r' || r == '\t') {
				continue
			}
			return Errorf(ReasonInvalidInput, "%s must not contain control characters (found U+%04X)", field, r).With("field", field)
		}
	}
	return nil
}

// CheckPath validates a filesystem path field: non-empty, valid UTF-8, at most
// MaxPathBytes bytes, no NUL or other control characters.
func CheckPath(field, s string) error {
	if s == "" {
		return Errorf(ReasonInvalidInput, "%s must not be empty", field)
	}
	if len(s) > MaxPathBytes {
		return Errorf(ReasonInvalidInput, "%s is %d bytes; the limit is %d", field, len(s), MaxPathBytes)
	}
	if !utf8.ValidString(s) {
		return Errorf(ReasonInvalidInput, "%s must be valid UTF-8", field)
	}
	for _, r := range s {
		if r < 32 || r == 127 {
			return Errorf(ReasonInvalidInput, "%s must not contain control characters", field)
		}
	}
	return nil
}

// CheckPortableID validates a portable id field (exit 4 on failure).
func CheckPortableID(field, s string) error {
	if !IsPortableID(s) {
		return Errorf(ReasonInvalidInput, "%s %q is not a portable id: 1-200 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit", field, s).With("field", field)
	}
	return nil
}

var resourcePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9+.-]*:[^\s]+$`) })

// CheckResource validates a resource URI such as file:src/a.go or
// url:https://example.test/x: a lowercase scheme, a colon, no whitespace, at
// most 1024 code points; for file: resources the path may be up to
// MaxPathBytes bytes.
func CheckResource(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(ReasonInvalidInput, "%s must be valid UTF-8", field)
	}
	// The reference pattern's \s is JavaScript's, which also matches Unicode
	// spaces; Go's RE2 \s is ASCII only, so those are refused here.
	if !resourcePattern().MatchString(s) || strings.IndexFunc(s, isJSSpace) >= 0 {
		if !strings.Contains(s, ":") && s != "" && strings.IndexFunc(s, isJSSpace) < 0 {
			return Errorf(ReasonInvalidInput, "%s %q is not a resource like file:src/a.go; for a file, write file:%s", field, s, s)
		}
		return Errorf(ReasonInvalidInput, "%s %q is not a resource like file:src/a.go", field, s)
	}
	limit := MaxResourceText
	if strings.HasPrefix(s, "file:") {
		if len(s) > MaxPathBytes+len("file:") {
			return Errorf(ReasonInvalidInput, "%s is longer than %d bytes", field, MaxPathBytes)
		}
		limit = MaxPathBytes + len("file:")
	}
	if utf8.RuneCountInString(s) > limit {
		return Errorf(ReasonInvalidInput, "%s is longer than %d characters", field, limit)
	}
	for _, r := range s {
		if r < 32 || r == 127 {
			return Errorf(ReasonInvalidInput, "%s must not contain control characters", field)
		}
	}
	return nil
}

// isJSSpace reports whether JavaScript's \s matches r.
func isJSSpace(r rune) bool { return r == '\uFEFF' || r != '\u0085' && unicode.IsSpace(r) }

// CheckOneOf validates an enum field.
func CheckOneOf(field, s string, allowed ...string) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return Errorf(ReasonInvalidInput, "%s %q is not one of %s", field, s, strings.Join(allowed, ", ")).With("field", field)
}

// TruncateUTF8 cuts s to at most max UTF-8 bytes on a character boundary,
// ending with "…" when shortened (the inbox subject rule, §9.2). When max is
// too small to hold "…" (3 bytes), the cut has no ellipsis; max <= 0 gives "".
func TruncateUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	const ell = "…"
	suffix := ell
	cut := max - len(ell)
	if cut < 0 {
		suffix, cut = "", max
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}
