package protocol

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeText(t *testing.T) {
	for _, c := range []struct {
		in, block, line string
	}{
		{"plain text, ünïcødé, 日本語, emoji 👩‍💻", "plain text, ünïcødé, 日本語, emoji 👩‍💻", "plain text, ünïcødé, 日本語, emoji 👩‍💻"},
		{"", "", ""},
		{"evil\rsafe text", `evil\u000dsafe text`, `evil\u000dsafe text`},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\nlines\tand a tab`},
		{"crlf\r\nend", "crlf\\u000d\nend", `crlf\u000d\nend`},
		{"red \x1b[31m", `red \u001b[31m`, `red \u001b[31m`},
		{"nul\x00 del\x7f bell\x07", `nul\u0000 del\u007f bell\u0007`, `nul\u0000 del\u007f bell\u0007`},
		{"c1 \u009b31m \u0085 \u0080", `c1 \u009b31m \u0085 \u0080`, `c1 \u009b31m \u0085 \u0080`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`, `ls\u2028ps\u2029`},
		{"rlo\u202egnp.exe", `rlo\u202egnp.exe`, `rlo\u202egnp.exe`},
		{"iso\u2066x\u2067y\u2068z\u2069", `iso\u2066x\u2067y\u2068z\u2069`, `iso\u2066x\u2067y\u2068z\u2069`},
		{"marks\u200e\u200f\u061c emb\u202a\u202b\u202c\u202d", `marks\u200e\u200f\u061c emb\u202a\u202b\u202c\u202d`, `marks\u200e\u200f\u061c emb\u202a\u202b\u202c\u202d`},
		{"bad \xff\x9b utf8 \xe2\x80", `bad \xff\x9b utf8 \xe2\x80`, `bad \xff\x9b utf8 \xe2\x80`},
		// Neighbours of the escaped ranges are kept.
		{"\u00a0\u00ff\u2027\u202f\u2065\u206a\u200d", "\u00a0\u00ff\u2027\u202f\u2065\u206a\u200d", "\u00a0\u00ff\u2027\u202f\u2065\u206a\u200d"},
	} {
		if got := EscapeText(c.in, TextBlock); got != c.block {
			t.Errorf("EscapeText(%q, TextBlock) = %q, want %q", c.in, got, c.block)
		}
		if got := EscapeText(c.in, TextLine); got != c.line {
			t.Errorf("EscapeText(%q, TextLine) = %q, want %q", c.in, got, c.line)
		}
	}
}

// Text with nothing to escape comes back as the same string, not a copy.
func TestEscapeTextCleanAllocatesNothing(t *testing.T) {
	s := strings.Repeat("a clean line of peer text — ünïcødé ", 100)
	if n := testing.AllocsPerRun(100, func() { _ = EscapeText(s, TextLine) }); n != 0 {
		t.Errorf("clean text allocated %v times", n)
	}
}

// FuzzEscapeText: whatever the input, the output is valid UTF-8 and holds
// no character EscapeText escapes (in TextLine mode no newline at all), and
// input with nothing to escape comes back unchanged.
func FuzzEscapeText(f *testing.F) {
	for _, s := range []string{"", "plain", "evil\rsafe", "a\nb\tc", "\x1b[2J", "\u009b1m", "\u202e\u2066\u2028\u2029", "\xff\xfe", "\xe2\x80\xae", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, mode := range []TextMode{TextBlock, TextLine} {
			out := EscapeText(s, mode)
			if !utf8.ValidString(out) {
				t.Fatalf("mode %d: output is not valid UTF-8: %q", mode, out)
			}
			for _, r := range out {
				if Escaped(r, mode) || (r >= 0x80 && r <= 0x9f) {
					t.Fatalf("mode %d: output %q keeps U+%04X", mode, out, r)
				}
			}
			if mode == TextLine && strings.ContainsAny(out, "\n\r") {
				t.Fatalf("TextLine output %q has a line break", out)
			}
			clean := utf8.ValidString(s)
			for _, r := range s {
				if Escaped(r, mode) {
					clean = false
				}
			}
			if clean && out != s {
				t.Fatalf("mode %d: clean text changed: %q -> %q", mode, s, out)
			}
		}
	})
}

// BenchmarkEscapeText: a 4000-character body (the limit) with nothing to
// escape, and the same with a C1 control, a CR and a bidi override on
// every line.
func BenchmarkEscapeText(b *testing.B) {
	line := strings.Repeat("x", 75) + "\n"
	clean := strings.Repeat(line, 4000/len(line))
	hostile := strings.Repeat("\u009b\r\u202e"+line[3:], 4000/len(line))
	for _, c := range []struct{ name, s string }{{"clean", clean}, {"hostile", hostile}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for i := 0; i < b.N; i++ {
				_ = EscapeText(c.s, TextBlock)
			}
		})
	}
}
