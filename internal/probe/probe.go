// Package probe asks a coding client for its version (`<client> --version`)
// the way every part of acc does — acc install, acc doctor, acc certify and
// acc-hook: within a bound that ACC_PROBE_TIMEOUT_MS sets, asked twice
// before the version is called unknown (a client's first start on a busy
// machine is the slow one), and, when it stays unknown, with the reason in
// words. docs/configuration.md documents the variable.
package probe

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// Env is the variable that bounds one attempt, in milliseconds.
const Env = "ACC_PROBE_TIMEOUT_MS"

// DefaultTimeout bounds one attempt when Env is unset (acc install and
// acc doctor; acc certify and acc-hook have their own defaults).
const DefaultTimeout = 3 * time.Second

// MaxTimeout is the largest bound Env accepts: 600000 ms.
const MaxTimeout = 10 * time.Minute

// Timeout returns the bound Env sets, or def when it is unset or empty.
// Anything but a whole number of milliseconds from 1 to 600000, written
// in digits only (spaces around it aside; no sign), is refused: exit 2, reason env_invalid,
// details.variable naming Env; the message names def as the default.
func Timeout(getenv func(string) string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(getenv(Env))
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if strings.Trim(v, "0123456789") != "" {
		// strconv takes a sign ("+300"); the message promises digits.
		err = strconv.ErrSyntax
	}
	if err != nil || n < 1 || n > MaxTimeout.Milliseconds() {
		return 0, protocol.Errorf(protocol.ReasonEnvInvalid,
			"%s must be a whole number of milliseconds from 1 to %d, got %q; set it to, say, 10000, or unset it (the default is %d)",
			Env, MaxTimeout.Milliseconds(), getenv(Env), def.Milliseconds()).With("variable", Env)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// TimeoutOr is Timeout for a caller that must not refuse (acc-hook, which
// lets its client proceed whatever happens): an unusable value counts as
// unset.
func TimeoutOr(getenv func(string) string, def time.Duration) time.Duration {
	d, err := Timeout(getenv, def)
	if err != nil {
		return def
	}
	return d
}

// Attempts is how many times a version is asked for before it is unknown.
const Attempts = 2

// Probe is one question for a version.
type Probe struct {
	// Name is the program as the reason names it ("claude").
	Name string
	// Command returns the command of one attempt, bound to ctx (the
	// caller sets its environment, directory and how it is ended).
	Command func(ctx context.Context) *exec.Cmd
	// Timeout bounds one attempt; Budget, when more than zero, bounds
	// all attempts together (an attempt gets what is left of it).
	Timeout, Budget time.Duration
	// Done, when set, runs after each attempt with its command (to end
	// what the attempt left running).
	Done func(cmd *exec.Cmd)
	// Stderr reads the version from stderr too, not only stdout.
	Stderr bool
	// Pattern finds the version in a line of the output.
	Pattern *regexp.Regexp

	// bound, when set, bounds attempt n (from 1) instead of Timeout: a
	// test's way to run one attempt out of time and give the next all
	// the time it needs, so that what it proves does not depend on how
	// fast the machine starts a program.
	bound func(n int) time.Duration
}

// Result is what a probe found.
type Result struct {
	// Version is the first match of Pattern, "" when unknown.
	Version string
	// Line is the output line it was read from.
	Line string
	// Unknown says why Version is "", in words that name the fix; "" when
	// it is known.
	Unknown string
	// TimedOut: the last attempt ran out of time.
	TimedOut bool
}

// Run asks up to Attempts times, stopping at the first answer with a
// version.
func (p Probe) Run(ctx context.Context) Result {
	start := time.Now()
	var res Result
	asked := 0
	for asked < Attempts {
		bound := p.Timeout
		if p.bound != nil {
			bound = p.bound(asked + 1)
		}
		if p.Budget > 0 {
			left := p.Budget - time.Since(start)
			if left < bound {
				bound = left
			}
			if bound < 50*time.Millisecond {
				break // nothing worth an attempt is left of the budget
			}
		}
		asked++
		res = p.once(ctx, bound)
		if res.Version != "" || ctx.Err() != nil {
			break
		}
	}
	if res.TimedOut && asked > 1 {
		res.Unknown = strings.Replace(res.Unknown, " ms; ", " ms (asked twice); ", 1)
	}
	return res
}

func (p Probe) once(ctx context.Context, bound time.Duration) Result {
	actx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := p.Command(actx)
	var out bytes.Buffer
	cmd.Stdout = &out
	if p.Stderr {
		cmd.Stderr = &out
	}
	if cmd.WaitDelay == 0 {
		// A child the client leaves holding the output must not keep
		// acc waiting past the bound.
		cmd.WaitDelay = 200 * time.Millisecond
	}
	err := cmd.Run()
	if p.Done != nil {
		p.Done(cmd)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if v := p.Pattern.FindString(line); v != "" {
			return Result{Version: v, Line: strings.TrimSpace(line)}
		}
	}
	call := "`" + p.Name + " --version`"
	switch {
	case ctx.Err() != nil:
		return Result{Unknown: call + " was stopped before it answered"}
	case actx.Err() != nil:
		return Result{TimedOut: true, Unknown: fmt.Sprintf("%s did not answer within %d ms; set %s to wait longer", call, bound.Milliseconds(), Env)}
	case err != nil:
		return Result{Unknown: fmt.Sprintf("%s failed (%v) and printed no version", call, err)}
	}
	return Result{Unknown: call + " printed no version"}
}
