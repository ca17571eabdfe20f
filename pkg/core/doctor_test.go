package core

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// doctorWorld is a Git repository with a private data home.
type doctorWorld struct {
	t          *testing.T
	base, repo string
	data       string
	env        map[string]string
}

func newDoctorWorld(t *testing.T) *doctorWorld {
	base := realTempDir(t)
	w := &doctorWorld{t: t, base: base, repo: filepath.Join(base, "repo"), data: filepath.Join(base, "data")}
	newRepo(t, w.repo)
	w.env = map[string]string{"HOME": base, "ACC_DATA_HOME": w.data}
	return w
}

func (w *doctorWorld) opts() OpenOptions {
	return OpenOptions{Cwd: w.repo, Getenv: envMap(w.env), GOOS: "linux"}
}

func (w *doctorWorld) storePath() string {
	return workspace.StorePath(w.data, discover(w.t, w.repo, w.env).ID)
}

func (w *doctorWorld) attach(participant string) {
	w.t.Helper()
	r, err := Open(context.Background(), w.opts())
	if err != nil {
		w.t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Attach(context.Background(), AttachInput{ParticipantID: participant, Harness: "cli"}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *doctorWorld) doctor() (*DoctorReport, error) {
	return Doctor(context.Background(), DoctorOptions{OpenOptions: w.opts()})
}

// dirState lists every file under dir with its bytes, to prove nothing
// changed.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func sameState(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Fatalf("%s changed", p)
		}
	}
}

func TestDoctorMissingStoreIsHealthyAndNotCreated(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	rep, err := w.doctor()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Healthy || rep.Store.Exists || rep.Store.Note != NoStoreNote || rep.Protection != "none" || rep.LiveSessions != 0 {
		t.Fatalf("report: %+v", rep)
	}
	if len(rep.Remediation) != 1 || !strings.Contains(rep.Remediation[0], "acc attach") {
		t.Fatalf("remediation: %q", rep.Remediation)
	}
	if _, err := os.Stat(w.data); !os.IsNotExist(err) {
		t.Fatalf("doctor created the data home: %v", err)
	}
}

func TestDoctorHealthyStore(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.attach("alice")
	w.attach("bob")
	rep, err := w.doctor()
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Store
	if !rep.Healthy || !s.Exists || !s.Healthy || s.SchemaVersion == nil || *s.SchemaVersion != storage.SchemaVersion ||
		s.IdentityMatch == nil || !*s.IdentityMatch || *s.StoreWorkspaceID != rep.WorkspaceID {
		t.Fatalf("store: %+v", s)
	}
	if len(s.Integrity) != 1 || s.Integrity[0] != "ok" || len(s.Problems) != 0 {
		t.Fatalf("integrity: %v %v", s.Integrity, s.Problems)
	}
	if s.Sizes.DB <= 0 || s.Counts.Sessions != 2 || s.Counts.Events == 0 {
		t.Fatalf("sizes %+v counts %+v", s.Sizes, s.Counts)
	}
	if rep.LiveSessions != 2 || len(rep.Sessions) != 2 || rep.Protection != "none" || !rep.Materialised {
		t.Fatalf("presence: live %d sessions %v protection %s materialised %v", rep.LiveSessions, rep.Sessions, rep.Protection, rep.Materialised)
	}
	if rep.RuntimeRoot != filepath.Dir(w.storePath()) || rep.Source != protocol.SourceGit || rep.Workspace.ConfigPath != nil {
		t.Fatalf("workspace: %+v", rep)
	}
	if len(rep.Remediation) != 0 || len(rep.Adapters) != 0 {
		t.Fatalf("nothing to do, got %q %v", rep.Remediation, rep.Adapters)
	}
}

func TestDoctorReportsRequiredAdapters(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	mustWrite(t, filepath.Join(w.repo, workspace.ConfigFileName),
		`{"schemaVersion":1,"workspaceId":"workspace_doc","requiredAdapters":["claude","codex","vim"]}`)
	rep, err := w.doctor()
	if err != nil {
		t.Fatal(err)
	}
	if *rep.Workspace.ConfigPath != filepath.Join(w.repo, workspace.ConfigFileName) || rep.WorkspaceID != "workspace_doc" {
		t.Fatalf("workspace: %+v", rep.Workspace)
	}
	if len(rep.Adapters) != 3 || rep.Adapters[0].Status != "missing" || rep.Adapters[0].Installed || !rep.Adapters[0].Known ||
		rep.Adapters[2].Status != "unknown_adapter" || rep.Adapters[2].Known {
		t.Fatalf("adapters: %+v", rep.Adapters)
	}
	all := strings.Join(rep.Remediation, "\n")
	for _, want := range []string{"acc install --adapter claude", "acc install --adapter codex", `"vim"`} {
		if !strings.Contains(all, want) {
			t.Fatalf("remediation lacks %q:\n%s", want, all)
		}
	}
	// Once acc install has installed claude, it is no longer missing.
	rep, err = Doctor(context.Background(), DoctorOptions{OpenOptions: w.opts(), Installed: func(id string) bool { return id == "claude" }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Adapters[0].Installed || rep.Adapters[0].Status != "installed" || rep.Adapters[1].Status != "missing" {
		t.Fatalf("adapters with claude installed: %+v", rep.Adapters)
	}
	if all := strings.Join(rep.Remediation, "\n"); strings.Contains(all, "--adapter claude") {
		t.Fatalf("an installed adapter is still to install:\n%s", all)
	}
}

// unhealthy runs doctor and checks the shape every unhealthy result has:
// store_unhealthy exit 4 with the report in details, one problem of reason,
// the files untouched.
func (w *doctorWorld) unhealthy(reason string) *DoctorReport {
	w.t.Helper()
	before := dirState(w.t, w.data)
	rep, err := w.doctor()
	wantReason(w.t, err, protocol.ReasonStoreUnhealthy, protocol.ExitData)
	assertOneLine(w.t, err)
	if rep == nil || rep.Healthy || rep.Store.Healthy || len(rep.Store.Problems) == 0 || rep.Store.Problems[0].ReasonCode != reason {
		w.t.Fatalf("report: %+v", rep)
	}
	if got := protocol.AsError(err).Details["report"]; got != rep {
		w.t.Fatalf("details.report = %v", got)
	}
	if len(rep.Remediation) == 0 || !strings.Contains(err.Error(), rep.Remediation[0]) {
		w.t.Fatalf("the refusal does not name the next step: %s", err)
	}
	if _, err := json.Marshal(protocol.Failure(err)); err != nil {
		w.t.Fatalf("the failure envelope does not encode: %v", err)
	}
	sameState(w.t, before, dirState(w.t, w.data))
	return rep
}

func TestDoctorCorruptFile(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	mustWrite(t, w.storePath(), strings.Repeat("this is not an SQLite database. ", 20))
	rep := w.unhealthy(protocol.ReasonStoreCorrupt)
	if !strings.Contains(rep.Remediation[0], "mv ") || rep.Store.Sizes.DB != int64(20*len("this is not an SQLite database. ")) {
		t.Fatalf("report: %+v", rep)
	}
}

func TestDoctorForeignStore(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.attach("alice")
	// Copy this room's store into another repository's place.
	other := filepath.Join(w.base, "other")
	newRepo(t, other)
	src := w.storePath()
	w.repo = other
	dst := w.storePath()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, dst, string(b))
	rep := w.unhealthy(protocol.ReasonStoreForeignWorkspace)
	if rep.Store.IdentityMatch == nil || *rep.Store.IdentityMatch || *rep.Store.StoreWorkspaceID != filepath.Base(filepath.Dir(src)) {
		t.Fatalf("identity: %+v", rep.Store)
	}
}

func TestDoctorUnknownSchemaVersion(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.attach("alice")
	setUserVersion(t, w.storePath(), 99)
	rep := w.unhealthy(protocol.ReasonStoreVersionUnknown)
	if rep.Store.SchemaVersion == nil || *rep.Store.SchemaVersion != 99 || !strings.Contains(rep.Remediation[0], "upgrade acc") {
		t.Fatalf("store: %+v %q", rep.Store, rep.Remediation)
	}
}

// TestDoctorOlderSchema: a store an older acc wrote (schema version 2, no
// search index) is healthy; doctor reports version 2 with a warning that
// the next command upgrades it, and leaves the file as it is; the next
// command does upgrade it.
func TestDoctorOlderSchema(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.attach("alice")
	db, err := sql.Open("sqlite", "file:"+w.storePath())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TRIGGER search_pending_add", "DROP TABLE search_pending", "DROP TABLE search_index", "DROP TABLE search_docs", "PRAGMA user_version = 2", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	before, err := os.ReadFile(w.storePath())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := w.doctor()
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Store
	if !rep.Healthy || !s.Healthy || s.SchemaVersion == nil || *s.SchemaVersion != 2 {
		t.Fatalf("store: %+v", s)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "schema version 2") || !strings.Contains(s.Warnings[0], "upgrades it to version 3") {
		t.Fatalf("warnings: %q", s.Warnings)
	}
	if after, _ := os.ReadFile(w.storePath()); string(after) != string(before) {
		t.Fatal("doctor changed the store file")
	}
	w.attach("bob")
	if rep, err := w.doctor(); err != nil || *rep.Store.SchemaVersion != storage.SchemaVersion || len(rep.Store.Warnings) != 0 {
		t.Fatalf("after the next command: %v %+v", err, rep.Store)
	}
}

func TestDoctorIntegrityFailure(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.attach("alice")
	path := w.storePath()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int
	if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = 'events'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Break the b-tree page header of the events table: an invalid page type.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 8), int64((root-1)*pageSize)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep := w.unhealthy(protocol.ReasonStoreCorrupt)
	if !strings.Contains(strings.Join(rep.Remediation, " "), "mv ") {
		t.Fatalf("remediation: %q", rep.Remediation)
	}
}

// TestDoctorEmptyStoreFileIsCorrupt: acc links a store into place only
// once it is complete, so an empty acc.db lost its content: unhealthy
// store_corrupt with the fix, and left as it was.
func TestDoctorEmptyStoreFileIsCorrupt(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	mustWrite(t, w.storePath(), "")
	rep := w.unhealthy(protocol.ReasonStoreCorrupt)
	if !strings.Contains(rep.Store.Problems[0].Message, "0 bytes") {
		t.Errorf("problem: %+v", rep.Store.Problems[0])
	}
}

func TestDoctorRefusesWhatOpenRefuses(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	w.env["ACC_DATA_HOME"] = filepath.Join(w.repo, ".acc")
	rep, err := w.doctor()
	wantReason(t, err, protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)
	if rep == nil || rep.DoctorRoom != nil || rep.NoRoom == nil || rep.Healthy {
		t.Fatalf("want a report without a room, marked unhealthy; got %+v", rep)
	}
	w.env["ACC_DATA_HOME"] = "relative"
	rep, err = w.doctor()
	wantReason(t, err, protocol.ReasonPathNotAbsolute, protocol.ExitUsage)
	if rep != nil {
		t.Fatal("a report without a data home")
	}
	if _, err := os.Stat(filepath.Join(w.repo, ".acc")); !os.IsNotExist(err) {
		t.Fatal("doctor created state inside the workspace")
	}
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{fmt.Sprintf("PRAGMA user_version = %d", v), "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDoctorHeaderOnlyStoreIsCorrupt: a SQLite file without acc's schema
// where the store should be (an older acc's first attach stopped early, or
// not acc's) is unhealthy store_corrupt; neither doctor nor a reading command
// creates the schema in it.
func TestDoctorHeaderOnlyStoreIsCorrupt(t *testing.T) {
	t.Parallel()
	w := newDoctorWorld(t)
	path := w.storePath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q: %v", mode, err)
	}
	db.Close()
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("want a header-only database: %v", err)
	}
	before := dirState(t, w.data)
	rep := w.unhealthy(protocol.ReasonStoreCorrupt)
	if !strings.Contains(rep.Store.Problems[0].Message, "without acc's schema") {
		t.Errorf("problem: %+v", rep.Store.Problems[0])
	}
	_, err = Open(context.Background(), OpenOptions{Cwd: w.repo, Getenv: envMap(w.env), GOOS: "linux", NoCreate: true})
	wantReason(t, err, protocol.ReasonStoreCorrupt, protocol.ExitData)
	sameState(t, before, dirState(t, w.data))
}
