package install

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/protocol"
)

// Uninstall removes what the record says acc wrote, and only what is still
// as acc wrote it: an entry, block or file a person changed is kept and
// reported; directories acc created go only when empty; a client's own
// records (Codex's hook trust) are never touched. It works from the record
// alone, so a client that left the machine can still be unwired. A client
// named with --adapter that acc has no record of is skipped and said so.
// The record entry goes once its files are done; with the last one go the
// shim, the record, the install lock and the directories install created
// for them, each when empty (release; evidence records and stores in the
// data home stay, docs/adapters.md). A lock file with nothing recorded is
// removed too, and so is what a run cut short left (leftovers, and the
// directories the lock file lists). The report's Shared lists each of
// these, dry run or not.
// Errors: exit 2 unknown adapter; exit 4 unreadable record or a client file
// that no longer parses (left untouched); exit 4 install_failed when a
// write fails (the record stays, and running uninstall again finishes).
func (e *Env) Uninstall(ctx context.Context, o Options) (*Report, error) {
	if err := e.checkAdapters(o.Adapters); err != nil {
		return nil, err
	}
	if e.HomeGiven {
		if st, err := os.Stat(e.Home); err != nil || !st.IsDir() {
			return nil, protocol.Errorf(protocol.ReasonHomeNotDirectory, "home %s is not an existing directory; pass --home DIR naming one, or leave --home out to unwire what the record lists", e.Home).With("home", e.Home)
		}
	}
	// Plan read-only (a run with nothing to do writes nothing), then plan
	// again under the install lock to write. A lock file with nothing
	// installed (left by an acc that did not remove it) is something to
	// do: taking the lock and releasing it removes it.
	rep, rec, undos, lastOut, err := e.planUninstall(o)
	if err != nil || o.DryRun || !e.uninstallWrites(rec, undos, lastOut) {
		return rep, err
	}
	lk, err := lock(ctx, e.DataHome)
	if err != nil {
		return nil, err
	}
	defer func() { lk.release(rec) }()
	if rep, rec, undos, lastOut, err = e.planUninstall(o); err != nil {
		return nil, err
	}
	if err := rec.adoptLock(e.DataHome, lk); err != nil {
		return rep, stopped(recordPath(e.DataHome), err, "uninstall",
			"acc uninstall could not update its record %s (%v); nothing was removed", recordPath(e.DataHome), errText(err))
	}
	// Each refusal below says what this run had done by then; the record
	// still lists everything left to do, so running uninstall again
	// finishes (a file already without acc's part is "missing" then).
	var done []string // the clients this run unwired
	for _, u := range undos {
		name := e.Adapters[u.id].DisplayName()
		var changed []string
		for _, f := range u.files {
			if err := f.write(); err != nil {
				already := ""
				if len(changed) > 0 {
					already = "; acc's part of " + strings.Join(changed, ", ") + " is already gone"
				}
				return rep, stopped(f.path, err, "uninstall",
					"acc uninstall could not remove acc's part of %s for %s (%v)%s; the record still lists %s%s", f.path, name, errText(err), already, name, earlier(done, "unwired"))
			}
			removeStaleTemp(f.path)
			changed = append(changed, f.path)
		}
		removeEmptyDirs(u.dirs)
		rec.drop(u.id)
		if err := rec.save(e.DataHome); err != nil {
			return rep, stopped(recordPath(e.DataHome), err, "uninstall",
				"acc uninstall removed acc's part of %s's files but could not update its record %s (%v), which still lists %s%s", name, recordPath(e.DataHome), errText(err), name, earlier(done, "unwired"))
		}
		done = append(done, name)
	}
	if lastOut && rec.Shim != nil {
		if b, _, _ := readFile(rec.Shim.Path); b != nil && ownShim(b, rec.Shim) {
			if err := os.Remove(rec.Shim.Path); err != nil {
				return rep, stopped(rec.Shim.Path, err, "uninstall",
					"acc uninstall could not remove the hook shim %s (%v)%s; the record still lists the shim", rec.Shim.Path, errText(err), earlier(done, "unwired"))
			}
		}
		removeStaleTemp(rec.Shim.Path)
		_ = os.Remove(filepath.Dir(rec.Shim.Path)) // acc/bin, when empty
		rec.Shim = nil
		if err := rec.save(e.DataHome); err != nil {
			return rep, stopped(recordPath(e.DataHome), err, "uninstall",
				"acc uninstall removed the hook shim but could not remove its record %s (%v)%s", recordPath(e.DataHome), errText(err), earlier(done, "unwired"))
		}
	}
	return rep, nil
}

// The details of the changes uninstall reports for a file or directory
// that acc created and that goes whole (docs/adapters.md).
const (
	CreatedFileGoes = "acc created the file and nothing else is in it, so it goes"
	CreatedDirGoes  = "acc created it and nothing else is in it, so it goes"
)

// undo is one client's uninstall computed in memory.
type undo struct {
	id    string
	files []*fileState
	dirs  []string
}

// planUninstall reads the record and every recorded file, and computes
// what uninstall removes, keeps and reports.
func (e *Env) planUninstall(o Options) (*Report, *Record, []undo, bool, error) {
	rec, err := loadRecord(e.DataHome)
	if err != nil {
		return nil, nil, nil, false, err
	}
	rep := &Report{DryRun: o.DryRun, Record: recordPath(e.DataHome), Shim: e.shimPath(), Clients: []ClientReport{}, Shared: []Change{}}
	targets := o.Adapters
	if len(targets) == 0 {
		for _, in := range rec.Installs {
			targets = append(targets, in.AdapterID)
		}
	}
	slices.Sort(targets)
	var undos []undo
	for _, id := range targets {
		a := e.Adapters[id]
		cr := ClientReport{Detection: Detection{Adapter: id, DisplayName: a.DisplayName()}, Action: "uninstall", Changes: []Change{}, Notes: []string{}}
		in := rec.find(id)
		if in == nil {
			cr.Action, cr.Reason = "skip", "acc has no record of installing "+a.DisplayName()+" with this data home ("+recordPath(e.DataHome)+")"
			rep.Clients = append(rep.Clients, cr)
			continue
		}
		if e.HomeGiven && in.Home != "" && in.Home != e.Home {
			cr.Action, cr.Reason = "skip", "acc installed "+a.DisplayName()+" under the home "+in.Home+", not "+e.Home+"; name that home, or leave --home out"
			rep.Clients = append(rep.Clients, cr)
			continue
		}
		cr.ConfigDir, cr.Version = in.ConfigDir, in.ClientVersion
		u := undo{id: id, dirs: in.CreatedDirectories}
		order, by := groupByPath(in.Artifacts, func(x RecordedArtifact) string { return x.Path })
		gone := map[string]bool{} // the files of this client that go whole
		for _, path := range order {
			src, existed, err := readFile(path)
			if err != nil {
				return nil, nil, nil, false, inTheWay(path, err)
			}
			out, del, changes, err := unapply(path, src, existed, by[path], e.shimPath())
			if err != nil {
				return nil, nil, nil, false, err
			}
			f := &fileState{path: path, real: resolveLink(path), old: src, existed: existed, new: out}
			if del || !existed {
				f.new = nil
			}
			u.files = append(u.files, f)
			cr.Changes = append(cr.Changes, changes...)
			if del {
				gone[path] = true
				if by[path][0].Kind != adapter.ArtifactFile {
					// acc created the file for its entries or block, and
					// nothing else is in it: the file goes, not only acc's
					// part of it.
					cr.Changes = append(cr.Changes, Change{Path: path, Kind: "file", Op: "remove", Detail: CreatedFileGoes})
				}
			}
		}
		// The directories acc created for this client that nothing else
		// keeps then, deepest first (removeEmptyDirs removes them).
		dirs := slices.Clone(in.CreatedDirectories)
		slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
		for _, d := range dirs {
			if emptiedBy(d, gone) {
				gone[d] = true
				cr.Changes = append(cr.Changes, Change{Path: d, Kind: "directory", Op: "remove", Detail: CreatedDirGoes})
			}
		}
		cr.Notes = append(cr.Notes, "restart "+a.DisplayName()+": hooks are read when a session starts")
		rep.Clients = append(rep.Clients, cr)
		undos = append(undos, u)
	}
	lastOut := len(rec.Installs) == len(undos) // nothing of acc's stays installed
	removed := map[string]bool{}
	if lastOut && rec.Shim != nil {
		op := "remove"
		if b, _, _ := readFile(rec.Shim.Path); b == nil {
			op = "missing"
		} else if !ownShim(b, rec.Shim) {
			op = "kept"
		}
		rep.Shared = append(rep.Shared, Change{Path: rec.Shim.Path, Kind: "file", Op: op})
		if op == "remove" {
			removed[rec.Shim.Path] = true
		}
	}
	if lastOut && rec.Shim == nil {
		// What a run cut short left that no record lists.
		for _, ch := range leftovers(e.DataHome) {
			rep.Shared = append(rep.Shared, ch)
			removed[ch.Path] = true
		}
	}
	if len(undos) > 0 || (lastOut && rec.Shim != nil) {
		op := "update"
		if lastOut {
			op = "remove"
			removed[recordPath(e.DataHome)] = true
		}
		if exists(recordPath(e.DataHome)) {
			rep.Shared = append(rep.Shared, Change{Path: recordPath(e.DataHome), Kind: "file", Op: op, Detail: "acc's record of what it wrote"})
		}
	}
	if lastOut && exists(lockPath(e.DataHome)) {
		rep.Shared = append(rep.Shared, Change{Path: lockPath(e.DataHome), Kind: "file", Op: "remove", Detail: "the install lock"})
		removed[lockPath(e.DataHome)] = true
	}
	if lastOut {
		// The directories install created that nothing else keeps,
		// deepest first.
		// The lock file lists those of a run cut short before it
		// recorded them (installLock).
		acc := filepath.Dir(lockPath(e.DataHome))
		dirs := withChainBelow(union(union(rec.DataDirectories, listedDirs(e.DataHome)), []string{filepath.Dir(e.shimPath())}), acc)
		slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
		var gone []Change
		for _, d := range dirs {
			if emptiedBy(d, removed) {
				removed[d] = true
				gone = append(gone, Change{Path: d, Kind: "directory", Op: "remove"})
			}
		}
		rep.Shared = append(rep.Shared, gone...)
	}
	if e.uninstallWrites(rec, undos, lastOut) {
		// Checked alike for a dry run and for the run, before anything
		// is removed.
		if err := e.checkDataPaths("uninstall"); err != nil {
			return nil, nil, nil, false, err
		}
		if err := checkWritable(rep.Shared, "uninstall"); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return rep, rec, undos, lastOut, nil
}

// uninstallWrites reports whether an uninstall planned as undos has
// anything to do, and so takes the install lock: a client to unwire, or,
// with nothing of acc's left installed, the shim, a lock file or what a
// run cut short left to remove.
func (e *Env) uninstallWrites(rec *Record, undos []undo, lastOut bool) bool {
	return len(undos) > 0 || (lastOut && (rec.Shim != nil || exists(lockPath(e.DataHome)) || len(leftovers(e.DataHome)) > 0))
}

// ownShim reports whether b, the shim file's bytes, is acc's to remove: as
// the record says acc wrote it, or a shim exactly as acc install writes one
// for another acc-hook path (a reinstall cut short between writing the
// shim and recording it).
func ownShim(b []byte, recorded *RecordedFile) bool {
	return sum(b) == recorded.SHA256 || isAccShim(b)
}

// emptiedBy reports whether dir is an existing directory that holds nothing
// but paths in removed and the temporary files beside them (which go too).
func emptiedBy(dir string, removed map[string]bool) bool {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !removed[p] && !removed[strings.TrimSuffix(p, tmpSuffix)] {
			return false
		}
	}
	return true
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// removeEmptyDirs removes the directories acc created, deepest first, each
// only when empty and a real directory (never through a symlink).
func removeEmptyDirs(dirs []string) {
	sorted := slices.Clone(dirs)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, d := range sorted {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			_ = os.Remove(d) // fails, harmlessly, when not empty
		}
	}
}

// resolveLink is the file a symlink at path points to (path itself when
// it is none, or leads nowhere): edits go through the link, which stays.
func resolveLink(path string) string {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
	}
	return path
}
