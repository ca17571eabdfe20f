package hook

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestOversizePayloadWithToolInputFirstIsGuarded: a pre-tool payload over
// MaxPayload is judged from its leading fields. When the client puts
// tool_input before tool_name (JSON objects are unordered; nothing in any
// client's contract fixes the order), the cut payload ends inside
// tool_input, the tool name is never seen, and the call proceeds as
// payload_too_large — a 17 MiB Write into a file a peer holds under a
// guarded claim goes through, while the same call with tool_name first is
// denied. The event is known from argv (PreToolUse), so a call whose tool
// cannot be read should be guarded as one that could write anywhere.
func TestOversizePayloadWithToolInputFirstIsGuarded(t *testing.T) {
	w := newWorld(t)
	w.besideGuardedPeer("file:x.go")
	content := strings.Repeat("A", MaxPayload+1)
	target := filepath.Join(w.repo, "x.go")
	for _, order := range []string{"tool_name first", "tool_input first"} {
		var b bytes.Buffer
		input, _ := json.Marshal(map[string]string{"file_path": target, "content": content})
		lead := `"session_id":"c1","cwd":` + quote(w.repo) + `,"hook_event_name":"PreToolUse","tool_name":"Write"`
		if order == "tool_name first" {
			b.WriteString(`{` + lead + `,"tool_input":`)
			b.Write(input)
			b.WriteString(`}`)
		} else {
			b.WriteString(`{"tool_input":`)
			b.Write(input)
			b.WriteString(`,` + lead + `}`)
		}
		res := w.run(&bytes.Buffer{}, []string{"claude", "PreToolUse"}, b.Bytes())
		if !strings.Contains(res.stdout, `"permissionDecision":"deny"`) {
			t.Errorf("%s: a %d-byte Write into a peer's guarded claim was let through: stdout %q stderr %q", order, b.Len(), res.stdout, res.stderr)
		}
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
