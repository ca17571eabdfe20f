package storage

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/jackc/pgx/v5"
)

// TestPostgresLeastPrivileges proves what docs/configuration.md#the-least-privileges-acc-needs
// says: a login role with no attribute (not superuser, no CREATEDB, no
// CREATEROLE), granted only CONNECT and CREATE on a database it does not
// own, can create a room there, write, read, and listen for its changes.
// A role without CREATE cannot create one, and is told store_access_denied
// (exit 4), the database left without a schema for the room.
func TestPostgresLeastPrivileges(t *testing.T) {
	base := pgURL(t)
	admin := os.Getenv("ACC_TEST_PG_ADMIN")
	if admin == "" {
		t.Skip("ACC_TEST_PG_ADMIN is empty: no superuser connection to create a role with (scripts/with-pg.sh sets it)")
	}
	ctx := context.Background()
	su, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect as the superuser: %v", err)
	}
	defer su.Close(ctx)
	suffix := protocol.NewID(protocol.KindEvent)[len("event_"):]
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	db := u.Path[1:]
	roleURL := func(role string) string {
		v := *u
		v.User = url.UserPassword(role, "pw-"+suffix)
		return v.String()
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := su.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	least := pgx.Identifier{"acc_least_" + suffix}.Sanitize()
	none := pgx.Identifier{"acc_none_" + suffix}.Sanitize()
	for _, role := range []string{least, none} {
		exec("CREATE ROLE " + role + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD 'pw-" + suffix + "'")
		exec("GRANT CONNECT ON DATABASE " + pgx.Identifier{db}.Sanitize() + " TO " + role)
	}
	exec("GRANT CREATE ON DATABASE " + pgx.Identifier{db}.Sanitize() + " TO " + least)
	ws := pgWorkspace(t)
	t.Cleanup(func() {
		su.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{PostgresSchema(ws)}.Sanitize()+" CASCADE")
		su.Exec(ctx, "REVOKE ALL ON DATABASE "+pgx.Identifier{db}.Sanitize()+" FROM "+least+", "+none)
		su.Exec(ctx, "DROP ROLE "+least)
		su.Exec(ctx, "DROP ROLE "+none)
	})

	_, err = OpenPostgres(ctx, roleURL("acc_none_"+suffix), ws, PostgresOptions{})
	if !protocol.IsReason(err, protocol.ReasonStoreAccessDenied) || protocol.CodeOf(err) != protocol.ExitData {
		t.Fatalf("a role without CREATE: %v; want store_access_denied, exit 4", err)
	}
	var n int
	if err := su.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", PostgresSchema(ws)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused role left a schema (%d, %v)", n, err)
	}

	p, err := OpenPostgres(ctx, roleURL("acc_least_"+suffix), ws, PostgresOptions{})
	if err != nil {
		t.Fatalf("a role with CONNECT and CREATE only: %v", err)
	}
	defer p.Close()
	conn, err := p.Listen(ctx)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer conn.Close(ctx)
	update(t, p, func(tx Tx) error {
		must(t, tx.PutWorkspace(fxWorkspace(ws)))
		return tx.AppendEvent(fxEvent(protocol.EventWorkspaceMaterialised))
	})
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := conn.WaitForNotification(wctx); err != nil {
		t.Fatalf("no notification of the write: %v", err)
	}
	view(t, p, func(tx ReadTx) error {
		c, err := tx.Counts()
		if err != nil || c.Events != 1 {
			t.Fatalf("counts %+v, %v", c, err)
		}
		return nil
	})
}
