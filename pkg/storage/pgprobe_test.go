package storage

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestProbePostgres: the test server is measured without anything being
// created: a supported version, TLS (its URL says verify-full), loopback,
// five round trips, a small clock offset (same machine), and the room seen
// once it exists.
func TestProbePostgres(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	ws := pgWorkspace(t)
	info, err := ProbePostgres(context.Background(), u, ws)
	if err != nil {
		t.Fatal(err)
	}
	if info.VersionNum < MinServerVersionNum || info.Version == "" {
		t.Errorf("version %q (%d); want at least %d", info.Version, info.VersionNum, MinServerVersionNum)
	}
	if !info.TLS || info.SSLMode != "verify-full" || !info.Local {
		t.Errorf("TLS %v, sslmode %q, local %v; want an encrypted loopback connection in verify-full", info.TLS, info.SSLMode, info.Local)
	}
	if len(info.RoundTrips) != 5 || info.RoomExists || info.Schema != PostgresSchema(ws) {
		t.Errorf("round trips %v, room exists %v, schema %q", info.RoundTrips, info.RoomExists, info.Schema)
	}
	if off := info.ClockOffset; off > 5e9 || off < -5e9 {
		t.Errorf("clock offset %v against a server on this machine", off)
	}
	if _, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{NoCreate: true}); !errors.Is(err, ErrRoomNotCreated) {
		t.Fatalf("after probing, the room: %v; want none", err)
	}
	p, err := OpenPostgres(context.Background(), u, ws, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); dropRoom(t, u, ws) })
	if info, err = ProbePostgres(context.Background(), u, ws); err != nil || !info.RoomExists {
		t.Fatalf("after the room was created: exists %v, %v", info != nil && info.RoomExists, err)
	}

	plain, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := plain.Query()
	q.Set("sslmode", "disable")
	plain.RawQuery = q.Encode()
	if info, err := ProbePostgres(context.Background(), plain.String(), ws); err != nil || info.TLS || info.SSLMode != "disable" {
		t.Fatalf("sslmode=disable: TLS %v, sslmode %q, %v", info != nil && info.TLS, info.SSLMode, err)
	}
}

// TestProbePostgresRefusals: a closed port is store_unreachable (exit 3), a
// wrong password store_access_denied (exit 4); neither message holds the
// password.
func TestProbePostgresRefusals(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = ProbePostgres(context.Background(), "postgres://acc:s3cret-pw@"+addr+"/acc?sslmode=disable&connect_timeout=2", pgWorkspace(t))
	wantReason(t, err, protocol.ReasonStoreUnreachable, addr)
	if protocol.CodeOf(err) != 3 || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("exit %d, %v; want exit 3 without the password", protocol.CodeOf(err), err)
	}
	u, err := url.Parse(pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "wrong-pw-123")
	_, err = ProbePostgres(context.Background(), u.String(), pgWorkspace(t))
	wantReason(t, err, protocol.ReasonStoreAccessDenied, "PGPASSWORD")
	if protocol.CodeOf(err) != 4 || strings.Contains(err.Error(), "wrong-pw-123") {
		t.Fatalf("exit %d, %v; want exit 4 without the password", protocol.CodeOf(err), err)
	}
}

// TestPostgresSilentServerIsUnreachable: a server that takes the
// connection and never answers is store_unreachable (exit 3) when the
// deadline passes — not store_busy, which says other writers hold the room.
func TestPostgresSilentServerIsUnreachable(t *testing.T) {
	t.Parallel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, open := range []func(context.Context, string) error{
		func(ctx context.Context, u string) error {
			_, err := OpenPostgres(ctx, u, pgWorkspace(t), PostgresOptions{})
			return err
		},
		func(ctx context.Context, u string) error { _, err := ProbePostgres(ctx, u, pgWorkspace(t)); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := open(ctx, "postgres://acc:s3cret-pw@"+silent.Addr().String()+"/acc?sslmode=disable")
		cancel()
		wantReason(t, err, protocol.ReasonStoreUnreachable, "no answer before the deadline")
		if protocol.CodeOf(err) != 3 || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("exit %d, message %q; want 3 without the password", protocol.CodeOf(err), err)
		}
	}
}

// TestPostgresCommitFailedIsUnknown: a COMMIT whose connection dropped is
// outcome_unknown (exit 4), and its message never says nothing was
// written — it cannot know — nor holds the password.
func TestPostgresCommitFailedIsUnknown(t *testing.T) {
	t.Parallel()
	p := &Postgres{described: "postgres://acc@db.example:5432/acc", secret: "s3cret-pw"}
	drop := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer (password s3cret-pw)")}
	err := p.commitFailed(drop)
	if !protocol.IsReason(err, protocol.ReasonOutcomeUnknown) || protocol.CodeOf(err) != 4 || !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("%v: want outcome_unknown, exit 4", err)
	}
	if msg := err.Error(); strings.Contains(msg, "nothing was written") || strings.Contains(msg, "s3cret-pw") || !strings.Contains(msg, "cannot tell") {
		t.Fatalf("message %q", msg)
	}
	// What mapErr would have said of the same error: the wording the
	// commit must not borrow.
	if !strings.Contains(p.mapErr(drop, "commit").Error(), "nothing was written") {
		t.Fatal("mapErr no longer says nothing was written of a dropped connection; this test's control is stale")
	}
}
