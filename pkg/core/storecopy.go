package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// StoreCopy is what CopyStore did: the room, where from and where to (no
// password in either), the rows copied per table and the digest both
// sides share.
type StoreCopy struct {
	WorkspaceID string           `json:"workspaceId"`
	From        string           `json:"from"`
	To          string           `json:"to"`
	Rows        map[string]int64 `json:"rows"`
	Digest      string           `json:"digest"`
}

// StoreTargetSQLite is the --to value that names the room's SQLite store
// in this machine's data home.
const StoreTargetSQLite = "sqlite"

// CopyStore copies the opened room's every record into another engine's
// store (docs/configuration.md#moving-a-room): to is "sqlite" (the store
// file in this data home) or a PostgreSQL URL. It changes nothing in the
// source and does not switch the room over; the caller says how.
//
// Refusals: usage (exit 2) for a target that is neither, is the room's own
// store, or a room with no store yet; store_sessions_live (exit 5) while a
// session of the room is online or stale, unless force; store_not_empty
// (exit 5) for a target holding any record (left unchanged); the target's
// open errors (store_unreachable, store_access_denied, …).
func (r *Room) CopyStore(ctx context.Context, to string, force bool) (*StoreCopy, error) {
	from := describeStore(r.Store)
	toPG := false
	switch {
	case to == StoreTargetSQLite:
	case strings.HasPrefix(to, "postgres://") || strings.HasPrefix(to, "postgresql://"):
		toPG = true
		if _, _, problem := workspace.ParseStoreURL(to); problem != "" {
			return nil, protocol.Errorf(protocol.ReasonUsage,
				"the PostgreSQL URL to copy to %s (not shown: it may hold a password); give one such as %s", problem, workspace.StoreURLExample)
		}
	default:
		return nil, protocol.Errorf(protocol.ReasonUsage,
			"%s is not a store acc can copy to: give %q (this data home's SQLite file) or a PostgreSQL URL such as postgres://acc@db.example:5432/acc", quoteTarget(to), StoreTargetSQLite)
	}
	if !r.HasStore() {
		return nil, protocol.Errorf(protocol.ReasonUsage, "room %s has no store yet, so there is nothing to copy", r.WS.ID)
	}
	if sq, isSQLite := r.Store.(*storage.SQLite); isSQLite && !toPG {
		return nil, protocol.Errorf(protocol.ReasonUsage, "room %s is already on SQLite at %s; give a PostgreSQL URL to copy it there", r.WS.ID, sq.Path())
	}
	if !force {
		if err := r.refuseLiveSessions(ctx); err != nil {
			return nil, err
		}
	}
	var dst storage.Store
	var err error
	if toPG {
		var pg *storage.Postgres
		pg, err = storage.OpenPostgres(ctx, to, r.WS.ID, storage.PostgresOptions{})
		if err == nil && pg.Describe() == from {
			pg.Close()
			return nil, protocol.Errorf(protocol.ReasonUsage, "room %s already lives on %s; that is the store it would copy from", r.WS.ID, from)
		}
		dst = pg
	} else {
		dst, err = storage.OpenSQLite(ctx, workspace.StorePath(r.DataHome, r.WS.ID), r.WS.ID)
	}
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	rep, err := storage.CopyRoom(ctx, r.Store, dst)
	if err != nil {
		return nil, err
	}
	return &StoreCopy{WorkspaceID: r.WS.ID, From: from, To: describeStore(dst), Rows: rep.Rows, Digest: rep.Digest}, nil
}

// refuseLiveSessions refuses while a session of the room is online or
// stale: it could write after the copy, and the copy would miss it.
func (r *Room) refuseLiveSessions(ctx context.Context) error {
	var live []string
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		ss, err := allSessions(tx, true)
		for i := range ss {
			if Presence(&ss[i], r.now(), r.Probe) != PresenceOffline {
				live = append(live, ss[i].SessionID)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(live) > 0 {
		return protocol.Errorf(protocol.ReasonStoreSessionsLive,
			"%d session(s) of room %s are live (%s) and could write after the copy, which would miss it; end them first, or pass %s to copy anyway",
			len(live), r.WS.ID, strings.Join(live, ", "), protocol.Field("force")).With("sessionIds", live)
	}
	return nil
}

// describeStore names a store for people: "sqlite:" and its path, or the
// PostgreSQL URL without password.
func describeStore(s storage.Store) string {
	switch st := s.(type) {
	case *storage.SQLite:
		return "sqlite:" + st.Path()
	case *storage.Postgres:
		return st.Describe()
	}
	return fmt.Sprintf("%T", s)
}

// quoteTarget shows a --to value without any password it may carry: a
// PostgreSQL URL without its password, "sqlite" as it is, and anything
// else not at all (a keyword/value string or a URL that does not parse may
// hold a password where no rule finds it).
func quoteTarget(to string) string {
	if to == StoreTargetSQLite {
		return fmt.Sprintf("%q", to)
	}
	if shown, _, problem := workspace.ParseStoreURL(to); problem == "" {
		return fmt.Sprintf("%q", shown)
	}
	return "the value given"
}
