package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/acc-go/acc/internal/certify"
	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/urfave/cli/v3"
)

// certifyCommand is `acc certify` (docs/certify.md): prove acc's capabilities on
// the user's own clients, without touching the user's HOME, repositories
// or network.
func (a *app) certifyCommand() *cli.Command {
	return &cli.Command{
		Name:     "certify",
		Category: "setup",
		Usage:    "prove, on this machine, what acc can do with your installed Claude Code, Codex, Gemini CLI and Kimi Code",
		Description: "certify runs each client you have (or each --adapter) headless in a temporary HOME and a temporary\n" +
			"Git repository with two worktrees, with acc's hooks installed there as acc install would, against a\n" +
			"fake model on 127.0.0.1 — never your HOME, configuration or repositories; acc uses no network and no\n" +
			"token — and proves each capability: the session attaches; a peer's question reaches the model's next\n" +
			"request and is offered; a guarded claim stops the client's file tool and its shell; a question\n" +
			"arriving between two tool calls reaches the model in the same turn (midTurn); one arriving as the turn\n" +
			"ends keeps the agent working once to answer it (endOfTurn); the session ends when the client exits.\n" +
			"It prints a table (capability, proven or not, why) and records the result for\n" +
			"that exact client version in acc's data home, which acc-hook and acc doctor then use (\"proven here\").\n" +
			"Progress goes to stderr, the table to stdout. Exit 4 when a capability is not proven or a client\n" +
			"cannot run this way (Kimi Code 2.1.0 always exits 4: it fires no session end headless, which its record\n" +
			"keeps from acc's own interactive run, and does not wait for its post-tool hook; its record is written\n" +
			"all the same: docs/certify.md). Each client has --timeout for everything, its `--version` and both runs included\n" +
			fmt.Sprintf("(%s by default: a cold start on a loaded machine takes more than a minute); a client that runs\n", core.ShortDuration(certify.DefaultTimeout)) +
			"out of time is reported with a longer --timeout to try, and nothing is recorded for it. Within that,\n" +
			fmt.Sprintf("its `--version` may take ACC_PROBE_TIMEOUT_MS milliseconds (%d by default), asked up to twice.\n", certify.VersionTimeout.Milliseconds()) +
			"Ctrl-C stops (what finished is shown and kept).\n\n" +
			"  acc certify\n" +
			"  acc certify --adapter claude --client ~/bin/claude-nightly",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "adapter", DefaultText: "those on PATH", Usage: "certify this client `ID`: claude, codex, copilot, droid, gemini, kilo, kimi, opencode, pi or qwen"},
			&cli.StringFlag{Name: "client", Usage: "run this `PATH` as the client (with one --adapter)"},
			&cli.DurationFlag{Name: "timeout", Value: certify.DefaultTimeout, DefaultText: core.ShortDuration(certify.DefaultTimeout), Usage: "give each client this `DURATION` in all, its --version and both runs (90s, 6m); more on a slow or busy machine"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o := certify.Options{Adapters: cmd.StringSlice("adapter"), Client: cmd.String("client"), Timeout: cmd.Duration("timeout"), Command: "acc " + strings.Join(a.args, " "),
				Adapter: func(id string) adapter.Adapter { return clients.Get(id) }}
			if o.Timeout <= 0 {
				return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--timeout must be more than zero, like 6m")
			}
			if err := certify.Check(o); err != nil {
				return err
			}
			var err error
			if o.ProbeTimeout, err = probe.Timeout(a.env.Getenv, certify.VersionTimeout); err != nil {
				return err
			}
			rt, err := workspace.ResolveRuntimeEnv(runtime.GOOS, a.env.Getenv)
			if err != nil {
				return err
			}
			o.DataHome = rt.DataHome
			o.Acc = siblingBinary("acc")
			o.Hook = a.env.Getenv("ACC_HOOK_BINARY")
			if o.Hook == "" {
				o.Hook = siblingBinary("acc-hook")
			}
			if _, err := exec.LookPath(o.Hook); err != nil {
				return protocol.Errorf(protocol.ReasonUsage, "acc certify needs acc-hook beside acc (%s); build or install all three binaries", o.Hook)
			}
			if !a.jsonMode {
				o.Progress = screen{a.env.Stderr}
			}
			// Whoever reads acc's output may go away (`2> >(tee log)` ended,
			// `| head`): a write to that closed pipe then fails and is
			// dropped instead of killing acc with SIGPIPE before it removed
			// its temporary directories, and the exit status still says how
			// certification went (docs/certify.md). Notify, not Ignore: an
			// ignored SIGPIPE would be inherited by the clients certify runs.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			// Ctrl-C ends the client being run and still cleans up after it.
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			results := certify.Run(ctx, o)
			if ctx.Err() != nil {
				if !a.jsonMode {
					printCertify(screen{a.env.Stdout}, results)
				}
				return protocol.Errorf(protocol.ReasonNotCertified, "interrupted: the clients above are as shown (those that finished are recorded); nothing else was certified").With("results", results)
			}
			failed := len(results) == 0
			for _, r := range results {
				failed = failed || !r.AllProven()
			}
			if len(results) == 0 {
				return protocol.Errorf(protocol.ReasonNotCertified, "no claude, codex, copilot, droid, gemini, kilo, kimi, opencode, pi or qwen on PATH; name one with --adapter (and --client PATH)")
			}
			if failed {
				if !a.jsonMode {
					printCertify(screen{a.env.Stdout}, results)
				}
				where := "see the table"
				if a.jsonMode {
					where = "see error.details.results"
				}
				e := protocol.Errorf(protocol.ReasonNotCertified, "%s; %s", certifySummary(results), where)
				return e.With("results", results)
			}
			return a.emit(map[string]any{"results": results}, func(w io.Writer) { printCertify(w, results) })
		},
	}
}

func certifySummary(results []certify.Result) string {
	var bad []string
	for _, r := range results {
		if !r.AllProven() {
			bad = append(bad, r.Adapter)
		}
	}
	return "not everything is proven for " + strings.Join(bad, ", ")
}

func printCertify(w io.Writer, results []certify.Result) {
	for _, r := range results {
		// A version unknown is a problem, and the problem says so and why.
		head := fmt.Sprintf("%s %s (%s)", r.Adapter, r.Version, r.Binary)
		switch {
		case r.Binary == "":
			head = r.Adapter
		case r.Version == "":
			head = fmt.Sprintf("%s (%s)", r.Adapter, r.Binary)
		}
		switch {
		case r.AllProven():
			head += ": every capability proven"
		case r.Problem != "":
			head += ": " + r.Problem
		default:
			head += ": not every capability proven"
		}
		fmt.Fprintln(w, head)
		for _, p := range r.Proofs {
			mark := "proven    "
			if !p.Proven {
				mark = "NOT proven"
			}
			fmt.Fprintf(w, "  %-11s %s  %s\n", p.Capability, mark, p.Why)
		}
		if r.Evidence != "" {
			fmt.Fprintf(w, "  recorded in %s (%.1f s)\n", r.Evidence, float64(r.ElapsedMs)/1000)
		}
	}
}
