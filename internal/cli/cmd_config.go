package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

// configCommand is `acc config init|validate` (docs/configuration.md#acc-config-init,
// docs/configuration.md#acc-config-validate; docs/decisions.md#19-workspace-config).
func (a *app) configCommand() *cli.Command {
	return &cli.Command{
		Name:     "config",
		Category: "setup",
		Usage:    "create or check the workspace config, acc.workspace.json",
		Description: "acc.workspace.json pins a workspace's id, roots and policy so that the room survives a move and can\n" +
			"span several directories. It is optional: without it a Git repository (all of its worktrees) or the\n" +
			"directory is the workspace. docs/configuration.md describes every field.",
		// The subcommand checks the command line; the parent only dispatches.
		Before: func(ctx context.Context, _ *cli.Command) (context.Context, error) { return ctx, nil },
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return protocol.Errorf(protocol.ReasonUnknownCommand,
					"unknown command: config %s - `acc config init` or `acc config validate`", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{a.configInitCommand(), a.configValidateCommand()},
	}
}

func (a *app) configInitCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "write a new acc.workspace.json into the selected directory, after showing it",
		Description: "init writes acc.workspace.json directly into --cwd (default: the working directory; no upward\n" +
			"search) with a new random workspace id, roots [\".\"] and the default policy. It shows the file first.\n" +
			"It never overwrites an existing file. A new config gives the workspace a new id, so init refuses while\n" +
			"sessions are attached to the current workspace, naming them, unless --force. It refuses a directory\n" +
			"that cannot be a room because it holds acc's data (your home directory) or lies inside it. Without --yes it asks\n" +
			"for confirmation when stdin and stdout are terminals, and refuses otherwise.\n\n" +
			"The new id is a new room that starts empty: the old room's messages and decisions stay in the old\n" +
			"room. A worktree without the file (not committed, or not checked out there) stays in the old room;\n" +
			"commit the file and update every checkout before sessions start (docs/configuration.md).\n\n" +
			"--store-url puts the room on a PostgreSQL server, so clones on other machines share it; the\n" +
			"password comes from PGPASSWORD, ~/.pgpass or a service file, never the URL.\n\n" +
			"  acc config init --yes\n" +
			"  acc config init --yes --store-url 'postgres://acc@db.example:5432/acc?sslmode=verify-full'",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Usage: "write without asking (needed when stdin or stdout is not a terminal)"},
			&cli.BoolFlag{Name: "force", Usage: "write even though sessions are attached to the current workspace"},
			&cli.StringFlag{Name: "store-url", Usage: "put the room on this PostgreSQL server (`URL` postgres://user@host:port/database, never with a password: the file is committed)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.String("workspace") != "" {
				return protocol.Errorf(protocol.ReasonUsage,
					"acc config init writes acc.workspace.json into --cwd; --workspace names an existing config, so leave it out")
			}
			dir, err := a.configDir(cmd)
			if err != nil {
				return err
			}
			plan, err := workspace.PlanConfigInit(dir)
			if err != nil {
				return err
			}
			if cmd.IsSet("store-url") {
				if err := plan.SetStoreURL(cmd.String("store-url")); err != nil {
					return err
				}
			}
			if err := plan.CheckRoom(a.env.Getenv, ""); err != nil {
				return err
			}
			if !cmd.Bool("force") {
				ctx, cancel := context.WithTimeout(ctx, StoreWait)
				defer cancel()
				sessions, err := core.AttachedSessions(ctx, core.OpenOptions{Cwd: plan.Dir, Getenv: a.getenvWithoutRoot})
				if err != nil {
					return err
				}
				if len(sessions) > 0 {
					return core.SessionsAttachedError(plan.File, sessions)
				}
			}
			preview := string(plan.Preview)
			result := map[string]any{"subcommand": "init", "written": false, "file": plan.File, "preview": preview}
			previewShown := false
			if !cmd.Bool("yes") {
				if !a.interactive() {
					if !a.jsonMode {
						fmt.Fprint(screen{a.env.Stdout}, preview)
					}
					return protocol.Errorf(protocol.ReasonConfirmationRequired,
						"refusing to write without confirmation; pass --yes in a non-interactive run").
						With("file", plan.File).With("preview", preview)
				}
				// Questions never go to stdout in --json mode: it holds the envelope.
				var w io.Writer = screen{a.env.Stdout}
				if a.jsonMode {
					w = screen{a.env.Stderr}
				}
				fmt.Fprint(w, preview)
				fmt.Fprintf(w, "Write %s? [y/N] ", plan.File)
				previewShown = !a.jsonMode
				line, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
				if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
					return a.emit(result, func(w io.Writer) { fmt.Fprintf(w, "not written: %s\n", plan.File) })
				}
			}
			if err := plan.Write(); err != nil {
				return err
			}
			result["written"] = true
			return a.emit(result, func(w io.Writer) {
				if !previewShown {
					fmt.Fprint(w, preview)
				}
				fmt.Fprintf(w, "written: %s\n", plan.File)
				fmt.Fprintln(w, "next: commit it: every worktree and clone that has this file joins this new room; one without it stays in the old one")
			})
		},
	}
}

func (a *app) configValidateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check the acc.workspace.json that governs the selected directory, and name it",
		Description: "validate finds the config that governs --cwd (default: the working directory) by walking up, as\n" +
			"every command does, or reads exactly --workspace FILE, and checks every rule. It only reads: it\n" +
			"needs no store and works when the workspace cannot be opened. Without a config it reports the\n" +
			"defaults, or that there is no room here (your home directory). A broken config exits 4 naming the file\n" +
			"and the field or key.\n\n" +
			"  acc config validate --json",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			dir, err := a.configDir(cmd)
			if err != nil {
				return err
			}
			v, err := workspace.ValidateConfigAt(dir, cmd.String("workspace"))
			if err != nil {
				return err
			}
			res := &configValidation{Subcommand: "validate", ConfigValidation: v}
			if pe := core.CheckRoomHere(ctx, core.OpenOptions{Cwd: res.Dir, ConfigPath: cmd.String("workspace"), Getenv: a.getenvWithoutRoot}); pe != nil {
				res.NoRoom = &core.DoctorNoRoom{ReasonCode: pe.Reason, Message: protocol.AsError(wording.CLIError(pe)).Message, Start: res.Dir}
			}
			return a.emit(res, func(w io.Writer) { printValidation(w, res) })
		},
	}
}

// configValidation is the answer of acc config validate: what
// workspace.ValidateConfigAt found, and whether a room can use the workspace.
type configValidation struct {
	Subcommand string `json:"subcommand"`
	*workspace.ConfigValidation
	// NoRoom is set when no room can use the workspace that governs the
	// directory because of where acc's data lies: the refusal a room
	// command gives there (reasonCode no_room, as in your home directory,
	// or runtime_inside_workspace); null otherwise. The config itself may
	// still be valid.
	NoRoom *core.DoctorNoRoom `json:"noRoom"`
}

func printValidation(w io.Writer, res *configValidation) {
	if !res.Present {
		switch {
		case res.NoRoom == nil:
			fmt.Fprintf(w, "no acc.workspace.json governs %s; defaults apply\n", res.Dir)
		case res.NoRoom.ReasonCode == protocol.ReasonNoRoom:
			fmt.Fprintf(w, "no acc.workspace.json governs %s; %s\n", res.Dir, res.NoRoom.Message)
		default:
			fmt.Fprintf(w, "no acc.workspace.json governs %s; defaults apply, but this workspace cannot be used: %s\n", res.Dir, res.NoRoom.Message)
		}
		return
	}
	fmt.Fprintf(w, "valid: %s\n", *res.File)
	cfg := res.Config.(*workspace.Config)
	adapters := "none"
	if len(cfg.RequiredAdapters) > 0 {
		adapters = strings.Join(cfg.RequiredAdapters, ", ")
	}
	fmt.Fprintf(w, "  workspaceId %s; roots %s; claimMode %s; contextBudgetBytes %d; orphanGraceMs %d; midTurn %s; endOfTurn %s; endOfTurnMaxHolds %d; requiredAdapters %s\n",
		cfg.WorkspaceID, strings.Join(cfg.Roots, ", "), cfg.Policy.ClaimMode, cfg.Policy.ContextBudgetBytes, cfg.Policy.OrphanGraceMs, cfg.Policy.MidTurn, cfg.Policy.EndOfTurn, cfg.Policy.EndOfTurnMaxHolds, adapters)
	if res.NoRoom != nil {
		fmt.Fprintf(w, "  but this workspace cannot be used: %s\n", res.NoRoom.Message)
	}
}

// configDir is the directory the config commands act on: --cwd, else
// ACC_WORKSPACE_ROOT (which must be absolute), else the working directory.
func (a *app) configDir(cmd *cli.Command) (string, error) {
	if cmd.String("cwd") != "" {
		return a.cwd(cmd)
	}
	root, err := workspace.WorkspaceRootEnv(a.env.Getenv)
	if err != nil || root != "" {
		return root, err
	}
	return a.cwd(cmd)
}

// getenvWithoutRoot hides ACC_WORKSPACE_ROOT: configDir has already chosen
// the directory, and discovery must start there.
func (a *app) getenvWithoutRoot(k string) string {
	if k == workspace.EnvWorkspaceRoot {
		return ""
	}
	return a.env.Getenv(k)
}

// interactive reports whether a question can be asked: stdin and stdout are
// both terminals.
func (a *app) interactive() bool {
	return isTerminal(a.env.Stdin) && isTerminal(a.env.Stdout)
}

func isTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
