package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/hook"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// inputLast re-encodes a pre-tool payload with the tool's input as its last
// field, where every client's captured payloads have it (after the session
// id, cwd, event and tool name); json.Marshal of a map sorts the keys and
// puts tool_input before tool_name.
func inputLast(t *testing.T, payload []byte, inputKey string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	in, ok := m[inputKey]
	if !ok {
		t.Fatalf("the payload has no %s", inputKey)
	}
	delete(m, inputKey)
	head, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := append(head[:len(head)-1:len(head)-1], `,"`+inputKey+`":`...)
	return append(append(out, in...), '}')
}

// hugeCommand is a shell command of about n bytes that writes src/a.go.
func hugeCommand(n int) string {
	return "echo " + strings.Repeat("a", n) + " > src/a.go"
}

// TestHookOversizeCommandsAnswerTruthfully: a 12 MB shell command, one
// naming more paths than the guard checks, and a shell call whose payload
// is over the 16 MiB read cap, through the built acc-hook of every client.
// Where a peer holds a guarded claim, each is denied (it could write into
// the claim) with a reason that says why and what to do; where no peer
// does, it proceeds with a note; a payload too large to read whose leading
// fields make no pre-tool call proceeds naming payload_too_large. Every
// answer comes back (the outer test timeout was not what ended the run)
// and the store is unchanged.
func TestHookOversizeCommandsAnswerTruthfully(t *testing.T) {
	big := hugeCommand(12 << 20)
	bigger := hugeCommand(hook.MaxPayload)
	var many strings.Builder
	many.WriteString("touch")
	for i := 0; i <= 10_000; i++ {
		fmt.Fprintf(&many, " out/f%d", i)
	}
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			fr := newFailRoom(t, c) // the peer holds a guarded claim on src/a.go
			sb := fr.sb
			// One ordinary call first, so that the big ones owe no heartbeat.
			if r := sb.hook(hookOpts{}, c.shellPayload(t, fr.sid, fr.repo, "ls"), c.id, c.tool); r.code != 0 {
				t.Fatalf("an ordinary pre-tool call failed:\n%s", r)
			}
			before := fingerprint(t, sb, fr.wsID)
			for _, v := range []struct {
				label, cmd, why string
			}{
				{"12 MB command", big, fmt.Sprintf("the command is %d bytes and acc reads at most %d", len(big), adapter.MaxShellCommand)},
				{"10001 targets", many.String(), "the call writes 10001 paths and acc checks at most 10000"},
				{"payload over 16 MiB", bigger, fmt.Sprintf("the payload is over %d bytes and acc reads at most that", hook.MaxPayload)},
			} {
				r := sb.hook(hookOpts{}, inputLast(t, c.shellPayload(t, fr.sid, fr.repo, v.cmd), c.inputKey), c.id, c.tool)
				if r.code < 0 {
					t.Fatalf("%s: acc-hook gave no answer:\n%s", v.label, r)
				}
				reason, denied := c.denial(t, r)
				if !denied {
					t.Fatalf("%s: a command too large to check went through a room with a guarded claim:\n%s", v.label, r)
				}
				for _, want := range []string{"acc cannot tell where it writes (" + v.why + ")", "file:src/a.go is claimed by peer (session " + fr.peer.SessionID, "split it into smaller commands"} {
					if !strings.Contains(reason, want) {
						t.Errorf("%s: the reason lacks %q: %q", v.label, want, reason)
					}
				}
			}
			payload := bytes.Repeat([]byte(" "), hook.MaxPayload+1)
			r := sb.hook(hookOpts{}, payload, c.id, c.tool)
			proceeds(t, r, c.allow, "payload over the cap")
			if want := "acc: coordination unavailable (payload_too_large); hook continued without context\n"; r.stderr != want {
				t.Errorf("payload over the cap: stderr %q, want %q", r.stderr, want)
			}
			if after := fingerprint(t, sb, fr.wsID); after != before {
				t.Errorf("the store changed under oversized hook calls")
			}
		})
	}
	t.Run("no guarded claim", func(t *testing.T) {
		c := hookClients[0]
		sb := newSandbox(t)
		repo := sb.newRepo("repo")
		sb.hookSession(c, "alone", repo)
		if r := sb.hook(hookOpts{}, c.shellPayload(t, "alone", repo, "ls"), c.id, c.tool); r.code != 0 {
			t.Fatalf("an ordinary pre-tool call failed:\n%s", r)
		}
		ws := sb.roomStatus(repo).WorkspaceID
		before := fingerprint(t, sb, ws)
		r := sb.hook(hookOpts{}, inputLast(t, c.shellPayload(t, "alone", repo, big), c.inputKey), c.id, c.tool)
		want := fmt.Sprintf("acc: this call was not fully checked (the command is %d bytes and acc reads at most %d); no peer holds a guarded claim here, so it proceeds\n", len(big), adapter.MaxShellCommand)
		if r.code != 0 || r.stdout != c.allow || r.stderr != want {
			t.Errorf("a 12 MB command with no guarded claim: want exit 0, %q and the note %q:\n%s", c.allow, want, r)
		}
		r = sb.hook(hookOpts{}, inputLast(t, c.shellPayload(t, "alone", repo, bigger), c.inputKey), c.id, c.tool)
		want = fmt.Sprintf("acc: this call was not fully checked (the payload is over %d bytes and acc reads at most that); no peer holds a guarded claim here, so it proceeds\n", hook.MaxPayload)
		if r.code != 0 || r.stdout != c.allow || r.stderr != want {
			t.Errorf("a payload over 16 MiB with no guarded claim: want exit 0, %q and the note %q:\n%s", c.allow, want, r)
		}
		// A tool that does not write is never denied, however large.
		r = sb.hook(hookOpts{}, inputLast(t, c.toolPayload(t, "alone", repo, "Read", map[string]any{"file_path": bigger}), c.inputKey), c.id, c.tool)
		proceeds(t, r, c.allow, "a read with a payload over 16 MiB")
		if !strings.Contains(r.stderr, "(payload_too_large)") {
			t.Errorf("a read with a payload over 16 MiB: stderr %q, want payload_too_large", r.stderr)
		}
		if fingerprint(t, sb, ws) != before {
			t.Errorf("the store changed under an oversized hook call")
		}
	})
}

// TestHookStdinNeverClosed: a client that writes its payload and never
// closes acc-hook's stdin gets its "proceed" answer once the 5-second
// budget runs out (the outer test timeout, minutes, is not what ends it),
// naming hook_budget_exceeded, and nothing changes in the store.
func TestHookStdinNeverClosed(t *testing.T) {
	c := hookClients[0]
	fr := newFailRoom(t, c)
	before := fingerprint(t, fr.sb, fr.wsID)
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, hookBin, c.id, c.turn)
	cmd.Dir = fr.sb.base
	cmd.Env = fr.sb.environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write(c.turnPayload(t, fr.sid, fr.repo)); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait() // stdin stays open until acc-hook has exited
	if err != nil || out.String() != c.allow {
		t.Fatalf("acc-hook with an open stdin: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	if want := "acc: coordination unavailable (hook_budget_exceeded); hook continued without context\n"; errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
	if fingerprint(t, fr.sb, fr.wsID) != before {
		t.Errorf("the store changed under a hook call that never got its whole payload")
	}
}

// TestHookNestedSubstitutionsAreGuarded: a shell command of deeply nested
// command substitutions writing into a peer's guarded claim, through the
// built acc-hook. Reading such a command used to take time quadratic in
// its nesting: 6,000 levels (18 KiB) ran past the hook's budget and the
// write went through as hook_budget_exceeded. Nested within the bound it is
// read and denied naming the claim; nested deeper it is not read and denied as
// a command that could write anywhere, saying why. Every call answers (the
// outer process timeout only turns a hang into a failure) and the store is
// unchanged.
func TestHookNestedSubstitutionsAreGuarded(t *testing.T) {
	nested := func(n int) string {
		return "echo " + strings.Repeat("$(", n) + "x" + strings.Repeat(")", n) + " > src/a.go"
	}
	for _, c := range hookClients[:2] {
		t.Run(c.id, func(t *testing.T) {
			fr := newFailRoom(t, c) // the peer holds a guarded claim on src/a.go
			sb := fr.sb
			if r := sb.hook(hookOpts{}, c.shellPayload(t, fr.sid, fr.repo, "ls"), c.id, c.tool); r.code != 0 {
				t.Fatalf("an ordinary pre-tool call failed:\n%s", r)
			}
			before := fingerprint(t, sb, fr.wsID)
			for _, v := range []struct {
				n    int
				want string
			}{
				{adapter.MaxShellDepth, "src/a.go is claimed by peer (session " + fr.peer.SessionID},
				{6000, fmt.Sprintf("acc cannot tell where it writes (the command is too complex to read: it nests more than %d levels deep)", adapter.MaxShellDepth)},
				{12000, fmt.Sprintf("acc cannot tell where it writes (the command is too complex to read: it nests more than %d levels deep)", adapter.MaxShellDepth)},
				{50000, fmt.Sprintf("acc cannot tell where it writes (the command is too complex to read: it nests more than %d levels deep)", adapter.MaxShellDepth)},
			} {
				r := sb.hook(hookOpts{}, c.shellPayload(t, fr.sid, fr.repo, nested(v.n)), c.id, c.tool)
				if r.code < 0 {
					t.Fatalf("%d levels: acc-hook gave no answer:\n%s", v.n, r)
				}
				reason, denied := c.denial(t, r)
				if !denied {
					t.Fatalf("%d levels: a write into a peer's guarded claim went through:\n%s", v.n, r)
				}
				if !strings.Contains(reason, v.want) {
					t.Errorf("%d levels: the reason lacks %q: %q", v.n, v.want, reason)
				}
			}
			if after := fingerprint(t, sb, fr.wsID); after != before {
				t.Errorf("the store changed under nested commands")
			}
		})
	}
	t.Run("no guarded claim", func(t *testing.T) {
		c := hookClients[0]
		sb := newSandbox(t)
		repo := sb.newRepo("repo")
		sb.hookSession(c, "alone", repo)
		r := sb.hook(hookOpts{}, c.shellPayload(t, "alone", repo, nested(50000)), c.id, c.tool)
		want := fmt.Sprintf("acc: this call was not fully checked (the command is too complex to read: it nests more than %d levels deep); no peer holds a guarded claim here, so it proceeds\n", adapter.MaxShellDepth)
		if r.code != 0 || r.stdout != c.allow || r.stderr != want {
			t.Errorf("50000 levels with no guarded claim: want exit 0, %q and the note %q:\n%s", c.allow, want, r)
		}
	})
}

// inputFirst re-encodes a pre-tool payload with the tool's input as its
// first field, before the session id, the directory, the event and the
// tool's name (JSON objects are unordered; no client's contract fixes it).
func inputFirst(t *testing.T, payload []byte, inputKey string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	in, ok := m[inputKey]
	if !ok {
		t.Fatalf("the payload has no %s", inputKey)
	}
	delete(m, inputKey)
	tail, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(`{"`+inputKey+`":`), in...)
	return append(append(out, ','), tail[1:]...)
}

// TestHookOversizePayloadInputFirstIsGuarded: a pre-tool payload over the
// 16 MiB read cap whose tool input comes before everything else — the tool
// name, the session id and the directory all after it — through the built
// acc-hook of every client. The leading fields used to end inside the
// input, the tool was never seen and the write into a peer's guarded claim
// went through as payload_too_large. Now the whole payload's top-level fields
// are read: the shell call and the file write are denied saying why, a read
// proceeds naming payload_too_large, and the store is unchanged.
func TestHookOversizePayloadInputFirstIsGuarded(t *testing.T) {
	bigger := hugeCommand(hook.MaxPayload)
	why := fmt.Sprintf("acc cannot tell where it writes (the payload is over %d bytes and acc reads at most that)", hook.MaxPayload)
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			fr := newFailRoom(t, c) // the peer holds a guarded claim on src/a.go
			sb := fr.sb
			if r := sb.hook(hookOpts{}, c.shellPayload(t, fr.sid, fr.repo, "ls"), c.id, c.tool); r.code != 0 {
				t.Fatalf("an ordinary pre-tool call failed:\n%s", r)
			}
			before := fingerprint(t, sb, fr.wsID)
			write := map[string]any{c.writeKey: "src/b.go", "content": bigger}
			if c.patch {
				write = map[string]any{c.writeKey: "*** Begin Patch\n*** Add File: src/b.go\n+" + bigger + "\n*** End Patch\n"}
			}
			for _, v := range []struct {
				label   string
				payload []byte
			}{
				{"shell", c.shellPayload(t, fr.sid, fr.repo, bigger)},
				{"write", c.toolPayload(t, fr.sid, fr.repo, c.writeTool, write)},
			} {
				r := sb.hook(hookOpts{}, inputFirst(t, v.payload, c.inputKey), c.id, c.tool)
				if r.code < 0 {
					t.Fatalf("%s: acc-hook gave no answer:\n%s", v.label, r)
				}
				reason, denied := c.denial(t, r)
				if !denied {
					t.Fatalf("%s: a call over 16 MiB with its input first went through a room with a guarded claim:\n%s", v.label, r)
				}
				if !strings.Contains(reason, why) || !strings.Contains(reason, "file:src/a.go is claimed by peer") {
					t.Errorf("%s: the reason lacks %q and the claim: %q", v.label, why, reason)
				}
			}
			r := sb.hook(hookOpts{}, inputFirst(t, c.toolPayload(t, fr.sid, fr.repo, "Read", map[string]any{"file_path": bigger}), c.inputKey), c.id, c.tool)
			proceeds(t, r, c.allow, "a read over 16 MiB with its input first")
			if !strings.Contains(r.stderr, "(payload_too_large)") {
				t.Errorf("a read over 16 MiB: stderr %q, want payload_too_large", r.stderr)
			}
			if after := fingerprint(t, sb, fr.wsID); after != before {
				t.Errorf("the store changed under oversized hook calls")
			}
		})
	}
}

// TestHookOversizePayloadNotReadInTimeIsGuarded: the built acc-hook,
// started by Claude Code's rules in the session's directory, gets a
// pre-tool payload over the 16 MiB read cap whose tool input comes first
// and whose other fields never arrive before it answers (its stdin stays
// open): the reading of its fields runs out of time, as on a loaded
// machine. A peer holds a guarded claim in the room, so the write is
// denied, saying that the session id and directory could not be read, and
// the store is unchanged.
func TestHookOversizePayloadNotReadInTimeIsGuarded(t *testing.T) {
	c := hookClients[0]
	fr := newFailRoom(t, c) // the peer holds a guarded claim on src/a.go
	before := fingerprint(t, fr.sb, fr.wsID)
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, hookBin, c.id, c.tool)
	cmd.Dir = fr.repo
	cmd.Env = fr.sb.environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	head := `{"` + c.inputKey + `":{"file_path":"src/b.go","content":"` + strings.Repeat("A", hook.MaxPayload)
	go func() { _, _ = stdin.Write([]byte(head)) }() // the rest never comes
	err = cmd.Wait()
	r := hookRun{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("acc-hook: %v\n%s", err, r)
	}
	reason, denied := c.denial(t, r)
	if !denied {
		t.Fatalf("a write whose payload could not be read in time went through a room with a guarded claim:\n%s", r)
	}
	why := fmt.Sprintf("acc cannot tell where it writes (the payload is over %d bytes and its session id and directory could not be read within the hook's budget", hook.MaxPayload)
	if !strings.Contains(reason, why) || !strings.Contains(reason, "file:src/a.go is claimed by peer") {
		t.Errorf("the reason lacks %q and the claim: %q", why, reason)
	}
	if fingerprint(t, fr.sb, fr.wsID) != before {
		t.Errorf("the store changed under an oversized hook call")
	}
}
