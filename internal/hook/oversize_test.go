package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
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
		// Escapes on either side of the reader's 64 KiB buffer's edges.
		{`{"esc":"` + strings.Repeat(`x\"\\`, 40_000) + `","tool_name":"Bash"}`, map[string]any{"tool_name": "Bash"}, true},
		{`{"k":"` + strings.Repeat("y", 65_520) + `\"z\\","n":1}`, map[string]any{"k": strings.Repeat("y", 65_520) + `"z\`, "n": json.Number("1")}, true},
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

// stalled is a client's stdin that holds a payload over MaxPayload whose
// tool input comes first and whose rest (the session id, the directory,
// the event and the tool's name) does not arrive while the hook runs: the
// reading of its fields runs out of time, as it may on a loaded machine,
// whatever the machine's speed. release ends it.
func stalled(head []byte, release <-chan struct{}) io.Reader {
	return io.MultiReader(bytes.NewReader(head), stallReader(release))
}

type stallReader <-chan struct{}

func (s stallReader) Read([]byte) (int, error) {
	<-s
	return 0, io.EOF
}

// inputFirstHead is the start of a pre-tool payload over MaxPayload whose
// tool input, writing into file, comes before every other field.
func inputFirstHead(file string) []byte {
	return []byte(`{"tool_input":{"file_path":` + quote(file) + `,"content":"` + strings.Repeat("A", MaxPayload))
}

// storeFingerprint is a digest of every row of w's store.
func (w *world) storeFingerprint() string {
	w.t.Helper()
	st, ok := w.room().Store.(interface {
		Fingerprint(context.Context) (string, error)
	})
	if !ok {
		w.t.Fatal("the store cannot fingerprint itself")
	}
	fp, err := st.Fingerprint(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return fp
}

// preToolEvents is each client's pre-tool event name.
var preToolEvents = map[string]string{"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool", "kimi": "PreToolUse", "grok": "PreToolUse"}

// TestOversizePayloadNotReadInTimeIsGuarded: a pre-tool payload over
// MaxPayload whose tool input comes first and whose other fields are not
// reached before the reading's share of the budget runs out (here they
// never arrive) is still, from argv, a pre-tool call: judged in the room of
// the hook process's directory as a call that could write anywhere, of a
// session acc cannot name. Beside a guarded claim it is denied on every
// client, saying what was not read and what to do, and the store is
// unchanged; a tool read as a reader, or another event, proceeds as
// payload_too_large. It used to proceed as payload_too_large whenever the
// session id or directory was not reached, so a slow enough machine let a
// write into a guarded claim through.
func TestOversizePayloadNotReadInTimeIsGuarded(t *testing.T) {
	w := newWorld(t)
	w.besideGuardedPeer("file:x.go")
	w.r.Getwd = func() (string, error) { return w.repo, nil }
	head := inputFirstHead(filepath.Join(w.repo, "x.go"))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	before := w.storeFingerprint()
	why := fmt.Sprintf("acc cannot tell where it writes (the payload is over %d bytes and its session id and directory could not be read within the hook's budget, so every guarded claim counts, yours too: if it is yours, release it; else write smaller pieces)", MaxPayload)
	tooLarge := "acc: coordination unavailable (payload_too_large); hook continued without context\n"
	t.Run("calls", func(t *testing.T) {
		for id, event := range preToolEvents {
			a := w.r.Adapters[id]
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				var out, errb bytes.Buffer
				code := w.r.Run([]string{id, event}, stalled(head, release), &out, &errb)
				allow := a.Allow(&adapter.Event{Adapter: id, Name: event, Kind: adapter.BeforeTool})
				if code == allow.ExitCode && out.String() == string(allow.Stdout) {
					t.Fatalf("a write over %d bytes whose fields were not read in time was let through: exit %d stdout %q stderr %q", MaxPayload, code, out.String(), errb.String())
				}
				if said := out.String() + errb.String(); !strings.Contains(said, why) || !strings.Contains(said, "file:x.go is claimed by peer") {
					t.Errorf("the denial does not say %q and name the claim: stdout %q stderr %q", why, out.String(), errb.String())
				}
				if id == "claude" && !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
					t.Errorf("stdout %q is not Claude Code's denial", out.String())
				}
			})
		}
		for label, c := range map[string]struct {
			event string
			head  []byte
		}{
			"a read":       {"PreToolUse", append([]byte(`{"tool_name":"Read",`), inputFirstHead(filepath.Join(w.repo, "x.go"))[1:]...)},
			"after a tool": {"PostToolUse", head},
		} {
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				var out, errb bytes.Buffer
				code := w.r.Run([]string{"claude", c.event}, stalled(c.head, release), &out, &errb)
				if code != 0 || out.String() != "{}\n" || errb.String() != tooLarge {
					t.Errorf("exit %d stdout %q stderr %q; want it to proceed as payload_too_large", code, out.String(), errb.String())
				}
			})
		}
	})
	if w.storeFingerprint() != before {
		t.Errorf("the store changed under oversized calls whose session was not read")
	}
	// The session id read, the directory not: the caller's own claims are
	// known to be its own, the peer's still denies.
	var out, errb bytes.Buffer
	w.r.Run([]string{"claude", "PreToolUse"}, stalled(append([]byte(`{"session_id":"c1",`), head[1:]...), release), &out, &errb)
	if want := fmt.Sprintf("(the payload is over %d bytes and its directory could not be read within the hook's budget)", MaxPayload); !strings.Contains(out.String(), `"permissionDecision":"deny"`) || !strings.Contains(out.String(), want) {
		t.Errorf("session read, directory not: stdout %q stderr %q; want a denial saying %q", out.String(), errb.String(), want)
	}
}

// TestOversizePayloadNotReadInTimeWithoutGuardedClaim: the same payload in
// a room where no guarded claim is live (a peer's advisory claim on the
// file), in a room that has no store yet, or from a directory in no room
// (it holds acc's data), proceeds as payload_too_large and changes nothing.
func TestOversizePayloadNotReadInTimeWithoutGuardedClaim(t *testing.T) {
	w := newWorld(t)
	if res := w.hook("claude", "SessionStart", "c1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	ctx := context.Background()
	peer, err := r.Attach(ctx, core.AttachInput{ParticipantID: "peer", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Claim(ctx, core.ClaimInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
		Resource: "file:x.go", Cwd: w.repo, Enforcement: protocol.EnforcementAdvisory}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	head := inputFirstHead(filepath.Join(w.repo, "x.go"))
	before := w.storeFingerprint()
	tooLarge := "acc: coordination unavailable (payload_too_large); hook continued without context\n"
	for label, dir := range map[string]string{"an advisory claim": w.repo, "a room with no store": t.TempDir(), "no room": filepath.Dir(w.repo)} {
		w.r.Getwd = func() (string, error) { return dir, nil }
		var out, errb bytes.Buffer
		code := w.r.Run([]string{"claude", "PreToolUse"}, stalled(head, release), &out, &errb)
		if code != 0 || out.String() != "{}\n" || errb.String() != tooLarge {
			t.Errorf("%s: exit %d stdout %q stderr %q; want it to proceed as payload_too_large", label, code, out.String(), errb.String())
		}
	}
	if w.storeFingerprint() != before {
		t.Errorf("the store changed under oversized calls")
	}
}

// BenchmarkScanFields reads the fields of a payload over MaxPayload whose
// tool input (one long string, some of it escaped) comes first, as a
// client that sends its fields in another order would: the time the
// oversize path spends before it can judge the call. Measured, never
// asserted.
func BenchmarkScanFields(b *testing.B) {
	content := strings.Repeat(`func f() {\n\treturn \"x\"\n}\n`+strings.Repeat("A", 200), MaxPayload/230)
	p := []byte(`{"tool_input":{"file_path":"/r/x.go","content":"` + content + `"},"session_id":"c1","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Write"}`)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		n := 0
		if !scanFields(bytes.NewReader(p), func(string, any) { n++ }) || n != 4 {
			b.Fatalf("%d fields", n)
		}
	}
}
