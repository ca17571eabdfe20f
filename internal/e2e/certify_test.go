package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// certifyResult is one client's row of acc certify --json.
type certifyResult struct {
	Adapter, Version, Problem, Evidence string
	Ran                                 bool
	Proofs                              []struct {
		Capability string
		Proven     bool
		Why        string
	}
}

// standIn writes an executable "claude" that runs the stand-in client
// in mode (see testdata/standin-claude.py), or script itself when given.
func standIn(t *testing.T, mode, script string) string {
	dir := t.TempDir()
	if script == "" {
		abs, _ := filepath.Abs(filepath.Join("testdata", "standin-claude.py"))
		script = "#!/bin/sh\nSTANDIN_MODE=" + mode + " exec python3 " + abs + " \"$@\"\n"
	}
	p := filepath.Join(dir, "claude")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bounds given to acc certify by the stand-in tests. A stand-in that runs to
// its end is given finishBound, which it never needs: what it proves must
// not depend on how busy the machine is. A stand-in that hangs on purpose
// is given hangBound, long enough for everything before its hang (starting,
// the session start hook, the first model request) on a loaded 2-core
// machine, short enough to keep the suite quick; its subtests run in
// parallel so the suite waits for one hangBound, not one per case.
const (
	finishBound = "3m"
	hangBound   = 20 * time.Second
)

// TestCertifyStandIns (docs/certify.md#reading-the-table): a client that starts
// but fires no hooks, one that ignores the deny, and one that hangs each
// give a table naming exactly what failed and why, with exit 4, and leave
// no process and no temporary file behind; the user's HOME is unchanged. A
// hanging client is ended at the bound certify was given (checked with a
// minute of slack, so a busy machine cannot fail it).
func TestCertifyStandIns(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the stand-in clients")
	}
	for _, c := range []struct {
		name, mode, script string
		proven             map[string]bool
		problem            string
		recorded           bool
	}{
		{name: "fires no hooks", mode: "nohooks", proven: map[string]bool{}, recorded: true},
		{name: "ignores the deny", mode: "ignoredeny", proven: map[string]bool{"attach": true, "nextTurn": true, "sessionEnd": true, "midTurn": true, "endOfTurn": true}, recorded: true},
		{name: "writes after telling the model of the deny", mode: "late", proven: map[string]bool{"attach": true, "nextTurn": true, "sessionEnd": true, "midTurn": true, "endOfTurn": true}, recorded: true},
		{name: "gives no result for the shell", mode: "noshell", proven: map[string]bool{"attach": true, "nextTurn": true, "guardFiles": true, "sessionEnd": true, "midTurn": true, "endOfTurn": true}, recorded: true},
		{name: "makes up a denial", mode: "fakedeny", proven: map[string]bool{"attach": true, "nextTurn": true, "sessionEnd": true}, recorded: true},
		{name: "writes and puts the bytes back", mode: "restore", proven: map[string]bool{"attach": true, "nextTurn": true, "guardShell": false, "sessionEnd": true, "midTurn": true, "endOfTurn": true}, recorded: true},
		// Without a before-turn hook no turn is ever seen to start, and
		// only a turn is held: endOfTurn cannot be given.
		{name: "runs no before-turn hook", mode: "noprompt", proven: map[string]bool{"attach": true, "guardFiles": true, "guardShell": true, "sessionEnd": true, "midTurn": true}, recorded: true},
		{name: "runs no post-tool hook", mode: "nopost", proven: map[string]bool{"attach": true, "nextTurn": true, "guardFiles": true, "guardShell": true, "sessionEnd": true, "endOfTurn": true}, recorded: true},
		{name: "stops although held", mode: "nohold", proven: map[string]bool{"attach": true, "nextTurn": true, "guardFiles": true, "guardShell": true, "sessionEnd": true, "midTurn": true}, recorded: true},
		{name: "hangs after asking the model", mode: "slow", proven: map[string]bool{"attach": true}, problem: "did not finish within 20s; nothing recorded"},
		{name: "hangs", script: "#!/bin/sh\n[ \"$1\" = --version ] && { echo '9.9.9 (Claude Code)'; exit 0; }\nsleep 600\n",
			proven: map[string]bool{}, problem: "did not finish within 20s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hangs := c.problem != ""
			bound := finishBound
			if hangs {
				bound = hangBound.String()
			}
			sb := newSandbox(t)
			client := standIn(t, c.mode, c.script)
			homeBefore := dirHash(t, sb.home)
			tmp := t.TempDir() // certify's own temporary directories go here
			start := time.Now()
			cmd := sb.command(context.Background(), sb.home, "certify", "--json", "--adapter", "claude", "--client", client, "--timeout", bound)
			cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			res := result{args: cmd.Args, stdout: stdout.String(), stderr: stderr.String(), code: exitCode(cmd, err)}
			took := time.Since(start)
			if res.code != 4 {
				t.Fatalf("exit %d, want 4\n%s", res.code, res)
			}
			t.Logf("acc certify took %v with --timeout %s", took.Round(time.Millisecond), bound)
			if hangs && took > hangBound+time.Minute {
				t.Errorf("acc certify took %v with a %v bound: it did not end the hanging client at its bound", took, hangBound)
			}
			var env struct {
				Error struct {
					Details struct {
						ReasonCode string          `json:"reasonCode"`
						Results    []certifyResult `json:"results"`
					} `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &env); err != nil || len(env.Error.Details.Results) != 1 {
				t.Fatalf("the refusal carries no table: %v\n%s", err, res.stdout)
			}
			r := env.Error.Details.Results[0]
			if env.Error.Details.ReasonCode != "not_certified" {
				t.Errorf("reason %q", env.Error.Details.ReasonCode)
			}
			for _, p := range r.Proofs {
				if p.Proven != c.proven[p.Capability] {
					t.Errorf("%s proven %v, want %v (%s)", p.Capability, p.Proven, c.proven[p.Capability], p.Why)
				}
				if !p.Proven && p.Why == "" {
					t.Errorf("%s: no reason given", p.Capability)
				}
				t.Logf("%s %v: %s", p.Capability, p.Proven, p.Why)
			}
			if c.problem != "" && !strings.Contains(r.Problem, c.problem) {
				t.Errorf("problem %q, want %q", r.Problem, c.problem)
			}
			// Running out of time names the way out: the flag, with more.
			if strings.Contains(c.problem, "did not finish") && !strings.Contains(r.Problem, "give it longer with --timeout 40s") {
				t.Errorf("problem %q does not name --timeout with a longer bound", r.Problem)
			}
			if (r.Evidence != "") != c.recorded {
				// Say why, so that a run that fails once can be read.
				whys := make([]string, 0, len(r.Proofs))
				for _, p := range r.Proofs {
					whys = append(whys, fmt.Sprintf("%s=%v (%s)", p.Capability, p.Proven, p.Why))
				}
				t.Errorf("evidence %q, want recorded %v; problem %q; proofs: %s", r.Evidence, c.recorded, r.Problem, strings.Join(whys, "; "))
			}
			if dirHash(t, sb.home) != homeBefore {
				t.Error("acc certify changed the HOME")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("acc certify left %d entries in TMPDIR: %v", len(left), left)
			}
			if out, _ := exec.Command("pgrep", "-f", filepath.Dir(client)).Output(); len(out) > 0 {
				t.Errorf("processes of the stand-in are still running: %s", out)
			}
		})
	}
}

// TestCertifyProvesTurnDeliveryBeyondTheBuiltInEvidence: for a version
// the built-in evidence does not prove midTurn and endOfTurn for (Claude
// Code 2.1.197, before 2.1.332), acc-hook in certify's temporary room
// still attempts both, so a client that carries them is proven and the
// record in the user's data home says so — which is what then makes the
// hooks deliver mid-turn for that version.
func TestCertifyProvesTurnDeliveryBeyondTheBuiltInEvidence(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the stand-in clients")
	}
	sb := newSandbox(t)
	dir := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join("testdata", "standin-claude.py"))
	client := filepath.Join(dir, "claude")
	if err := os.WriteFile(client, []byte("#!/bin/sh\nSTANDIN_VERSION=2.1.197 exec python3 "+abs+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in's other verdicts are not this test's subject (its
	// exit code follows them); the turn-delivery ones and the record are.
	res := sb.run(sb.home, "certify", "--json", "--adapter", "claude", "--client", client, "--timeout", finishBound)
	t.Logf("acc certify exit %d", res.code)
	var rec struct {
		Version string               `json:"version"`
		Proven  adapter.Capabilities `json:"proven"`
	}
	raw, err := os.ReadFile(filepath.Join(sb.data, "acc", "evidence", "claude", "2.1.197.json"))
	if err != nil || json.Unmarshal(raw, &rec) != nil {
		t.Fatalf("no record for 2.1.197: %v\n%s", err, raw)
	}
	if rec.Version != "2.1.197" || !rec.Proven.MidTurn || !rec.Proven.EndOfTurn {
		t.Fatalf("record %+v\n%s", rec, res)
	}
}

// TestCertifyRefusals: an unknown adapter, --client without exactly one
// adapter, a bad --timeout are exit 2 and create nothing.
func TestCertifyRefusals(t *testing.T) {
	sb := newSandbox(t)
	before := dirHash(t, sb.data)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"certify", "--adapter", "grok"}, "drives claude, codex, copilot, droid, gemini, kilo, kimi, opencode, pi and qwen headless; \"grok\" is not one of them"},
		{[]string{"certify", "--client", "/bin/true"}, "give exactly one --adapter"},
		{[]string{"certify", "--adapter", "claude", "--timeout", "0s"}, "--timeout must be more than zero"},
	} {
		res := sb.run(sb.home, c.args...)
		if res.code != 2 || !strings.Contains(res.stderr, c.msg) {
			t.Errorf("acc %v: %s", c.args, res)
		}
	}
	if dirHash(t, sb.data) != before {
		t.Error("a refused certify changed the data home")
	}
}

// TestLocalEvidenceDecides: a record acc certify made for the exact client
// version decides how acc-hook attaches its sessions — here it did not
// prove the guards, so a Claude Code version the built-in evidence calls
// guarded attaches advisory — and acc doctor says it was proven here.
func TestLocalEvidenceDecides(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	rec := `{"version":"2.1.332","proven":{"attach":true,"nextTurn":true,"guardFiles":false,"guardShell":false,"sessionEnd":true},` +
		`"test":"acc certify --adapter claude","recorded":"2026-11-30T10:00:00Z","local":true,"binary":"/usr/bin/claude","why":{}}`
	p := filepath.Join(sb.data, "acc", "evidence", "claude", "2.1.332.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(rec), 0o644)
	proven := fakeClientBin(t, "claude", "2.1.332 (Claude Code)")
	s := sb.hookSession(clientByID(t, "claude"), "sid-local", repo, "ACC_PARTICIPANT=local", "PATH="+proven+":"+os.Getenv("PATH"))
	out := sb.ok(repo, "status").stdout
	if !strings.Contains(out, "local (claude, advisory)") {
		t.Errorf("with a local record that proves no guard, the session is not advisory:\n%s", out)
	}
	_ = s
	doc := sb.command(context.Background(), repo, "doctor")
	doc.Env = append(doc.Env, "PATH="+proven+":"+os.Getenv("PATH"))
	b, _ := doc.Output()
	if !strings.Contains(string(b), "client claude: present 2.1.332") || !strings.Contains(string(b), "proven here on 2026-11-30 for 2.1.332 by acc certify: attach, next turn, session end") {
		t.Errorf("acc doctor:\n%s", b)
	}
}

// TestCertifyLeavesTheUserAlone: run from inside a Git hook (GIT_DIR and
// GIT_WORK_TREE pointing at the user's repository), certify still works in
// its own repository; interrupted (SIGINT), it ends the client and removes
// its temporary files; a run that timed out leaves an earlier record as it
// was.
func TestCertifyLeavesTheUserAlone(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the stand-in clients")
	}
	sb := newSandbox(t)
	user := sb.newRepo("user")
	head := sb.git(user, "rev-parse", "HEAD")
	status := sb.git(user, "status", "--porcelain")
	tmp := t.TempDir()
	run := func(client string, extra ...string) (*exec.Cmd, *strings.Builder) {
		cmd := sb.command(context.Background(), sb.home, append([]string{"certify", "--json", "--adapter", "claude", "--client", client}, extra...)...)
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "GIT_DIR="+filepath.Join(user, ".git"), "GIT_WORK_TREE="+user, "GIT_INDEX_FILE="+filepath.Join(user, ".git", "index"))
		var out strings.Builder
		cmd.Stdout = &out
		return cmd, &out
	}
	// A good record of the stand-in's version, then a run that times out.
	good := `{"version":"9.9.9","proven":{"attach":true,"nextTurn":true,"guardFiles":true,"guardShell":true,"sessionEnd":true},"test":"acc certify --adapter claude","recorded":"2026-11-29T10:00:00Z","local":true,"binary":"/x","why":{}}`
	rec := filepath.Join(sb.data, "acc", "evidence", "claude", "9.9.9.json")
	os.MkdirAll(filepath.Dir(rec), 0o755)
	os.WriteFile(rec, []byte(good), 0o644)
	cmd, _ := run(standIn(t, "slow", ""), "--timeout", "3s")
	if err := cmd.Run(); exitCode(cmd, err) != 4 {
		t.Errorf("a timed-out certify: %v", err)
	}
	if b, _ := os.ReadFile(rec); string(b) != good {
		t.Errorf("a run that timed out rewrote the record:\n%s", b)
	}
	// Interrupted.
	client := standIn(t, "", "#!/bin/sh\n[ \"$1\" = --version ] && { echo '9.9.9 (Claude Code)'; exit 0; }\nsleep 600\n")
	cmd, out := run(client, "--timeout", "60s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(cmd, err); code != 4 || !strings.Contains(out.String(), "interrupted") {
			t.Errorf("interrupted certify: exit %d %s", code, out)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("acc certify did not end on SIGINT")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("acc certify left %d entries in TMPDIR", len(left))
	}
	if b, _ := exec.Command("pgrep", "-f", filepath.Dir(client)).Output(); len(b) > 0 {
		t.Errorf("the client is still running: %s", b)
	}
	if sb.git(user, "rev-parse", "HEAD") != head || sb.git(user, "status", "--porcelain") != status {
		t.Error("acc certify changed the user's repository")
	}
	if strings.Contains(sb.git(user, "branch", "--list"), "side") {
		t.Error("acc certify made a branch in the user's repository")
	}
}

// TestCertifySparesItsReader: the process reading acc certify's stderr is
// the caller's even when it is acc's child — bash makes the reader of
// `2> >(cat > log)` one — so certify, which ends whatever its clients left
// behind, leaves it alone: the log gets the progress, the exit says how
// certification went, and the temporary directory is removed. And with
// nobody reading stderr at all (the pipe's reader is gone), certify still
// runs to its end and removes its temporary directory.
func TestCertifySparesItsReader(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash for a process substitution")
	}
	sb := newSandbox(t)
	// A client that says its version and exits without asking the model:
	// quick, and reported (exit 4) with nothing recorded.
	client := standIn(t, "", "#!/bin/sh\n[ \"$1\" = --version ] && { echo '9.9.9 (Claude Code)'; exit 0; }\nexit 0\n")

	t.Run("a reader acc did not start", func(t *testing.T) {
		tmp, log := t.TempDir(), filepath.Join(t.TempDir(), "log")
		ctx, cancel := withTimeout()
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, "-c", `"$ACC" certify --adapter claude --client "$CLIENT" 2> >(cat > "$LOG")`)
		cmd.Dir = sb.home
		cmd.Env = append(sb.environ(), "TMPDIR="+tmp, "ACC="+accBin, "CLIENT="+client, "LOG="+log)
		// The reader inherits this pipe as its stderr, so Run returns once
		// the reader has ended too: the log is complete by then.
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if code := exitCode(cmd, err); code != 4 {
			t.Errorf("exit %d, want 4 (141 is SIGPIPE: the reader was killed)\n%s", code, out.String())
		}
		b, _ := os.ReadFile(log)
		if !strings.Contains(string(b), "claude 9.9.9 ("+client+"): certifying in") || !strings.Contains(string(b), "run 1: attach") {
			t.Errorf("the log did not get the progress lines:\n%s", b)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("acc certify left %d entries in TMPDIR: %v", len(left), left)
		}
	})

	t.Run("nobody reads stderr", func(t *testing.T) {
		tmp := t.TempDir()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // every write to stderr fails with EPIPE
		cmd := sb.command(context.Background(), sb.home, "certify", "--adapter", "claude", "--client", client)
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, w
		err = cmd.Start()
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if code := exitCode(cmd, err); code != 4 {
			t.Errorf("exit %d, want 4 (-1: a signal ended acc)\n%s", code, out.String())
		}
		if !strings.Contains(out.String(), "claude") {
			t.Errorf("the table is not on stdout:\n%s", out.String())
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("acc certify left %d entries in TMPDIR: %v", len(left), left)
		}
	})
}
