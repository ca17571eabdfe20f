package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

var pattern = regexp.MustCompile(`\d+\.\d+\.\d+`)

// client writes a shell script standing in for a client and returns a
// probe of it bounded by timeout.
func client(t *testing.T, script string, timeout time.Duration) Probe {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "client")
	script = strings.ReplaceAll(script, "$DIR", dir)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Probe{Name: "client", Timeout: timeout, Pattern: pattern,
		Command: func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, bin, "--version") }}
}

// hang never answers: it waits until the probe ends it.
const hang = "exec sleep 3600\n"

// hangOnce never answers until the marker $DIR/asked exists, and then
// answers at once. The test makes the marker when the first attempt has
// ended (Probe.Done), so the script never has to get anywhere in time: on
// a loaded machine the first attempt may end before the shell even ran.
const hangOnce = `if [ -e $DIR/asked ]; then echo 'client 1.2.3'; exit 0; fi
exec sleep 3600
`

// slack is how much longer than its bounds a probe may take on a loaded
// machine before a test calls it unbounded.
const slack = 30 * time.Second

// TestSecondAttemptAnswers: a first attempt that runs out of its time is
// followed by a second, whose answer is the version. The first attempt
// has 100 ms against a client that never answers it; the second has a
// minute for one that answers at once.
func TestSecondAttemptAnswers(t *testing.T) {
	p := client(t, hangOnce, time.Minute)
	p.Done = func(cmd *exec.Cmd) {
		if err := os.WriteFile(filepath.Join(filepath.Dir(cmd.Path), "asked"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	p.bound = func(n int) time.Duration {
		if n == 1 {
			return 100 * time.Millisecond
		}
		return time.Minute
	}
	start := time.Now()
	res := p.Run(context.Background())
	t.Logf("took %v", time.Since(start))
	if res.Version != "1.2.3" || res.Line != "client 1.2.3" || res.Unknown != "" || res.TimedOut {
		t.Fatalf("got %+v, want 1.2.3 from the second attempt", res)
	}
}

// TestAlwaysSlowSaysWhy: a client that never answers is asked twice, each
// time within the bound, and the reason names the bound and the variable.
func TestAlwaysSlowSaysWhy(t *testing.T) {
	p := client(t, hang, 200*time.Millisecond)
	start := time.Now()
	res := p.Run(context.Background())
	took := time.Since(start)
	t.Logf("two attempts of 200 ms took %v", took)
	if took > 2*p.Timeout+slack {
		t.Errorf("two attempts of 200 ms took %v", took)
	}
	want := "`client --version` did not answer within 200 ms (asked twice); set ACC_PROBE_TIMEOUT_MS to wait longer"
	if res.Version != "" || !res.TimedOut || res.Unknown != want {
		t.Fatalf("got %+v, want unknown: %s", res, want)
	}
}

var withinMs = regexp.MustCompile(`within (\d+) ms( \(asked twice\))?;`)

// TestBudgetBoundsBothAttempts: Budget bounds the attempts together, and
// a later attempt gets only what is left of it.
func TestBudgetBoundsBothAttempts(t *testing.T) {
	// Two attempts of ten minutes would take twenty: the budget of half
	// a second ends the probe long before.
	p := client(t, hang, 10*time.Minute)
	p.Budget = 500 * time.Millisecond
	start := time.Now()
	res := p.Run(context.Background())
	took := time.Since(start)
	t.Logf("a 500 ms budget took %v: %s", took, res.Unknown)
	if took > p.Budget+slack {
		t.Errorf("a 500 ms budget took %v", took)
	}
	m := withinMs.FindStringSubmatch(res.Unknown)
	if !res.TimedOut || m == nil {
		t.Fatalf("got %+v, want a timeout that names its bound", res)
	}
	if ms, _ := strconv.Atoi(m[1]); ms > 500 {
		t.Errorf("an attempt was given %d ms of a 500 ms budget: %s", ms, res.Unknown)
	}

	// Attempts of 300 ms in a budget of 500: the second gets at most the
	// 200 ms left (or is not made when less than 50 ms is left), never 300.
	p = client(t, hang, 300*time.Millisecond)
	p.Budget = 500 * time.Millisecond
	res = p.Run(context.Background())
	t.Logf("300 ms attempts in a 500 ms budget: %s", res.Unknown)
	m = withinMs.FindStringSubmatch(res.Unknown)
	if !res.TimedOut || m == nil {
		t.Fatalf("got %+v, want a timeout that names its bound", res)
	}
	if ms, _ := strconv.Atoi(m[1]); m[2] != "" && ms > 200 {
		t.Errorf("the second attempt was given %d ms, more than the 200 ms left of the budget: %s", ms, res.Unknown)
	}
	if m[2] == "" && m[1] != "300" {
		t.Errorf("a single attempt should name its 300 ms: %s", res.Unknown)
	}
}

func TestNoVersionAndFailure(t *testing.T) {
	res := client(t, "echo hello\n", time.Second).Run(context.Background())
	if res.Version != "" || res.TimedOut || res.Unknown != "`client --version` printed no version" {
		t.Errorf("got %+v", res)
	}
	res = client(t, "exit 3\n", time.Second).Run(context.Background())
	if res.Version != "" || res.Unknown != "`client --version` failed (exit status 3) and printed no version" {
		t.Errorf("got %+v", res)
	}
}

func TestTimeoutFromEnvironment(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == Env {
				return v
			}
			return ""
		}
	}
	for v, want := range map[string]time.Duration{"": DefaultTimeout, "1": time.Millisecond, "10000": 10 * time.Second, " 250 ": 250 * time.Millisecond, "600000": MaxTimeout} {
		if got, err := Timeout(env(v), DefaultTimeout); err != nil || got != want {
			t.Errorf("%s=%q: %v, %v; want %v", Env, v, got, err, want)
		}
	}
	// Only digits: a sign, an exponent or separators are no whole number
	// of milliseconds as the message says, even where strconv reads one.
	for _, v := range []string{"0", "-5", "3s", "1.5", "abc", "600001", "+300", "-0", "0x10", "1_000", "1e3", "3 00"} {
		_, err := Timeout(env(v), DefaultTimeout)
		pe := protocol.AsError(err)
		if err == nil || pe.Reason != protocol.ReasonEnvInvalid || pe.Code() != protocol.ExitUsage || !strings.Contains(pe.Message, Env) {
			t.Errorf("%s=%q: %v, want an env_invalid refusal naming the variable", Env, v, err)
		}
		if got := TimeoutOr(env(v), time.Second); got != time.Second {
			t.Errorf("TimeoutOr(%q) = %v, want the default", v, got)
		}
	}
}
