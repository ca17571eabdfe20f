package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/acc-go/acc/internal/acp"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// acpCommand is `acc acp -- <agent…>` (docs/decisions.md#23-the-fake-model;
// docs/acp.md): the editor runs it where it ran the agent.
func (a *app) acpCommand() *cli.Command {
	return &cli.Command{
		Name:      "acp",
		Category:  "clients",
		Usage:     "relay an editor's ACP agent, putting its sessions in the room",
		ArgsUsage: "-- AGENT [ARG…]",
		Description: "acp starts the ACP agent named after -- and relays the editor's JSON-RPC to it and back, byte for\n" +
			"byte. Each session the agent opens joins the room of the cwd the editor gives it (as --participant,\n" +
			"else ACC_PARTICIPANT, else acp-<hash of the session>: name it, so peers can address it); each prompt\n" +
			"gains one text block with what the room has for that session (its session line, peers, what it\n" +
			"owes, pending messages as untrusted peer content); a write the agent asks the editor to make into\n" +
			"another session's guarded claim is refused; the session leaves when it is closed or the agent exits.\n" +
			"acc acp exits with the agent's status (127 when it cannot start it). It stores no frame and writes\n" +
			"nothing of its own to stdout; its notes go to stderr (the editor's log of the agent). Anything acc\n" +
			"cannot do leaves the stream as it was; ACC_BYPASS=1 runs the agent without acc.\n\n" +
			"  # Zed, settings.json:\n" +
			"  \"agent_servers\": {\"Gemini (acc)\": {\"command\": \"acc\",\n" +
			"                                    \"args\": [\"acp\", \"--participant\", \"gemini-zed\", \"--\", \"gemini\", \"--acp\"]}}",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "participant", DefaultText: "ACC_PARTICIPANT, else acp-<hash of the ACP session>", Usage: "join as this participant `ID`"},
			&cli.DurationFlag{Name: "grace", Value: acp.DefaultGrace, Usage: "after the editor's input ends, give the agent this `DURATION` to exit before it is terminated"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			argv := cmd.Args().Slice()
			if len(argv) == 0 {
				return protocol.Errorf(protocol.ReasonUsage, "acc acp needs the agent's command after --, e.g. acc acp -- gemini --acp")
			}
			if a.env.Getenv("ACC_BYPASS") == "1" {
				a.exitCode = execAgent(a.env, argv) // returns only when the agent cannot be run
				return nil
			}
			if g := cmd.Duration("grace"); g <= 0 {
				return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--grace must be more than zero, like 3s")
			}
			participant := cmd.String("participant")
			if cmd.IsSet("participant") {
				if err := protocol.CheckPortableID("--participant", participant); err != nil {
					return err
				}
			}
			a.exitCode = acp.Run(ctx, acp.Config{Participant: participant, Getenv: a.env.Getenv, Stderr: a.env.Stderr,
				Grace: cmd.Duration("grace"), Signals: []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}},
				argv, a.env.Stdin, a.env.Stdout)
			return nil
		},
	}
}

// execAgent replaces acc with the agent (ACC_BYPASS=1): acc is not in the
// path at all, and none of its flags is looked at. It returns only when
// the agent cannot be run: 127, as when the relay cannot start it.
func execAgent(env Env, argv []string) int {
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(screen{env.Stderr}, "acc acp: cannot start the agent %q: %v\n", argv[0], err)
	return 127
}
