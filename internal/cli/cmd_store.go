package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// storeCopyWait bounds a whole copy: reading the room and writing it in
// one transaction can take minutes for a large room.
const storeCopyWait = 30 * time.Minute

// storeCommand is `acc store copy` (docs/configuration.md#moving-a-room).
func (a *app) storeCommand() *cli.Command {
	return &cli.Command{
		Name:     "store",
		Category: "setup",
		Usage:    "move a room between SQLite and PostgreSQL",
		Before:   func(ctx context.Context, _ *cli.Command) (context.Context, error) { return ctx, nil },
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return protocol.Errorf(protocol.ReasonUnknownCommand, "unknown command: store %s - `acc store copy`", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{a.storeCopyCommand()},
	}
}

func (a *app) storeCopyCommand() *cli.Command {
	return &cli.Command{
		Name:  "copy",
		Usage: "copy the room's every record into another engine's empty store",
		Description: "copy reads the room where it lives now and writes all of it — ids, cursors, receipt states, event\n" +
			"sequences — into --to in one transaction, then checks both sides hold the same records. --to is\n" +
			"\"sqlite\" (this data home's store file for the room) or a PostgreSQL URL; the password comes from\n" +
			"PGPASSWORD, ~/.pgpass or a service file, never the URL you commit. It refuses a target that already\n" +
			"holds records, and refuses while sessions of the room are live (they could write after the copy)\n" +
			"unless --force. The source is left as it is and the room keeps opening from it: afterwards set\n" +
			"storeUrl in acc.workspace.json (or ACC_STORE_URL) to the target, or remove it to use SQLite.\n\n" +
			"  acc store copy --to postgres://acc@db.example:5432/acc",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Required: true, Usage: "the `TARGET`: sqlite, or a PostgreSQL URL (postgres://user@host:port/database)"},
			&cli.BoolFlag{Name: "force", Usage: "copy even though sessions of the room are live"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withRoom(ctx, cmd, func(ctx context.Context, r *core.Room) error {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCopyWait)
				defer cancel()
				res, err := r.CopyStore(ctx, cmd.String("to"), cmd.Bool("force"))
				if err != nil {
					return err
				}
				return a.emit(res, func(w io.Writer) {
					fmt.Fprintf(w, "copied room %s from %s to %s: %d messages, %d receipts, %d events, %d sessions; both sides hold the same records (digest %.12s)\n",
						res.WorkspaceID, res.From, res.To, res.Rows["messages"], res.Rows["receipts"], res.Rows["events"], res.Rows["sessions"]+res.Rows["eph_sessions"], res.Digest)
					fmt.Fprintf(w, "next: the room still opens from %s; to use the copy, point storeUrl in acc.workspace.json (or ACC_STORE_URL) at it — or remove storeUrl for the SQLite copy — and start sessions again\n", res.From)
				})
			})
		},
	}
}
