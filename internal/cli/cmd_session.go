package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/acc-go/acc/internal/clients"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

func (a *app) attachCommand() *cli.Command {
	return &cli.Command{
		Name:     "attach",
		Category: "session lifecycle",
		Usage:    "open a session in this workspace and print its session id and generation",
		Description: "attach opens a session for a participant (the address peers use with --to). Keep the printed pair:\n" +
			"pass it as --session and --generation (or ACC_SESSION and ACC_GENERATION) to act as this session.\n" +
			"acc never shows the generation to peers or in status. attach never starts or owns a client process.\n" +
			"Its output is the one line `<sessionId> <generation>` (read s g < <(acc attach …) takes it apart); the\n" +
			"export line to paste goes to stderr. With --shell the export line is the output, for eval.\n\n" +
			"--session reopens a session that is closed or whose process has exited; the new generation takes over its\n" +
			"claims, so the caller must prove it is that session: --generation with its last generation, or ACC_SESSION\n" +
			"and ACC_GENERATION naming that pair, or (for a hooked client) the client's own session id in the environment\n" +
			"matching the session's hook binding. A session id alone is public and is refused.\n\n" +
			"  eval \"$(acc attach --participant reviewer --shell)\"\n" +
			"  acc attach --participant reviewer --json\n" +
			"  acc attach --participant reviewer --session ID --generation G",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "participant", Required: true, Usage: "the participant `ID` peers address (letters, digits, . _ -)"},
			&cli.StringFlag{Name: "harness", DefaultText: "cli, or a reattached session's own", Usage: "the client `NAME`: " + orList(harnessNames())},
			&cli.Int64Flag{Name: "cadence", Value: core.DefaultCLICadenceMs, Usage: fmt.Sprintf("expected heartbeat interval in `MILLISECONDS`, less than %d (%s) without --pid and %d (%s) with it; presence turns stale after three missed beats",
				core.CadenceLimit(false).Milliseconds(), core.ShortDuration(core.CadenceLimit(false)), core.CadenceLimit(true).Milliseconds(), core.ShortDuration(core.CadenceLimit(true)))},
			&cli.StringFlag{Name: "parent", Usage: "the `SESSION` that started this one, if any"},
			&cli.StringFlag{Name: "session", Usage: "reopen this session `ID` (allowed when it is closed or its process has exited, and the caller proves it is that session)"},
			&cli.StringFlag{Name: "generation", DefaultText: "ACC_GENERATION when ACC_SESSION names the same session", Usage: "the reopened session's last `GENERATION`, the proof that you are that session"},
			&cli.IntFlag{Name: "pid", DefaultText: "none, presence rests on heartbeats", Usage: "the client's process `ID`; presence then follows that process"},
			&cli.BoolFlag{Name: "shell", Usage: "print the line export ACC_SESSION=… ACC_GENERATION=… instead of the pair, for eval in a POSIX shell"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			in := core.AttachInput{
				ParticipantID: cmd.String("participant"), Harness: cmd.String("harness"),
				CadenceMs: cmd.Int64("cadence"), ParentSessionID: cmd.String("parent"),
				SessionID: cmd.String("session"), PID: cmd.Int("pid"),
				Generation: cmd.String("generation"),
			}
			if in.Generation != "" && in.SessionID == "" {
				return protocol.Errorf(protocol.ReasonUsage,
					"--generation proves a session being reopened and needs --session too; attach without both to open a new session")
			}
			// The proof of a reopen
			// (docs/concepts.md#reopening-a-session): --generation, else the
			// environment's pair when it names the same session, else the hook
			// binding proof.
			if in.SessionID != "" && in.Generation == "" {
				if a.env.Getenv("ACC_SESSION") == in.SessionID {
					in.Generation = a.env.Getenv("ACC_GENERATION")
				}
				in.Environ = a.env.Environ()
			}
			// Refuse bad input before the store is opened, which creates it.
			// --harness takes one of a fixed list, so any other value, well
			// formed as an id or not, is the same flag error.
			if cmd.IsSet("harness") && !slices.Contains(harnessNames(), in.Harness) {
				return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--harness %q is not a client acc knows; give one of %s",
					in.Harness, orList(harnessNames())).With("harness", in.Harness)
			}
			if err := core.CheckAttachInput(in); err != nil {
				return err
			}
			shell := cmd.Bool("shell")
			if shell && a.jsonMode {
				return protocol.Errorf(protocol.ReasonUsage, "--shell prints an export line for the shell and --json an envelope; give one of them (with --json, read data.sessionId and data.generation)")
			}
			if cmd.IsSet("cadence") && in.CadenceMs == 0 {
				return protocol.Errorf(protocol.ReasonInvalidInput, "the heartbeat cadence must be a positive number of milliseconds")
			}
			if cmd.IsSet("pid") {
				if p := core.SystemProbe().Probe(in.PID); !p.Exists || p.Zombie {
					return protocol.Errorf(protocol.ReasonInvalidInput,
						"no running process has pid %d; pass the client's own pid, or leave --pid out (presence then rests on heartbeats)", in.PID).With("pid", in.PID)
				}
			}
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				res, err := r.Attach(ctx, in)
				if err != nil {
					return err
				}
				export := fmt.Sprintf("export ACC_SESSION=%s ACC_GENERATION=%s", res.SessionID, res.Generation)
				return a.emit(res, func(w io.Writer) {
					if shell {
						fmt.Fprintln(w, export)
						return
					}
					// The pair alone on stdout, as scripts read it; the line
					// to paste on stderr, itself valid shell.
					fmt.Fprintf(w, "%s %s\n", res.SessionID, res.Generation)
					fmt.Fprintf(screen{a.env.Stderr}, "# to act as this session from this shell:\n%s\n", export)
				})
			})
		},
	}
}

func (a *app) heartbeatCommand() *cli.Command {
	return &cli.Command{
		Name:     "heartbeat",
		Category: "session lifecycle",
		Usage:    "tell the room this session is still here",
		Description: "heartbeat records that the session is still here. A session is offline once its recorded process\n" +
			"exits, or, with no process recorded (one recorded on another host or in another PID namespace counts\n" +
			fmt.Sprintf("as none), %s after its last heartbeat, and in any case %s\n",
				core.ShortDuration(core.UnknownPIDExpiry), core.ShortDuration(core.HardExpiry)) +
			"after it; until then it is online while its last heartbeat is at most three cadences old, and stale\n" +
			fmt.Sprintf("after that. The cadence is set when it attaches (acc attach --cadence, %s by default, less than\n",
				core.ShortDuration(core.DefaultCLICadenceMs*time.Millisecond)) +
			fmt.Sprintf("%s without --pid and %s with it; hooks use %s). The output says which applies to this\n",
				core.ShortDuration(core.CadenceLimit(false)), core.ShortDuration(core.CadenceLimit(true)),
				core.ShortDuration(core.DefaultHookCadenceMs*time.Millisecond)) +
			"session, and when its process is gone that it is offline all the same (attach again). Sends,\n" +
			"replies, acks, first exact reads and claims refresh the heartbeat too, so only an idle session\n" +
			"needs this.\n\n" +
			"  acc heartbeat --session ID --generation G",
		Flags: ownerFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				s, err := r.Beat(ctx, c)
				if err != nil {
					return err
				}
				presence := core.Presence(s, r.Now(), r.Probe)
				return a.emit(map[string]string{"heartbeatAt": s.HeartbeatAt}, func(w io.Writer) { printHeartbeat(w, s, presence, r.Probe) })
			})
		},
	}
}

// printHeartbeat says what the heartbeat buys, from the session's presence
// computed right after it (core.Presence, docs/concepts.md): when its
// recorded process is gone it is offline all the same, and the way back is
// to attach again with the session's own generation (only the caller, who
// proved it is this session, reads this); else it says how long it stays online and when it goes
// offline, with core.PresenceWindows' limits. A pid probe may not judge
// (core.PIDJudged: recorded on another host or in another PID namespace)
// counts as none, and the words say why.
func printHeartbeat(w io.Writer, s *protocol.Session, presence string, probe core.ProcessProbe) {
	fmt.Fprintf(w, "heartbeat recorded for %s (%s) at %s\n", s.ParticipantID, s.SessionID, s.HeartbeatAt)
	pid := 0
	if core.PIDJudged(s, probe) {
		pid = *s.PID
	}
	none, without := "no process is recorded", "with no process recorded"
	if s.PID != nil && pid == 0 {
		none = "its process runs on another host or in another PID namespace, so only heartbeats count here"
		without = "with its process on another host or in another PID namespace"
	}
	if presence == core.PresenceOffline {
		why := "it counts as offline all the same"
		if pid > 0 {
			why = fmt.Sprintf("it counts as offline all the same: its recorded process %d has exited, and a heartbeat cannot change that", pid)
		}
		// The caller proved it is this session to get here, so its own
		// generation may be echoed back to it: the reopen needs it.
		fmt.Fprintf(w, "  %s; attach again to be online (`acc attach --participant %s --session %s --generation %s`, with --pid of the client's running process or none) and use the pair it prints\n",
			why, s.ParticipantID, s.SessionID, s.Generation)
		return
	}
	online, offline := core.PresenceWindows(s, probe)
	cadence := core.ShortDuration(time.Duration(s.HeartbeatCadenceMs) * time.Millisecond)
	on, off := core.ShortDuration(online), core.ShortDuration(offline)
	switch {
	case online < offline && pid > 0:
		fmt.Fprintf(w, "  it counts as online until %s pass without another heartbeat (three cadences of %s, set when it attached), then stale; offline as soon as process %d exits, or once %s pass without one\n", on, cadence, pid, off)
	case online < offline:
		fmt.Fprintf(w, "  it counts as online until %s pass without another heartbeat (three cadences of %s, set when it attached), then stale; offline once %s pass without one (%s)\n", on, cadence, off, none)
	case pid > 0:
		fmt.Fprintf(w, "  it counts as online until %s pass without another heartbeat, then offline, never stale (and offline as soon as process %d exits): %s is every session's limit, and three cadences of %s (set when it attached) do not end before it\n", on, pid, off, cadence)
	default:
		fmt.Fprintf(w, "  it counts as online until %s pass without another heartbeat, then offline, never stale: %s %s is the limit, and three cadences of %s (set when it attached) do not end before it\n", on, without, off, cadence)
	}
}

func (a *app) detachCommand() *cli.Command {
	return &cli.Command{
		Name:     "detach",
		Category: "session lifecycle",
		Usage:    "close this session without a handoff (its claims stay until they expire or are released)",
		Flags:    ownerFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				c, err := a.caller(ctx, cmd, r)
				if err != nil {
					return err
				}
				res, err := r.Detach(ctx, c)
				if err != nil {
					return err
				}
				return a.emit(res, func(w io.Writer) { fmt.Fprintf(w, "closed %s\n", res.SessionID) })
			})
		},
	}
}

func (a *app) statusCommand() *cli.Command {
	return &cli.Command{
		Name:     "status",
		Category: "coordination",
		Usage:    "show who is in the room, live claims, protection and what needs your attention",
		Description: "status is a public read of the room; it never changes anything. With a session (--session and\n" +
			fmt.Sprintf("--generation, or one resolved automatically) it adds that session's attention items: the %d most\n", statusAttentionShown) +
			"pressing, then one line counting the rest (--json lists them all).\n" +
			"Offline sessions are hidden unless --all. The first line's protection is none (no live claim),\n" +
			"guarded (a write into a peer's claim is denied) or advisory (peers are trusted to respect claims);\n" +
			"docs/concepts.md explains it. A claim whose holder's process is gone past the orphan grace shows as\n" +
			"orphaned: it blocks nothing and counts for neither the claims nor the protection.\n" +
			"A hooked session shows whether its agent is in a turn (working since …) or between turns (idle\n" +
			"since …), as its turn hooks last recorded; --json gives it as activity {state, since}, absent when\n" +
			"nothing was recorded and for an offline or closed session (it is in no turn, whatever its hooks last\n" +
			"recorded). acc wait --idle or --finished waits for a peer to be free or gone.",
		Flags: append(ownerFlags(),
			&cli.BoolFlag{Name: "all", Usage: "include offline and closed sessions"},
			&cli.StringFlag{Name: "participant", Usage: "show only the sessions of the participant `ID`"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				q := core.StatusQuery{All: cmd.Bool("all"), Participant: cmd.String("participant"), LivePolicy: r.Install.LivePush}
				c, err := a.caller(ctx, cmd, r)
				if err == nil {
					q.Caller = &c
					// Only a session named outright is taken for the sender
					// whose own session is never its recipient; a guessed
					// one (the only live session here) is not.
					if cmd.String("session") != "" || a.env.Getenv("ACC_SESSION") != "" {
						q.Sender = &c
					}
				} else if cmd.String("session") != "" || cmd.String("generation") != "" {
					return err
				}
				st, err := r.Status(ctx, q)
				if err != nil {
					return err
				}
				return a.emit(st, func(w io.Writer) { printStatus(w, st) })
			})
		},
	}
}

func printStatus(w io.Writer, st *core.Status) {
	now := time.Now()
	live := fmt.Sprintf("%d live", st.Counts.Live)
	if st.Counts.Stale > 0 {
		live += fmt.Sprintf(" (%d stale)", st.Counts.Stale)
	}
	orphaned := ""
	if st.Counts.Orphaned > 0 {
		orphaned = fmt.Sprintf(" (%s)", plural(int64(st.Counts.Orphaned), "orphaned claim"))
	}
	fmt.Fprintf(w, "%s; %s%s; protection %s\n", live, plural(int64(st.Counts.Claims), "claim"), orphaned, st.Protection)
	if st.Source == protocol.SourceDirectory {
		// A directory in no Git repository and under no acc.workspace.json
		// is its own room (docs/configuration.md): sessions elsewhere,
		// even in its subdirectories, are not in it.
		fmt.Fprintln(w, "  this directory is a room of its own (it is in no Git repository); run acc inside your repository to share its room")
	}
	for _, p := range st.Participants {
		presence := p.Presence
		if p.State == "closed" {
			presence = "closed"
		}
		// Enforcement says whether the session's own writes can be stopped
		// (guarded) or only reported (advisory: manual, MCP and ACP sessions).
		line := fmt.Sprintf("  %s (%s, %s) %s", p.ParticipantID, p.Harness, p.Enforcement, presence)
		if a := core.ActivityWords(p.Activity, now); a != "" {
			line += ", " + a
		}
		if p.Reachable {
			line += ", reachable live (" + p.LivePolicy + ")"
		}
		if p.Branch != nil {
			line += " on " + *p.Branch
		}
		if p.CheckoutRoot != nil {
			line += " in " + *p.CheckoutRoot
		}
		line += "  " + p.SessionID
		if st.Caller != nil && *st.Caller == p.SessionID {
			line += " (you)"
		}
		if p.Intent != nil {
			line += "  — " + *p.Intent
		}
		fmt.Fprintln(w, line)
	}
	for _, c := range st.Claims {
		if o := c.Orphaned; o != nil {
			// It blocks nothing: say so, why, and what happens next.
			fmt.Fprintf(w, "  claim %s %s %s by %s orphaned: %s, last seen %s (grace %s); blocks nothing, the next claim on it takes it over\n",
				c.Resource, c.Mode, c.Enforcement, c.OwnerParticipantID, o.Evidence(), o.LastSeenAt, core.ShortDuration(time.Duration(o.GraceMs)*time.Millisecond))
			continue
		}
		fmt.Fprintf(w, "  claim %s %s %s by %s until %s\n", c.Resource, c.Mode, c.Enforcement, c.OwnerParticipantID, c.ExpiresAt)
	}
	shown := st.Attention
	if len(shown) > statusAttentionShown {
		shown = shown[:statusAttentionShown]
	}
	for _, at := range shown {
		fmt.Fprintf(w, "  attention: %s\n", at.Summary)
	}
	if rest := st.Attention[len(shown):]; len(rest) > 0 {
		// The rest, by kind in priority order, and where to read them.
		var kinds []string
		count := map[string]int{}
		for _, at := range rest {
			if count[at.Kind] == 0 {
				kinds = append(kinds, at.Kind)
			}
			count[at.Kind]++
		}
		for i, k := range kinds {
			kinds[i] = fmt.Sprintf("%d %s", count[k], k)
		}
		fmt.Fprintf(w, "  attention: %d more not shown (%s); `acc inbox` pages the messages you owe, `acc status --json` lists all %d items\n",
			len(rest), strings.Join(kinds, ", "), len(st.Attention))
	}
	printDamaged(w, st.Damaged)
}

// statusAttentionShown is how many attention items acc status prints, the
// most pressing first (priority order); a line counts the rest. It is the
// inbox's page size, so the rest is one `acc inbox` away.
const statusAttentionShown = core.DefaultPageLimit

// harnessNames are the values acc attach --harness takes: the id of every
// adapter acc-hook runs (docs/adapters.md), then mcp and cli.
func harnessNames() []string {
	return append(clients.IDs(), "mcp", "cli")
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
