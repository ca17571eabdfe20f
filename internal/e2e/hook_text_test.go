package e2e

import (
	"bytes"
	"strings"
	"testing"
)

// TestHookPayloadText: acc-hook decodes a payload as JSON, so a write
// target that is not UTF-8 reaches the guard with U+FFFD in its place; a
// guarded claim on its directory still denies the write, and a denial
// shows the paths it names by the display rule (docs/hooks.md): a bidi
// override in a file name arrives at the client as the six characters
// \u202e.
func TestHookPayloadText(t *testing.T) {
	g := newGuardRoom(t)
	sb := g.sb
	claude := clientByID(t, "claude")
	for _, res := range []string{"file:gen/**", "file:rlo\u202egnp.go"} {
		sb.ok(g.repo, append([]string{"claim", "--resource", res, "--enforcement", "guarded"}, g.peer.creds()...)...)
	}
	notUTF8 := func(p []byte) []byte { return bytes.Replace(p, []byte("PLACEHOLDER"), []byte("bad\xff"), 1) }
	for _, v := range []struct {
		label   string
		payload []byte
		shown   string
	}{
		{"Write, not UTF-8", notUTF8(claude.writePayload(t, "writer", g.repo, "gen/PLACEHOLDER.go")), "inside file:gen/**, claimed by peer"},
		{"shell, not UTF-8", notUTF8(claude.shellPayload(t, "writer", g.repo, "echo x > gen/PLACEHOLDER.go")), "inside file:gen/**, claimed by peer"},
		{"Write, override in the name", claude.writePayload(t, "writer", g.repo, "rlo\u202egnp.go"), `file:rlo\u202egnp.go is claimed by peer`},
	} {
		if v.label != "Write, override in the name" && !bytes.Contains(v.payload, []byte("bad\xff")) {
			t.Fatalf("%s: the payload lost its invalid byte: %q", v.label, v.payload)
		}
		r := sb.hook(hookOpts{}, v.payload, claude.id, claude.tool)
		reason, denied := claude.denial(t, r)
		if !denied || !strings.Contains(reason, v.shown) || strings.ContainsRune(reason, 0x202e) {
			t.Errorf("%s: denied %v, want a denial showing %q and no raw override:\n%s", v.label, denied, v.shown, r)
		}
	}
}
