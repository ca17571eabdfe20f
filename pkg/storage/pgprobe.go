package storage

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// MinServerVersionNum is the oldest PostgreSQL acc keeps rooms on, as
// server_version_num: 12, the first with stored generated columns
// (receipts.listable).
const MinServerVersionNum = 120000

// ServerInfo is what ProbePostgres learned of a room's server, for acc
// doctor (docs/configuration.md#acc-doctor-on-a-room-on-postgresql).
type ServerInfo struct {
	// URL names the server without any password (Postgres.Describe).
	URL string `json:"url"`
	// Version is server_version ("15.8 (Debian 15.8-0+deb12u1)");
	// VersionNum is server_version_num (150008).
	Version    string `json:"version"`
	VersionNum int    `json:"versionNum"`
	// TLS: the connection is encrypted. SSLMode is the URL's sslmode (else
	// PGSSLMODE, else "prefer", the client library's default).
	TLS     bool   `json:"tls"`
	SSLMode string `json:"sslMode"`
	// Local: the server is reached through a socket or a loopback address,
	// where TLS protects nothing a local user could not read anyway.
	Local bool `json:"local"`
	// RoundTrips are the times of five `SELECT 1`, in the order made.
	RoundTrips []time.Duration `json:"-"`
	// ClockOffset is how far the server's clock is ahead of this machine's
	// (negative: behind), measured from the middle of a round trip.
	ClockOffset time.Duration `json:"-"`
	// Schema is the room's schema (PostgresSchema); RoomExists whether the
	// server holds it.
	Schema     string `json:"schema"`
	RoomExists bool   `json:"roomExists"`
}

// ProbePostgres connects to the server of rawURL on a connection of its
// own and measures it, creating and changing nothing: version, TLS, five
// round trips, the clock offset, and whether workspaceID's room exists.
// Errors are OpenPostgres's: store_unreachable (exit 3), store_access_denied
// (exit 4), password-free.
func ProbePostgres(ctx context.Context, rawURL, workspaceID string) (*ServerInfo, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, (&Postgres{secret: urlPassword(rawURL)}).mapErr(err, "read the store URL")
	}
	p := &Postgres{secret: cfg.Password, described: describeConfig(cfg), schema: PostgresSchema(workspaceID)}
	info := &ServerInfo{URL: p.described, Schema: p.schema, SSLMode: sslMode(rawURL), Local: localHost(cfg.Host)}
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "acc doctor"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, p.mapConnErr(err)
	}
	defer conn.Close(context.Background())
	_, info.TLS = conn.PgConn().Conn().(*tls.Conn)
	t0 := time.Now()
	var dbNow time.Time
	err = conn.QueryRow(ctx, "SELECT clock_timestamp(), current_setting('server_version'), current_setting('server_version_num')::int, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
		p.schema).Scan(&dbNow, &info.Version, &info.VersionNum, &info.RoomExists)
	if err != nil {
		return nil, p.mapErr(err, "read the server's version and clock")
	}
	t1 := time.Now()
	info.ClockOffset = dbNow.Sub(t0.Add(t1.Sub(t0) / 2))
	for range 5 {
		began := time.Now()
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			return nil, p.mapErr(err, "measure the round trip")
		}
		info.RoundTrips = append(info.RoundTrips, time.Since(began))
	}
	return info, nil
}

// sslMode is the sslmode a connection to rawURL uses: the URL's, else
// PGSSLMODE's, else "prefer".
func sslMode(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if m := u.Query().Get("sslmode"); m != "" {
			return m
		}
	}
	if m := os.Getenv("PGSSLMODE"); m != "" {
		return m
	}
	return "prefer"
}

// localHost reports whether host is a socket directory or a loopback
// address (or localhost).
func localHost(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
