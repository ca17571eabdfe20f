package storage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage/pgtest"
	"github.com/jackc/pgx/v5"
)

// pgURL is the PostgreSQL test server's URL (pgtest.URL: skips without
// one, fails under ACC_REQUIRE_PG=1).
func pgURL(t testing.TB) string { return pgtest.URL(t) }

// pgWorkspace is a workspace id no other test uses.
func pgWorkspace(t testing.TB) string {
	return "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
}

// openTestPostgres opens a fresh room on the test server and drops it when
// the test ends.
func openTestPostgres(t testing.TB) *Postgres {
	t.Helper()
	u := pgURL(t)
	p, err := OpenPostgres(context.Background(), u, pgWorkspace(t), PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		dropRoom(t, u, p.WorkspaceID())
	})
	return p
}

// dropRoom removes workspaceID's room from the server at u, through a handle
// of its own (the test's may be closed).
func dropRoom(t testing.TB, u, workspaceID string) {
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Errorf("drop the room: %v", err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{PostgresSchema(workspaceID)}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop the room: %v", err)
	}
}

func TestPostgresSuite(t *testing.T) {
	pgURL(t)
	t.Parallel()
	runSuite(t, func(t *testing.T) Store { return openTestPostgres(t) })
}

// pgAdmin runs statements against the test room's database as its owner
// role, outside acc's store (to stage what acc must refuse).
func pgAdmin(t *testing.T, p *Postgres, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		s = strings.ReplaceAll(s, "$ROOM", pgx.Identifier{p.Schema()}.Sanitize())
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// roomDump is the room's meta rows and table list, to show a refused open
// changed nothing.
func roomDump(t *testing.T, schema string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var out strings.Builder
	rows, err := conn.Query(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", schema)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		fmt.Fprintln(&out, n)
	}
	rows.Close()
	rows, err = conn.Query(context.Background(), "SELECT key, value FROM "+pgx.Identifier{schema, "meta"}.Sanitize()+" ORDER BY 1")
	if err == nil {
		for rows.Next() {
			var k, v string
			rows.Scan(&k, &v)
			fmt.Fprintln(&out, k, v)
		}
		rows.Close()
	}
	return out.String()
}

func TestPostgresReopenKeepsData(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	ws := p.WorkspaceID()
	update(t, p, func(tx Tx) error {
		must(t, tx.PutWorkspace(fxWorkspace(ws)))
		return tx.InsertMessage(fxMessage(ws, "message_1", "alice", []string{"bob"}, protocol.KindNote, 1))
	})
	again, err := OpenPostgres(context.Background(), pgURL(t), ws, PostgresOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	view(t, again, func(tx ReadTx) error {
		m, err := tx.Message("message_1")
		must(t, err)
		wantEqual(t, "message", m, fxMessage(ws, "message_1", "alice", []string{"bob"}, protocol.KindNote, 1))
		return nil
	})
	a, _ := p.Fingerprint(context.Background())
	b, _ := again.Fingerprint(context.Background())
	if a != b || a == "" {
		t.Fatalf("two handles on one room disagree: %s vs %s", a, b)
	}
}

func TestPostgresNoCreateCreatesNothing(t *testing.T) {
	t.Parallel()
	ws := pgWorkspace(t)
	_, err := OpenPostgres(context.Background(), pgURL(t), ws, PostgresOptions{NoCreate: true})
	if !errors.Is(err, ErrRoomNotCreated) {
		t.Fatalf("NoCreate on a missing room: %v, want ErrRoomNotCreated", err)
	}
	if d := roomDump(t, PostgresSchema(ws)); d != "" {
		t.Fatalf("NoCreate made something:\n%s", d)
	}
}

func TestPostgresRefusesForeignWorkspace(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	pgAdmin(t, p, "UPDATE $ROOM.meta SET value = 'workspace_other' WHERE key = 'workspace_id'")
	before := roomDump(t, p.Schema())
	_, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{})
	wantReason(t, err, protocol.ReasonStoreForeignWorkspace, "belongs to workspace workspace_other")
	if after := roomDump(t, p.Schema()); after != before {
		t.Fatalf("a refused open changed the room:\n%s\nthen\n%s", before, after)
	}
}

func TestPostgresRefusesUnknownVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"4", "1", "x"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := openTestPostgres(t)
			pgAdmin(t, p, "UPDATE $ROOM.meta SET value = '"+v+"' WHERE key = 'schema_version'")
			before := roomDump(t, p.Schema())
			_, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{})
			if v == "x" {
				wantReason(t, err, protocol.ReasonStoreCorrupt, "no readable schema version")
			} else {
				wantReason(t, err, protocol.ReasonStoreVersionUnknown, "has schema version "+v+"; this acc reads version 3 and left it untouched")
			}
			if after := roomDump(t, p.Schema()); after != before {
				t.Fatalf("a refused open changed the room:\n%s\nthen\n%s", before, after)
			}
		})
	}
}

func TestPostgresRefusesSchemaWithoutMeta(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	pgAdmin(t, p, "DROP TABLE $ROOM.meta")
	before := roomDump(t, p.Schema())
	_, err := OpenPostgres(context.Background(), pgURL(t), p.WorkspaceID(), PostgresOptions{})
	wantReason(t, err, protocol.ReasonStoreCorrupt, "is not an acc room")
	if after := roomDump(t, p.Schema()); after != before {
		t.Fatalf("a refused open changed the room")
	}
}

func wantReason(t *testing.T, err error, reason, text string) {
	t.Helper()
	if !protocol.IsReason(err, reason) {
		t.Fatalf("error %v, want reason %s", err, reason)
	}
	if !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q does not say %q", err, text)
	}
}

// TestPostgresConcurrentFirstOpen opens one new room from many goroutines
// and from several processes at once: one room, no error.
func TestPostgresConcurrentFirstOpen(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	ws := pgWorkspace(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			p, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{})
			if err == nil {
				p.Close()
			}
			errs <- err
		})
	}
	procs := make([]*exec.Cmd, 4)
	for i := range procs {
		procs[i] = exec.Command(os.Args[0], "-test.run=^TestPostgresOpenHelper$")
		procs[i].Env = append(os.Environ(), "ACC_PG_HELPER_WORKSPACE="+ws)
		if err := procs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent first open: %v", err)
		}
	}
	for _, c := range procs {
		if err := c.Wait(); err != nil {
			t.Errorf("a process opening the room failed: %v", err)
		}
	}
	p, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Close(); dropRoom(t, u, ws) }()
	if d := roomDump(t, p.Schema()); !strings.Contains(d, "schema_version 3") || !strings.Contains(d, "workspace_id "+ws) {
		t.Fatalf("room after concurrent creation:\n%s", d)
	}
}

// TestPostgresOpenHelper is the child of TestPostgresConcurrentFirstOpen.
func TestPostgresOpenHelper(t *testing.T) {
	ws := os.Getenv("ACC_PG_HELPER_WORKSPACE")
	if ws == "" {
		t.Skip("a helper process of TestPostgresConcurrentFirstOpen")
	}
	p, err := OpenPostgres(context.Background(), pgURL(t), ws, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestPostgresStoreBusy holds the room's write lock from another
// connection: a write waits until its deadline and is refused store_busy,
// and the room is unchanged.
func TestPostgresStoreBusy(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	conn, err := pgx.Connect(context.Background(), pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), "SELECT pg_advisory_xact_lock($1)", p.writeKey); err != nil {
		t.Fatal(err)
	}
	before, _ := p.Fingerprint(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = p.Update(ctx, func(tx Tx) error { return tx.PutWorkspace(fxWorkspace(p.WorkspaceID())) })
	wantReason(t, err, protocol.ReasonStoreBusy, "busy")
	if protocol.CodeOf(err) != 3 {
		t.Fatalf("exit code %d, want 3", protocol.CodeOf(err))
	}
	tx.Rollback(context.Background())
	if after, _ := p.Fingerprint(context.Background()); after != before {
		t.Fatal("a busy refusal changed the room")
	}
	// Released, the same write goes through.
	update(t, p, func(tx Tx) error { return tx.PutWorkspace(fxWorkspace(p.WorkspaceID())) })
}

func TestPostgresUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// sslmode prefer (the default): the client tries TLS, then plain, and
	// lists both failures, on two lines.
	u := "postgres://acc:s3cret-pw@" + addr + "/acc?connect_timeout=2"
	_, err = OpenPostgres(context.Background(), u, pgWorkspace(t), PostgresOptions{})
	wantReason(t, err, protocol.ReasonStoreUnreachable, addr)
	if protocol.CodeOf(err) != 3 {
		t.Fatalf("exit code %d, want 3", protocol.CodeOf(err))
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("the password reached the message: %v", err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("the message is not one line: %q", err.Error())
	}
}

func TestPostgresAccessDenied(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "wrong-pw-123")
	_, err = OpenPostgres(context.Background(), u.String(), pgWorkspace(t), PostgresOptions{})
	wantReason(t, err, protocol.ReasonStoreAccessDenied, "PGPASSWORD")
	if protocol.CodeOf(err) != 4 {
		t.Fatalf("exit code %d, want 4", protocol.CodeOf(err))
	}
	if strings.Contains(err.Error(), "wrong-pw-123") {
		t.Fatalf("the password reached the message: %v", err)
	}
}

func TestPostgresUseAfterClose(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	p.Close()
	if err := p.View(context.Background(), func(ReadTx) error { return nil }); err == nil {
		t.Fatal("View after Close succeeded")
	}
}

func TestPostgresViewRefusesWrites(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	err := p.View(context.Background(), func(rt ReadTx) error {
		return rt.(Tx).PutWorkspace(fxWorkspace(p.WorkspaceID()))
	})
	if err == nil {
		t.Fatal("a write inside View succeeded")
	}
}

func TestPostgresClockAndChannel(t *testing.T) {
	t.Parallel()
	p := openTestPostgres(t)
	if off := p.ClockOffset(); off > time.Minute || off < -time.Minute {
		t.Fatalf("clock offset %v against a server on this machine", off)
	}
	conn, err := p.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	update(t, p, func(tx Tx) error { return tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Channel != p.Channel() || n.Payload != "1" {
		t.Fatalf("notification %+v, want channel %s payload 1", n, p.Channel())
	}
}

func TestPGSQL(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT a FROM t WHERE x = ? AND y = ?":              "SELECT a FROM t WHERE x = $1 AND y = $2",
		"INSERT OR REPLACE INTO t(k, a, b) VALUES (?, ?, ?)": "INSERT INTO t(k, a, b) VALUES ($1, $2, $3) ON CONFLICT (k) DO UPDATE SET a = EXCLUDED.a, b = EXCLUDED.b",
		"SELECT 1 FROM r CROSS JOIN m ON m.id = r.id":        "SELECT 1 FROM r JOIN m ON m.id = r.id",
	} {
		if got := pgSQL(in); got != want {
			t.Errorf("pgSQL(%q) = %q, want %q", in, got, want)
		}
	}
}
