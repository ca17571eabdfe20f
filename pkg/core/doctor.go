package core

import (
	"context"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// AdapterIDs are the client ids of docs/decisions.md#14-client-ids, the only values an
// adapter can have.
var AdapterIDs = []string{"claude", "codex", "copilot", "droid", "gemini", "grok", "kilo", "kimi", "opencode", "pi", "qwen"}

// DoctorReport is what `acc doctor` reports
// (docs/configuration.md#acc-doctor). Outside a room (NoRoom set) the room's
// fields (DoctorRoom) are nil and absent from the JSON; the data home and the
// remediation are always there.
type DoctorReport struct {
	// Healthy is false when the store is corrupt, foreign, of an unknown
	// schema version or fails its integrity check, and when the selected
	// workspace cannot be a room (NoRoom with runtime_inside_workspace).
	// Outside any room (NoRoom with no_room) nothing is wrong: true.
	Healthy bool `json:"healthy"`
	*DoctorRoom
	// NoRoom is nil when a room was selected; otherwise it says why none
	// was.
	NoRoom *DoctorNoRoom `json:"noRoom"`
	// DataHome is where acc keeps its data on this machine.
	DataHome DoctorDataHome `json:"dataHome"`
	// Remediation lists the next commands, one line each.
	Remediation []string `json:"remediation"`
}

// DoctorRoom is the room doctor inspected.
type DoctorRoom struct {
	WorkspaceID string          `json:"workspaceId"`
	Source      string          `json:"source"`
	Workspace   DoctorWorkspace `json:"workspace"`
	// RuntimeRoot is the directory holding this workspace's store.
	RuntimeRoot  string `json:"runtimeRoot"`
	Materialised bool   `json:"materialised"`
	// Protection and LiveSessions are those of `acc status`; they are
	// "unknown" and 0 when the store cannot be read. LiveSessions counts
	// online and stale sessions alike; Sessions lists each with its
	// presence.
	Protection   string            `json:"protection"`
	LiveSessions int               `json:"liveSessions"`
	Sessions     []AttachedSession `json:"sessions"`
	Store        DoctorStore       `json:"store"`
	Adapters     []DoctorAdapter   `json:"adapters"`
}

// DoctorNoRoom says why no room was selected: ReasonCode is no_room (the
// start directory is no project and holds acc's data: the home directory,
// /) or runtime_inside_workspace (a Git or config workspace whose root holds
// acc's data: a misconfiguration). Message is the refusal a room command
// gives there, with its next step in neutral form until the surface
// renders Refusal into it (docs/cli.md#refusal-details); Start is the
// canonical start directory.
type DoctorNoRoom struct {
	ReasonCode string `json:"reasonCode"`
	Message    string `json:"message"`
	Start      string `json:"start"`
	// Refusal is the refusal Message was taken from, for the surface to
	// word.
	Refusal *protocol.Error `json:"-"`
}

// DoctorDataHome is the data home (ResolveDataHome) and acc's directory in
// it (AccDir), each with whether it exists now as a directory.
type DoctorDataHome struct {
	Path         string `json:"path"`
	Exists       bool   `json:"exists"`
	AccDir       string `json:"accDir"`
	AccDirExists bool   `json:"accDirExists"`
	// Problem says what keeps acc from making or using its directory there
	// (DataHomeProblem): "<path> is a broken symlink to <target>", "<path>
	// is a file, not a directory"; ProblemPath is that path. Both are
	// absent when nothing does.
	Problem     string `json:"problem,omitempty"`
	ProblemPath string `json:"problemPath,omitempty"`
}

// DoctorWorkspace is the discovered workspace.
type DoctorWorkspace struct {
	DisplayName string   `json:"displayName"`
	Roots       []string `json:"roots"`
	// ConfigPath is the acc.workspace.json that governs, or nil.
	ConfigPath       *string          `json:"configPath"`
	Policy           workspace.Policy `json:"policy"`
	RequiredAdapters []string         `json:"requiredAdapters"`
}

// DoctorStore is the health of the workspace's SQLite store.
type DoctorStore struct {
	// Engine is "sqlite" (the store file at Path) or "postgresql" (the
	// room on the server Server describes; Path is then its URL, without
	// password).
	Engine string `json:"engine"`
	Path   string `json:"path"`
	// Exists is false before the first `acc attach` created the store.
	Exists  bool `json:"exists"`
	Healthy bool `json:"healthy"`
	// SchemaVersion is the store's PRAGMA user_version when it could be
	// read; ExpectedSchemaVersion is the one this acc reads.
	SchemaVersion         *int `json:"schemaVersion"`
	ExpectedSchemaVersion int  `json:"expectedSchemaVersion"`
	// StoreWorkspaceID is the identity recorded in the store when known;
	// IdentityMatch tells whether it is this workspace's (nil: unknown).
	StoreWorkspaceID *string `json:"storeWorkspaceId"`
	IdentityMatch    *bool   `json:"identityMatch"`
	// Integrity is PRAGMA integrity_check's output (["ok"] when healthy),
	// or nil when it could not run.
	Integrity []string `json:"integrity"`
	// Sizes are the bytes of acc.db, acc.db-wal and acc.db-shm (0 when
	// absent, and acc.db's when it is not a regular file), measured before
	// the store was opened.
	Sizes  DoctorSizes  `json:"sizes"`
	Counts DoctorCounts `json:"counts"`
	// Problems are the findings that make the store unhealthy, each with its
	// reason code.
	Problems []DoctorProblem `json:"problems"`
	// Server is what doctor learned of a room's PostgreSQL server; absent
	// for SQLite.
	Server *DoctorServer `json:"server,omitempty"`
	// Note says something worth knowing that is not a problem.
	Note string `json:"note,omitempty"`
	// Warnings say what will make writes fail later without being a
	// fault now (little free space beside the store); the store stays
	// healthy.
	Warnings []string `json:"warnings,omitempty"`
	// NotAFile, when acc.db is not a regular file, says what it is ("a
	// directory"); Sizes.DB is then 0.
	NotAFile string `json:"-"`
}

// fileKind names what a file of mode m is, for a message.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "something other than a regular file"
	}
}

// DoctorSizes are file sizes in bytes.
type DoctorSizes struct {
	DB  int64 `json:"db"`
	WAL int64 `json:"wal"`
	SHM int64 `json:"shm"`
}

// DoctorCounts are row totals of the store.
type DoctorCounts struct {
	Messages int64 `json:"messages"`
	Events   int64 `json:"events"`
	Sessions int   `json:"sessions"`
}

// DoctorProblem is one finding.
type DoctorProblem struct {
	ReasonCode string `json:"reasonCode"`
	Message    string `json:"message"`
}

// DoctorAdapter is one adapter the workspace config requires.
type DoctorAdapter struct {
	Adapter  string `json:"adapter"`
	Required bool   `json:"required"`
	// Known is false for an id that is not one of AdapterIDs.
	Known     bool `json:"known"`
	Installed bool `json:"installed"`
	// Status is "installed", "missing" or "unknown_adapter".
	Status string `json:"status"`
}

// DoctorOptions selects the workspace, and says which adapters acc install
// has installed on this machine (nil: none known).
type DoctorOptions struct {
	OpenOptions
	Installed func(adapter string) bool
}

// NoStoreNote is the note of a workspace whose store does not exist yet.
const NoStoreNote = "no store yet; it is created by the first `acc attach`"

// Doctor inspects the workspace that o selects and its store, without
// creating or changing anything (docs/configuration.md#acc-doctor).
//
// Locating the workspace fails as Open does (exit 2 for the environment,
// exit 4 for a broken config); there is then nothing to report. Where Open
// would refuse the workspace for holding acc's data, Doctor reports instead
// of failing: with no_room (the start directory is no project, such as the
// home directory) the report has NoRoom set, no room fields, and no error —
// nothing is wrong; with runtime_inside_workspace (a Git or config workspace
// whose root holds acc's data) the report, NoRoom set and Healthy false, is
// returned together with that error (exit 2), its details carrying the
// report. Once a room is known Doctor always returns a report: a
// store that is corrupt, foreign, of an unknown schema version or fails
// PRAGMA integrity_check is reported, with Healthy false, together with a
// store_unhealthy error (exit 4) whose details carry the report. A missing
// store is healthy (NoStoreNote) and is not created; an empty file (a first
// attach that never finished) is reported healthy and left alone. A store
// that stays busy is store_busy (exit 3).
//
// A data home that exists but is no usable directory (DataHomeProblem: a
// broken symlink, a file) is reported in DataHome.Problem, with Healthy
// false, the fix first in Remediation, the store not inspected, and a
// data_home_unusable error (exit 2) carrying the report — unless the
// workspace is refused as runtime_inside_workspace, which then comes first.
func Doctor(ctx context.Context, d DoctorOptions) (*DoctorReport, error) {
	o := d.OpenOptions
	ws, env, err := locateParts(ctx, o)
	if err != nil {
		return nil, err
	}
	rep := &DoctorReport{Healthy: true, DataHome: dataHomeReport(env.DataHome), Remediation: []string{}}
	// A data home that is no usable directory is a problem wherever doctor
	// runs: no room can keep its store there, and acc install cannot either.
	var unusable *protocol.Error
	if rep.DataHome.Problem != "" {
		rep.Healthy = false
		unusable = protocol.AsError(workspace.DataHomeError(env.DataHome))
		rep.Remediation = append(rep.Remediation, unusable.Message)
		unusable.With("report", rep)
	}
	if err := env.CheckContainment(ws); err != nil {
		pe := protocol.AsError(noRoomError(ws, env, err))
		rep.NoRoom = &DoctorNoRoom{ReasonCode: pe.Reason, Message: pe.Message, Start: ws.Start, Refusal: pe}
		if pe.Reason == protocol.ReasonNoRoom {
			rep.Remediation = append(rep.Remediation, "no room is selected here: "+doctorNoRoom(ws, env, protocol.AsError(err)))
			if unusable != nil {
				return rep, unusable
			}
			return rep, nil
		}
		rep.Healthy = false
		rep.Remediation = append(rep.Remediation, pe.Message)
		return rep, pe.With("report", rep)
	}
	path := workspace.StorePath(env.DataHome, ws.ID)
	rep.DoctorRoom = &DoctorRoom{
		WorkspaceID: ws.ID, Source: ws.Source,
		Workspace: DoctorWorkspace{DisplayName: ws.DisplayName, Roots: ws.Roots, Policy: ws.Policy,
			RequiredAdapters: append([]string{}, ws.RequiredAdapters...)},
		RuntimeRoot: filepath.Dir(path), Protection: "none", Sessions: []AttachedSession{},
		Store:    DoctorStore{Engine: "sqlite", Path: path, Healthy: true, ExpectedSchemaVersion: storage.SchemaVersion, Problems: []DoctorProblem{}},
		Adapters: []DoctorAdapter{},
	}
	url, err := StoreURL(ws, o.Getenv)
	if err != nil {
		return nil, err
	}
	if ws.ConfigPath != "" {
		p := ws.ConfigPath
		rep.Workspace.ConfigPath = &p
	}

	if unusable != nil {
		// No store can be there, and attach cannot make one until the data
		// home is fixed.
		rep.Store.Note = "no store: acc's data home cannot be used"
	} else if url != "" {
		if err := inspectServer(ctx, rep, ws, env, url); err != nil {
			return nil, err
		}
		rep.Healthy = rep.Store.Healthy
	} else {
		if err := inspectStore(ctx, rep, ws, env); err != nil {
			return nil, err
		}
		rep.Healthy = rep.Store.Healthy
	}

	for _, id := range ws.RequiredAdapters {
		a := DoctorAdapter{Adapter: id, Required: true, Known: slices.Contains(AdapterIDs, id), Status: "missing"}
		if !a.Known {
			a.Status = "unknown_adapter"
			where := "acc.workspace.json"
			if ws.ConfigPath != "" {
				where = ws.ConfigPath
			}
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"requiredAdapters names %q, which is no acc adapter (%s); fix requiredAdapters in %s", id, joinComma(AdapterIDs), where))
		} else if d.Installed != nil && d.Installed(id) {
			a.Installed, a.Status = true, "installed"
		} else {
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"adapter %s is required by the workspace config but not installed: acc install --adapter %s", id, id))
		}
		rep.Adapters = append(rep.Adapters, a)
	}
	if unusable != nil {
		return rep, unusable
	}
	if !rep.Healthy {
		first := rep.Store.Problems[0]
		return rep, protocol.Errorf(protocol.ReasonStoreUnhealthy,
			"the store at %s is unhealthy (%s); %s", rep.Store.Path, first.ReasonCode, rep.Remediation[0]).
			With("report", rep)
	}
	return rep, nil
}

// dataHomeReport says where the data home and acc's directory are, and
// whether each exists.
func dataHomeReport(dataHome string) DoctorDataHome {
	d := DoctorDataHome{Path: dataHome, AccDir: workspace.AccDir(dataHome)}
	if st, err := os.Stat(d.Path); err == nil && st.IsDir() {
		d.Exists = true
	}
	if st, err := os.Stat(d.AccDir); err == nil && st.IsDir() {
		d.AccDirExists = true
	}
	if pp := workspace.DataHomeProblem(dataHome); pp != nil {
		d.Problem, d.ProblemPath = pp.String(), pp.Path
	}
	return d
}

func joinComma(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}

// inspectStore fills rep.Store, the presence fields and the store's
// remediation lines.
func inspectStore(ctx context.Context, rep *DoctorReport, ws *workspace.Workspace, env *workspace.RuntimeEnv) error {
	s := &rep.Store
	size := func(p string) int64 {
		if info, err := os.Lstat(p); err == nil {
			return info.Size()
		}
		return 0
	}
	info, err := os.Lstat(s.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.Note = NoStoreNote
		rep.Remediation = append(rep.Remediation, "run `acc attach --participant NAME` to open the first session; it creates the store")
		return nil
	case err != nil:
		reason := protocol.ReasonStoreIOError
		if errors.Is(err, fs.ErrPermission) {
			reason = protocol.ReasonStoreUnwritable
		}
		s.unhealthy(reason, fmt.Sprintf("cannot inspect %s: %s", s.Path, errText(err)))
		rep.Remediation = append(rep.Remediation, "make "+filepath.Dir(s.Path)+" readable and writable by this user, then run `acc doctor` again")
		rep.Protection = "unknown"
		return nil
	}
	s.Exists = true
	s.Sizes = DoctorSizes{WAL: size(s.Path + "-wal"), SHM: size(s.Path + "-shm")}
	if !info.Mode().IsRegular() {
		// A directory's size is not a store's: Sizes.DB stays 0.
		s.NotAFile = fileKind(info.Mode())
		s.unhealthy(protocol.ReasonStoreCorrupt, fmt.Sprintf("%s is %s, not acc's store file; move it aside (mv %s %s.bad) or restore the store there from a backup, then run `acc doctor` again",
			s.Path, s.NotAFile, s.Path, s.Path))
		rep.Remediation = append(rep.Remediation, aside(s.Path))
		rep.Protection = "unknown"
		return nil
	}
	s.Sizes.DB = info.Size()
	st, err := storage.OpenSQLiteToInspect(ctx, s.Path, ws.ID)
	if err != nil {
		pe := protocol.AsError(err)
		switch pe.Reason {
		case protocol.ReasonStoreBusy:
			return err
		case protocol.ReasonStoreVersionUnknown:
			if v, ok := pe.Details["schemaVersion"].(int); ok {
				s.SchemaVersion = &v
			}
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"this acc reads schema version %d: upgrade acc, or %s", storage.SchemaVersion, aside(s.Path)))
		case protocol.ReasonStoreForeignWorkspace:
			if id, ok := pe.Details["storeWorkspaceId"].(string); ok {
				s.StoreWorkspaceID = &id
				f := false
				s.IdentityMatch = &f
			}
			v := storage.SchemaVersion
			s.SchemaVersion = &v
			rep.Remediation = append(rep.Remediation, fmt.Sprintf(
				"the store belongs to another workspace: if acc.workspace.json's workspaceId was changed, restore it; otherwise %s", aside(s.Path)))
		case protocol.ReasonStoreCorrupt:
			rep.Remediation = append(rep.Remediation, aside(s.Path))
		case protocol.ReasonStoreUnwritable, protocol.ReasonStoreFull, protocol.ReasonStoreIOError:
			rep.Remediation = append(rep.Remediation, faultFix(pe.Reason, s.Path))
		default:
			if pe.Reason == protocol.ReasonInternal {
				return err
			}
			rep.Remediation = append(rep.Remediation, aside(s.Path))
		}
		reason := pe.Reason
		if reason == protocol.ReasonInternal {
			reason = protocol.ReasonStoreCorrupt
		}
		s.unhealthy(reason, pe.Message)
		rep.Protection = "unknown"
		return nil
	}
	defer st.Close()
	v := st.SchemaVersion()
	id := ws.ID
	match := true
	s.SchemaVersion, s.StoreWorkspaceID, s.IdentityMatch = &v, &id, &match
	if v < storage.SchemaVersion {
		s.Warnings = append(s.Warnings, olderSchemaWarning(v))
	}

	lines, err := st.IntegrityCheck(ctx)
	if err != nil {
		if protocol.IsReason(err, protocol.ReasonStoreBusy) {
			return err
		}
		s.unhealthy(protocol.ReasonStoreCorrupt, "PRAGMA integrity_check could not run: "+protocol.AsError(err).Message)
	} else {
		s.Integrity = lines
		if !(len(lines) == 1 && lines[0] == "ok") {
			first := ""
			if len(lines) > 0 {
				first = lines[0]
			}
			s.unhealthy(protocol.ReasonStoreCorrupt, fmt.Sprintf("PRAGMA integrity_check found %d problem(s), first: %s", len(lines), first))
		}
	}
	if !s.Healthy {
		rep.Remediation = append(rep.Remediation, "restore "+s.Path+" from a backup, or "+aside(s.Path))
		rep.Protection = "unknown"
		return nil
	}
	if damaged, err := st.DamagedRecords(ctx, maxDamagedNamed); err != nil {
		if protocol.IsReason(err, protocol.ReasonStoreBusy) {
			return err
		}
		s.unhealthy(protocol.AsError(err).Reason, protocol.AsError(err).Message)
	} else if len(damaged) > 0 {
		for _, d := range damaged {
			s.unhealthy(protocol.ReasonStoreCorrupt, fmt.Sprintf("damaged record: %s %s: %s", d.Table, d.Key, d.Problem))
		}
		rep.Remediation = append(rep.Remediation, fmt.Sprintf(
			"restore %s from a backup; until then acc inbox leaves the damaged record(s) out and names them, and commands that need one refuse with store_corrupt", s.Path))
	}
	faults, warnings := storeFaults(s.Path)
	s.Warnings = append(s.Warnings, warnings...)
	for _, p := range faults {
		s.unhealthy(p.ReasonCode, p.Message)
		if fix := faultFix(p.ReasonCode, s.Path); !slices.Contains(rep.Remediation, fix) {
			rep.Remediation = append(rep.Remediation, fix)
		}
	}
	if !s.Healthy {
		rep.Protection = "unknown"
		return nil
	}

	return inspectRoom(ctx, rep, ws, env, st, "restore "+s.Path+" from a backup, or "+aside(s.Path))
}

// inspectRoom fills the counts, materialisation, protection and live
// sessions of rep from the opened store st; fix is the remediation of a
// record that does not decode.
func inspectRoom(ctx context.Context, rep *DoctorReport, ws *workspace.Workspace, env *workspace.RuntimeEnv, st storage.Store, fix string) error {
	s := &rep.Store
	err := st.View(ctx, func(tx storage.ReadTx) error {
		c, err := tx.Counts()
		if err != nil {
			return err
		}
		s.Counts.Messages, s.Counts.Events = c.Messages, c.Events
		sessions, err := allSessions(tx, false)
		s.Counts.Sessions = len(sessions)
		return err
	})
	if err == nil {
		r := newRoom(ws, st, env)
		var status *Status
		if status, err = r.Status(ctx, StatusQuery{}); err == nil {
			rep.Materialised = status.Materialised
			rep.Protection = status.Protection
			rep.LiveSessions = status.Counts.Live
			for _, p := range status.Participants {
				if p.Presence != PresenceOffline && p.State == protocol.SessionOpen {
					rep.Sessions = append(rep.Sessions, AttachedSession{SessionID: p.SessionID, ParticipantID: p.ParticipantID, Harness: p.Harness, Presence: p.Presence})
				}
			}
		}
	}
	if err != nil {
		pe := protocol.AsError(err)
		if pe.Reason == protocol.ReasonStoreBusy || pe.Reason == protocol.ReasonInternal {
			return err
		}
		// A record that cannot be decoded is a store problem to report.
		s.unhealthy(pe.Reason, pe.Message)
		rep.Remediation = append(rep.Remediation, fix)
		rep.Protection = "unknown"
	}
	return nil
}

func (s *DoctorStore) unhealthy(reason, msg string) {
	s.Healthy = false
	s.Problems = append(s.Problems, DoctorProblem{ReasonCode: reason, Message: msg})
}

// maxDamagedNamed bounds how many damaged records doctor names.
const maxDamagedNamed = 20

// fullBytes is the free space below which doctor reports the store's file
// system as full (store_full): less than one commit may need, a few WAL
// frames of SQLite's 4 KiB pages with their headers and the WAL index.
const fullBytes = 64 << 10

// lowFreeBytes is the free space below which doctor warns, the store still
// healthy: a few WALs' worth (docs/design.md#durability-and-checkpoints).
const lowFreeBytes = 4 << 20

// storeFaults finds what makes writes to the healthy store at path fail:
// the directory or a store file not writable by this user (or on a
// read-only file system), or a file system with less than fullBytes free.
// warnings say what will make them fail later: less than lowFreeBytes
// free (a small file system is not full).
func storeFaults(path string) (out []DoctorProblem, warnings []string) {
	dir := filepath.Dir(path)
	for _, p := range []string{dir, path, path + "-wal", path + "-shm"} {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Access(p, unix.W_OK); err != nil {
			out = append(out, DoctorProblem{ReasonCode: protocol.ReasonStoreUnwritable,
				Message: fmt.Sprintf("%s is not writable by this user (%s): every command that records something will fail", p, err)})
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil {
		switch free := int64(st.Bavail) * int64(st.Bsize); {
		case free < fullBytes:
			out = append(out, DoctorProblem{ReasonCode: protocol.ReasonStoreFull,
				Message: fmt.Sprintf("the file system holding %s is full (%d bytes free, less than one write needs): commands that record something fail", dir, free)})
		case free < lowFreeBytes:
			warnings = append(warnings, fmt.Sprintf("the file system holding %s has %d bytes free (%s); writes fail with store_full when it runs out: free space there, or set ACC_DATA_HOME to a larger disk",
				dir, free, humanBytes(free)))
		}
	}
	return out, warnings
}

// humanBytes is n bytes in KiB or MiB with one decimal.
func humanBytes(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// faultFix is the remediation for a store fault of the file system.
func faultFix(reason, path string) string {
	dir := filepath.Dir(path)
	switch reason {
	case protocol.ReasonStoreUnwritable:
		return fmt.Sprintf("make %s and the acc.db* files in it writable by this user (chmod u+w, or chown), or set ACC_DATA_HOME to a writable directory; then run `acc doctor` again", dir)
	case protocol.ReasonStoreFull:
		return fmt.Sprintf("free space on the file system holding %s, then run `acc doctor` again", dir)
	default:
		return fmt.Sprintf("check the disk holding %s (the system log names the failing device), then run `acc doctor` again", dir)
	}
}

// aside is the remediation that moves a bad store out of the way; the next
// attach starts a new, empty one.
func aside(path string) string {
	return fmt.Sprintf("move it aside with its write-ahead log (mv %s %s.bad; mv %s-wal %s.bad-wal if there) and run `acc attach` to start a new, empty store; acc never edits or deletes a store it cannot trust", path, path, path, path)
}

// olderSchemaWarning is doctor's word on a store an older acc wrote
// (schema version 2, before the search index): healthy, and upgraded in
// place by the next acc command that opens it (docs/protocol.md#search-index).
func olderSchemaWarning(v int) string {
	return fmt.Sprintf("the store has schema version %d, an older acc's; the next acc command that opens it (acc status, for one) upgrades it to version %d in one transaction, adding the search index acc search needs (about 2 seconds per 100,000 messages); doctor left it as it is",
		v, storage.SchemaVersion)
}
