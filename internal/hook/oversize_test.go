package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// TestScanFields: the top-level scalar fields of an object in any order,
// nested values skipped (with brackets and quotes inside their strings),
// escapes decoded, a field over maxFieldBytes skipped, and what was found
// before text that stops being JSON kept.
func TestScanFields(t *testing.T) {
	long := strings.Repeat("x", maxFieldBytes)
	for _, c := range []struct {
		in    string
		want  map[string]any
		whole bool
	}{
		{`{"tool_input":{"a":["}",{"b":"\"]"}]},"tool_name":"Write","n":12,"t":true,"z":null}`,
			map[string]any{"tool_name": "Write", "n": json.Number("12"), "t": true, "z": nil}, true},
		{` { "cwd" : "/r\u00e9po\/x" , "k":[1,[2]] } `, map[string]any{"cwd": "/répo/x"}, true},
		{`{"big":"` + long + `","tool_name":"Bash"}`, map[string]any{"tool_name": "Bash"}, true},
		{`{"session_id":"c1","tool_input":{"content":"aaa`, map[string]any{"session_id": "c1"}, false},
		{`{"session_id":"c1",]`, map[string]any{"session_id": "c1"}, false},
		{`["tool_name","Write"]`, map[string]any{}, false},
		{``, map[string]any{}, false},
	} {
		got := map[string]any{}
		whole := scanFields(strings.NewReader(c.in), func(k string, v any) { got[k] = v })
		if whole != c.whole || !maps.Equal(got, c.want) {
			t.Errorf("%.60q: %v %v, want %v %v", c.in, got, whole, c.want, c.whole)
		}
	}
}

// TestOversizePayloadWithoutToolNameIsGuarded: a pre-tool payload over
// MaxPayload whose tool name cannot be read — there is none, or the
// payload ends before it — is guarded as a call that could write anywhere:
// denied beside a peer's guarded claim, saying why. Only a call known to
// be a read goes unchecked.
func TestOversizePayloadWithoutToolNameIsGuarded(t *testing.T) {
	w := newWorld(t)
	w.besideGuardedPeer("file:x.go")
	lead := `{"session_id":"c1","cwd":` + quote(w.repo) + `,"hook_event_name":"PreToolUse",`
	input := `"tool_input":{"content":"` + strings.Repeat("A", MaxPayload) + `"}`
	why := fmt.Sprintf("acc cannot tell where it writes (the payload is over %d bytes and the name of its tool could not be read)", MaxPayload)
	for label, payload := range map[string]string{
		"no tool name":         lead + input + `}`,
		"ends before the name": lead + input + `,"tool_na`,
	} {
		res := w.run(&bytes.Buffer{}, []string{"claude", "PreToolUse"}, []byte(payload))
		if !strings.Contains(res.stdout, `"permissionDecision":"deny"`) || !strings.Contains(res.stdout, why) {
			t.Errorf("%s: stdout %q stderr %q; want a deny saying %q", label, res.stdout, res.stderr, why)
		}
	}
	res := w.run(&bytes.Buffer{}, []string{"claude", "PreToolUse"}, []byte(lead+input+`,"tool_name":"Read"}`))
	if res.stdout != "{}\n" || res.stderr != "acc: coordination unavailable (payload_too_large); hook continued without context\n" {
		t.Errorf("a read over MaxPayload: stdout %q stderr %q; want it to proceed as payload_too_large", res.stdout, res.stderr)
	}
}
