package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// StoreURL is the PostgreSQL server ws's room lives on
// (docs/configuration.md#rooms-on-postgresql): ACC_STORE_URL when set (it
// may carry a password: the variable is the user's own), else the
// config's storeUrl, else "" for SQLite in the data home.
//
// ACC_STORE_URL in a workspace without acc.workspace.json is
// store_needs_config (exit 2): its id is derived from this machine's paths,
// so the room would not be the one other machines open. A value that is no
// PostgreSQL URL is env_invalid (exit 2).
func StoreURL(ws *workspace.Workspace, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := workspace.StoreURLEnv(getenv)
	if err != nil {
		return "", err
	}
	if env == "" {
		return ws.StoreURL, nil
	}
	if ws.Source != protocol.SourceConfig {
		return "", protocol.Errorf(protocol.ReasonStoreNeedsConfig,
			"%s is set, but this workspace has no %s: its id %s comes from this machine's paths and would name a different room on every machine; run %s, commit the file, or unset %s",
			workspace.EnvStoreURL, workspace.ConfigFileName, ws.ID, protocol.Step{Command: protocol.StepConfigInit}, workspace.EnvStoreURL).
			With("variable", workspace.EnvStoreURL)
	}
	return env, nil
}

// storeMode says what openStore may do when the room has no store yet.
type storeMode int

const (
	// storeCreate creates the room's store (attach).
	storeCreate storeMode = iota
	// storeOrEmpty opens an empty in-memory store instead, creating nothing.
	storeOrEmpty
	// storeExisting opens only a store that exists (SQLite: the file must
	// exist; it is not created).
	storeExisting
)

// openStore opens the store of ws's room: on the PostgreSQL server
// StoreURL names, else the SQLite file in the data home. For a room with
// no store yet, mode decides: create it, an empty in-memory store, or (for
// storeExisting on PostgreSQL) the error wrapping storage.ErrRoomNotCreated.
func openStore(ctx context.Context, ws *workspace.Workspace, env *workspace.RuntimeEnv, getenv func(string) string, mode storeMode) (storage.Store, error) {
	url, err := StoreURL(ws, getenv)
	if err != nil {
		return nil, err
	}
	if url != "" {
		pg, err := storage.OpenPostgres(ctx, url, ws.ID, storage.PostgresOptions{NoCreate: mode != storeCreate})
		if mode == storeOrEmpty && errors.Is(err, storage.ErrRoomNotCreated) {
			return storage.OpenSQLiteEmpty(ctx, ws.ID)
		}
		if err != nil {
			return nil, err
		}
		return pg, nil
	}
	path := workspace.StorePath(env.DataHome, ws.ID)
	switch _, statErr := os.Stat(path); {
	case mode == storeOrEmpty && errors.Is(statErr, fs.ErrNotExist):
		return storage.OpenSQLiteEmpty(ctx, ws.ID)
	case mode == storeCreate:
		return storage.OpenSQLite(ctx, path, ws.ID)
	default:
		return storage.OpenSQLiteExisting(ctx, path, ws.ID)
	}
}

// storeClock is the clock a room's leases and expiries are judged by: the
// database server's for a room on PostgreSQL (so machines with skewed
// clocks agree; docs/decisions.md#25-rooms-across-machines), else this
// machine's.
func storeClock(st storage.Store) func() time.Time {
	if c, ok := st.(storage.Clock); ok {
		return c.Now
	}
	return time.Now
}

// HasStore reports whether the room's store exists: false for a room opened
// with OpenOptions.NoCreate before anyone attached (its store is then an
// empty in-memory one, and stays so: open the room again once it exists).
func (r *Room) HasStore() bool {
	sq, ok := r.Store.(*storage.SQLite)
	return !ok || sq.Path() != ""
}
