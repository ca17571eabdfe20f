package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/internal/top"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

// topCommand is `acc top`: a live view of the room for people. `acc status`
// stays the scriptable form.
func (a *app) topCommand() *cli.Command {
	return &cli.Command{
		Name:     "top",
		Category: "coordination",
		Usage:    "watch the room live: sessions, claims and open threads, updated as they change",
		Description: "top fills the terminal with the room: each session with its presence, client, branch and intent;\n" +
			"each live claim with its holder and the time left; each open thread (a message still owed a reply or\n" +
			"an acknowledgement) with every recipient's receipt. It updates as the store changes. ↑/↓ select a\n" +
			"thread, enter opens it (reading it there changes no receipt), esc goes back, q quits. / searches the\n" +
			"room's messages as acc search does: type the query, enter runs it and the hits replace the room, each\n" +
			"with a snippet, its matched words highlighted; ↑/↓ and enter open a hit's thread, n shows the next\n" +
			"page, esc goes back. It needs a terminal; scripts use acc status --json.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if a.jsonMode {
				return protocol.Errorf(protocol.ReasonUsage, "acc top is for a terminal; use acc status --json for a snapshot")
			}
			if !term.IsTerminal(0) || !term.IsTerminal(1) {
				return protocol.Errorf(protocol.ReasonUsage, "acc top needs a terminal on stdin and stdout; use acc status for a snapshot")
			}
			dir, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			// Without a store yet, top waits (inside the view, so q still
			// quits) for the first attach to create it; it never creates one.
			loc, err := core.Open(ctx, core.OpenOptions{Cwd: dir, ConfigPath: cmd.String("workspace"), Getenv: a.env.Getenv, NoCreate: true})
			if err != nil {
				return err
			}
			path, title := workspace.StorePath(loc.DataHome, loc.WS.ID), loc.WS.DisplayName
			// A room on PostgreSQL has no file here, even once it exists.
			_, onServer := loc.Store.(*storage.Postgres)
			if url, err := core.StoreURL(loc.WS, a.env.Getenv); err == nil && url != "" {
				onServer = true
			}
			loc.Close()
			open := func(ctx context.Context) (*core.Room, error) {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !onServer {
					return nil, nil
				}
				ctx, cancel := context.WithTimeout(ctx, StoreWait)
				defer cancel()
				r, err := core.Open(ctx, core.OpenOptions{Cwd: dir, ConfigPath: cmd.String("workspace"), Getenv: a.env.Getenv, NoCreate: true,
					ReadInstall: install.ReadPolicies})
				if err == nil && !r.HasStore() {
					r.Close()
					return nil, nil
				}
				return r, err
			}
			return top.Run(ctx, open, path, title)
		},
	}
}
