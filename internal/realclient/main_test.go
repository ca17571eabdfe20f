package realclient

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestMain doubles as the hook recorder: the clients run this test binary as
// `<binary> acc-hook-recorder <dir> <client> <event>`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == RecorderArg {
		os.Exit(RecorderMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == TeeArg {
		os.Exit(teeMain(os.Args[2:]))
	}
	code := finishACPEvidence(finishEvidence(m.Run()))
	removeBinaries()
	os.Exit(code)
}

var (
	installMu sync.Mutex
	installs  = map[string]installResult{}
)

type installResult struct {
	client Client
	exe    string
	err    error
}

// requireClient returns the client to test and its program from the cache:
// the pinned version, which `make clients` installed before the tests, or
// with ACC_CLIENTS_LATEST=1 the newest on npm, installed here. When it is
// not there (and may not be installed here, NpmInstall) the test skips with
// the reason, or fails when ACC_REQUIRE_CLIENTS=1 (as CI sets it).
func requireClient(t testing.TB, c Client) (Client, string) {
	t.Helper()
	installMu.Lock()
	r, ok := installs[c.Name]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		start := time.Now()
		r.client = c
		if os.Getenv("ACC_CLIENTS_LATEST") == "1" {
			r.client, r.err = c.Latest(ctx)
		}
		if r.err == nil {
			r.exe, r.err = r.client.Install(ctx)
		}
		cancel()
		installs[c.Name] = r
		if r.err == nil {
			t.Logf("%s@%s ready in %v: %s", r.client.Package, r.client.Version, time.Since(start).Round(time.Millisecond), r.exe)
		}
	}
	installMu.Unlock()
	if r.err != nil {
		msg := fmt.Sprintf("SKIP: the client %s@%s cannot be installed: %v", r.client.Package, r.client.Version, r.err)
		if os.Getenv("ACC_REQUIRE_CLIENTS") == "1" {
			t.Fatal(msg + " (ACC_REQUIRE_CLIENTS=1 makes this a failure)")
		}
		t.Skip(msg)
	}
	return r.client, r.exe
}

// A run is one scripted headless session of a real client with the hook
// recorder on every event acc handles.
type run struct {
	t      testing.TB
	client Client
	setup  Setup
	model  *fakemodel.Server
	logDir string
	repo   string
	// proofs are capability proofs a test gathered from this run.
	proofs []proof
	// installArgs are added to `acc install` for a run whose hooks acc
	// installs (e.g. --mid-turn off).
	installArgs []string
}

// newRun prepares a run: a fresh HOME, a Git repository, a fake model playing
// script, and the recorder as every hook. A test may change r.setup (its Hook
// to wrap acc-hook, Env, Args) and append to the script before r.exec.
func newRun(t *testing.T, c Client, script fakemodel.Script) *run {
	t.Helper()
	c, exe := requireClient(t, c)
	base := t.TempDir()
	r := &run{t: t, client: c, logDir: filepath.Join(base, "hooklog"), repo: filepath.Join(base, "repo")}
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := InitRepo(context.Background(), r.repo); err != nil {
		t.Fatal(err)
	}
	model, err := fakemodel.Start(fakemodel.Config{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	r.model = model
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r.setup = Setup{
		Client: c, Exe: exe, Home: filepath.Join(base, "home"), Dir: r.repo, ModelURL: model.URL(),
		Hook: RecorderCommand(self, r.logDir, c.Name, nil),
		Env:  []string{"PATH=" + c.PathFor(os.Getenv("PATH"))},
	}
	return r
}

// respond sets what the recorder answers for one of the client's events.
func (r *run) respond(event string, resp HookResponse) {
	r.t.Helper()
	if err := SetHookResponse(r.logDir, r.client.Name, event, resp); err != nil {
		r.t.Fatal(err)
	}
}

// exec configures the client and runs it once with prompt; it fails the test
// unless the client exits 0. It returns the hook records.
func (r *run) exec(prompt string) (Result, []HookRecord) {
	r.t.Helper()
	r.configure()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := r.setup.Run(ctx, prompt)
	recs, lerr := ReadHookLog(r.logDir)
	r.t.Logf("%s@%s: exit %d in %v; hooks fired: %s", r.client.Name, r.client.Version, res.ExitCode,
		res.Elapsed.Round(time.Millisecond), strings.Join(Events(recs), " "))
	r.keep(res)
	if err != nil || res.ExitCode != 0 || lerr != nil {
		r.dump(res)
		r.t.Fatalf("run failed: err=%v exit=%d hook log: %v", err, res.ExitCode, lerr)
	}
	return res, recs
}

// dump logs everything a failure needs to be understood.
func (r *run) dump(res Result) {
	r.t.Helper()
	r.t.Logf("stdout:\n%s", lastLines(res.Stdout, 40))
	r.t.Logf("stderr:\n%s", lastLines(res.Stderr, 60))
	for _, q := range r.model.Requests() {
		r.t.Logf("model request %d: %s %s status=%d api=%s model=%q stream=%v side=%v reply=%d tools=%d bytes=%d",
			q.Seq, q.Method, q.Path, q.Status, q.API, q.Model, q.Stream, q.Side, q.Reply, len(q.Tools()), len(q.Body))
	}
	if err := r.model.Verify(); err != nil {
		r.t.Logf("fake model: %v", err)
	}
}

// keep copies the run's requests, hook log and output under
// $ACC_REALCLIENT_DUMP/<test name>/ when that variable is set, for a person
// to read.
func (r *run) keep(res Result) {
	root := os.Getenv("ACC_REALCLIENT_DUMP")
	if root == "" {
		return
	}
	dir := filepath.Join(root, strings.ReplaceAll(r.t.Name(), "/", "_")+"_"+filepath.Base(r.logDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Logf("ACC_REALCLIENT_DUMP: %v", err)
		return
	}
	for _, q := range r.model.Requests() {
		name := fmt.Sprintf("request-%02d-%s.json", q.Seq, q.API)
		head := fmt.Sprintf("%s %s status=%d side=%v reply=%d calls=%v\n", q.Method, q.Path, q.Status, q.Side, q.Reply, q.CallIDs)
		_ = os.WriteFile(filepath.Join(dir, name), append([]byte(head), q.Body...), 0o644)
	}
	if b, err := os.ReadFile(filepath.Join(r.logDir, "hooks.jsonl")); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "hooks.jsonl"), b, 0o644)
	}
	_ = os.WriteFile(filepath.Join(dir, "stdout.txt"), []byte(res.Stdout), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "stderr.txt"), []byte(res.Stderr), 0o644)
}
