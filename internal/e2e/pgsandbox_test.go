package e2e

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/storage/pgtest"
	"github.com/acc-go/acc/pkg/workspace"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for reads pkg/storage does not offer
)

// pgURL is the PostgreSQL test server's URL (pgtest.URL: skips without
// one, fails under ACC_REQUIRE_PG=1).
func pgURL(t testing.TB) string { return pgtest.URL(t) }

// newSandboxPG is a sandbox whose rooms live on the PostgreSQL test
// server: every child gets ACC_STORE_URL (and the password file), and
// newRepo commits an acc.workspace.json with a fresh workspace id, whose
// room is dropped from the server when the test ends.
func newSandboxPG(t testing.TB) *sandbox {
	t.Helper()
	sb := newSandbox(t)
	sb.pgURL = pgURL(t)
	return sb
}

// engine names the sandbox's store engine, for test logs.
func (sb *sandbox) engine() string {
	if sb.pgURL != "" {
		return "postgresql"
	}
	return "sqlite"
}

// pgEnviron is what a child needs to reach the test server.
func (sb *sandbox) pgEnviron() []string {
	if sb.pgURL == "" {
		return nil
	}
	env := []string{workspace.EnvStoreURL + "=" + sb.pgURL}
	f := sb.pgPassFile
	if f == "" {
		f = os.Getenv("PGPASSFILE")
	}
	if f != "" {
		env = append(env, "PGPASSFILE="+f)
	}
	return env
}

// commitRoomConfig writes and commits an acc.workspace.json with a fresh
// workspace id in repo (PostgreSQL rooms need one: a path-derived id is
// refused with ACC_STORE_URL), and drops that room from the server when the
// test ends.
func (sb *sandbox) commitRoomConfig(repo, name string) string {
	sb.t.Helper()
	id := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	cfg := fmt.Sprintf("{\n  \"schemaVersion\": 1,\n  \"workspaceId\": %q,\n  \"displayName\": %q\n}\n", id, name)
	if err := os.WriteFile(filepath.Join(repo, workspace.ConfigFileName), []byte(cfg), 0o644); err != nil {
		sb.t.Fatal(err)
	}
	sb.git(repo, "add", workspace.ConfigFileName)
	sb.git(repo, "commit", "-q", "-m", "acc room")
	url := sb.pgURL
	sb.t.Cleanup(func() { dropRoom(sb.t, url, id) })
	return id
}

// dropRoom removes workspace id's room from the server, if it was made.
func dropRoom(t testing.TB, url, id string) {
	ctx, cancel := withTimeout()
	defer cancel()
	pg, err := storage.OpenPostgres(ctx, url, id, storage.PostgresOptions{NoCreate: true})
	if errors.Is(err, storage.ErrRoomNotCreated) {
		return
	}
	if err != nil {
		t.Logf("drop room %s: %v", id, err)
		return
	}
	defer pg.Close()
	if err := pg.Drop(ctx); err != nil {
		t.Logf("drop room %s: %v", id, err)
	}
}

// openRoom opens a workspace's room wherever the sandbox keeps it: on the
// test server, or the SQLite file in the data home (which must exist).
func (sb *sandbox) openRoom(workspaceID string) storage.Store {
	sb.t.Helper()
	if sb.pgURL == "" {
		return sb.openStore(workspaceID)
	}
	ctx, cancel := withTimeout()
	defer cancel()
	pg, err := storage.OpenPostgres(ctx, sb.pgURL, workspaceID, storage.PostgresOptions{NoCreate: true})
	if err != nil {
		sb.t.Fatalf("open the room of %s on the server: %v", workspaceID, err)
	}
	sb.t.Cleanup(func() { pg.Close() })
	return pg
}

// checkStoreConsistent asserts what a store's own checks can see and
// pkg/storage's reads would hide: SQLite's integrity_check is ok, and no
// receipt exists without its message (a plain SQL read on either engine).
func (sb *sandbox) checkStoreConsistent(t testing.TB, workspaceID string, st storage.Store) {
	t.Helper()
	if sq, ok := st.(*storage.SQLite); ok {
		checkIntegrity(t, sq)
		if n := orphanReceipts(t, sb.storePath(workspaceID)); n != 0 {
			t.Errorf("expected no receipt without its message, saw %d", n)
		}
		return
	}
	db, err := sql.Open("pgx", sb.pgURL)
	if err != nil {
		t.Fatalf("open the server: %v", err)
	}
	defer db.Close()
	ctx, cancel := withTimeout()
	defer cancel()
	var n int
	q := fmt.Sprintf(`SELECT count(*) FROM %s.receipts r LEFT JOIN %s.messages m ON m.message_id = r.message_id WHERE m.message_id IS NULL`,
		storage.PostgresSchema(workspaceID), storage.PostgresSchema(workspaceID))
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		t.Fatalf("count orphan receipts on the server: %v", err)
	}
	if n != 0 {
		t.Errorf("expected no receipt without its message, saw %d", n)
	}
}
