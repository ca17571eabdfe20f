package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// DoctorServer is what acc doctor learned of a room's PostgreSQL server
// (docs/configuration.md#acc-doctor-on-a-room-on-postgresql).
type DoctorServer struct {
	// URL names the server without any password; From says what chose it:
	// "ACC_STORE_URL" or "storeUrl" (the workspace config).
	URL  string `json:"url"`
	From string `json:"from"`
	// Reachable: doctor connected and was let in.
	Reachable bool `json:"reachable"`
	// Version is server_version, VersionNum server_version_num; both empty
	// when not reachable.
	Version    string `json:"version,omitempty"`
	VersionNum int    `json:"versionNum,omitempty"`
	// TLS: the connection is encrypted; SSLMode is the mode asked for.
	TLS     bool   `json:"tls"`
	SSLMode string `json:"sslMode"`
	// Schema is the room's schema on the server.
	Schema string `json:"schema"`
	// LatencyMs is the median of five round trips (`SELECT 1`), in
	// milliseconds.
	LatencyMs float64 `json:"latencyMs"`
	// ClockOffsetMs is how far the server's clock is ahead of this
	// machine's, in milliseconds (negative: behind). Leases and expiry are
	// judged by the server's clock, so an offset misleads no judgement of
	// acc's; it is reported for the times people read.
	ClockOffsetMs int64 `json:"clockOffsetMs"`
}

// clockWarnAfter is the clock offset beyond which doctor warns.
const clockWarnAfter = 2 * time.Second

// inspectServer fills rep.Store for a room on the PostgreSQL server of
// url: reachable, version, TLS, latency and clock offset (ProbePostgres),
// then the room itself — not created yet (a note, as a missing store file
// is), or its schema version and identity checked by opening it without
// creating anything, then the counts and sessions as for SQLite.
func inspectServer(ctx context.Context, rep *DoctorReport, ws *workspace.Workspace, env *workspace.RuntimeEnv, url string) error {
	s := &rep.Store
	s.Engine = "postgresql"
	// StoreURL gave url: the config's unless ACC_STORE_URL outranked it.
	from := "storeUrl"
	if url != ws.StoreURL {
		from = workspace.EnvStoreURL
	}
	shown, _, _ := workspace.ParseStoreURL(url)
	s.Path = shown
	s.Server = &DoctorServer{URL: shown, From: from, Schema: storage.PostgresSchema(ws.ID)}
	info, err := storage.ProbePostgres(ctx, url, ws.ID)
	if err != nil {
		pe := protocol.AsError(err)
		switch pe.Reason {
		case protocol.ReasonStoreUnreachable:
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"start the server, or check the host and port of %s (from %s); then run `acc doctor` again", shown, from))
		case protocol.ReasonStoreAccessDenied:
			rep.Remediation = append(rep.Remediation,
				"give the role's password through PGPASSWORD, ~/.pgpass (or the file PGPASSFILE names), a service file or a client certificate, and grant the role what docs/configuration.md#the-least-privileges-acc-needs lists")
		case protocol.ReasonStoreBusy:
			rep.Remediation = append(rep.Remediation, fmt.Sprintf("the server %s did not answer in time; check its load and the network, then run `acc doctor` again", shown))
		default:
			return err
		}
		s.unhealthy(pe.Reason, pe.Message)
		rep.Protection = "unknown"
		return nil
	}
	srv := s.Server
	srv.Reachable, srv.Version, srv.VersionNum = true, info.Version, info.VersionNum
	srv.TLS, srv.SSLMode = info.TLS, info.SSLMode
	rt := slices.Clone(info.RoundTrips)
	slices.Sort(rt)
	srv.LatencyMs = math.Round(float64(rt[len(rt)/2].Microseconds())/10) / 100
	srv.ClockOffsetMs = info.ClockOffset.Milliseconds()
	if !info.TLS && !info.Local {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"the connection to %s is not encrypted (sslmode %s): anyone on the network path can read the room; use sslmode=verify-full (with sslrootcert naming the server's CA)", info.URL, info.SSLMode))
	}
	if off := info.ClockOffset; off > clockWarnAfter || off < -clockWarnAfter {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"the server's clock is %v off this machine's: acc judges leases by the server's clock, so claims stay right, but times you read here may look off; check NTP on both", off.Round(time.Millisecond)))
	}
	if info.VersionNum < storage.MinServerVersionNum {
		s.unhealthy(protocol.ReasonStoreServerUnsupported, fmt.Sprintf(
			"%s runs PostgreSQL %s; acc needs 12 or newer", info.URL, info.Version))
		rep.Remediation = append(rep.Remediation, "upgrade the server to PostgreSQL 12 or newer, or point the store URL at one")
		rep.Protection = "unknown"
		return nil
	}
	if !info.RoomExists {
		s.Note = "no room on the server yet; it is created by the first `acc attach`"
		rep.Remediation = append(rep.Remediation, "run `acc attach --participant NAME` to open the first session; it creates the room on the server")
		return nil
	}
	st, err := storage.OpenPostgres(ctx, url, ws.ID, storage.PostgresOptions{NoCreate: true, NoMigrate: true})
	if errors.Is(err, storage.ErrRoomNotCreated) {
		s.Note = "no room on the server yet; it is created by the first `acc attach`"
		return nil
	}
	if err != nil {
		pe := protocol.AsError(err)
		switch pe.Reason {
		case protocol.ReasonStoreBusy, protocol.ReasonInternal:
			return err
		case protocol.ReasonStoreVersionUnknown:
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"this acc reads schema version %d: upgrade acc; the room's schema %s on %s was left untouched", storage.SchemaVersion, srv.Schema, info.URL))
		case protocol.ReasonStoreForeignWorkspace:
			f := false
			s.IdentityMatch = &f
			if id, ok := pe.Details["storeWorkspaceId"].(string); ok {
				s.StoreWorkspaceID = &id
			}
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"the schema %s on %s belongs to another workspace: if acc.workspace.json's workspaceId was changed, restore it", srv.Schema, info.URL))
		default:
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"the schema %s on %s is not a room acc can read; drop it (DROP SCHEMA %s CASCADE) if nothing else uses it, or point the store URL elsewhere", srv.Schema, info.URL, srv.Schema))
		}
		s.Exists = true
		s.unhealthy(pe.Reason, pe.Message)
		rep.Protection = "unknown"
		return nil
	}
	defer st.Close()
	s.Exists = true
	v, id, match := st.SchemaVersion(), ws.ID, true
	s.SchemaVersion, s.StoreWorkspaceID, s.IdentityMatch = &v, &id, &match
	if v < storage.SchemaVersion {
		s.Warnings = append(s.Warnings, olderSchemaWarning(v))
	}
	return inspectRoom(ctx, rep, ws, env, st, fmt.Sprintf("restore the room's schema %s on %s from a backup", srv.Schema, info.URL))
}
