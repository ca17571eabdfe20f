package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Edge cases of the acc acp relay, each kept as a regression test.

// initSession initializes the relay's agent and opens one session in dir.
func (e *editor) initSession(dir string) {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	e.await(`"id":0,`)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	e.await(`"id":1,"jsonrpc":"2.0","result"`)
}

// lastPromptBlock is the text of the block added to the last prompt the
// agent read ("" when none was added).
func (e *editor) lastPromptBlock(t *testing.T) string {
	var text string
	for _, l := range rawLines(e.agentFile("in.bin")) {
		if bytes.Contains(l, []byte(`"session/prompt"`)) {
			text = ""
			if blocks := promptBlocks(t, l); len(blocks) > 1 {
				var b struct{ Text string }
				json.Unmarshal(blocks[len(blocks)-1], &b)
				text = b.Text
			}
		}
	}
	return text
}

// Two relays whose agents answer session/new with the same id are two
// sessions, each its participant's: a message for one is never projected
// to the other, and one ending leaves the other live.
func TestACPRelaySameSessionIDTwoRelays(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	peer := sb.attach(repo, "peer", "cli")
	alice := sb.startRelay(repo, []string{"--participant", "alice"}, "FAKE_ACP_SID=session-1")
	bob := sb.startRelay(repo, []string{"--participant", "bob"}, "FAKE_ACP_SID=session-1")
	alice.initSession(repo)
	bob.initSession(repo)
	waitLive(t, sb, repo, "alice", 1)
	waitLive(t, sb, repo, "bob", 1)
	q := sb.sendAs(peer, "--to", "alice", "--type", "question", "--subject", "for alice", "--body", "ALICE_ONLY_1717")
	bob.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	bob.await(`"id":2,"jsonrpc":"2.0","result"`)
	if strings.Contains(bob.lastPromptBlock(t), "ALICE_ONLY_1717") {
		t.Error("bob's agent was shown alice's message")
	}
	if !strings.Contains(bob.lastPromptBlock(t), "- peer alice (acp") {
		t.Errorf("bob's block does not list alice as a peer:\n%s", bob.lastPromptBlock(t))
	}
	bob.finish(10 * time.Second)
	waitLive(t, sb, repo, "bob", 0)
	waitLive(t, sb, repo, "alice", 1)
	alice.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	alice.await(`"id":2,"jsonrpc":"2.0","result"`)
	if !strings.Contains(alice.lastPromptBlock(t), "ALICE_ONLY_1717") {
		t.Errorf("alice's own message is not in her block:\n%s", alice.lastPromptBlock(t))
	}
	alice.finish(10 * time.Second)
	_ = q
}

// An agent started through a wrapper that ignores end of input is ended
// with its whole process group after the grace period, and the relay exits.
func TestACPRelayWrappedAgentEnds(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	self, _ := os.Executable()
	e := sb.startRelayArgv(repo, []string{"--participant", "wrapped", "--grace", "300ms"},
		[]string{"sh", "-c", "'" + self + "'; echo the wrapper carried on >&2"}, "FAKE_ACP_ON_EOF=stay")
	e.initSession(repo)
	code := e.finish(15 * time.Second)
	if code != 128+int(syscall.SIGTERM) {
		t.Errorf("acc acp exited %d, want %d (the wrapper ended by SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	var pid int
	fmt.Sscan(string(e.agentFile("pid")), &pid)
	if pid <= 0 {
		t.Fatal("the agent never started")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the agent (pid %d) behind the wrapper is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A write into a claimed file that the agent asks for after its input
// ended is still refused: the editor never sees it.
func TestACPRelayGuardAfterEndOfInput(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	holder := sb.attach(repo, "holder", "cli")
	claimed := filepath.Join(repo, "a.go")
	os.WriteFile(claimed, []byte("package a\n"), 0o644)
	sb.ok(repo, append([]string{"claim", "--resource", "file:a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	e := sb.startRelay(repo, []string{"--participant", "late"}, "FAKE_ACP_WRITE_AFTER_EOF="+claimed)
	e.initSession(repo)
	e.finish(15 * time.Second)
	if bytes.Contains(e.got.Bytes(), []byte("fs/write_text_file")) {
		t.Errorf("a refused write reached the editor:\n%s", e.got.String())
	}
}

// An editor that stops reading the relay's output, or closes the relay's
// stderr, does not kill the relay (no SIGPIPE): the agent still gets its
// end of input and the relay exits with the agent's status.
func TestACPRelayEditorGone(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	self, _ := os.Executable()
	bad := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(bad, []byte("x"), 0o644)
	cmd := exec.Command(accBin, "acp", "--participant", "gone", "--", self)
	cmd.Dir = repo
	cmd.Env = append(sb.environ(), fakeACPEnv+"=1", "FAKE_ACP_DIR="+t.TempDir(), "ACC_DATA_HOME="+bad)
	in, _ := cmd.StdinPipe()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	errR.Close() // stderr is gone from the start: the note about the data home hits it
	br := bufio.NewReader(outR)
	io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"id":0`) {
		t.Fatalf("no answer to initialize: %q %v", line, err)
	}
	io.WriteString(in, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", repo))
	br.ReadString('\n')
	outR.Close() // the editor stops reading
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"BIG"}]}}`+"\n")
	time.Sleep(300 * time.Millisecond)
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(cmd, err); code != 0 {
			t.Errorf("acc acp exited %d, want the agent's 0 (141 is SIGPIPE)", code)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("acc acp did not end")
	}
}

// A store busy when the session is opened does not keep it out of the
// room: the next prompt attaches it, with its block. A session closed
// while the store is busy for a moment is detached once it is free, while
// the agent still runs.
func TestACPRelayBusyStore(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	st := sb.roomStatus(repo)
	e := sb.startRelay(repo, []string{"--participant", "busy"})
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	e.await(`"id":0,`)
	release := holdWriteLock(t, sb.storePath(st.WorkspaceID))
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":1,"jsonrpc":"2.0","result"`)
	time.Sleep(2500 * time.Millisecond) // the first attach gives up
	release()
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	if !strings.HasPrefix(e.lastPromptBlock(t), "acc: --session ") {
		t.Errorf("after the store was free again the prompt got no block")
	}
	waitLive(t, sb, repo, "busy", 1)

	release = holdWriteLock(t, sb.storePath(st.WorkspaceID))
	e.send(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"fake-session-1"}}`)
	start := time.Now()
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	if d := time.Since(start); d > time.Second {
		t.Errorf("the answer to session/close waited %v for acc", d)
	}
	time.Sleep(2500 * time.Millisecond)
	release()
	waitLive(t, sb, repo, "busy", 0) // within the retries, the agent still running
	e.finish(10 * time.Second)
}

// An agent that never reads its input is still ended after the grace
// period once the editor's input ends, even with a write to it stuck.
func TestACPRelayAgentNotReading(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	e := sb.startRelay(repo, []string{"--participant", "deaf", "--grace", "300ms"}, "FAKE_ACP_NOREAD=1")
	e.send(`{"jsonrpc":"2.0","id":0,"method":"_big","params":{"x":"` + strings.Repeat("y", 4<<20) + `"}}`)
	if code := e.finish(15 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("acc acp exited %d, want %d", code, 128+int(syscall.SIGTERM))
	}
}

// A relay that runs for long sees the workspace's policy as it is now:
// after the context budget shrinks, a message that no longer fits is
// named with its recovery command instead of shown.
func TestACPRelayPolicyIsCurrent(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.ok(repo, "config", "init", "--yes")
	peer := sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "long"})
	e.initSession(repo)
	waitLive(t, sb, repo, "long", 1) // the attach runs just after the answer
	body := strings.Repeat("long body ", 300)
	q := sb.sendAs(peer, "--to", "long", "--subject", "big", "--body", body)
	cfgPath := filepath.Join(repo, "acc.workspace.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	policy, _ := cfg["policy"].(map[string]any)
	if policy == nil {
		policy = map[string]any{}
	}
	policy["contextBudgetBytes"] = 600
	cfg["policy"] = policy
	raw, _ = json.MarshalIndent(cfg, "", "  ")
	os.WriteFile(cfgPath, raw, 0o644)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	block := e.lastPromptBlock(t)
	if len(block) > 600 || strings.Contains(block, "long body") || !strings.Contains(block, "acc inbox --message "+q) {
		t.Errorf("with a 600-byte budget the block is %d bytes:\n%s", len(block), block)
	}
	e.finish(10 * time.Second)
}

// Member names match exactly: "Method" is not "method", so such a line
// is no prompt and goes to the agent unchanged.
func TestACPRelayExactMemberNames(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	e := sb.startRelay(repo, []string{"--participant", "exact"})
	e.initSession(repo)
	odd := `{"jsonrpc":"2.0","id":5,"Method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"x"}]}}`
	e.send(odd)
	e.send(`{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"y"}],"sessionId":"fake-session-1"}}`)
	e.await(`"id":6,"jsonrpc":"2.0","result"`)
	e.finish(10 * time.Second)
	for _, l := range rawLines(e.agentFile("in.bin")) {
		if bytes.Contains(l, []byte(`"Method"`)) && string(l) != odd+"\n" {
			t.Errorf("a line with \"Method\" was changed:\n%s", l)
		}
	}
}

// A refused write never makes the agent→editor direction wait on the
// agent reading: an agent that floods its output right after a refused
// write, while the editor is sending it a large line, gets everything
// through.
func TestACPRelayRefusalNeverBlocks(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	holder := sb.attach(repo, "holder", "cli")
	claimed := filepath.Join(repo, "a.go")
	os.WriteFile(claimed, []byte("package a\n"), 0o644)
	sb.ok(repo, append([]string{"claim", "--resource", "file:a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	e := sb.startRelay(repo, []string{"--participant", "flood"})
	e.initSession(repo)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"WRITE:` + claimed + ` FLOOD"}]}}`)
	e.send(`{"jsonrpc":"2.0","method":"_big","params":{"x":"` + strings.Repeat("z", 1<<20) + `"}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	e.finish(10 * time.Second)
	if n := bytes.Count(e.got.Bytes(), []byte(`"agent_message_chunk"`)); n < 3000 {
		t.Errorf("the editor got %d of the agent's notifications", n)
	}
}

// Loading a session that is open, or closing one and loading it again at
// once, leaves it in the room.
func TestACPRelayLoadOpenSession(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "loader"})
	e.initSession(repo)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"fake-session-1","cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	e.send(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"fake-session-1"}}`)
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"fake-session-1","cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":4,"jsonrpc":"2.0","result"`)
	time.Sleep(1500 * time.Millisecond) // the earlier bindings' detaches are done
	waitLive(t, sb, repo, "loader", 1)
	e.finish(10 * time.Second)
}

// A prompt sent right after session/close does not bring the session back.
func TestACPRelayPromptAfterClose(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "closer"})
	e.initSession(repo)
	waitLive(t, sb, repo, "closer", 1)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"fake-session-1"}}`)
	e.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	time.Sleep(time.Second)
	waitLive(t, sb, repo, "closer", 0)
	e.finish(10 * time.Second)
}

// With the store locked, a relay with several sessions still exits soon
// after its agent: detaching is bounded as a whole.
func TestACPRelayEndBounded(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	st := sb.roomStatus(repo)
	e := sb.startRelay(repo, []string{"--participant", "many"})
	e.initSession(repo)
	for i := 2; i <= 6; i++ {
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, i, repo))
		e.await(fmt.Sprintf(`"id":%d,"jsonrpc":"2.0","result"`, i))
	}
	waitLive(t, sb, repo, "many", 6)
	holdWriteLock(t, sb.storePath(st.WorkspaceID))
	start := time.Now()
	e.finish(15 * time.Second)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("with the store locked, acc acp took %v to exit after its agent", d)
	}
}

// An agent that closed its own input but runs on is still ended after the
// grace period, however many lines the editor sent meanwhile.
func TestACPRelayAgentClosedItsInput(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	e := sb.startRelayArgv(repo, []string{"--participant", "shut", "--grace", "300ms"}, []string{"sh", "-c", "exec 0<&-; exec sleep 30"})
	for i := range 300 {
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_x","params":{}}`, i))
	}
	if code := e.finish(10 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want %d", code, 128+int(syscall.SIGTERM))
	}
}

// A signal to the relay reaches an agent behind a wrapper.
func TestACPRelaySignalReachesWrappedAgent(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	self, _ := os.Executable()
	e := sb.startRelayArgv(repo, []string{"--participant", "wrapped"}, []string{"sh", "-c", "'" + self + "'; echo after >&2"})
	e.initSession(repo)
	e.cmd.Process.Signal(syscall.SIGINT)
	deadline := time.Now().Add(10 * time.Second)
	for string(e.agentFile("signal")) != "interrupt" {
		if time.Now().After(deadline) {
			t.Fatalf("the agent behind the wrapper saw signal %q", e.agentFile("signal"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.finish(10 * time.Second)
}

// ACC_BYPASS=1 runs the agent whatever acc's own flags say.
func TestACPRelayBypassIgnoresFlags(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	for _, args := range [][]string{{"acp", "--grace=abc", "--", "echo", "ran"}, {"acp", "--bogus", "--", "echo", "ran"}} {
		cmd := exec.Command(accBin, args...)
		cmd.Dir, cmd.Env = repo, append(sb.environ(), "ACC_BYPASS=1")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "ran\n" {
			t.Errorf("ACC_BYPASS=1 acc %v: %v %q", args, err, out)
		}
	}
}

// A relayed session records its own checkout: sessions opened in two
// worktrees of one repository show their own directory and branch.
func TestACPRelayWorktreeCheckouts(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	wt := filepath.Join(filepath.Dir(repo), "side")
	sb.git(repo, "worktree", "add", "-q", "-b", "side", wt)
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "two"})
	e.initSession(repo)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, wt))
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	waitLive(t, sb, repo, "two", 2)
	out := sb.ok(repo, "status").stdout
	if !strings.Contains(out, "two (acp, advisory) online on side in "+wt) || !strings.Contains(out, "in "+repo+"  ") {
		t.Errorf("the two sessions' checkouts:\n%s", out)
	}
	e.finish(10 * time.Second)
}

// A close the agent never answers keeps its session from being attached
// again only for a while: later prompts get their block again.
func TestACPRelayUnansweredClose(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "stuck"}, "FAKE_ACP_NO_CLOSE=1")
	e.initSession(repo)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"fake-session-1"}}`)
	time.Sleep(5500 * time.Millisecond)
	e.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"hi"}]}}`)
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	if !strings.HasPrefix(e.lastPromptBlock(t), "acc: --session ") {
		t.Error("long after an unanswered close, the prompt still gets no block")
	}
	e.finish(10 * time.Second)
}

// A write request naming a session the relay does not know is still
// checked against the claims of the path's room.
func TestACPRelayGuardUnknownSession(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	holder := sb.attach(repo, "holder", "cli")
	claimed := filepath.Join(repo, "a.go")
	os.WriteFile(claimed, []byte("package a\n"), 0o644)
	sb.ok(repo, append([]string{"claim", "--resource", "file:a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	e := sb.startRelay(repo, []string{"--participant", "sly"}, "FAKE_ACP_WRITE_SID=bogus")
	e.initSession(repo)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"WRITE:` + claimed + `"}]}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	e.finish(10 * time.Second)
	if bytes.Contains(e.got.Bytes(), []byte("fs/write_text_file")) {
		t.Error("a write into a claimed file naming an unknown session reached the editor")
	}
}
