package install

import (
	"bytes"
	"strings"
	"testing"
)

var entry = []byte(`{"hooks":[{"type":"command","command":"sh /shim claude X"}]}`)

// roundTrip appends acc's entry under a few pointers, checks each is there
// once, removes them and prunes what was created: the bytes must be the
// original ones.
func roundTrip(t *testing.T, src []byte) {
	t.Helper()
	doc, err := parseJSON(src)
	if err != nil {
		return // not a document acc would edit: it is refused before any write
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return // an empty file is created fresh, not edited
	}
	pointers := [][]string{{"hooks", "SessionStart"}, {"hooks", "Stop"}, {"plugins"}}
	var created [][]string
	for _, p := range pointers {
		c, added, err := doc.appendEntry(p, entry)
		if err != nil {
			return // the path holds something else (a string where an object is needed): refused
		}
		if !added {
			t.Fatalf("entry under %v reported as present in %q", p, src)
		}
		created = append(created, c...)
	}
	out := doc.bytes()
	again, err := parseJSON(out)
	if err != nil {
		t.Fatalf("acc's edit does not parse:\n%s\n%v", out, err)
	}
	for _, p := range pointers {
		if i, _ := again.indexOf(p, entry); i < 0 {
			t.Fatalf("entry under %v missing after the edit:\n%s", p, out)
		}
		if _, added, _ := again.appendEntry(p, entry); added {
			t.Fatalf("a second append under %v added again", p)
		}
	}
	for _, p := range pointers {
		if found, err := again.removeEntry(p, entry); err != nil || !found {
			t.Fatalf("remove under %v: %v %v\n%s", p, found, err, out)
		}
	}
	if err := again.prune(created); err != nil {
		t.Fatal(err)
	}
	if got := again.bytes(); !bytes.Equal(got, src) {
		t.Fatalf("round trip changed the file:\n--- before\n%q\n--- after\n%q", src, got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, src := range jsonSeeds {
		roundTrip(t, []byte(src))
	}
}

var jsonSeeds = []string{
	"{}",
	"{}\n",
	"{\"a\":1}",
	"{\n\t// comment\n\t\"hooks\": {\n\t\t\"SessionStart\": [\n\t\t\t{\"hooks\": []}\n\t\t]\n\t}\n}\n",
	"{\n    \"hooks\": {\n        \"Stop\": [\n            {\"x\": 1},\n        ],\n    },\n}\n",
	"{\"hooks\":{},\"plugins\":[]}",
	"{ \"plugins\" : [ 1 , 2 ] /* tail */ }",
	"{\r\n  \"hooks\": {\r\n    \"SessionStart\": []\r\n  }\r\n}\r\n",
}

func FuzzJSONRoundTrip(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { roundTrip(t, src) })
}

func TestMeasureIndent(t *testing.T) {
	for src, want := range map[string]string{"{\n\t\"a\": 1\n}": "\t", "{\n    \"a\": 1\n}": "    ", "{\"a\":1}": "  "} {
		if got := measureIndent([]byte(src)); got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}

// The managed TOML block: added at the end, removed exactly, with the
// newline acc added before it when the user's last line had none.
func tomlRoundTrip(t *testing.T, src []byte) {
	t.Helper()
	if bytes.Contains(src, []byte(blockBegin)) || bytes.Contains(src, []byte(blockEnd)) {
		return // a file already holding markers is acc's to manage
	}
	body := []byte("[mcp_servers.acc]\ncommand = \"/x\"\n")
	out, sep := addBlock(src, body)
	if !bytes.HasPrefix(out, src) {
		t.Fatalf("the user's bytes moved:\n%q\n%q", src, out)
	}
	regions := findBlocks(out)
	if len(regions) != 1 || !bytes.Equal(regions[0].block, blockText(body)) {
		t.Fatalf("block not found as written in %q", out)
	}
	again, _ := addBlock(out, body)
	if !bytes.Equal(again, out) {
		t.Fatalf("a second add changed the file:\n%q\n%q", out, again)
	}
	if back := stripBlocks(out, sep); !bytes.Equal(back, src) {
		t.Fatalf("strip gave %q, want %q", back, src)
	}
}

var tomlSeeds = []string{"", "a = 1", "a = 1\n", "[t]\nx = 2\n\n", "# only a comment", "[[hooks]]\nevent = \"Stop\"\r\n"}

func TestTOMLBlockRoundTrip(t *testing.T) {
	for _, s := range tomlSeeds {
		tomlRoundTrip(t, []byte(s))
	}
}

func FuzzTOMLBlockRoundTrip(f *testing.F) {
	for _, s := range tomlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { tomlRoundTrip(t, src) })
}

// An unterminated begin marker runs to the end of the file.
func TestUnterminatedBlock(t *testing.T) {
	src := []byte("a = 1\n" + blockBegin + "\n[mcp_servers.acc]\n")
	if got := stripBlocks(src, false); string(got) != "a = 1\n" {
		t.Fatalf("%q", got)
	}
	if !strings.Contains(string(blockText([]byte("x = 1"))), "x = 1\n"+blockEnd) {
		t.Fatal("a body without a final newline is closed")
	}
}
