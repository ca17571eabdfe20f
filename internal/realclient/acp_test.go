package realclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
	acpfam "github.com/acc-go/acc/pkg/adapters/acp"
)

// TeeArg makes the test binary a transparent wrapper around an ACP agent
// that keeps every byte the agent read (in.bin) and wrote (out.bin):
// `<binary> acc-acp-tee <dir> -- <agent…>`. The relay tests put it between
// acc acp and the real agent, so the bytes on both sides of the relay can
// be compared in the same run.
const TeeArg = "acc-acp-tee"

func teeMain(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: acc-acp-tee <dir> -- <agent…>")
		return 2
	}
	dir, argv := args[0], args[2:]
	in, err1 := os.Create(filepath.Join(dir, "in.bin"))
	out, err2 := os.Create(filepath.Join(dir, "out.bin"))
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "acc-acp-tee:", err1, err2)
		return 1
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	agentIn, _ := cmd.StdinPipe()
	agentOut, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "acc-acp-tee:", err)
		return 127
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	go func() {
		_, _ = io.Copy(io.MultiWriter(in, agentIn), os.Stdin)
		agentIn.Close()
	}()
	_, _ = io.Copy(io.MultiWriter(out, os.Stdout), agentOut)
	err := cmd.Wait()
	in.Close()
	out.Close()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 0
}

// acpEditor is a test ACP client (an editor) driving `acc acp` over its
// stdio. It answers the agent's requests as an editor would — a
// permission request with the option of kind allow_once, file reads and
// writes on disk — and keeps every byte it sent and received.
type acpEditor struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	teeDir string

	wmu  sync.Mutex
	sent bytes.Buffer
	next int

	mu          sync.Mutex
	cond        *sync.Cond
	got         bytes.Buffer
	responses   map[string]json.RawMessage // by id, the whole line
	permissions int                        // permission requests answered
	eof         bool
	stderr      bytes.Buffer
	exited      chan struct{}
	exitCode    int
}

// startACP runs `acc acp --participant participant -- <tee> -- <agent>` in
// dir with env.
func startACP(t *testing.T, w *world, dir, participant string, argv, env []string) *acpEditor {
	t.Helper()
	e := &acpEditor{t: t, teeDir: t.TempDir(), responses: map[string]json.RawMessage{}, exited: make(chan struct{})}
	e.cond = sync.NewCond(&e.mu)
	args := append([]string{"acp", "--participant", participant, "--", w.self, TeeArg, e.teeDir, "--"}, argv...)
	e.cmd = exec.Command(w.accPath(), args...)
	e.cmd.Dir = dir
	e.cmd.Env = env
	e.cmd.Stderr = &lockedWriter{mu: &e.mu, b: &e.stderr}
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e.cmd.WaitDelay = 10 * time.Second
	e.in, _ = e.cmd.StdinPipe()
	out, _ := e.cmd.StdoutPipe()
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go e.read(out)
	t.Cleanup(func() {
		select {
		case <-e.exited:
		default:
			_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
			<-e.exited
		}
	})
	return e
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (e *acpEditor) read(out io.Reader) {
	br := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		e.mu.Lock()
		e.got.Write(line)
		e.mu.Unlock()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if len(line) > 0 && json.Unmarshal(line, &m) == nil && len(m.ID) > 0 {
			if m.Method != "" {
				e.answerAgent(m.ID, m.Method, m.Params)
			} else {
				e.mu.Lock()
				e.responses[string(m.ID)] = append(json.RawMessage(nil), line...)
				e.cond.Broadcast()
				e.mu.Unlock()
			}
		}
		if err != nil {
			break
		}
	}
	e.mu.Lock()
	e.eof = true
	e.cond.Broadcast()
	e.mu.Unlock()
	err := e.cmd.Wait()
	e.exitCode = 0
	if ee, ok := err.(*exec.ExitError); ok {
		e.exitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.exitCode = 128 + int(ws.Signal())
		}
	}
	close(e.exited)
}

// answerAgent answers one agent→editor request.
func (e *acpEditor) answerAgent(id json.RawMessage, method string, params json.RawMessage) {
	var result any
	var failure map[string]any
	switch method {
	case "session/request_permission":
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(params, &p)
		choice := ""
		for _, o := range p.Options {
			if o.Kind == "allow_once" {
				choice = o.OptionID
			}
		}
		result = map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}
		e.mu.Lock()
		e.permissions++
		e.mu.Unlock()
	case "fs/read_text_file":
		var p struct{ Path string }
		_ = json.Unmarshal(params, &p)
		b, err := os.ReadFile(p.Path)
		if err != nil {
			failure = map[string]any{"code": -32002, "message": err.Error()}
		} else {
			result = map[string]any{"content": string(b)}
		}
	case "fs/write_text_file":
		var p struct{ Path, Content string }
		_ = json.Unmarshal(params, &p)
		if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
			failure = map[string]any{"code": -32603, "message": err.Error()}
		} else {
			result = map[string]any{}
		}
	default:
		failure = map[string]any{"code": -32601, "message": "not supported by the test editor: " + method}
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if failure != nil {
		msg["error"] = failure
	} else {
		msg["result"] = result
	}
	b, _ := json.Marshal(msg)
	e.write(b)
}

func (e *acpEditor) write(line []byte) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.sent.Write(line)
	e.sent.WriteByte('\n')
	_, _ = e.in.Write(append(line, '\n'))
}

// call sends a request and waits up to within for its answer (the whole
// line); it fails the test on an error answer.
func (e *acpEditor) call(method string, params any, within time.Duration) json.RawMessage {
	e.t.Helper()
	e.wmu.Lock()
	id := e.next
	e.next++
	e.wmu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	e.write(b)
	key := fmt.Sprint(id)
	timer := time.AfterFunc(within, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(within)
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if line, ok := e.responses[key]; ok {
			var r struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(line, &r)
			if r.Error != nil {
				e.t.Fatalf("%s answered with an error: %s\nstderr: %s", method, r.Error, lastLines(e.stderr.String(), 30))
			}
			return r.Result
		}
		if e.eof || time.Now().After(deadline) {
			e.t.Fatalf("no answer to %s within %v (eof %v)\nstderr: %s", method, within, e.eof, lastLines(e.stderr.String(), 30))
		}
		e.cond.Wait()
	}
}

// finish closes the editor's side and waits for acc acp to exit.
func (e *acpEditor) finish(within time.Duration) int {
	e.t.Helper()
	e.in.Close()
	select {
	case <-e.exited:
	case <-time.After(within):
		e.t.Fatalf("acc acp did not exit within %v of end of input", within)
	}
	return e.exitCode
}

func (e *acpEditor) teeFile(name string) []byte {
	b, _ := os.ReadFile(filepath.Join(e.teeDir, name))
	return b
}

// splitLines splits b after each newline (the last line may lack one).
func splitLines(b []byte) [][]byte {
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

// checkBytes compares the two sides of the relay: the editor received
// exactly what the agent wrote, and the agent read exactly what the editor
// wrote except one text block added at the end of each prompt; it returns
// the added blocks' texts, in order.
func (e *acpEditor) checkBytes(t *testing.T) []string {
	t.Helper()
	e.mu.Lock()
	got := append([]byte(nil), e.got.Bytes()...)
	e.mu.Unlock()
	if wrote := e.teeFile("out.bin"); !bytes.Equal(got, wrote) {
		t.Errorf("the editor received %d bytes, the agent wrote %d: they differ", len(got), len(wrote))
	}
	sent, read := splitLines(e.sent.Bytes()), splitLines(e.teeFile("in.bin"))
	if len(sent) != len(read) {
		t.Fatalf("the editor sent %d lines, the agent read %d", len(sent), len(read))
	}
	var blocks []string
	for i := range sent {
		if !bytes.Contains(sent[i], []byte(`"method":"session/prompt"`)) {
			if !bytes.Equal(sent[i], read[i]) {
				t.Errorf("line %d changed on its way to the agent:\n sent %s\n read %s", i, sent[i], read[i])
			}
			continue
		}
		var before, after struct {
			Params struct {
				Prompt []json.RawMessage `json:"prompt"`
			} `json:"params"`
		}
		_ = json.Unmarshal(sent[i], &before)
		if err := json.Unmarshal(read[i], &after); err != nil || len(after.Params.Prompt) != len(before.Params.Prompt)+1 {
			t.Errorf("prompt line %d reached the agent with %d blocks, want %d", i, len(after.Params.Prompt), len(before.Params.Prompt)+1)
			continue
		}
		added := after.Params.Prompt[len(after.Params.Prompt)-1]
		if !bytes.Equal(bytes.Replace(read[i], append([]byte(","), added...), nil, 1), sent[i]) {
			t.Errorf("prompt line %d changed beyond the added block:\n sent %s\n read %s", i, sent[i], read[i])
		}
		var b struct{ Type, Text string }
		_ = json.Unmarshal(added, &b)
		if b.Type != "text" {
			t.Errorf("the added block is %s", added)
		}
		blocks = append(blocks, b.Text)
	}
	return blocks
}

const acpQuestion = "Is the build green on main? ACP_QUESTION_MARK_6161"

// TestACPAgents runs each pinned real ACP agent behind acc acp, driven by
// a test editor, against the loopback fake model: the bytes the editor
// receives are exactly the agent's and the agent reads the editor's bytes
// unchanged but for one block per prompt (teed in the same run); the
// session is in acc status while the agent runs and offline after it
// exited; a question a CLI session sends appears, framed as untrusted peer
// content, in the request the fake model receives on the agent's next
// prompt, and its receipt becomes offered. The runs are the evidence of
// each agent family's capabilities (attach, nextTurn, sessionEnd).
func TestACPAgents(t *testing.T) {
	for _, a := range PinnedAgents {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			acpAgent(t, a)
		})
	}
}

// requireAgent installs the agent (or skips, or fails under
// ACC_REQUIRE_CLIENTS=1) and returns its command line.
func requireAgent(t *testing.T, a Agent) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	argv, err := a.Argv(ctx)
	if err != nil {
		msg := fmt.Sprintf("SKIP: the ACP agent %s@%s cannot be installed: %v", a.Package, a.Version, err)
		if os.Getenv("ACC_REQUIRE_CLIENTS") == "1" {
			t.Fatal(msg + " (ACC_REQUIRE_CLIENTS=1 makes this a failure)")
		}
		t.Skip(msg)
	}
	return argv
}

// agentEnv is the environment of acc acp and the agent: the agent's own,
// acc's data home, and acc first on PATH.
func (w *world) agentEnv(a Agent, home, modelURL string) []string {
	env := a.Environ(home, modelURL)
	return append(env, "ACC_DATA_HOME="+w.dataHome, "PATH="+w.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func acpAgent(t *testing.T, a Agent) {
	argv := requireAgent(t, a)
	w := newWorld(t)
	peer := w.attach(w.repo, "peer")
	var questionID string
	var steps steps
	model, err := fakemodel.Start(fakemodel.Config{Script: fakemodel.Script{
		steps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			if len(ownerLines(req)) == 0 {
				return fakemodel.Reply{}, check(t, fmt.Errorf("the first prompt's request shows no acc session line"))
			}
			return fakemodel.Say("FAKE_DONE first turn"), nil
		}),
		steps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			if err := check(t, framed(req, a.Client, questionID, "peer", acpQuestion)); err != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Say("FAKE_DONE second turn"), nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	home := filepath.Join(w.base, "home-"+a.Name)
	if err := a.Configure(home, model.URL()); err != nil {
		t.Fatal(err)
	}
	participant := "zed-" + a.Family
	e := startACP(t, w, w.repo, participant, argv, w.agentEnv(a, home, model.URL()))

	init := e.call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": false},
		"clientInfo":         map[string]any{"name": "acc-test-editor", "version": "1"}}, time.Minute)
	var info struct {
		AgentInfo struct{ Name, Version string } `json:"agentInfo"`
	}
	_ = json.Unmarshal(init, &info)
	t.Logf("agent %s %s", info.AgentInfo.Name, info.AgentInfo.Version)
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(e.call("session/new", map[string]any{"cwd": w.repo, "mcpServers": []any{}}, time.Minute), &created)
	if created.SessionID == "" {
		t.Fatal("session/new gave no sessionId")
	}
	prompt := func(text string) {
		t.Helper()
		var res struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(e.call("session/prompt", map[string]any{"sessionId": created.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": text}}}, 2*time.Minute), &res)
		if res.StopReason != "end_turn" {
			t.Errorf("the turn ended %q", res.StopReason)
		}
	}
	prompt("Say hello.")
	st, err := w.status()
	if err != nil {
		t.Fatal(err)
	}
	live := false
	for _, p := range st.Participants {
		live = live || p.Harness == "acp" && p.Presence != "offline"
	}
	attached := live && len(st.liveOf("acp")) == 1
	if !attached {
		t.Errorf("while the agent runs, acc status lists no live acp session: %+v", st.Participants)
	}
	var transport string
	questionID, transport = w.send(peer, participant, acpQuestion)
	// The family's evidence proves the next turn, so the router says so.
	if caps, _ := acpfam.Capabilities(info.AgentInfo.Name, info.AgentInfo.Version); caps.NextTurn != (transport == "next-turn") {
		t.Errorf("the question to the relayed session went %s, with next turn proven %v", transport, caps.NextTurn)
	}
	wantReceipt(t, w, questionID, participant, "queued")
	prompt("Anything new?")
	waitReceipt(t, w, questionID, participant, "offered")
	if code := e.finish(30 * time.Second); code != 0 {
		t.Errorf("acc acp exited %d, want the agent's 0", code)
	}
	blocks := e.checkBytes(t)
	if t.Failed() {
		t.Logf("acc acp's stderr:\n%s", lastLines(e.stderr.String(), 40))
	}
	nextTurn := len(blocks) == 2 && strings.Contains(blocks[1], acpQuestion) && !strings.Contains(blocks[0], acpQuestion)
	if !nextTurn {
		t.Errorf("the blocks added to the two prompts: %q", blocks)
	}
	if err := model.Verify(); err != nil {
		t.Errorf("fake model: %v", err)
	}
	all, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	ended := false
	for _, p := range all.Participants {
		if p.ParticipantID == participant {
			ended = p.Presence == "offline" && p.State == "closed"
		}
	}
	if !ended {
		t.Errorf("after the agent exited its session is still in the room: %+v", all.Participants)
	}
	observeACP(t, a, info.AgentInfo.Name, info.AgentInfo.Version, map[string]bool{"attach": attached, "nextTurn": nextTurn, "sessionEnd": ended})
}

// send sends body as a question from c to participant and returns its id
// and the path the router reported for it.
func (w *world) send(c caller, participant, body string) (id, transport string) {
	w.t.Helper()
	data := w.mustAcc(w.repo, append([]string{"message", "--to", participant, "--type", "question", "--subject", "a question", "--body", body}, c.args()...)...)
	var res struct {
		Message struct {
			MessageID string `json:"messageId"`
		} `json:"message"`
		Delivery []struct {
			Transport string `json:"transport"`
		} `json:"delivery"`
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Message.MessageID == "" || len(res.Delivery) != 1 {
		w.t.Fatalf("acc message: %s", data)
	}
	return res.Message.MessageID, res.Delivery[0].Transport
}

// TestACPConversation: a relay session (Gemini CLI as an ACP agent behind
// acc acp, in the main checkout) and a hook session (Claude Code, in a
// worktree) exchange a question and an answer. The ACP agent's model reads
// its session line from the block the relay added, asks through its shell
// tool — whose permission request reaches the editor while the prompt is
// pending and is answered there — Claude Code's next turn shows the
// question and answers it with acc reply, and the agent's next prompt
// carries the answer, framed, its receipt offered.
func TestACPConversation(t *testing.T) {
	argv := requireAgent(t, GeminiACP)
	w := newWorld(t)
	acc := ShellQuote(w.accPath())

	// B: Claude Code with acc's hooks, one turn so that its participant
	// exists (a CLI session keeps the room from being a lone session's).
	w.attach(w.repo, "bystander")
	var bSteps steps
	b := w.hooked(t, Claude, w.wt, fakemodel.Script{fakemodel.Say("Ready on the side branch.")})
	b.exec("Start on the side branch.")
	all, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	bParticipant := ""
	for _, p := range all.Participants {
		if p.Harness == Claude.Name {
			bParticipant = p.ParticipantID
		}
	}
	if bParticipant == "" {
		t.Fatalf("Claude Code's session never joined: %+v", all.Participants)
	}

	// A: Gemini CLI behind acc acp asks.
	var aSteps steps
	var questionID, answerID string
	model, err := fakemodel.Start(fakemodel.Config{Script: fakemodel.Script{
		aSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, "acp")
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s message %s --to %s --type question --subject %s --body %s --json",
				acc, c.flags(), bParticipant, ShellQuote("dev server port"), ShellQuote(questionBody)))), nil
		}),
		aSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if questionID, err = sentMessageID(res.Output); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Say("I asked the session on the side branch."), nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	home := filepath.Join(w.base, "home-acp-gemini")
	if err := GeminiACP.Configure(home, model.URL()); err != nil {
		t.Fatal(err)
	}
	e := startACP(t, w, w.repo, "zed-gemini", argv, w.agentEnv(GeminiACP, home, model.URL()))
	e.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}}, time.Minute)
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(e.call("session/new", map[string]any{"cwd": w.repo, "mcpServers": []any{}}, time.Minute), &created)
	prompt := func(text string) {
		t.Helper()
		e.call("session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}, 2*time.Minute)
	}
	prompt("Find out which port the dev server uses: ask the session on the side branch.")
	if questionID == "" {
		t.Fatalf("the agent never sent the question; stderr:\n%s", lastLines(e.stderr.String(), 30))
	}
	e.mu.Lock()
	asked := e.permissions
	e.mu.Unlock()
	if asked == 0 {
		t.Error("the agent's shell tool ran without a permission request reaching the editor")
	}
	wantReceipt(t, w, questionID, bParticipant, "queued")

	// B's next turn answers.
	b.setup.Resume = true
	b.model.Append(
		bSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, Claude.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if err := check(t, framed(req, Claude, questionID, "zed-gemini", questionBody)); err != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s reply %s --message %s --body %s --json",
				acc, c.flags(), questionID, ShellQuote(answerBody)))), nil
		}),
		bSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if answerID, err = sentMessageID(res.Output); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Say("Answered."), nil
		}),
	)
	b.exec("Carry on; see whether anyone needs something from you.")
	if answerID == "" {
		t.Fatal("Claude Code's model never answered")
	}
	wantReceipt(t, w, questionID, bParticipant, "acknowledged")
	wantReceipt(t, w, answerID, "zed-gemini", "queued")

	// A's next prompt carries the answer.
	model.Append(aSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
		if err := check(t, framed(req, Gemini, answerID, bParticipant, answerBody, "inReplyTo: "+questionID)); err != nil {
			return fakemodel.Reply{}, err
		}
		return fakemodel.Say("The dev server listens on port 8080."), nil
	}))
	prompt("Any news about the port?")
	waitReceipt(t, w, answerID, "zed-gemini", "offered")
	if code := e.finish(30 * time.Second); code != 0 {
		t.Errorf("acc acp exited %d", code)
	}
	e.checkBytes(t)
	if err := model.Verify(); err != nil {
		t.Errorf("fake model: %v", err)
	}
}

// waitReceipt is wantReceipt for a state the relay records right after it
// wrote the prompt (the turn may end first): it allows 5 s.
func waitReceipt(t *testing.T, w *world, id, recipient, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got, err := w.receipt(id, recipient); err == nil && got == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	wantReceipt(t, w, id, recipient, want)
}
