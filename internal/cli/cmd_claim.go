package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

func (a *app) claimCommand() *cli.Command {
	return &cli.Command{
		Name:     "claim",
		Category: "coordination",
		Usage:    "reserve a file or a directory tree for this session; an overlapping claim of another session is refused",
		Description: "A file resource is named relative to the repository root, the same in every worktree; relative\n" +
			"input is read from where you run the command (--cwd). A directory is claimed as file:DIR/** — the only\n" +
			"glob understood; file:DIR/, file:DIR/* and an existing directory without /** are refused with the\n" +
			"spelling to use. A file that does not exist yet can be claimed. Claiming the same resource again\n" +
			"renews it: a new lease, and the mode, enforcement and reason you do not give stay as they were.\n" +
			"Exit 5 means someone else holds an overlapping claim: ask them, narrow yours, or wait\n" +
			"for its release with the `acc wait --released …` the refusal names, which runs where you are and\n" +
			"as your session from any terminal (it carries the --cwd and --workspace you gave, and --session).\n" +
			"A claim whose holder's process is gone, and has been for the workspace's policy.orphanGraceMs since\n" +
			"the holder last showed life (default 2 minutes), is no conflict: yours takes it over, the output says\n" +
			"from whom, and the former holder is sent a note naming it and the uncommitted changes left there.\n\n" +
			"  acc claim --resource file:src/render.go --reason \"receipt rendering\"",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "resource", Required: true, Usage: "what to claim: `file:PATH`, file:DIR/**, or another scheme such as doc:…"},
			&cli.StringFlag{Name: "mode", DefaultText: "the renewed claim's own, else exclusive", Usage: "`MODE`: exclusive or shared (shared claims may overlap each other)"},
			&cli.StringFlag{Name: "enforcement", DefaultText: "the renewed claim's own, else the workspace policy's, else advisory", Usage: "`LEVEL`: advisory, or guarded (write guards of proven clients deny others' writes)"},
			&cli.StringFlag{Name: "reason", DefaultText: "the renewed claim's own, else " + core.DefaultClaimReason, Usage: "one-line `TEXT` saying why"},
			&cli.IntFlag{Name: "lease", DefaultText: strconv.Itoa(core.DefaultLeaseSeconds), Usage: "lease length in `SECONDS` from now, for a new claim and a renewal alike"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cwd, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			if cmd.IsSet("lease") && (cmd.Int("lease") <= 0 || cmd.Int("lease") > core.MaxLeaseSeconds) {
				return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--lease takes 1 to %d seconds (7 days), not %d; renew a claim by claiming it again", core.MaxLeaseSeconds, cmd.Int("lease"))
			}
			for flag, allowed := range map[string][]string{"mode": {"exclusive", "shared"}, "enforcement": {"advisory", "guarded"}} {
				if v := cmd.String(flag); v != "" {
					if err := protocol.CheckOneOf("--"+flag, v, allowed...); err != nil {
						return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--%s %q is not one of %s", flag, v, strings.Join(allowed, ", "))
					}
				}
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				res, err := r.Claim(ctx, core.ClaimInput{Caller: c, Resource: cmd.String("resource"), Cwd: cwd,
					Mode: cmd.String("mode"), Enforcement: cmd.String("enforcement"), Reason: cmd.String("reason"),
					LeaseSeconds: cmd.Int("lease"), WaitFlags: a.waitFlags(cmd, cwd, c)})
				if err != nil {
					return err
				}
				return a.emit(res, func(w io.Writer) {
					verb := "claimed"
					if res.Renewed {
						verb = "renewed"
					}
					fmt.Fprintf(w, "%s %s\n  %s %s %s until %s\n", verb, res.Resource, res.ClaimID, res.Mode, res.Enforcement, res.ExpiresAt)
					for _, t := range res.TakenOver {
						told := "they were told in message " + t.MessageID
						if t.MessageID == "" {
							told = "their participant is yours, so no message was sent"
						}
						fmt.Fprintf(w, "  took over %s from %s (session %s, claim %s): %s, last seen %s; %s\n",
							t.Resource, t.OwnerParticipantID, t.OwnerSessionID, t.ClaimID, t.Evidence(), t.LastSeenAt, told)
					}
				})
			})
		},
	}
}

// waitFlags are what the `acc wait --released` a claim refusal names needs
// besides the resource to run where the user is and to wait as this
// session (docs/delivery.md#waiting-for-an-answer-without-polling):
// --cwd and --workspace, absolute, when the claim was given them, and
// --session always, so that pasted into another terminal (one without
// ACC_SESSION) it still sets this session's own claims aside: a wait that
// names no session counts every session's claims, the caller's own too.
// The generation is never printed: acc wait --released takes a session
// named alone, as the one whose claims it sets aside, acting as no one
// (docs/concepts.md#acting-as-a-session).
func (a *app) waitFlags(cmd *cli.Command, cwd string, c core.Caller) []string {
	var out []string
	if cmd.IsSet("cwd") {
		out = append(out, "--cwd", cwd)
	}
	if ws := cmd.String("workspace"); ws != "" {
		if !filepath.IsAbs(ws) {
			ws = filepath.Join(cwd, ws) // read from --cwd, as core.Open does
		}
		out = append(out, "--workspace", ws)
	}
	return append(out, "--session", c.SessionID)
}

func (a *app) releaseCommand() *cli.Command {
	return &cli.Command{
		Name:     "release",
		Category: "coordination",
		Usage:    "give up a claim (another session's only with --authority human|policy and a --reason)",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "claim", Usage: "the claim `ID` to release"},
			&cli.StringFlag{Name: "resource", Usage: "release your claim on this `RESOURCE` (spelled like acc claim)"},
			&cli.StringFlag{Name: "authority", Usage: "`WHO` decided a forced release: human (a person at a terminal) or policy (only a claim whose lease ran out); a peer's request is not authority"},
			&cli.StringFlag{Name: "reason", Usage: "one-line `TEXT`: the decision or policy behind a forced release"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.IsSet("claim") == cmd.IsSet("resource") {
				return protocol.Errorf(protocol.ReasonMissingFlag, "acc release takes exactly one of --claim ID or --resource RESOURCE; see `acc release --help`")
			}
			if v := cmd.String("authority"); v != "" && v != "human" && v != "policy" {
				return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--authority %q is not one of human, policy", v)
			}
			if cmd.String("authority") == "human" && !a.interactive() {
				return humanAuthorityRefused(cmd)
			}
			cwd, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				if cmd.String("authority") == "human" {
					agent, err := r.AgentAncestor(ctx)
					if err != nil {
						return err
					}
					if agent != nil {
						return agentTerminalRefused(cmd, agent)
					}
				}
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				res, err := r.Release(ctx, core.ReleaseInput{Caller: c, ClaimID: cmd.String("claim"), Resource: cmd.String("resource"),
					Cwd: cwd, Authority: cmd.String("authority"), Reason: cmd.String("reason")})
				if err != nil {
					return err
				}
				return a.emit(res, func(w io.Writer) {
					fmt.Fprintf(w, "released %s (%s)\n", res.ClaimID, res.Resource)
					if res.Forced {
						fmt.Fprintf(w, "  forced on %s authority\n", *res.Authority)
						if res.ToldMessageID != "" {
							fmt.Fprintf(w, "  its holder was told in message %s\n", res.ToldMessageID)
						}
					}
				})
			})
		},
	}
}

// humanAuthorityRefused is --authority human without a person: acc takes
// that authority only from a terminal, stdin and stdout both
// (docs/concepts.md#forced-release), since anything an agent runs
// through its shell tool is a pipe. The refusal tells an agent to ask its
// human rather than to find another way.
func humanAuthorityRefused(cmd *cli.Command) error {
	which := "--claim " + cmd.String("claim")
	if cmd.String("claim") == "" {
		which = "--resource " + cmd.String("resource")
	}
	return protocol.Errorf(protocol.ReasonAuthorityNeedsPerson,
		"--authority human needs a person: acc takes it only at a terminal (stdin and stdout), and this command's are not one; "+
			"if you are an agent, do not force this — ask your human to run `acc release %s --authority human --reason …` in their terminal, or ask the holder to release it", which)
}

// agentTerminalRefused is --authority human from a terminal that an
// agent's client started (its process is an ancestor of this one): a pty
// an agent opens for itself (script, unbuffer) is no person.
func agentTerminalRefused(cmd *cli.Command, agent *protocol.Session) error {
	which := "--claim " + cmd.String("claim")
	if cmd.String("claim") == "" {
		which = "--resource " + cmd.String("resource")
	}
	return protocol.Errorf(protocol.ReasonAuthorityNeedsPerson,
		"--authority human needs a person: this command runs under the client of %s (%s, process %d), so its terminal is an agent's, not a person's; "+
			"if you are an agent, do not force this — ask your human to run `acc release %s --authority human --reason …` in a terminal of their own, or ask the holder to release it",
		agent.ParticipantID, agent.Harness, *agent.PID, which)
}

func (a *app) workCommand() *cli.Command {
	return &cli.Command{
		Name:     "work",
		Category: "coordination",
		Usage:    "publish what this session is doing (intent): cheap awareness for peers, no protection",
		Description: "Intent tells peers what you are about to do; --hint names resources you expect to touch (spelled like\n" +
			"acc claim). A peer holding a claim on a hinted resource shows up in your attention, and you in theirs.\n" +
			"Intent protects nothing: claim what you are about to change.\n\n" +
			"  acc work --summary \"updating receipt rendering\" --hint file:src/render.go",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "summary", Usage: fmt.Sprintf("one-line `TEXT` (at most %d characters)", protocol.MaxIntentText)},
			&cli.StringFlag{Name: "mode", DefaultText: "edit", Usage: "`MODE`: observe, explore, edit, review, coordinate or wait"},
			&cli.StringFlag{Name: "state", DefaultText: "active", Usage: "`STATE`: active, blocked, waiting or done"},
			&cli.StringSliceFlag{Name: "hint", Usage: "a `RESOURCE` you expect to touch"},
			&cli.BoolFlag{Name: "clear", Usage: "clear the intent (marks it done)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			clear := cmd.Bool("clear")
			if clear && (cmd.IsSet("summary") || cmd.IsSet("mode") || cmd.IsSet("state") || cmd.IsSet("hint")) {
				return protocol.Errorf(protocol.ReasonUsage, "--clear takes no other intent flags")
			}
			if !clear && !cmd.IsSet("summary") {
				return protocol.Errorf(protocol.ReasonMissingFlag, "acc work requires --summary (or --clear); see `acc work --help`")
			}
			for flag, allowed := range map[string][]string{"mode": protocol.IntentModes, "state": protocol.IntentStates} {
				if v := cmd.String(flag); v != "" {
					if err := protocol.CheckOneOf("--"+flag, v, allowed...); err != nil {
						return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--%s %q is not one of %s", flag, v, strings.Join(allowed, ", "))
					}
				}
			}
			cwd, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				in, err := r.Work(ctx, core.IntentInput{Caller: c, Summary: cmd.String("summary"), Mode: cmd.String("mode"),
					State: cmd.String("state"), Hints: cmd.StringSlice("hint"), Cwd: cwd, Clear: clear})
				if err != nil {
					return err
				}
				return a.emit(in, func(w io.Writer) {
					if clear {
						fmt.Fprintln(w, "intent cleared")
						return
					}
					fmt.Fprintf(w, "intent: %s\n", in.Summary)
					for _, h := range in.ResourceHints {
						fmt.Fprintf(w, "  hint %s\n", h)
					}
				})
			})
		},
	}
}
