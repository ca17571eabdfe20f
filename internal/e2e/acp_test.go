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
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// editor is a test ACP client driving `acc acp` over its stdio, keeping
// every byte it sent and received.
type editor struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	sent bytes.Buffer

	mu       sync.Mutex
	got      bytes.Buffer
	lines    [][]byte
	seen     int // awaitLast's position in lines
	cond     *sync.Cond
	eof      bool
	stderr   bytes.Buffer
	exited   chan struct{}
	exitCode int
	agentDir string
}

// startRelay runs `acc acp args… -- <fake agent>` in dir with extra
// environment for the agent.
func (sb *sandbox) startRelay(dir string, args []string, env ...string) *editor {
	sb.t.Helper()
	self, err := os.Executable()
	if err != nil {
		sb.t.Fatal(err)
	}
	return sb.startRelayArgv(dir, args, []string{self}, env...)
}

// startRelayArgv is startRelay with the agent's command line given (the
// fake agent behind a wrapper, say).
func (sb *sandbox) startRelayArgv(dir string, args, agent []string, env ...string) *editor {
	sb.t.Helper()
	e := &editor{t: sb.t, agentDir: sb.t.TempDir(), exited: make(chan struct{})}
	e.cond = sync.NewCond(&e.mu)
	argv := append(append(append([]string{"acp"}, args...), "--"), agent...)
	e.cmd = exec.Command(accBin, argv...)
	e.cmd.Dir = dir
	e.cmd.Env = append(append(sb.environ(), fakeACPEnv+"=1", "FAKE_ACP_DIR="+e.agentDir), env...)
	e.cmd.Stderr = &lockedBuffer{mu: &e.mu, b: &e.stderr}
	e.cmd.WaitDelay = 5 * time.Second // an agent left running must not hold the test
	e.in, _ = e.cmd.StdinPipe()
	out, _ := e.cmd.StdoutPipe()
	if err := e.cmd.Start(); err != nil {
		sb.t.Fatal(err)
	}
	go func() {
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadBytes('\n')
			e.mu.Lock()
			e.got.Write(line)
			if len(line) > 0 {
				e.lines = append(e.lines, line)
			}
			if err != nil {
				e.eof = true
			}
			e.cond.Broadcast()
			e.mu.Unlock()
			if err != nil {
				break
			}
		}
		err := e.cmd.Wait()
		e.exitCode = exitCode(e.cmd, err)
		close(e.exited)
	}()
	sb.t.Cleanup(func() {
		select {
		case <-e.exited:
		default:
			e.cmd.Process.Kill()
			<-e.exited
		}
		var pid int
		if _, err := fmt.Sscan(string(e.agentFile("pid")), &pid); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return e
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (e *editor) send(line string) {
	e.t.Helper()
	e.sent.WriteString(line + "\n")
	if _, err := io.WriteString(e.in, line+"\n"); err != nil {
		e.t.Fatalf("writing to acc acp: %v", err)
	}
}

// await returns the first line received (from the start) that matches
// re, waiting up to 15 s.
func (e *editor) await(re string) []byte {
	e.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(15 * time.Second)
	timer := time.AfterFunc(15*time.Second, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
	defer timer.Stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for _, l := range e.lines {
			if rx.Match(l) {
				return l
			}
		}
		if e.eof || time.Now().After(deadline) {
			e.t.Fatalf("no line matching %s; got:\n%s\nstderr: %s", re, ends(e.got.String()), e.stderr.String())
		}
		e.cond.Wait()
	}
}

func ends(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n…\n" + s[len(s)-1500:]
	}
	return s
}

// finish closes the editor's side and waits for acc acp to exit.
func (e *editor) finish(within time.Duration) int {
	e.t.Helper()
	e.in.Close()
	select {
	case <-e.exited:
	case <-time.After(within):
		e.t.Fatalf("acc acp did not exit within %v of end of input; stderr: %s", within, e.stderr.String())
	}
	return e.exitCode
}

func (e *editor) agentFile(name string) []byte {
	b, _ := os.ReadFile(filepath.Join(e.agentDir, name))
	return b
}

// rawLines splits b after each newline (the last line may lack one).
func rawLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

func promptBlocks(t *testing.T, line []byte) []json.RawMessage {
	var m struct {
		Params struct {
			Prompt []json.RawMessage `json:"prompt"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("a prompt the agent got is not JSON: %v", err)
	}
	return m.Params.Prompt
}

// TestACPRelayTransparent is the relay's contract with a stand-in agent:
// every byte the agent writes reaches the editor unchanged and in order
// (a 4 MiB line, an extension notification, a line that is not JSON, a
// notification after a prompt's answer); every byte the editor writes
// reaches the agent unchanged except for one added text block per prompt,
// which carries the session's projection and, once a peer asked, the
// question framed as untrusted peer content (its receipt then offered); an
// agent→editor permission request arriving while a prompt is pending is
// forwarded and answered, with the agent's id 0 kept apart from the
// editor's; the session is in the room while the agent runs and offline
// after; the relay exits with the agent's status.
func TestACPRelayTransparent(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	peer := sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "zed-agent"}, "FAKE_ACP_EXIT=0")

	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}},"clientInfo":{"name":"test-editor","version":"1"}}}`)
	e.await(`"id":0,"jsonrpc":"2.0","result"`)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, repo))
	var created struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	json.Unmarshal(e.await(`"id":1,"jsonrpc":"2.0","result"`), &created)
	// A malformed line and an unknown method from the editor pass too.
	e.send(`this is not JSON from the editor`)
	e.send(`{"jsonrpc":"2.0","id":"x-1","method":"_editor/custom","params":{"a":[1,2]}}`)
	e.await(`"error".*"id":"x-1"`)

	// Turn 1: a permission request mid-turn (agent id 0, the editor's
	// initialize was id 0 too), a 4 MiB line, garbage.
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"PERMIT BIG GARBAGE please"}]}}`, created.Result.SessionID))
	e.await(`"method":"session/request_permission"`)
	select {
	case <-e.exited:
		t.Fatal("acc acp exited mid-turn")
	default:
	}
	e.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)

	// The session is in the room, as an advisory acp session.
	st := sb.roomStatus(repo)
	var row *statusRow
	for i := range st.Participants {
		if st.Participants[i].ParticipantID == "zed-agent" {
			row = &st.Participants[i]
		}
	}
	if row == nil || row.Presence == "offline" || row.Harness != "acp" {
		t.Fatalf("the relayed session in acc status: %+v", st.Participants)
	}

	// Turn 2: a peer's question is in the block, and offered after.
	q := sb.sendAs(peer, "--to", "zed-agent", "--type", "question", "--subject", "which port", "--body", "8080 or 9090? MARK_4242")
	store := sb.openStore(st.WorkspaceID)
	if got := receiptState(t, store, q, "zed-agent"); got != "queued" {
		t.Fatalf("before the prompt the receipt is %s", got)
	}
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"second turn"}]}}`, created.Result.SessionID))
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	// The offer is recorded right after the prompt was written to the
	// agent, which may answer first: allow it a moment.
	deadline := time.Now().Add(5 * time.Second)
	for receiptState(t, store, q, "zed-agent") != "offered" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := receiptState(t, store, q, "zed-agent"); got != "offered" {
		t.Errorf("after the prompt reached the agent the receipt is %s, want offered", got)
	}
	store.Close()

	if code := e.finish(10 * time.Second); code != 0 {
		t.Errorf("acc acp exited %d, want the agent's 0; stderr: %s", code, e.stderr.String())
	}

	// Agent → editor: byte for byte.
	if out := e.agentFile("out.bin"); !bytes.Equal(e.got.Bytes(), out) {
		t.Errorf("the editor received %d bytes, the agent wrote %d; they differ", e.got.Len(), len(out))
	}
	if !bytes.Contains(e.got.Bytes(), []byte("this line is not JSON {\n")) || !bytes.Contains(e.got.Bytes(), []byte(`"method":"_fake/ext"`)) {
		t.Error("the garbage line or the extension notification did not reach the editor")
	}
	// Editor → agent: the same lines, prompts with one block added.
	sent, got := rawLines(e.sent.Bytes()), rawLines(e.agentFile("in.bin"))
	if len(sent) != len(got) {
		t.Fatalf("the editor sent %d lines, the agent read %d", len(sent), len(got))
	}
	prompts := 0
	for i := range sent {
		if !bytes.Contains(sent[i], []byte(`"method":"session/prompt"`)) {
			if !bytes.Equal(sent[i], got[i]) {
				t.Errorf("line %d changed on its way to the agent:\n sent %s\n  got %s", i, sent[i], got[i])
			}
			continue
		}
		prompts++
		before, after := promptBlocks(t, sent[i]), promptBlocks(t, got[i])
		if len(after) != len(before)+1 {
			t.Fatalf("prompt %d: %d blocks, want %d", prompts, len(after), len(before)+1)
		}
		block := after[len(after)-1]
		// Everything but the added block is byte for byte the editor's.
		want := bytes.Replace(got[i], []byte(","+string(block)), nil, 1)
		if !bytes.Equal(want, sent[i]) {
			t.Errorf("prompt %d: beyond the added block the line changed:\n sent %s\n  got %s", prompts, sent[i], got[i])
		}
		var b struct{ Type, Text string }
		json.Unmarshal(block, &b)
		if b.Type != "text" || !strings.HasPrefix(b.Text, "acc: --session ") {
			t.Errorf("prompt %d: the added block is %s", prompts, block)
		}
		if prompts == 2 && (!strings.Contains(b.Text, "```acc-peer-message") || !strings.Contains(b.Text, "untrusted peer message") || !strings.Contains(b.Text, "MARK_4242")) {
			t.Errorf("the second prompt's block does not carry the question as peer content:\n%s", b.Text)
		}
		if prompts == 1 && strings.Contains(b.Text, "MARK_4242") {
			t.Error("the question was projected before it was sent")
		}
	}
	if prompts != 2 {
		t.Errorf("%d prompts reached the agent, want 2", prompts)
	}
	st = sb.roomStatus(repo)
	for _, p := range st.Participants {
		if p.ParticipantID == "zed-agent" && p.Presence != "offline" {
			t.Errorf("after the agent exited the relayed session is %s", p.Presence)
		}
	}
}

// TestACPRelayGuard: a write the agent asks the editor to make into a
// file another session holds with a guarded claim is answered by the
// relay with an error naming the holder and never reaches the editor; the
// file is unchanged. An unclaimed path's write passes to the editor.
func TestACPRelayGuard(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	holder := sb.attach(repo, "holder", "cli")
	os.MkdirAll(filepath.Join(repo, "src"), 0o755)
	claimed := filepath.Join(repo, "src", "a.go")
	os.WriteFile(claimed, []byte("package a\n"), 0o644)
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, holder.creds()...)...)

	e := sb.startRelay(repo, []string{"--participant", "writer"})
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}}}}`)
	e.await(`"id":0,`)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":1,"jsonrpc":"2.0","result"`)
	sid := "fake-session-1"
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"WRITE:%s"}]}}`, sid, claimed))
	e.await(`"id":2,"jsonrpc":"2.0","result"`) // the agent's write was answered (by the relay)
	free := filepath.Join(repo, "free.txt")
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"WRITE:%s"}]}}`, sid, free))
	req := e.await(`"method":"fs/write_text_file"`)
	var r struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(req, &r)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, r.ID))
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	e.finish(10 * time.Second)

	if n := bytes.Count(e.got.Bytes(), []byte(`"fs/write_text_file"`)); n != 1 {
		t.Errorf("%d write requests reached the editor, want 1 (the unclaimed one)", n)
	}
	if bytes.Contains(e.got.Bytes(), []byte(claimed)) {
		t.Error("the write into the claimed file reached the editor")
	}
	var refusal struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				ReasonCode          string `json:"reasonCode"`
				HolderParticipantID string `json:"holderParticipantId"`
				Resource            string `json:"resource"`
			} `json:"data"`
		} `json:"error"`
	}
	for _, l := range rawLines(e.agentFile("in.bin")) {
		if bytes.Contains(l, []byte(`"error"`)) && bytes.Contains(l, []byte(`"holderParticipantId"`)) {
			json.Unmarshal(l, &refusal)
		}
	}
	if refusal.Error.Code != -32010 || refusal.Error.Data.HolderParticipantID != "holder" || refusal.Error.Data.Resource != "file:src/a.go" ||
		refusal.Error.Data.ReasonCode != "claim_conflict" || !strings.Contains(refusal.Error.Message, "holder") {
		t.Errorf("the agent's refusal: %+v", refusal.Error)
	}
	if b, _ := os.ReadFile(claimed); string(b) != "package a\n" {
		t.Errorf("the claimed file changed: %q", b)
	}
}

// TestACPRelayEndings: an agent that ignores end of input is sent SIGTERM
// after the grace period, and one that ignores SIGTERM too is killed; an
// agent that crashes mid-turn ends the relay with its status, after the
// editor got everything it wrote; a signal to the relay reaches the
// agent; in each case the session leaves the room.
func TestACPRelayEndings(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	for _, c := range []struct {
		name   string
		env    []string
		prompt string
		signal syscall.Signal
		want   int
		agent  string // the signal the agent saw
	}{
		{name: "ignores end of input", env: []string{"FAKE_ACP_ON_EOF=stay"}, want: 128 + int(syscall.SIGTERM), agent: "terminated"},
		{name: "ignores SIGTERM too", env: []string{"FAKE_ACP_ON_EOF=stay-hard"}, want: 128 + int(syscall.SIGKILL)},
		{name: "crashes mid-turn", prompt: "CRASH", want: 3},
		{name: "exits with its own status", env: []string{"FAKE_ACP_EXIT=7"}, want: 7},
		{name: "a signal to the relay", env: []string{"FAKE_ACP_ON_EOF=stay"}, signal: syscall.SIGINT, want: 128 + int(syscall.SIGINT), agent: "interrupt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t)
			repo := sb.newRepo("repo")
			sb.attach(repo, "peer", "cli")
			e := sb.startRelay(repo, []string{"--participant", "ender", "--grace", "300ms"}, c.env...)
			e.initSession(repo)
			waitPresence(t, sb, repo, "ender", "online")
			if c.prompt != "" {
				e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"` + c.prompt + `"}]}}`)
			}
			var code int
			if c.signal != 0 {
				e.cmd.Process.Signal(c.signal)
				select {
				case <-e.exited:
					code = e.exitCode
				case <-time.After(10 * time.Second):
					t.Fatal("acc acp did not end after the signal")
				}
			} else {
				code = e.finish(10 * time.Second)
			}
			if code != c.want {
				t.Errorf("acc acp exited %d, want %d; stderr: %s", code, c.want, e.stderr.String())
			}
			if got := string(e.agentFile("signal")); got != c.agent {
				t.Errorf("the agent saw signal %q, want %q", got, c.agent)
			}
			if out := e.agentFile("out.bin"); !bytes.Equal(e.got.Bytes(), out) {
				t.Errorf("the editor got %d bytes, the agent wrote %d", e.got.Len(), len(out))
			}
			waitPresence(t, sb, repo, "ender", "offline")
		})
	}
}

// waitPresence waits up to 10 s for participant's session to show
// presence in acc status.
func waitPresence(t *testing.T, sb *sandbox, dir, participant, presence string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := sb.roomStatus(dir)
		seen := ""
		for _, p := range st.Participants {
			if p.ParticipantID == participant {
				seen = p.Presence
			}
		}
		if seen == presence {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q in acc status, want %s", participant, seen, presence)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACPRelayFailsOpen: with a data home acc cannot use, the relay still
// carries every byte both ways and exits with the agent's status; it says
// once on stderr what it could not do.
func TestACPRelayFailsOpen(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	bad := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(bad, []byte("x"), 0o644)
	e := sb.startRelay(repo, []string{"--participant", "lost"}, "ACC_DATA_HOME="+bad)
	e.initSession(repo)
	e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"fake-session-1","prompt":[{"type":"text","text":"hello"}]}}`)
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	if code := e.finish(10 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
	if !bytes.Equal(e.sent.Bytes(), e.agentFile("in.bin")) {
		t.Errorf("without acc the agent should get the editor's bytes unchanged:\n%s\n%s", e.sent.Bytes(), e.agentFile("in.bin"))
	}
	if !bytes.Equal(e.got.Bytes(), e.agentFile("out.bin")) {
		t.Error("the editor did not get the agent's bytes unchanged")
	}
	if n := strings.Count(e.stderr.String(), "acc acp:"); n != 1 || !strings.Contains(e.stderr.String(), "frames pass unchanged") {
		t.Errorf("stderr should say once what acc could not do:\n%s", e.stderr.String())
	}
}

// TestACPRelayBypass: ACC_BYPASS=1 runs the agent in acc's place (same
// process), with nothing of acc in between.
func TestACPRelayBypass(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	e := sb.startRelay(repo, nil, "ACC_BYPASS=1")
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	e.await(`"id":0,`)
	if got, want := string(e.agentFile("pid")), fmt.Sprint(e.cmd.Process.Pid); got != want {
		t.Errorf("the agent runs as pid %s, acc acp was %s: not replaced", got, want)
	}
	e.finish(10 * time.Second)
	if _, err := os.Stat(filepath.Join(sb.data, "acc")); err == nil {
		t.Error("acc touched its data home under ACC_BYPASS=1")
	}
	// An agent that cannot be run is 127 there too, and acc's own flags
	// are not looked at.
	cmd := exec.Command(accBin, "acp", "--participant", "not an id", "--", "/nonexistent/agent")
	cmd.Dir, cmd.Env = repo, append(sb.environ(), "ACC_BYPASS=1")
	out, err := cmd.CombinedOutput()
	if code := exitCode(cmd, err); code != 127 || !strings.Contains(string(out), "cannot start the agent") {
		t.Errorf("ACC_BYPASS=1 with a missing agent: exit %d %s", code, out)
	}
}

// TestACPRelayRefusals: no agent, a bad participant or grace is exit 2
// before anything starts; an agent that cannot start is exit 127.
func TestACPRelayRefusals(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"acp"}, 2, "acc acp needs the agent's command after --"},
		{[]string{"acp", "--participant", "bad name", "--", "true"}, 4, "is not a portable id"},
		{[]string{"acp", "--grace", "0s", "--", "true"}, 2, "--grace must be more than zero"},
		{[]string{"acp", "--", "/nonexistent/agent"}, 127, "cannot start the agent"},
		{[]string{"acp", "gemini", "--acp"}, 2, "unknown option for acc acp: --acp; the agent's command and its options go after --"},
		{[]string{"acp", "sh", "-c", "true"}, 2, "unknown option for acc acp: -c;"},
		// --json never puts acc's envelope on the editor's channel.
		{[]string{"--json", "acp"}, 2, "acc acp needs the agent's command after --"},
		{[]string{"acp", "--json", "--participant", "bad name", "--", "true"}, 4, "is not a portable id"},
	} {
		res := sb.run(repo, c.args...)
		if res.code != c.code || !strings.Contains(res.stderr, c.msg) {
			t.Errorf("acc %v: exit %d %q, want %d %q", c.args, res.code, res.stderr, c.code, c.msg)
		}
		if res.stdout != "" {
			t.Errorf("acc %v wrote to stdout (the editor's channel): %q", c.args, res.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(sb.data, "acc", "workspaces")); err == nil {
		t.Error("a refused acc acp created a store")
	}
}

// TestACPRelayPromptRightAfterNew: a prompt the editor sends the moment
// it has a session/new answer always gets the session's block (the relay
// registers the session before it forwards the answer).
func TestACPRelayPromptRightAfterNew(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "quick"})
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	e.await(`"id":0,`)
	const n = 20
	for i := 1; i <= n; i++ {
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, 2*i, repo))
		e.await(fmt.Sprintf(`"id":%d,"jsonrpc":"2.0","result"`, 2*i))
		e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"fake-session-%d","prompt":[{"type":"text","text":"go"}]}}`, 2*i+1, i))
	}
	e.await(fmt.Sprintf(`"id":%d,"jsonrpc":"2.0","result"`, 2*n+1))
	e.finish(10 * time.Second)
	prompts := 0
	for _, l := range rawLines(e.agentFile("in.bin")) {
		if bytes.Contains(l, []byte(`"session/prompt"`)) {
			prompts++
			if blocks := promptBlocks(t, l); len(blocks) != 2 {
				t.Errorf("prompt %d reached the agent with %d blocks, want 2 (its own and acc's)", prompts, len(blocks))
			}
		}
	}
	if prompts != n {
		t.Errorf("%d prompts reached the agent, want %d", prompts, n)
	}
}

// TestACPRelayLifecycle: session/close ends the acc session bound to an
// ACP session; session/load and session/resume bind one again (the load's
// replayed history passes through untouched); several sessions share one
// connection; the end of input ends them all.
func TestACPRelayLifecycle(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, nil, "ACC_PARTICIPANT=life")
	e.initSession(repo)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":2,"jsonrpc":"2.0","result"`)
	waitLive(t, sb, repo, "life", 2)
	e.send(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"fake-session-1"}}`)
	e.await(`"id":3,"jsonrpc":"2.0","result"`)
	waitLive(t, sb, repo, "life", 1)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"fake-session-1","cwd":%q,"mcpServers":[]}}`, repo))
	e.await(`"id":4,"jsonrpc":"2.0","result"`)
	waitLive(t, sb, repo, "life", 2)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"session/resume","params":{"sessionId":"from-another-day","cwd":%q}}`, repo))
	e.await(`"id":5,"jsonrpc":"2.0","result"`)
	waitLive(t, sb, repo, "life", 3)
	// A prompt for a resumed session gets its block.
	e.send(`{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"from-another-day","prompt":[{"type":"text","text":"hi"}]}}`)
	e.await(`"id":6,"jsonrpc":"2.0","result"`)
	e.finish(10 * time.Second)
	waitLive(t, sb, repo, "life", 0)
	for _, l := range rawLines(e.agentFile("in.bin")) {
		if bytes.Contains(l, []byte(`"session/prompt"`)) && len(promptBlocks(t, l)) != 2 {
			t.Errorf("the resumed session's prompt got no block: %s", l)
		}
	}
}

// waitLive waits up to 10 s for participant to have n live sessions.
func waitLive(t *testing.T, sb *sandbox, dir, participant string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		live := 0
		for _, p := range sb.roomStatus(dir).Participants {
			if p.ParticipantID == participant && p.Presence != "offline" && p.State == "open" {
				live++
			}
		}
		if live == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d live sessions, want %d", participant, live, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACPRelayAdvisoryInStatus: acc status shows a relayed session as
// advisory, and a room holding one (with a claim) as advisory too.
func TestACPRelayAdvisoryInStatus(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	proven := fakeClientBin(t, "claude", "2.1.332 (Claude Code)")
	holder := sb.hookSession(clientByID(t, "claude"), "sid-guarded", repo, "ACC_PARTICIPANT=holder", "PATH="+proven+":"+os.Getenv("PATH"))
	sb.ok(repo, append([]string{"claim", "--resource", "file:a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	if out := sb.ok(repo, "status").stdout; !strings.Contains(out, "protection guarded") {
		t.Fatalf("with only a guarded session the room is not guarded:\n%s", out)
	}
	e := sb.startRelay(repo, []string{"--participant", "zed"})
	e.initSession(repo)
	waitPresence(t, sb, repo, "zed", "online")
	out := sb.ok(repo, "status").stdout
	if !regexp.MustCompile(`(?m)^  zed \(acp, advisory\) online`).MatchString(out) || !strings.Contains(out, "protection advisory") {
		t.Errorf("acc status with a relayed session:\n%s", out)
	}
	e.finish(10 * time.Second)
}
