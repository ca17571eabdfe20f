package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckLineCountsCodePoints(t *testing.T) {
	const emoji = "😀" // 4 UTF-8 bytes, 2 UTF-16 units, 1 code point
	cases := []struct {
		name string
		s    string
		max  int
		ok   bool
	}{
		{"500 emoji", strings.Repeat(emoji, 500), MaxLineText, true},
		{"501 emoji", strings.Repeat(emoji, 501), MaxLineText, false},
		{"500 ascii", strings.Repeat("a", 500), MaxLineText, true},
		{"501 ascii", strings.Repeat("a", 501), MaxLineText, false},
		{"500 two-byte", strings.Repeat("é", 500), MaxLineText, true},
		{"280 intent", strings.Repeat("ж", 280), MaxIntentText, true},
		{"281 intent", strings.Repeat("ж", 281), MaxIntentText, false},
		{"combining marks count each", strings.Repeat("e\u0301", 250), MaxLineText, true},
		{"combining marks over", strings.Repeat("e\u0301", 250) + "x", MaxLineText, false},
	}
	for _, c := range cases {
		err := CheckLine("message.subject", c.s, c.max)
		if (err == nil) != c.ok {
			t.Errorf("%s: CheckLine = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && CodeOf(err) != ExitData {
			t.Errorf("%s: exit %d, want %d", c.name, CodeOf(err), ExitData)
		}
	}
	if err := CheckLine("message.subject", strings.Repeat(emoji, 501), MaxLineText); !strings.Contains(err.Error(), "501") || !strings.Contains(err.Error(), "message.subject") {
		t.Errorf("over-long error %q should name the field and the count", err)
	}
}

func TestCheckProseCountsCodePoints(t *testing.T) {
	if err := CheckProse("message.body", strings.Repeat("😀", MaxProseText), MaxProseText); err != nil {
		t.Errorf("4000 emoji: %v", err)
	}
	if err := CheckProse("message.body", strings.Repeat("😀", MaxProseText+1), MaxProseText); err == nil {
		t.Error("4001 emoji accepted")
	}
}

func TestCheckTextControlCharacters(t *testing.T) {
	for r := rune(0); r < 32; r++ {
		s := "a" + string(r) + "b"
		if err := CheckLine("f", s, 10); err == nil {
			t.Errorf("CheckLine accepted U+%04X", r)
		}
		proseOK := r == '\t' || r == '\n' || r == '\r'
		if err := CheckProse("f", s, 10); (err == nil) != proseOK {
			t.Errorf("CheckProse(U+%04X) = %v, want ok=%v", r, err, proseOK)
		}
	}
	for _, check := range []func(string, string, int) error{CheckLine, CheckProse} {
		if err := check("f", "a\x7fb", 10); err == nil {
			t.Error("DEL (U+007F) accepted")
		}
		if err := check("f", "a\u00e9\u4e2d\U0001F600", 10); err != nil {
			t.Errorf("printable non-ASCII refused: %v", err)
		}
	}
	if err := CheckProse("f", "line one\r\nline two\n\tindented", 100); err != nil {
		t.Errorf("multi-line prose refused: %v", err)
	}
}

func TestCheckTextEmptyAndInvalid(t *testing.T) {
	for _, check := range []func(string, string, int) error{CheckLine, CheckProse} {
		for _, s := range []string{"", " ", "   ", "\u00a0", "\u3000"} {
			if err := check("f", s, 10); err == nil {
				t.Errorf("blank %q accepted", s)
			}
		}
		if err := check("f", "  padded  ", 10); err != nil {
			t.Errorf("padded text refused: %v", err)
		}
		if err := check("f", "ok\xffno", 10); err == nil {
			t.Error("invalid UTF-8 accepted")
		}
	}
	if err := CheckProse("f", "\n\n", 10); err == nil {
		t.Error("prose of newlines only accepted")
	}
}

func TestCheckPath(t *testing.T) {
	ok := []string{"/repo", "/home/a b/Library/Application Support/x", "/" + strings.Repeat("p", MaxPathBytes-1), "/日本"}
	for _, s := range ok {
		if err := CheckPath("session.checkoutRoot", s); err != nil {
			t.Errorf("CheckPath(%.40q): %v", s, err)
		}
	}
	bad := []string{"", "/" + strings.Repeat("p", MaxPathBytes), "/a\x00b", "/a\nb", "/a\x7f", "/\xff"}
	for _, s := range bad {
		if err := CheckPath("session.checkoutRoot", s); err == nil {
			t.Errorf("CheckPath(%.40q) accepted", s)
		} else if CodeOf(err) != ExitData {
			t.Errorf("CheckPath(%.40q) exit %d", s, CodeOf(err))
		}
	}
	// Paths count bytes: 1366 three-byte characters are 4098 bytes.
	if err := CheckPath("f", "/"+strings.Repeat("中", 1365)); err != nil {
		t.Errorf("4096-byte path refused: %v", err)
	}
	if err := CheckPath("f", "/"+strings.Repeat("中", 1366)); err == nil {
		t.Error("4099-byte path accepted")
	}
}

func TestCheckResource(t *testing.T) {
	ok := []string{
		"file:src/a.go",
		"file:src/**",
		"doc:architecture#camera",
		"url:https://example.test/x?y=1",
		"a:b",
		"x+y.z-w:1",
		"file:日本/語.go",
		"doc:" + strings.Repeat("d", MaxResourceText-len("doc:")),
		"doc:" + strings.Repeat("é", MaxResourceText-len("doc:")), // code points, not bytes
		"file:" + strings.Repeat("p", MaxPathBytes),
	}
	for _, s := range ok {
		if err := CheckResource("claim.resource", s); err != nil {
			t.Errorf("CheckResource(%.40q): %v", s, err)
		}
	}
	bad := []string{
		"",
		"src/a.go",      // no scheme
		"file:",         // nothing after the colon
		"File:a",        // uppercase scheme
		"1file:a",       // scheme starts with a digit
		"fi_le:a",       // '_' not allowed in a scheme
		":a",            // empty scheme
		"file:a b",      // whitespace
		"file:a\tb",     // tab
		"file:a\u00a0b", // a Unicode space (JavaScript's \s)
		"file:a\u2003b", // em space
		"file:a\u3000b", // ideographic space
		"file:a\ufeffb", // BOM
		"file:a\x7f",    // DEL
		"file:a\x01",    // control character
		"file:a\xff",    // invalid UTF-8
		"doc:" + strings.Repeat("d", MaxResourceText-len("doc:")+1),
		"file:" + strings.Repeat("p", MaxPathBytes+1),
		"file:" + strings.Repeat("中", MaxPathBytes/3+1), // bytes, not code points
	}
	for _, s := range bad {
		err := CheckResource("claim.resource", s)
		if err == nil {
			t.Errorf("CheckResource(%.40q) accepted", s)
		} else if CodeOf(err) != ExitData {
			t.Errorf("CheckResource(%.40q) exit %d", s, CodeOf(err))
		}
	}
}

func TestCheckOneOf(t *testing.T) {
	if err := CheckOneOf("claim.mode", "shared", ClaimShared, ClaimExclusive); err != nil {
		t.Fatal(err)
	}
	err := CheckOneOf("claim.mode", "Shared", ClaimShared, ClaimExclusive)
	if err == nil || CodeOf(err) != ExitData || !strings.Contains(err.Error(), "claim.mode") {
		t.Fatalf("CheckOneOf(Shared) = %v", err)
	}
}

func TestTruncateUTF8(t *testing.T) {
	const max = 160
	cases := []struct {
		name, in, want string
	}{
		{"short", "hello", "hello"},
		{"exactly max", strings.Repeat("a", max), strings.Repeat("a", max)},
		{"one over", strings.Repeat("a", max+1), strings.Repeat("a", max-3) + "…"},
		// 53 three-byte characters are 159 bytes: fits.
		{"three-byte fits", strings.Repeat("中", 53), strings.Repeat("中", 53)},
		// 54 are 162 bytes: keep 52 (156 bytes) + "…" = 159 bytes.
		{"three-byte cut", strings.Repeat("中", 54), strings.Repeat("中", 52) + "…"},
		// 41 four-byte emoji = 164 bytes: room for 157 bytes → 39 emoji (156).
		{"four-byte cut", strings.Repeat("😀", 41), strings.Repeat("😀", 39) + "…"},
		{"mixed", "a" + strings.Repeat("😀", 40), "a" + strings.Repeat("😀", 39) + "…"},
	}
	for _, c := range cases {
		got := TruncateUTF8(c.in, max)
		if got != c.want {
			t.Errorf("%s: TruncateUTF8 = %q (%d bytes), want %q", c.name, got, len(got), c.want)
		}
		if len(got) > max || !utf8.ValidString(got) {
			t.Errorf("%s: result %d bytes, valid=%v", c.name, len(got), utf8.ValidString(got))
		}
	}
}

func TestTruncateUTF8TinyBudgets(t *testing.T) {
	in := "😀abc"
	for max := -1; max <= len(in); max++ {
		got := TruncateUTF8(in, max)
		checkTruncation(t, in, max, got)
	}
	if got := TruncateUTF8("abcdef", 3); got != "…" {
		t.Errorf("TruncateUTF8(abcdef, 3) = %q, want only the ellipsis", got)
	}
	if got := TruncateUTF8("abcdef", 2); got != "ab" {
		t.Errorf("TruncateUTF8(abcdef, 2) = %q, want a plain cut", got)
	}
}

// checkTruncation asserts the TruncateUTF8 contract: valid UTF-8, at most max
// bytes (when max >= 0), and either s itself, a prefix of s, or a prefix of s
// followed by "…".
func checkTruncation(t *testing.T, s string, max int, got string) {
	t.Helper()
	if len(s) <= max {
		if got != s {
			t.Fatalf("TruncateUTF8(%q, %d) = %q, want it unchanged", s, max, got)
		}
		return
	}
	if !utf8.ValidString(got) {
		t.Fatalf("TruncateUTF8(%q, %d) = %q: invalid UTF-8", s, max, got)
	}
	if len(got) > max && !(max < 0 && got == "") {
		t.Fatalf("TruncateUTF8(%q, %d) = %q: %d bytes", s, max, got, len(got))
	}
	prefix := strings.TrimSuffix(got, "…")
	if !strings.HasPrefix(s, prefix) {
		t.Fatalf("TruncateUTF8(%q, %d) = %q: not a prefix of the input", s, max, got)
	}
}

func FuzzCheckLine(f *testing.F) {
	f.Add("hello", 500)
	f.Add(strings.Repeat("😀", 500), 500)
	f.Add(strings.Repeat("😀", 501), 500)
	f.Add("tab\there", 10)
	f.Add("a\nb", 10)
	f.Add("\xff\xfe", 10)
	f.Add("   ", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		lineErr := CheckLine("f", s, max)
		proseErr := CheckProse("f", s, max)
		if lineErr == nil && proseErr != nil {
			t.Fatalf("CheckLine accepted %q but CheckProse refused it: %v", s, proseErr)
		}
		for _, err := range []error{lineErr, proseErr} {
			if err != nil && CodeOf(err) != ExitData {
				t.Fatalf("%q: exit %d, want %d", s, CodeOf(err), ExitData)
			}
		}
		if lineErr == nil {
			if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max || strings.TrimSpace(s) == "" {
				t.Fatalf("CheckLine accepted %q (max %d)", s, max)
			}
			for _, r := range s {
				if r < 32 || r == 127 {
					t.Fatalf("CheckLine accepted control character U+%04X in %q", r, s)
				}
			}
		}
		if proseErr == nil {
			for _, r := range s {
				if (r < 32 || r == 127) && r != '\n' && r != '\r' && r != '\t' {
					t.Fatalf("CheckProse accepted control character U+%04X in %q", r, s)
				}
			}
		}
	})
}

func FuzzTruncateUTF8(f *testing.F) {
	f.Add("hello", 160)
	f.Add(strings.Repeat("中", 54), 160)
	f.Add(strings.Repeat("😀", 41), 160)
	f.Add("😀abc", 2)
	f.Add("😀abc", 0)
	f.Add("abc", -5)
	f.Fuzz(func(t *testing.T, s string, max int) {
		got := TruncateUTF8(s, max)
		if !utf8.ValidString(s) {
			// Invalid input cannot give valid output; the cut must still
			// respect the budget and keep a prefix.
			if len(s) > max && (len(got) > max && max >= 0 || !strings.HasPrefix(s, strings.TrimSuffix(got, "…"))) {
				t.Fatalf("TruncateUTF8(%q, %d) = %q", s, max, got)
			}
			return
		}
		checkTruncation(t, s, max, got)
	})
}

func TestCheckJSONText(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string // "" when accepted
	}{
		{`{"body":"plain é \u00e9 \ud83d\ude00 \n \\ud800"}`, ""},
		{`{"completed":["a","b\u202e"]}`, ""},
		{"{\"body\":\"\xff\"}", `arguments must be valid UTF-8: it holds the byte \xff`},
		{"{\"body\":\"ok\xe2\x80\"}", `arguments must be valid UTF-8: it holds the byte \xe2`},
		{"{\"body\":\"\xed\xa0\x80\"}", `arguments must be valid UTF-8: it holds the byte \xed`},
		{`{"body":"\ud800"}`, `arguments must be valid UTF-8: it holds the lone surrogate \ud800`},
		{`{"body":"\uDBFFx"}`, `arguments must be valid UTF-8: it holds the lone surrogate \udbff`},
		{`{"body":"\udc00\ud800"}`, `arguments must be valid UTF-8: it holds the lone surrogate \udc00`},
		{`{"body":"\ud800\u0041"}`, `arguments must be valid UTF-8: it holds the lone surrogate \ud800`},
		{`{"body":"\ud800\\udc00"}`, `arguments must be valid UTF-8: it holds the lone surrogate \ud800`},
		{`{"list":[1,{"x":"\udfff"}]}`, `arguments must be valid UTF-8: it holds the lone surrogate \udfff`},
	} {
		err := CheckJSONText("arguments", []byte(c.raw))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q refused: %v", c.raw, err)
		case c.want != "" && err == nil:
			t.Errorf("%q accepted", c.raw)
		case c.want != "":
			if pe := AsError(err); pe.Message != c.want || pe.Reason != ReasonInvalidInput || pe.Code() != ExitData {
				t.Errorf("%q: got %s %q, want invalid_input %q", c.raw, pe.Reason, pe.Message, c.want)
			}
		}
	}
}

// FuzzCheckJSONText: on valid JSON, CheckJSONText refuses exactly the
// text encoding/json would change into U+FFFD.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `"\ud800"`, `["\ud83d\ude00"]`, "\"\xff\"", `"\\ud800"`, `"\ud800\udc00\udc00"`, `{"\udc00":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if !json.Valid(raw) || json.Unmarshal(raw, &v) != nil {
			return
		}
		if bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
			return
		}
		out, _ := json.Marshal(v)
		replaced := bytes.Contains(out, []byte("\uFFFD"))
		if err := CheckJSONText("x", raw); (err != nil) != replaced {
			t.Fatalf("%q: CheckJSONText %v, but decoding replaced text: %v", raw, err, replaced)
		}
	})
}
