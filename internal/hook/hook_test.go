package hook

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// The in-process tests: what cannot be provoked from outside a process
// (a panic inside a handler) or is cheaper to provoke here (a stdout that
// refuses the bytes, a short deadline). The behaviour across the process
// boundary is tested on the built acc-hook in internal/e2e (hook_*_test.go).

// world is one workspace (a Git repository) with a private data home, and
// a Runner that sees only that environment.
type world struct {
	t    *testing.T
	repo string
	env  map[string]string
	r    *Runner
}

func newWorld(t *testing.T) *world {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", "-b", "main", repo)
	git.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + base, "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	w := &world{t: t, repo: repo, env: map[string]string{
		workspace.EnvDataHome: filepath.Join(base, "data"),
		"HOME":                filepath.Join(base, "home"),
	}}
	w.r = &Runner{
		Adapters:      clients.All(),
		Getenv:        func(k string) string { return w.env[k] },
		ClientVersion: func(context.Context, adapter.Adapter) string { return "" },
		ClientPID:     func(adapter.Adapter) int { return 0 },
		Deadline:      Deadline,
	}
	return w
}

// payload is a minimal payload of the client's event for client session
// sid in the repository; grok spells its keys in camelCase.
func (w *world) payload(client, event, sid string) []byte {
	m := map[string]any{"hook_event_name": event, "session_id": sid, "cwd": w.repo}
	if client == "grok" {
		m = map[string]any{"hookEventName": event, "sessionId": sid, "cwd": w.repo}
	}
	b, err := json.Marshal(m)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

type ran struct {
	stdout, stderr string
	code           int
}

func (w *world) run(stdout interface {
	Write([]byte) (int, error)
}, args []string, payload []byte) ran {
	var errb bytes.Buffer
	out, _ := stdout.(*bytes.Buffer)
	code := w.r.Run(args, bytes.NewReader(payload), stdout, &errb)
	res := ran{stderr: errb.String(), code: code}
	if out != nil {
		res.stdout = out.String()
	}
	return res
}

func (w *world) hook(client, event, sid string) ran {
	return w.run(&bytes.Buffer{}, []string{client, event}, w.payload(client, event, sid))
}

// room opens the workspace in-process for set-up and checks.
func (w *world) room() *core.Room {
	w.t.Helper()
	r, err := core.Open(context.Background(), core.OpenOptions{Cwd: w.repo, Getenv: func(k string) string { return w.env[k] }})
	if err != nil {
		w.t.Fatalf("open the room: %v", err)
	}
	w.t.Cleanup(func() { r.Close() })
	return r
}

// besideGuardedPeer starts Claude Code session c1 through the hook and has
// a CLI peer take a guarded claim on resource beside it.
func (w *world) besideGuardedPeer(resource string) {
	w.t.Helper()
	if res := w.hook("claude", "SessionStart", "c1"); res.code != 0 {
		w.t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	ctx := context.Background()
	peer, err := r.Attach(ctx, core.AttachInput{ParticipantID: "peer", Harness: "cli"})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := r.Claim(ctx, core.ClaimInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
		Resource: resource, Cwd: w.repo, Enforcement: protocol.EnforcementGuarded}); err != nil {
		w.t.Fatal(err)
	}
}

// pendingQuestion attaches the client session sid through the hook, a CLI
// peer beside it, and has the peer ask it a question; it returns the
// hooked session and the question's id.
func (w *world) pendingQuestion(client, sid string) (core.Caller, string) {
	w.t.Helper()
	if res := w.hook(client, "SessionStart", sid); res.code != 0 || res.stderr != "" {
		w.t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	ctx := context.Background()
	me, err := r.HookCaller(ctx, client, sid)
	if err != nil || me == nil {
		w.t.Fatalf("the hooked session is not bound: %v", err)
	}
	peer, err := r.Attach(ctx, core.AttachInput{ParticipantID: "peer", Harness: "cli"})
	if err != nil {
		w.t.Fatal(err)
	}
	sent, err := r.Send(ctx, core.SendInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
		To: []string{core.DefaultHookParticipant(client, sid)}, Kind: protocol.KindQuestion, Subject: "q", Body: "is src/a.go yours?"})
	if err != nil {
		w.t.Fatal(err)
	}
	return *me, sent.Message.MessageID
}

// receiptState is the hooked session's receipt of message id.
func (w *world) receiptState(me core.Caller, id string) string {
	w.t.Helper()
	page, err := w.room().Inbox(context.Background(), core.InboxQuery{Caller: me})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.Message.MessageID == id {
			return it.Receipt.State
		}
	}
	w.t.Fatalf("message %s is not in the inbox", id)
	return ""
}

// oneLine asserts stderr is exactly one line starting "acc: ".
func oneLine(t *testing.T, stderr string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "acc: ") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("expected one diagnostic line on stderr, got %q", stderr)
	}
}

// allowOf is the adapter's "proceed" answer on stdout.
func allowOf(client string) string {
	return string(clients.Get(client).Allow(&adapter.Event{Adapter: client}).Stdout)
}

// TestPanicInAHandlerFailsOpen: a panic inside any handler leaves the
// client with its "proceed" answer and exit 0, one line on stderr, and no
// receipt marked offered; once the fault is gone the same call offers.
func TestPanicInAHandlerFailsOpen(t *testing.T) {
	events := map[string][]string{
		"claude": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SessionEnd"},
		"codex":  {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SessionEnd"},
		"gemini": {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "SessionEnd"},
		"kimi":   {"SessionStart", "UserPromptSubmit", "PreToolUse", "SessionHeartbeat", "SessionEnd"},
		"grok":   {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SessionEnd"},
	}
	for client, evs := range events {
		t.Run(client, func(t *testing.T) {
			w := newWorld(t)
			me, q := w.pendingQuestion(client, "sess-"+client)
			var seen []adapter.Kind
			beforeHandler = func(k adapter.Kind) {
				seen = append(seen, k)
				panic("injected fault")
			}
			t.Cleanup(func() { beforeHandler = nil })
			for _, ev := range evs {
				res := w.hook(client, ev, "sess-"+client)
				if res.code != 0 || res.stdout != allowOf(client) {
					t.Fatalf("%s %s with a panicking handler: exit %d stdout %q, want exit 0 and %q", client, ev, res.code, res.stdout, allowOf(client))
				}
				oneLine(t, res.stderr)
				if strings.Contains(res.stderr, "injected fault") {
					t.Fatalf("the panic value reached stderr: %q", res.stderr)
				}
			}
			if len(seen) != len(evs) {
				t.Fatalf("the fault fired in %d of %d handlers: %v", len(seen), len(evs), seen)
			}
			if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
				t.Fatalf("after panicking hooks the receipt is %s, want queued", st)
			}
			// The session the panicking SessionEnd would have closed is
			// still bound and open.
			if c, err := w.room().HookCaller(context.Background(), client, "sess-"+client); err != nil || c == nil || *c != me {
				t.Fatalf("a panicking SessionEnd changed the binding: %v %v", c, err)
			}
			beforeHandler = nil
			turn := evs[1]
			res := w.hook(client, turn, "sess-"+client)
			if client == "grok" {
				// Grok gives no model its UserPromptSubmit output: acc
				// prints nothing there and the message stays queued.
				if res.code != 0 || res.stdout != "" {
					t.Fatalf("grok %s: exit %d stdout %q", turn, res.code, res.stdout)
				}
				if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
					t.Fatalf("after a Grok turn the receipt is %s, want queued", st)
				}
				return
			}
			if res.code != 0 || !strings.Contains(res.stdout, q) {
				t.Fatalf("%s %s without the fault: exit %d stdout %q stderr %q", client, turn, res.code, res.stdout, res.stderr)
			}
			if st := w.receiptState(me, q); st != protocol.ReceiptOffered {
				t.Fatalf("after a working turn the receipt is %s, want offered", st)
			}
		})
	}
}

// failingWriter refuses every write, like a pipe whose reader is gone.
type failingWriter struct{ tried int }

func (f *failingWriter) Write([]byte) (int, error) {
	f.tried++
	return 0, errors.New("broken pipe")
}

// TestContextNotTakenIsNotOffered: when the client does not take the
// bytes, the hook still exits 0, says so once, and leaves every receipt
// queued; the next turn that is taken offers it.
func TestContextNotTakenIsNotOffered(t *testing.T) {
	for _, client := range []string{"claude", "kimi"} {
		t.Run(client, func(t *testing.T) {
			w := newWorld(t)
			me, q := w.pendingQuestion(client, "s1")
			fw := &failingWriter{}
			res := w.run(fw, []string{client, "UserPromptSubmit"}, w.payload(client, "UserPromptSubmit", "s1"))
			if res.code != 0 || fw.tried == 0 {
				t.Fatalf("exit %d after %d write attempts, want exit 0 after trying", res.code, fw.tried)
			}
			oneLine(t, res.stderr)
			if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
				t.Fatalf("receipt %s after a refused write, want queued", st)
			}
			if res := w.hook(client, "UserPromptSubmit", "s1"); res.code != 0 || !strings.Contains(res.stdout, q) {
				t.Fatalf("a taken turn: %+v", res)
			}
			if st := w.receiptState(me, q); st != protocol.ReceiptOffered {
				t.Fatalf("receipt %s after a taken turn, want offered", st)
			}
		})
	}
}

// TestDeadlineFailsOpen: with another process holding the write lock past
// the hook's deadline, a turn gives up at the deadline with the client's
// "proceed" answer, exit 0, one line, and nothing offered. (The built
// acc-hook is tested against its full 5-second budget in internal/e2e.)
func TestDeadlineFailsOpen(t *testing.T) {
	w := newWorld(t)
	me, q := w.pendingQuestion("claude", "s1")
	r := w.room()
	path := workspace.StorePath(w.env[workspace.EnvDataHome], r.WS.ID)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(100)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	w.r.Deadline = 300 * time.Millisecond
	began := time.Now()
	res := w.hook("claude", "UserPromptSubmit", "s1")
	took := time.Since(began)
	t.Logf("a turn under a held write lock gave up after %v (deadline %v)", took, w.r.Deadline)
	if res.code != 0 || res.stdout != allowOf("claude") {
		t.Fatalf("locked turn: exit %d stdout %q", res.code, res.stdout)
	}
	oneLine(t, res.stderr)
	if !strings.Contains(res.stderr, protocol.ReasonStoreBusy) {
		t.Fatalf("the diagnostic should name store_busy: %q", res.stderr)
	}
	if took > 20*time.Second {
		t.Fatalf("the hook waited %v for a lock, far past its %v deadline", took, w.r.Deadline)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
		t.Fatalf("receipt %s after a turn that timed out, want queued", st)
	}
}

// TestMainWithNullStdoutOffersNothing: Go puts /dev/null where a closed
// stdout was; Main treats it as a client that takes nothing.
func TestMainWithNullStdoutOffersNothing(t *testing.T) {
	w := newWorld(t)
	me, q := w.pendingQuestion("claude", "s1")
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	for _, k := range []string{"ACC_PARTICIPANT", "ACC_SESSION", "ACC_GENERATION", "ACC_WORKSPACE_ROOT"} {
		t.Setenv(k, "")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var errb bytes.Buffer
	code := Main([]string{"claude", "UserPromptSubmit"}, bytes.NewReader(w.payload("claude", "UserPromptSubmit", "s1")), null, &errb, nil)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	oneLine(t, errb.String())
	if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
		t.Fatalf("context written to /dev/null was marked %s, want queued", st)
	}
	var out bytes.Buffer
	if code := Main([]string{"claude", "UserPromptSubmit"}, bytes.NewReader(w.payload("claude", "UserPromptSubmit", "s1")), &out, &errb, nil); code != 0 || !strings.Contains(out.String(), q) {
		t.Fatalf("Main with a real stdout: exit %d, stdout %q", code, out.String())
	}
	if st := w.receiptState(me, q); st != protocol.ReceiptOffered {
		t.Fatalf("receipt %s after a delivered turn, want offered", st)
	}
}

// TestFailOpenInProcess: refused input of every kind answers "proceed"
// with one line on stderr, for every adapter.
func TestFailOpenInProcess(t *testing.T) {
	w := newWorld(t)
	for client := range clients.All() {
		for name, c := range map[string]struct {
			args    []string
			payload string
			stdout  string
		}{
			"not json":       {[]string{client, "SessionStart"}, "this is not json", allowOf(client)},
			"empty":          {[]string{client, "SessionStart"}, "", allowOf(client)},
			"null":           {[]string{client, "SessionStart"}, "null", allowOf(client)},
			"array":          {[]string{client, "SessionStart"}, "[]", allowOf(client)},
			"no session id":  {[]string{client, "SessionStart"}, `{"cwd":"` + w.repo + `"}`, allowOf(client)},
			"no cwd":         {[]string{client, "SessionStart"}, `{"session_id":"s","sessionId":"s"}`, allowOf(client)},
			"relative cwd":   {[]string{client, "SessionStart"}, `{"session_id":"s","sessionId":"s","cwd":"repo"}`, allowOf(client)},
			"unknown event":  {[]string{client, "NoSuchEvent"}, string(w.payload(client, "SessionStart", "s")), allowOf(client)},
			"event mismatch": {[]string{client, "SessionEnd"}, string(w.payload(client, "SessionStart", "s")), allowOf(client)},
			"no adapter":     {[]string{"nosuch", "SessionStart"}, string(w.payload(client, "SessionStart", "s")), ""},
			"no args":        {nil, "", ""},
			"one arg":        {[]string{client}, "", ""},
			"three args":     {[]string{client, "SessionStart", "extra"}, "", ""},
		} {
			res := w.run(&bytes.Buffer{}, c.args, []byte(c.payload))
			if res.code != 0 || res.stdout != c.stdout {
				t.Errorf("%s %s: exit %d stdout %q, want exit 0 and %q", client, name, res.code, res.stdout, c.stdout)
			}
			if !strings.HasPrefix(res.stderr, "acc: ") || strings.Count(res.stderr, "\n") != 1 {
				t.Errorf("%s %s: expected one stderr line, got %q", client, name, res.stderr)
			}
		}
	}
	// None of it attached anything.
	if page, err := w.room().Status(context.Background(), core.StatusQuery{}); err != nil || len(page.Participants) != 0 {
		t.Fatalf("refused hooks attached sessions: %+v %v", page, err)
	}
}

// TestBudgetSpentBeforeTheStoreIsNotStoreBusy: when the hook's budget runs
// out before it asks the store anything (here a 1 ns deadline, spent while
// the payload is read), the fail-open line names hook_budget_exceeded,
// not store_busy: no writer held the store. Nothing is offered.
func TestBudgetSpentBeforeTheStoreIsNotStoreBusy(t *testing.T) {
	w := newWorld(t)
	me, q := w.pendingQuestion("claude", "s1")
	w.r.Deadline = time.Nanosecond
	res := w.hook("claude", "UserPromptSubmit", "s1")
	if res.code != 0 || res.stdout != allowOf("claude") {
		t.Fatalf("turn past its budget: exit %d stdout %q", res.code, res.stdout)
	}
	if want := "acc: coordination unavailable (hook_budget_exceeded); hook continued without context\n"; res.stderr != want {
		t.Fatalf("stderr %q, want %q", res.stderr, want)
	}
	if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
		t.Fatalf("receipt %s after a turn past its budget, want queued", st)
	}
}

// TestStdinNeverClosedCostsOnlyTheBudget: a client that never closes the
// hook's stdin gets its "proceed" answer when the deadline runs out, the
// reason being hook_budget_exceeded.
func TestStdinNeverClosedCostsOnlyTheBudget(t *testing.T) {
	w := newWorld(t)
	w.r.Deadline = 200 * time.Millisecond
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(w.payload("claude", "UserPromptSubmit", "s1"))
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- w.r.Run([]string{"claude", "UserPromptSubmit"}, pr, &out, &errb) }()
	select {
	case code := <-done:
		if code != 0 || out.String() != allowOf("claude") {
			t.Fatalf("exit %d stdout %q", code, out.String())
		}
		if want := "acc: coordination unavailable (hook_budget_exceeded); hook continued without context\n"; errb.String() != want {
			t.Fatalf("stderr %q, want %q", errb.String(), want)
		}
	case <-time.After(time.Minute):
		t.Fatal("the hook still waits for its stdin a minute after its 200 ms deadline")
	}
}

// TestKimiSessionStartOffersNothing: Kimi Code's session-start output
// reaches no model (docs/adapters.md#kimi-code), so a session start
// that finds a queued message prints nothing and leaves it queued; the
// next UserPromptSubmit, whose prompt is Kimi's array of content parts,
// prints it as plain text and marks it offered. Claude Code, whose
// session start does reach the model, offers it there.
func TestKimiSessionStartOffersNothing(t *testing.T) {
	w := newWorld(t)
	me, q := w.pendingQuestion("kimi", "k1")
	// A resumed session starts again with the question waiting.
	start, err := json.Marshal(map[string]any{"hook_event_name": "SessionStart", "session_id": "k1", "cwd": w.repo,
		"client_type": "kimi_code_cli", "source": "resume", "model": "m", "profile": "agent"})
	if err != nil {
		t.Fatal(err)
	}
	res := w.run(&bytes.Buffer{}, []string{"kimi", "SessionStart"}, start)
	if res.code != 0 || res.stdout != "" || res.stderr != "" {
		t.Fatalf("a Kimi session start must print nothing: %+v", res)
	}
	if st := w.receiptState(me, q); st != protocol.ReceiptQueued {
		t.Fatalf("after a Kimi session start the receipt is %s, want queued", st)
	}
	turn, err := json.Marshal(map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "k1", "cwd": w.repo,
		"client_type": "kimi_code_cli", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}, "is_steer": false})
	if err != nil {
		t.Fatal(err)
	}
	res = w.run(&bytes.Buffer{}, []string{"kimi", "UserPromptSubmit"}, turn)
	if res.code != 0 || res.stderr != "" || !strings.HasPrefix(res.stdout, "acc: --session ") || !strings.Contains(res.stdout, q) {
		t.Fatalf("the Kimi turn must print the question as plain text: %+v", res)
	}
	if st := w.receiptState(me, q); st != protocol.ReceiptOffered {
		t.Fatalf("after the Kimi turn the receipt is %s, want offered", st)
	}

	c := newWorld(t)
	me, q = c.pendingQuestion("claude", "c1")
	if res := c.hook("claude", "SessionStart", "c1"); res.code != 0 || !strings.Contains(res.stdout, q) {
		t.Fatalf("Claude's session start must print the question: %+v", res)
	}
	if st := c.receiptState(me, q); st != protocol.ReceiptOffered {
		t.Fatalf("after Claude's session start the receipt is %s, want offered", st)
	}
}

// TestKimiClientFoundByItsProcessName: Kimi Code 2.1.0 runs as a process
// named kimi-code and starts its hooks through /bin/sh -c
// (docs/adapters.md#kimi-code); the hook, a child of that shell, finds
// the kimi-code process as the client. The stand-in is a shell started
// under the name kimi-code; this test binary plays the hook.
func TestKimiClientFoundByItsProcessName(t *testing.T) {
	if os.Getenv("ACC_TEST_CLIENT_PID_HELPER") == "1" {
		fmt.Println(core.ClientPID(clients.Get("kimi").ClientCommand()))
		return
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	client := filepath.Join(t.TempDir(), "kimi-code")
	if err := os.Symlink(sh, client); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// "; exit $?" keeps the shell from replacing itself with the hook.
	cmd := exec.Command(client, "-c", `/bin/sh -c '"$0" -test.run="^TestKimiClientFoundByItsProcessName$"; exit $?' "$0"; exit $?`, self)
	cmd.Env = append(os.Environ(), "ACC_TEST_CLIENT_PID_HELPER=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	clientPID := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the stand-in client failed: %v\n%s", err, out.String())
	}
	got, _, _ := strings.Cut(out.String(), "\n")
	if got != strconv.Itoa(clientPID) {
		t.Fatalf("the hook found client pid %q, want the kimi-code process %d:\n%s", got, clientPID, out.String())
	}
}

// TestQwenClientFoundByItsVariable: Qwen Code 0.24.4's process is a
// plain node, and its hooks inherit QWEN_CODE_LAUNCHER_PID, the pid of the
// node started as qwen (docs/adapters.md#qwen-code). The hook takes that
// pid only when it is one of its ancestors: a shell stands in for the
// launcher and names itself; a live process beside the hook, a value
// that is no decimal pid, and pid 1 name nothing. This test binary plays
// the hook.
func TestQwenClientFoundByItsVariable(t *testing.T) {
	if os.Getenv("ACC_TEST_CLIENT_PID_HELPER") == "1" {
		fmt.Println(clientPID(clients.Get("qwen"), os.Getenv))
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	beside := exec.Command("sleep", "60")
	if err := beside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = beside.Process.Kill(); _ = beside.Wait() })
	run := func(value string) (hookSaw string, launcher int) {
		t.Helper()
		// The shell names itself ($$) unless told a value; "; exit $?"
		// keeps it from replacing itself with the hook.
		cmd := exec.Command("/bin/sh", "-c", `QWEN_CODE_LAUNCHER_PID=${ACC_TEST_VALUE:-$$} "$0" -test.run="^TestQwenClientFoundByItsVariable$"; exit $?`, self)
		cmd.Env = append(os.Environ(), "ACC_TEST_CLIENT_PID_HELPER=1", "ACC_TEST_VALUE="+value)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("the stand-in client failed: %v\n%s", err, out.String())
		}
		got, _, _ := strings.Cut(out.String(), "\n")
		return got, cmd.Process.Pid
	}
	if got, launcher := run(""); got != strconv.Itoa(launcher) {
		t.Errorf("QWEN_CODE_LAUNCHER_PID naming the hook's ancestor: the hook found %q, want %d", got, launcher)
	}
	for _, value := range []string{strconv.Itoa(beside.Process.Pid), "1", "+" + strconv.Itoa(os.Getpid()), "0x10", "abc", "99999999999"} {
		if got, _ := run(value); got != "0" {
			t.Errorf("QWEN_CODE_LAUNCHER_PID=%s: the hook found client pid %q, want 0 (no ancestor named)", value, got)
		}
	}
}

// TestVersionAskedAgainAtTheNextTurn: a session whose client version could
// not be read at its start (the probe's 2 s ran out on a busy machine) is
// asked again before its next turn, and from then on gets what is proven
// for that version; a session with a version recorded is not asked again.
func TestVersionAskedAgainAtTheNextTurn(t *testing.T) {
	w := newWorld(t)
	asked := 0
	answers := []string{"", "2.1.332"}
	w.r.ClientVersion = func(context.Context, adapter.Adapter) string {
		asked++
		if asked <= len(answers) {
			return answers[asked-1]
		}
		return "2.1.332"
	}
	recorded := func() (string, bool) {
		t.Helper()
		hs, err := w.room().HookSession(context.Background(), "claude", "c1", 0)
		if err != nil || hs == nil {
			t.Fatalf("the hooked session: %v %v", hs, err)
		}
		return hs.ClientVersion, hs.Capabilities.Guards.BeforeWrite
	}
	if res := w.hook("claude", "SessionStart", "c1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	if v, guarded := recorded(); v != "" || guarded || asked != 1 {
		t.Fatalf("after a start whose version was not read: version %q, file guard %v, asked %d times", v, guarded, asked)
	}
	if res := w.hook("claude", "UserPromptSubmit", "c1"); res.code != 0 {
		t.Fatalf("UserPromptSubmit: %+v", res)
	}
	if v, guarded := recorded(); v != "2.1.332" || !guarded || asked != 2 {
		t.Fatalf("after the next turn: version %q, file guard %v, asked %d times; want 2.1.332, true, 2", v, guarded, asked)
	}
	if res := w.hook("claude", "UserPromptSubmit", "c1"); res.code != 0 {
		t.Fatalf("UserPromptSubmit: %+v", res)
	}
	if asked != 2 {
		t.Fatalf("a turn of a session with its version recorded asked again (%d times)", asked)
	}
}
