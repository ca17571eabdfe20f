package protocol

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text limits in Unicode code points (docs/decisions.md#5-text-limits,
// docs/protocol.md#identifiers-and-text-fields).
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
	// The resource pattern's \s is JavaScript's, which also matches Unicode
	// spaces (docs/protocol.md#identifiers-and-text-fields); Go's RE2 \s is
	// ASCII only, so those are refused here.
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
// ending with "…" when shortened (the inbox subject rule,
// docs/protocol.md#inbox-summary). When max is
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

// CheckJSONText validates the strings of one raw JSON value, before
// anything decodes it: every string must be valid UTF-8, and a \u escape
// of a UTF-16 surrogate (U+D800–U+DFFF) must be a high one followed at
// once by a low one. encoding/json would silently turn either fault into
// U+FFFD; the CLI refuses such text (CheckLine, CheckProse: a command line
// is bytes, and a lone surrogate has no UTF-8 form), so acc-mcp refuses it
// in its tool arguments the same way (docs/mcp.md). field names the value
// in the error; the refusal is ReasonInvalidInput (exit 4). raw is assumed
// to be valid JSON apart from its text: outside strings nothing is checked.
func CheckJSONText(field string, raw []byte) error {
	in := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case !in:
			in = c == '"'
			i++
		case c == '"':
			in = false
			i++
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := hex4(raw, i+2)
			switch {
			case !ok:
				return nil // not JSON: the decoder that follows refuses it
			case r >= 0xd800 && r <= 0xdbff:
				if lo, ok := hex4(raw, i+8); ok && i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' && lo >= 0xdc00 && lo <= 0xdfff {
					i += 12
					continue
				}
				return Errorf(ReasonInvalidInput, "%s must be valid UTF-8: it holds the lone surrogate \\u%04x", field, r).With("field", field)
			case r >= 0xdc00 && r <= 0xdfff:
				return Errorf(ReasonInvalidInput, "%s must be valid UTF-8: it holds the lone surrogate \\u%04x", field, r).With("field", field)
			}
			i += 6
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return Errorf(ReasonInvalidInput, "%s must be valid UTF-8: it holds the byte \\x%02x", field, c).With("field", field)
			}
			i += size
		}
	}
	return nil
}

// hex4 reads the four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
