package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// golden compares got with testdata/<name>; ACC_UPDATE=1 rewrites it. A
// missing snapshot fails: it is never created silently.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("ACC_UPDATE") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing snapshot %s (run with ACC_UPDATE=1 to create it): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; rerun with ACC_UPDATE=1 if the change is intended\n%s", path, got)
	}
}

var (
	reGenerated = regexp.MustCompile(`"([a-z]+)_[A-Za-z0-9_-]{8,}"`)
	reTime      = regexp.MustCompile(`"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})"`)
	reCursor    = regexp.MustCompile(`"\d{16}"`)
)

// normalise replaces generated ids, timestamps, cursors and the test's
// temporary paths with stable placeholders, numbered by first appearance
// so that equal values stay equal.
func normalise(b []byte, paths map[string]string) []byte {
	s := string(b)
	for p, name := range paths {
		s = string(bytes.ReplaceAll([]byte(s), []byte(p), []byte(name)))
	}
	seen := map[string]string{}
	counts := map[string]int{}
	number := func(kind, v string) string {
		if p, ok := seen[v]; ok {
			return p
		}
		counts[kind]++
		seen[v] = fmt.Sprintf(`"<%s-%d>"`, kind, counts[kind])
		return seen[v]
	}
	s = reTime.ReplaceAllStringFunc(s, func(v string) string { return `"<time>"` })
	s = reCursor.ReplaceAllStringFunc(s, func(v string) string { return number("cursor", v) })
	s = reGenerated.ReplaceAllStringFunc(s, func(v string) string {
		kind := reGenerated.FindStringSubmatch(v)[1]
		if !regexp.MustCompile(`[A-Z0-9]`).MatchString(v[len(kind):]) {
			return v // a fixed code such as delivery_not_configured, not an id
		}
		return number(kind, v)
	})
	return []byte(s)
}

// TestToolResultsGolden snapshots one successful result of every tool
// (2025-11-25, the parsed text, which equals structuredContent) in
// testdata/tool_results.json.
func TestToolResultsGolden(t *testing.T) {
	r := newRoom(t)
	c := startInProcess(t, r, "research")
	c.initialize("2025-11-25")
	got := map[string]any{}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		v, isErr, text := c.tool(name, args)
		if isErr {
			t.Fatalf("%s %v: %s", name, args, text)
		}
		if _, done := got[name]; !done {
			got[name] = map[string]any{"arguments": args, "result": v}
		}
		m, _ := v.(map[string]any)
		return m
	}
	call("acc_status", map[string]any{})
	peer := r.acc("attach", "--participant", "alice")
	as := []string{"--session", peer["sessionId"].(string), "--generation", peer["generation"].(string)}
	call("acc_sync", map[string]any{"scope": "history"})
	call("acc_search", map[string]any{"query": "docs"})
	call("acc_work", map[string]any{"summary": "docs", "mode": "edit", "resourceHints": []any{"file:docs/**"}})
	cl := call("acc_claim", map[string]any{"action": "acquire", "resource": "file:a.txt", "reason": "edit"})
	call("acc_release", map[string]any{"claimId": cl["claimId"]})
	call("acc_message", map[string]any{"to": []any{"alice"}, "subject": "hi", "body": "hello"})
	call("acc_request", map[string]any{"toParticipantId": "alice", "title": "review docs"})
	dec := r.acc(append([]string{"message", "--to", "research", "--type", "decision", "--obligation", "acknowledge", "--subject", "use Go", "--body", "decided"}, as...)...)
	call("acc_ack", map[string]any{"messageId": dec["message"].(map[string]any)["messageId"]})
	q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "q", "--body", "?"}, as...)...)
	call("acc_inbox", map[string]any{"limit": 10})
	call("acc_reply", map[string]any{"messageId": q["message"].(map[string]any)["messageId"], "body": "yes"})
	call("acc_finish", map[string]any{"goal": "docs", "status": "complete", "toParticipantId": "alice"})
	if len(got) != len(registry) {
		t.Fatalf("snapshot covers %d of %d tools", len(got), len(registry))
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = normalise(append(b, '\n'), map[string]string{r.ws: "<ws>", r.data: "<data>", r.home: "<home>"})
	golden(t, "tool_results.json", b)
}
