package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// slowOnce sleeps past any short bound the first time it is asked, and
// answers at once the second time (a marker file remembers).
const slowOnce = `if [ -e $DIR/asked ]; then echo 'client 1.2.3'; exit 0; fi
touch $DIR/asked
exec sleep 5
`

func TestSecondAttemptAnswers(t *testing.T) {
	p := client(t, slowOnce, 300*time.Millisecond)
	res := p.Run(context.Background())
	if res.Version != "1.2.3" || res.Line != "client 1.2.3" || res.Unknown != "" || res.TimedOut {
		t.Fatalf("got %+v, want 1.2.3 from the second attempt", res)
	}
}

func TestAlwaysSlowSaysWhy(t *testing.T) {
	p := client(t, "exec sleep 5\n", 200*time.Millisecond)
	start := time.Now()
	res := p.Run(context.Background())
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("two attempts of 200 ms took %v", took)
	}
	want := "`client --version` did not answer within 200 ms (asked twice); set ACC_PROBE_TIMEOUT_MS to wait longer"
	if res.Version != "" || !res.TimedOut || res.Unknown != want {
		t.Fatalf("got %+v, want unknown: %s", res, want)
	}
}

func TestBudgetBoundsBothAttempts(t *testing.T) {
	p := client(t, "exec sleep 5\n", time.Second)
	p.Budget = 1200 * time.Millisecond
	start := time.Now()
	res := p.Run(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 1.2 s budget took %v", took)
	}
	// The second attempt got what was left: about 200 ms.
	if !res.TimedOut || strings.Contains(res.Unknown, "within 1000 ms (asked twice)") {
		t.Errorf("got %+v, want the second, shorter attempt named", res)
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
