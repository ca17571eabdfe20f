package realclient

// Shared pieces of the end-to-end tests that run the real clients with
// acc's own hooks: the freshly built binaries, a repository with two
// worktrees and a private data home, the acc command line as the test uses
// it, and hooked client sessions.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// The binaries under test, built once per test binary into binDir.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// accBinaries builds cmd/acc, cmd/acc-hook and cmd/acc-mcp from this
// checkout (once) and returns the directory holding them.
func accBinaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		start := time.Now()
		binDir, buildErr = os.MkdirTemp("", "acc-realclient-bin-")
		if buildErr != nil {
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command(goBin, "build", "-o", binDir+string(filepath.Separator), "./cmd/acc", "./cmd/acc-hook", "./cmd/acc-mcp")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/acc ./cmd/acc-hook ./cmd/acc-mcp: %v\n%s", err, out)
			return
		}
		t.Logf("built acc, acc-hook and acc-mcp in %v", time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// removeBinaries deletes the built binaries (TestMain, after the run).
func removeBinaries() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// A world is one repository with two worktrees and a private acc data home:
// repo (worktree A, branch main) and wt (worktree B, branch side) share one
// room. Both hold src/a.go ("package a\n"), src/spare.txt and src/sub/.
type world struct {
	t        testing.TB
	base     string
	repo, wt string
	dataHome string
	bin      string // directory of acc and acc-hook
	self     string // this test binary (the hook recorder)
	// sessions counts the client sessions made, for their directory names.
	mu       sync.Mutex
	sessions int
}

const aGo = "package a\n"

func newWorld(t testing.TB) *world {
	t.Helper()
	bin := accBinaries(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, base: base, repo: filepath.Join(base, "repo"), wt: filepath.Join(base, "wt"),
		dataHome: filepath.Join(base, "acc-data"), bin: bin, self: self}
	ctx := context.Background()
	if err := InitRepo(ctx, w.repo); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"src/a.go": aGo, "src/spare.txt": "spare\n", "src/sub/keep.txt": "keep\n",
	} {
		p := filepath.Join(w.repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.git(w.repo, "add", "src")
	w.git(w.repo, "commit", "-q", "-m", "sources")
	w.git(w.repo, "worktree", "add", "-q", "-b", "side", w.wt)
	return w
}

func (w *world) git(dir string, args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=acc test", "-c", "user.email=test@acc.invalid"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// accPath is the built acc program; models run it by this absolute path,
// since a login shell (Codex runs `bash -lc`) resets PATH.
func (w *world) accPath() string { return filepath.Join(w.bin, "acc") }

// accEnv is the environment of the test's own acc commands.
func (w *world) accEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(w.base, "home-test"),
		"ACC_DATA_HOME=" + w.dataHome,
		"LANG=C.UTF-8",
	}
}

// accErr is a refusal in acc's JSON envelope.
type accErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *accErr) Error() string { return fmt.Sprintf("acc exit %d: %s", e.Code, e.Message) }

// acc runs `acc --json --cwd dir args…` and returns the envelope's data. It
// may be called from any goroutine.
func (w *world) acc(dir string, args ...string) (json.RawMessage, error) {
	cmd := exec.Command(w.accPath(), append([]string{"--json", "--cwd", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = w.accEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *accErr         `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		return nil, fmt.Errorf("acc %s: %v (%v); stdout %q stderr %q", strings.Join(args, " "), runErr, err, stdout.String(), stderr.String())
	}
	if !env.OK {
		if env.Error == nil {
			env.Error = &accErr{Code: -1, Message: "no error in a failed envelope"}
		}
		return nil, fmt.Errorf("acc %s: %w", strings.Join(args, " "), env.Error)
	}
	return env.Data, nil
}

// mustAcc is acc for the test goroutine: a refusal fails the test.
func (w *world) mustAcc(dir string, args ...string) json.RawMessage {
	w.t.Helper()
	data, err := w.acc(dir, args...)
	if err != nil {
		w.t.Fatal(err)
	}
	return data
}

// A caller is a session and its generation.
type caller struct{ Session, Generation string }

func (c caller) flags() string {
	return "--session " + c.Session + " --generation " + c.Generation
}

func (c caller) args() []string {
	return []string{"--session", c.Session, "--generation", c.Generation}
}

// attach opens a manual (cli) session for participant in dir.
func (w *world) attach(dir, participant string) caller {
	w.t.Helper()
	var res struct {
		SessionID  string `json:"sessionId"`
		Generation string `json:"generation"`
	}
	if err := json.Unmarshal(w.mustAcc(dir, "attach", "--participant", participant), &res); err != nil {
		w.t.Fatal(err)
	}
	return caller{res.SessionID, res.Generation}
}

// The parts of `acc status --json` the tests read.
type statusView struct {
	Protection   string `json:"protection"`
	Participants []struct {
		SessionID     string  `json:"sessionId"`
		ParticipantID string  `json:"participantId"`
		Harness       string  `json:"harness"`
		CheckoutRoot  *string `json:"checkoutRoot"`
		Enforcement   string  `json:"enforcement"`
		Lifecycle     string  `json:"lifecycle"`
		State         string  `json:"state"`
		Presence      string  `json:"presence"`
	} `json:"participants"`
	Claims []struct {
		Resource           string `json:"resource"`
		Enforcement        string `json:"enforcement"`
		OwnerParticipantID string `json:"ownerParticipantId"`
	} `json:"claims"`
}

func (w *world) status(args ...string) (*statusView, error) {
	data, err := w.acc(w.repo, append([]string{"status"}, args...)...)
	if err != nil {
		return nil, err
	}
	var st statusView
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// liveOf returns the live sessions of harness in st.
func (st *statusView) liveOf(harness string) []string {
	var out []string
	for _, p := range st.Participants {
		if p.Harness == harness && p.State == "open" && p.Presence != "offline" {
			out = append(out, p.SessionID)
		}
	}
	return out
}

func (st *statusView) session(id string) (participant, harness, enforcement string, ok bool) {
	for _, p := range st.Participants {
		if p.SessionID == id {
			return p.ParticipantID, p.Harness, p.Enforcement, true
		}
	}
	return "", "", "", false
}

// receipt returns the state of recipient's receipt of message id, read from
// the room's public history.
func (w *world) receipt(id, recipient string) (string, error) {
	data, err := w.acc(w.repo, "sync", "--scope", "history", "--message", id)
	if err != nil {
		return "", err
	}
	var h struct {
		Receipts []struct {
			Recipient string `json:"recipientParticipantId"`
			State     string `json:"state"`
		} `json:"receipts"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return "", err
	}
	for _, r := range h.Receipts {
		if r.Recipient == recipient {
			return r.State, nil
		}
	}
	return "", fmt.Errorf("message %s has no receipt for %s: %s", id, recipient, data)
}

// ownerPattern is the trusted line a hook shows the model
// (docs/decisions.md#2-caller-identity).
var ownerPattern = regexp.MustCompile(`acc: --session (session_[A-Za-z0-9_-]+) --generation (generation_[A-Za-z0-9_-]+)`)

// ownerLines lists every owner line in a model request, in body order.
func ownerLines(q *fakemodel.Request) []caller {
	var out []caller
	for _, m := range ownerPattern.FindAllStringSubmatch(string(q.Body), -1) {
		c := caller{m[1], m[2]}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// shownCaller is the session a model acts as: of the owner lines its request
// shows, the one whose session is open now with the client's harness (a
// resumed conversation also shows the lines of earlier runs).
func (w *world) shownCaller(q *fakemodel.Request, harness string) (caller, error) {
	lines := ownerLines(q)
	st, err := w.status()
	if err != nil {
		return caller{}, err
	}
	var found []caller
	for _, c := range lines {
		if _, h, _, ok := st.session(c.Session); ok && h == harness {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return caller{}, fmt.Errorf("the request shows owner lines %v; %d of them are live %s sessions", lines, len(found), harness)
	}
	return found[0], nil
}

var messageIDPattern = regexp.MustCompile(`"messageId":\s*"(message_[A-Za-z0-9_-]+)"`)

// sentMessageID reads the id of the message an `acc message|reply --json`
// printed, from a tool result (which may wrap the output in the client's
// own framing).
func sentMessageID(output string) (string, error) {
	m := messageIDPattern.FindStringSubmatch(output)
	if m == nil {
		return "", fmt.Errorf("no message id in the tool output %q", output)
	}
	return m[1], nil
}

// lastResult returns the tool result in req for the call the previous
// scripted reply made (one call per reply).
func lastResult(prev, req *fakemodel.Request) (fakemodel.ToolResult, error) {
	if prev == nil {
		return fakemodel.ToolResult{}, errors.New("no previous call")
	}
	for _, res := range req.ToolResults() {
		if res.CallID != "" && slices.Contains(prev.CallIDs, res.CallID) {
			return res, nil
		}
	}
	results := req.ToolResults()
	if len(prev.CallIDs) == 1 && len(results) > 0 && results[len(results)-1].CallID == "" {
		return results[len(results)-1], nil
	}
	return fakemodel.ToolResult{}, fmt.Errorf("request %d has no result for the calls %v", req.Seq, prev.CallIDs)
}

// clientDir is the directory of a client's program: it goes on the PATH of
// the client's runs, as a person's install would, so acc-hook can ask the
// client its version.
func clientDir(exe string) string { return filepath.Dir(exe) }

// hooked makes a run of client c in dir whose hooks are the built acc-hook
// behind the recorder, with the world's data home and binaries. Each call
// gets its own HOME, fake model and hook log.
func (w *world) hooked(t testing.TB, c Client, dir string, script fakemodel.Script) *run {
	t.Helper()
	c, exe := requireClient(t, c)
	w.mu.Lock()
	w.sessions++
	n := w.sessions
	w.mu.Unlock()
	r := &run{t: t, client: c, logDir: filepath.Join(w.base, fmt.Sprintf("hooklog-%s-%d", c.Name, n)), repo: dir}
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	model, err := fakemodel.Start(fakemodel.Config{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	r.model = model
	// The hooks come from acc install: the shim it writes runs this
	// wrapper, which records each call around the freshly built acc-hook.
	hook := filepath.Join(w.bin, "acc-hook")
	wrapper := filepath.Join(r.logDir, "acc-hook-recorded")
	wrap := "#!/bin/sh\nexec " + ShellQuote(w.self) + " " + RecorderArg + " " + ShellQuote(r.logDir) + ` "$1" "$2" -- ` + ShellQuote(hook) + ` "$@"` + "\n"
	if err := os.WriteFile(wrapper, []byte(wrap), 0o755); err != nil {
		t.Fatal(err)
	}
	r.setup = Setup{
		Client: c, Exe: exe, Home: filepath.Join(w.base, fmt.Sprintf("home-%s-%d", c.Name, n)), Dir: dir, ModelURL: model.URL(),
		Install: &Install{Acc: filepath.Join(w.bin, "acc"), DataHome: filepath.Join(r.logDir, "install-data"), HookBinary: wrapper},
		Env: []string{
			"ACC_DATA_HOME=" + w.dataHome,
			"PATH=" + c.PathFor(w.bin+string(os.PathListSeparator)+clientDir(exe)+string(os.PathListSeparator)+os.Getenv("PATH")),
		},
	}
	return r
}

// configure writes the run's configuration and, for a run whose hooks acc
// installs, runs acc install (again, for a resumed run: it changes
// nothing then).
func (r *run) configure() {
	r.t.Helper()
	if err := r.setup.Configure(); err != nil {
		r.t.Fatal(err)
	}
	if r.setup.Install != nil {
		if _, err := r.setup.InstallAcc(context.Background(), r.installArgs...); err != nil {
			r.t.Fatal(err)
		}
	}
}

// A pending run is a client run in its own goroutine.
type pending struct {
	done chan struct{}
	res  Result
	err  error
}

// start runs the client in the background (the test goroutine must call
// wait, which reports failures).
func (r *run) start(prompt string) *pending {
	r.t.Helper()
	r.configure()
	p := &pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		p.res, p.err = r.setup.Run(ctx, prompt)
	}()
	// A test that stops early still waits for the client (its defers have
	// opened the gates by then) before its directories are removed.
	r.t.Cleanup(func() { <-p.done })
	return p
}

// wait waits for a background run and fails the test unless it exited 0.
func (r *run) wait(p *pending) Result {
	r.t.Helper()
	<-p.done
	recs, _ := ReadHookLog(r.logDir)
	r.t.Logf("%s@%s (background): exit %d in %v; hooks fired: %s", r.client.Name, r.client.Version, p.res.ExitCode,
		p.res.Elapsed.Round(time.Millisecond), strings.Join(Events(recs), " "))
	r.keep(p.res)
	if p.err != nil || p.res.ExitCode != 0 {
		r.dump(p.res)
		r.t.Fatalf("background run failed: err=%v exit=%d", p.err, p.res.ExitCode)
	}
	return p.res
}

// records returns the hook records logged so far.
func (r *run) records() []HookRecord {
	r.t.Helper()
	recs, err := ReadHookLog(r.logDir)
	if err != nil {
		r.t.Fatal(err)
	}
	return recs
}

// gate lets a scripted reply hold a client in the middle of its turn: the
// reply signals that it was asked, and waits until the test opens the gate.
type gate struct {
	asked, open chan struct{}
	once        sync.Once
	req         *fakemodel.Request
}

func newGate() *gate { return &gate{asked: make(chan struct{}), open: make(chan struct{})} }

// hold is a reply that blocks until the gate opens, then gives reply.
func (g *gate) hold(reply fakemodel.Reply) fakemodel.Reply {
	return fakemodel.Reply{Build: func(req *fakemodel.Request) (fakemodel.Reply, error) {
		g.req = req
		g.once.Do(func() { close(g.asked) })
		select {
		case <-g.open:
		case <-time.After(3 * time.Minute):
			return fakemodel.Reply{}, errors.New("the gate was never opened")
		}
		if reply.Build != nil {
			return reply.Build(req)
		}
		return reply, nil
	}}
}

// waitAsked waits until the held reply was asked for (the client is then
// mid-turn, its session live), or until the run ended.
func (g *gate) waitAsked(t *testing.T, p *pending) {
	t.Helper()
	select {
	case <-g.asked:
	case <-p.done:
		t.Fatalf("the client ended before the model was asked: exit %d, err %v\n%s", p.res.ExitCode, p.err, lastLines(p.res.Stderr, 30))
	case <-time.After(2 * time.Minute):
		t.Fatal("the client never asked the model")
	}
}

func (g *gate) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// hookAnswers returns the records of event, in order.
func recordsOf(recs []HookRecord, event string) []HookRecord {
	var out []HookRecord
	for _, r := range recs {
		if r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// hookContext is the additionalContext a hook answered with, "" if none;
// for a client that takes a hook's stdout as it is (Kimi Code), that text.
func hookContext(rec HookRecord) string {
	if rec.Client == "kimi" && rec.Exit == 0 {
		return strings.TrimRight(rec.Stdout, "\n")
	}
	var out struct {
		// The form of acc's OpenCode plugin and Pi extension.
		Context string `json:"context"`
		// Copilot CLI's form.
		AdditionalContext  string `json:"additionalContext"`
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(rec.Stdout), &out)
	if out.Context != "" {
		return out.Context
	}
	if out.AdditionalContext != "" {
		return out.AdditionalContext
	}
	return out.HookSpecificOutput.AdditionalContext
}

// denyReason is the reason of a pre-tool denial in any client's shape
// ("" when the hook allowed the call).
func denyReason(rec HookRecord) string {
	var out struct {
		Deny               string `json:"deny"` // acc's OpenCode plugin and Pi extension
		Decision           string `json:"decision"`
		Reason             string `json:"reason"`
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(rec.Stdout), &out)
	switch {
	case out.Deny != "":
		return out.Deny
	case out.HookSpecificOutput.PermissionDecision == "deny":
		return out.HookSpecificOutput.PermissionDecisionReason
	case out.Decision == "deny" || out.Decision == "block":
		return out.Reason
	case rec.Exit == 2:
		return strings.TrimSpace(rec.Stderr)
	}
	return ""
}
