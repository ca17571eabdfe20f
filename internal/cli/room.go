package cli

import (
	"context"
	"path/filepath"

	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// ownerFlags are --session and --generation, taken by every command that
// acts as a session (docs/decisions.md#2-caller-identity).
func ownerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "act as session `ID` (from `acc attach`)"},
		&cli.StringFlag{Name: "generation", Usage: "the session's current `GENERATION` (from `acc attach`)"},
	}
}

// cwd returns the directory the command runs in: --cwd (made absolute) or
// the process working directory.
func (a *app) cwd(cmd *cli.Command) (string, error) {
	if d := cmd.String("cwd"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", protocol.Errorf(protocol.ReasonWorkspaceUnresolvable, "cannot resolve --cwd %s: %v", d, err)
		}
		return abs, nil
	}
	d, err := a.env.Getwd()
	if err != nil {
		return "", protocol.Errorf(protocol.ReasonWorkspaceUnresolvable, "cannot read the working directory (%v); pass --cwd", err)
	}
	return d, nil
}

// withRoom opens the workspace's room for the command, with the client
// installations' delivery policies (install.ReadPolicies), runs fn, and
// closes it. The command waits at most StoreWait for a busy store (exit 3);
// a write that got the store's lock is never cut short by that deadline
// (pkg/storage's Update), nor is a message's delivery after its commit
// (livepush.AfterSend runs without it). A write whose outcome is unknown
// (outcome_unknown) gets the command to run again added to its message
// (retryAdvice).
func (a *app) withRoom(ctx context.Context, cmd *cli.Command, fn func(ctx context.Context, r *core.Room) error) (err error) {
	defer func() {
		if protocol.IsReason(err, protocol.ReasonOutcomeUnknown) {
			err = a.retryAdvice(cmd, err)
		}
	}()
	dir, err := a.cwd(cmd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, StoreWait)
	defer cancel()
	r, err := core.Open(ctx, core.OpenOptions{Cwd: dir, ConfigPath: cmd.String("workspace"), Getenv: a.env.Getenv,
		NoCreate: cmd.Name != "attach", ReadInstall: install.ReadPolicies})
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(ctx, r)
}

// caller resolves the session this command acts as.
func (a *app) caller(ctx context.Context, cmd *cli.Command, r *core.Room) (core.Caller, error) {
	return r.ResolveCaller(ctx, a.identity(cmd))
}

// identity is what names the caller of cmd: the flags, ACC_SESSION and
// ACC_GENERATION, and the process environment for the hook binding's proof.
func (a *app) identity(cmd *cli.Command) core.IdentityInput {
	return core.IdentityInput{
		FlagSession: cmd.String("session"), FlagGeneration: cmd.String("generation"),
		EnvSession: a.env.Getenv("ACC_SESSION"), EnvGeneration: a.env.Getenv("ACC_GENERATION"),
		Environ: a.env.Environ(),
	}
}

// callerNamed reports whether the command was told which session it acts
// as (--session, --generation, ACC_SESSION or ACC_GENERATION); when not,
// ResolveCaller found one automatically, and a read says whose it was.
func (a *app) callerNamed(cmd *cli.Command) bool {
	return cmd.String("session") != "" || cmd.String("generation") != "" ||
		a.env.Getenv("ACC_SESSION") != "" || a.env.Getenv("ACC_GENERATION") != ""
}

func deref(s *string, dflt string) string {
	if s == nil {
		return dflt
	}
	return *s
}
