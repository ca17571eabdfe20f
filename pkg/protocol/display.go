package protocol

import (
	"strings"
	"unicode/utf8"
)

// TextMode says how text shown by [EscapeText] is laid out.
type TextMode int

const (
	// TextBlock is text shown over several lines, such as a message body:
	// newline (U+000A) and tab (U+0009) are kept.
	TextBlock TextMode = iota
	// TextLine is text shown within one line, such as a subject, a claim
	// reason or a path: newline becomes the two characters \n and tab the
	// two characters \t, so the field cannot start a line of its own.
	TextLine
)

// EscapeText is the one rule for showing text acc did not write itself
// (peer subjects and bodies, intents, claim reasons, handoff lines, paths,
// error messages that quote input) to a person or a model
// (docs/concepts.md#peer-text-on-the-screen). It returns s with every
// character that could move the cursor, rewrite or hide text on a
// terminal, or make a renderer show text in another order than it is
// stored, replaced by a visible escape:
//
//   - C0 controls U+0000–U+001F (CR and ESC included) and DEL U+007F, except
//     newline and tab in [TextBlock] mode;
//   - C1 controls U+0080–U+009F (U+009B is a one-byte CSI to some terminals);
//   - the line and paragraph separators U+2028 and U+2029;
//   - the bidirectional formatting characters: the embeddings and overrides
//     U+202A–U+202E, the isolates U+2066–U+2069, and the marks U+200E,
//     U+200F and U+061C.
//
// Each becomes the six characters \uXXXX (lower-case hex, e.g. \u000d for
// CR, \u202e), except newline and tab in [TextLine] mode (\n, \t). A byte
// that is not part of valid UTF-8 becomes the four characters \xNN, so no
// raw byte of 0x80–0xFF can reach a terminal that reads 8-bit controls.
// Everything else, every printable character of any script included, is
// kept as it is; text without any of these is returned unchanged. The
// result never contains a character for which [Escaped] is true, and is
// valid UTF-8. JSON output never goes through it: it carries the exact
// stored text.
func EscapeText(s string, mode TextMode) string {
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if (c >= 0x20 && c != 0x7f) || (mode == TextBlock && (c == '\n' || c == '\t')) {
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Escaped(r, mode) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case !Escaped(r, mode):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		default: // every escaped rune is below U+10000: four digits
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		}
		i += size
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// Escaped reports whether [EscapeText] replaces r in mode: the controls,
// separators and bidirectional formatting characters it lists.
func Escaped(r rune, mode TextMode) bool {
	switch {
	case r == '\n' || r == '\t':
		return mode == TextLine
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return bidiFormatting(r)
}

// bidiFormatting: the Unicode bidirectional formatting characters (marks,
// embeddings, overrides, isolates), which make a renderer show text in
// another order than it is stored ("Trojan Source", CVE-2021-42574).
func bidiFormatting(r rune) bool {
	return r == 0x200e || r == 0x200f || r == 0x061c || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
