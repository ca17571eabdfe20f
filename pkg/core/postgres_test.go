package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/storage/pgtest"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/jackc/pgx/v5"
)

// pgURL is the PostgreSQL test server's URL (pgtest.URL: skips without
// one, fails under ACC_REQUIRE_PG=1).
func pgURL(t testing.TB) string { return pgtest.URL(t) }

// pgMachine is one "machine" of a room on PostgreSQL: its own clone of
// the project (the committed config) and its own data home.
type pgMachine struct {
	repo string
	env  map[string]string
}

// pgProject writes the same acc.workspace.json, naming storeURL, into n
// fresh directories with a data home each, and drops the room's schema
// when the test ends. It returns the machines and the workspace id.
func pgProject(t *testing.T, storeURL string, n int) ([]pgMachine, string) {
	t.Helper()
	id := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	cfg := fmt.Sprintf(`{"schemaVersion":1,"workspaceId":%q,"storeUrl":%q}`, id, storeURL)
	base := realTempDir(t)
	var ms []pgMachine
	for i := range n {
		repo := filepath.Join(base, fmt.Sprintf("clone%d", i))
		mustMkdir(t, repo)
		mustWrite(t, filepath.Join(repo, workspace.ConfigFileName), cfg)
		ms = append(ms, pgMachine{repo: repo, env: map[string]string{
			"ACC_DATA_HOME": filepath.Join(base, fmt.Sprintf("data%d", i)), "HOME": base}})
	}
	t.Cleanup(func() { dropPGRoom(t, id) })
	return ms, id
}

func dropPGRoom(t testing.TB, id string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("ACC_TEST_PG_URL"))
	if err != nil {
		t.Errorf("connect to drop the room: %v", err)
		return
	}
	defer conn.Close(ctx)
	// Straight SQL: a room the test left unreadable (a newer version)
	// cannot be opened to drop it.
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{storage.PostgresSchema(id)}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop the room: %v", err)
	}
}

// pgRoomExists reports whether the server holds id's room.
func pgRoomExists(t testing.TB, id string) bool {
	t.Helper()
	pg, err := storage.OpenPostgres(context.Background(), os.Getenv("ACC_TEST_PG_URL"), id, storage.PostgresOptions{NoCreate: true})
	if errors.Is(err, storage.ErrRoomNotCreated) {
		return false
	}
	if err != nil {
		t.Fatalf("look for the room: %v", err)
	}
	pg.Close()
	return true
}

func (m pgMachine) open(t *testing.T, noCreate bool) *Room {
	t.Helper()
	r, err := Open(context.Background(), OpenOptions{Cwd: m.repo, Getenv: envMap(m.env), GOOS: "linux", NoCreate: noCreate})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	r.Probe = mapProbe{}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRoomOnPostgresIsSharedByTwoDataHomes: two clones with one committed
// config and two data homes open the same room on the server: a session
// attached on one is seen by the other, and a question sent from one is in
// the other's inbox.
func TestRoomOnPostgresIsSharedByTwoDataHomes(t *testing.T) {
	url := pgURL(t)
	ms, id := pgProject(t, url, 2)
	ctx := context.Background()

	empty := ms[1].open(t, true)
	if _, ok := empty.Store.(*storage.SQLite); !ok {
		t.Fatalf("a command that creates nothing opened %T before the room exists; want the empty in-memory store", empty.Store)
	}
	if pgRoomExists(t, id) {
		t.Fatal("opening without creating made the room on the server")
	}

	a := ms[0].open(t, false)
	if _, ok := a.Store.(*storage.Postgres); !ok {
		t.Fatalf("store is %T; want *storage.Postgres", a.Store)
	}
	alice, err := a.Attach(ctx, AttachInput{ParticipantID: "alice", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	b := ms[1].open(t, true)
	bob, err := b.Attach(ctx, AttachInput{ParticipantID: "bob", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Status(ctx, StatusQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, p := range st.Participants {
		seen = append(seen, p.ParticipantID)
	}
	if strings.Join(seen, ",") != "alice,bob" && strings.Join(seen, ",") != "bob,alice" {
		t.Fatalf("the second data home sees participants %v; want alice and bob", seen)
	}
	sent, err := a.Send(ctx, SendInput{Caller: Caller{alice.SessionID, alice.Generation}, To: []string{"bob"}, Kind: "question", Subject: "migration?", Body: "is 0042 safe to run?"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := b.Inbox(ctx, InboxQuery{Caller: Caller{bob.SessionID, bob.Generation}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Message.MessageID != sent.Message.MessageID {
		t.Fatalf("bob's inbox on the other data home: %+v; want the question %s", page.Items, sent.Message.MessageID)
	}
	for _, dir := range []string{ms[0].env["ACC_DATA_HOME"], ms[1].env["ACC_DATA_HOME"]} {
		if _, err := os.Stat(workspace.StorePath(dir, id)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a room on PostgreSQL left a SQLite file in %s (%v)", dir, err)
		}
	}
}

// TestStoreURLRefusalsCreateNothing: a committed URL with a password, and
// ACC_STORE_URL where no config names the room, are refused before
// anything is created, on the server or on disk.
func TestStoreURLRefusalsCreateNothing(t *testing.T) {
	url := pgURL(t)
	ctx := context.Background()

	t.Run("password in the committed config", func(t *testing.T) {
		withPassword := strings.Replace(url, "postgres://acc@", "postgres://acc:s3cret@", 1)
		if withPassword == url {
			t.Fatalf("test URL %q has no user to add a password to", url)
		}
		ms, id := pgProject(t, withPassword, 1)
		_, err := Open(ctx, OpenOptions{Cwd: ms[0].repo, Getenv: envMap(ms[0].env), GOOS: "linux"})
		wantReason(t, err, protocol.ReasonStoreURLHasPassword, protocol.ExitData)
		if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "PGPASSWORD") {
			t.Fatalf("message %q shows the password or does not say where it belongs", msg)
		}
		if pgRoomExists(t, id) {
			t.Fatal("the refused open created the room on the server")
		}
		if _, err := os.Stat(ms[0].env["ACC_DATA_HOME"]); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused open created the data home (%v)", err)
		}
	})

	t.Run("ACC_STORE_URL without a config", func(t *testing.T) {
		base := realTempDir(t)
		repo := filepath.Join(base, "repo")
		newRepo(t, repo)
		env := map[string]string{"ACC_DATA_HOME": filepath.Join(base, "data"), "HOME": base, workspace.EnvStoreURL: url}
		_, err := Open(ctx, OpenOptions{Cwd: repo, Getenv: envMap(env), GOOS: "linux"})
		wantReason(t, err, protocol.ReasonStoreNeedsConfig, protocol.ExitUsage)
		ws := discover(t, repo, map[string]string{"ACC_DATA_HOME": env["ACC_DATA_HOME"], "HOME": base})
		if pgRoomExists(t, ws.ID) {
			dropPGRoom(t, ws.ID)
			t.Fatal("the refused open created the room on the server")
		}
		if _, err := os.Stat(env["ACC_DATA_HOME"]); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused open created the data home (%v)", err)
		}
	})

	t.Run("ACC_STORE_URL that is no PostgreSQL URL", func(t *testing.T) {
		ms, _ := pgProject(t, url, 1)
		ms[0].env[workspace.EnvStoreURL] = "mysql://acc:s3cret@db/acc"
		_, err := Open(ctx, OpenOptions{Cwd: ms[0].repo, Getenv: envMap(ms[0].env), GOOS: "linux"})
		wantReason(t, err, protocol.ReasonEnvInvalid, protocol.ExitUsage)
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("message %q shows the password", err.Error())
		}
	})
}

// TestStoreURLEnvOverridesConfig: ACC_STORE_URL moves a room whose config
// names no server (or another one) onto the server it names.
func TestStoreURLEnvOverridesConfig(t *testing.T) {
	url := pgURL(t)
	ms, id := pgProject(t, "postgres://acc@db.invalid:5432/acc", 1)
	ms[0].env[workspace.EnvStoreURL] = url
	r := ms[0].open(t, false)
	if _, err := r.Attach(context.Background(), AttachInput{ParticipantID: "alice", Harness: "cli"}); err != nil {
		t.Fatal(err)
	}
	if !pgRoomExists(t, id) {
		t.Fatal("the room is not on the server ACC_STORE_URL names")
	}
}

// TestDoctorOnPostgres: doctor on a room on the server says the engine and
// what it learned of the server; before the first attach the room is not
// there (a note, healthy, nothing created); after it, schema and identity
// are checked and the sessions counted; a server that cannot be reached, or
// refuses the role, makes the store unhealthy with the reason and a
// remediation, and no message holds the password.
func TestDoctorOnPostgres(t *testing.T) {
	url := pgURL(t)
	ms, id := pgProject(t, url, 1)
	m := ms[0]
	ctx := context.Background()
	doctor := func(env map[string]string) (*DoctorReport, error) {
		return Doctor(ctx, DoctorOptions{OpenOptions: OpenOptions{Cwd: m.repo, Getenv: envMap(env), GOOS: "linux"}})
	}

	rep, err := doctor(m.env)
	if err != nil {
		t.Fatalf("doctor before the first attach: %v", err)
	}
	srv := rep.Store.Server
	if rep.Store.Engine != "postgresql" || srv == nil || !srv.Reachable || srv.From != "storeUrl" || !srv.TLS || srv.VersionNum < storage.MinServerVersionNum {
		t.Fatalf("store %+v, server %+v", rep.Store, srv)
	}
	if !rep.Healthy || rep.Store.Exists || !strings.Contains(rep.Store.Note, "no room on the server yet") {
		t.Fatalf("before the first attach: healthy %v, exists %v, note %q", rep.Healthy, rep.Store.Exists, rep.Store.Note)
	}
	if pgRoomExists(t, id) {
		t.Fatal("doctor created the room")
	}

	r := m.open(t, false)
	if _, err := r.Attach(ctx, AttachInput{ParticipantID: "alice", Harness: "cli"}); err != nil {
		t.Fatal(err)
	}
	rep, err = doctor(m.env)
	if err != nil {
		t.Fatalf("doctor on the room: %v", err)
	}
	if !rep.Healthy || !rep.Store.Exists || rep.Store.SchemaVersion == nil || *rep.Store.SchemaVersion != storage.SchemaVersion ||
		rep.Store.IdentityMatch == nil || !*rep.Store.IdentityMatch || rep.Store.Counts.Sessions != 1 || len(rep.Sessions) != 1 {
		t.Fatalf("on the room: %+v; sessions %+v", rep.Store, rep.Sessions)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	down := map[string]string{workspace.EnvStoreURL: "postgres://acc:s3cret@" + addr + "/acc?connect_timeout=2"}
	wrong := strings.Replace(url, "postgres://acc@", "postgres://acc:s3cret@", 1)
	for _, c := range []struct {
		label, url, reason string
	}{
		{"server down", down[workspace.EnvStoreURL], protocol.ReasonStoreUnreachable},
		{"wrong password", wrong, protocol.ReasonStoreAccessDenied},
	} {
		env := maps.Clone(m.env)
		env[workspace.EnvStoreURL] = c.url
		rep, err := doctor(env)
		wantReason(t, err, protocol.ReasonStoreUnhealthy, protocol.ExitData)
		if rep == nil || rep.Store.Healthy || len(rep.Store.Problems) == 0 || rep.Store.Problems[0].ReasonCode != c.reason ||
			rep.Store.Server == nil || rep.Store.Server.Reachable || rep.Store.Server.From != workspace.EnvStoreURL || len(rep.Remediation) == 0 {
			t.Fatalf("%s: report %+v", c.label, rep)
		}
		raw, _ := json.Marshal(rep)
		if strings.Contains(string(raw), "s3cret") || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("%s: the password is in the report or the error", c.label)
		}
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	meta := pgx.Identifier{storage.PostgresSchema(id), "meta"}.Sanitize()

	// A room an older acc wrote (schema version 2, no search index):
	// healthy, reported with a warning, not upgraded by doctor.
	room := func(name string) string { return pgx.Identifier{storage.PostgresSchema(id), name}.Sanitize() }
	if _, err := conn.Exec(ctx, "DROP TABLE "+room("search_docs")+"; DROP TRIGGER search_pending_add ON "+room("messages")+"; DROP FUNCTION "+room("search_pending_add")+
		"; DROP TABLE "+room("search_pending")+"; UPDATE "+meta+" SET value = '2' WHERE key = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	rep, err = doctor(m.env)
	if err != nil || !rep.Healthy || *rep.Store.SchemaVersion != 2 || len(rep.Store.Warnings) == 0 || !strings.Contains(strings.Join(rep.Store.Warnings, " "), "upgrades it to version 3") {
		t.Fatalf("an older room: %v %+v", err, rep.Store)
	}
	var old string
	if err := conn.QueryRow(ctx, "SELECT value FROM "+meta+" WHERE key = 'schema_version'").Scan(&old); err != nil || old != "2" {
		t.Fatalf("doctor changed the older room's version to %q (%v)", old, err)
	}

	// A room of a newer schema version: unhealthy, reported, left as it is.
	if _, err := conn.Exec(ctx, "UPDATE "+meta+" SET value = '99' WHERE key = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	rep, err = doctor(m.env)
	wantReason(t, err, protocol.ReasonStoreUnhealthy, protocol.ExitData)
	if rep.Store.Problems[0].ReasonCode != protocol.ReasonStoreVersionUnknown || !strings.Contains(rep.Remediation[0], "upgrade acc") {
		t.Fatalf("a newer room: problems %+v, next %q", rep.Store.Problems, rep.Remediation)
	}
	var v string
	if err := conn.QueryRow(ctx, "SELECT value FROM "+meta+" WHERE key = 'schema_version'").Scan(&v); err != nil || v != "99" {
		t.Fatalf("doctor changed the newer room's version to %q (%v)", v, err)
	}
}
