package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acc-go/acc/internal/evidence"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/protocol"
	"golang.org/x/sys/unix"
)

// planned is one client's installation computed in memory.
type planned struct {
	report  ClientReport
	install Install
	files   []*fileState
}

// Install detects the clients, plans every edit in memory — reading and
// validating every file it would touch first, so that a file that does not
// parse (exit 4) or is in the way (exit 5) stops the run before anything is
// written — prints (dry run) or applies it, and records what it wrote
// (docs/adapters.md#what-acc-install-writes). Installing twice changes nothing the second
// time. Errors: exit 2 for an unknown adapter, an unknown --delivery or a
// home that is not a directory; exit 4 for an unreadable record or client
// file; exit 5 for a conflict; exit 4 install_failed when a write fails
// (the record then says what is pending, and running install again
// completes it).
func (e *Env) Install(ctx context.Context, o Options) (*Report, error) {
	if err := e.checkOptions(o); err != nil {
		return nil, err
	}
	// Detect once; plan read-only, so that a refusal writes nothing (not
	// even the lock file); then, to write, take the data home's install
	// lock and plan again under it, since another run may have written in
	// between.
	var asked []string
	for _, id := range e.ids() {
		if len(o.Adapters) == 0 || slices.Contains(o.Adapters, id) {
			asked = append(asked, id)
		}
	}
	dets := e.detectAll(ctx, asked)
	rep, rec, plans, shim, shimOld, err := e.planInstall(o, dets, nil)
	if err != nil || o.DryRun || len(plans) == 0 {
		return rep, err
	}
	lk, err := lock(ctx, e.DataHome)
	if err != nil {
		return nil, err
	}
	// However the run ends, the lock goes, and with it what this run
	// created in the data home when no installation is left recorded.
	defer func() { lk.release(rec) }()
	if rep, rec, plans, shim, shimOld, err = e.planInstall(o, dets, lk); err != nil {
		return nil, err
	}
	if err := rec.adoptLock(e.DataHome, lk); err != nil {
		return rep, stopped(recordPath(e.DataHome), err, "install",
			"acc install could not update its record %s (%v); nothing was installed", recordPath(e.DataHome), errText(err))
	}

	// Apply: check every client can be written, then the shim, then per
	// client a pending record, the files, and the record marked installed.
	for _, p := range plans {
		if err := p.writable(); err != nil {
			return rep, err
		}
	}
	if !bytes.Equal(shimOld, shim) {
		// Listed before it is made: a run killed from here on leaves
		// acc/bin listed in the lock file (installLock).
		lk.note(missingDirs(e.shimPath())...)
		made, err := makeDirs(filepath.Dir(e.shimPath()))
		rec.adopt(made...)
		if err == nil {
			err = writeAtomic(e.shimPath(), shim, 0o755)
		}
		if err != nil {
			return rep, stopped(e.shimPath(), err, "install",
				"acc install could not write the hook shim %s (%v); no client's configuration was changed", e.shimPath(), errText(err))
		}
	}
	if shimRec := (&RecordedFile{Path: e.shimPath(), SHA256: sum(shim)}); rec.Shim == nil || *rec.Shim != *shimRec {
		rec.Shim = shimRec
		if err := rec.save(e.DataHome); err != nil {
			return rep, stopped(recordPath(e.DataHome), err, "install",
				"acc install wrote the hook shim %s but could not record it in %s (%v); no client's configuration was changed", e.shimPath(), recordPath(e.DataHome), errText(err))
		}
	}
	var done []string // the clients this run installed
	for _, p := range plans {
		prev := rec.find(p.install.AdapterID)
		if p.unchanged(prev) {
			continue // installing again changes nothing, not even the record
		}
		var before *Install
		if prev != nil {
			cp := *prev
			before = &cp
		}
		name := p.report.DisplayName
		p.install.State = "pending"
		rec.put(p.install)
		if err := rec.save(e.DataHome); err != nil {
			return rep, stopped(recordPath(e.DataHome), err, "install",
				"acc install could not update its record %s before writing %s's files (%v); nothing was written for %s%s", recordPath(e.DataHome), name, errText(err), name, earlier(done, "installed"))
		}
		for i, f := range p.files {
			if err := f.write(); err != nil {
				// Roll back this client's bytes: what it wrote goes, the
				// record says what it said before.
				for j := i - 1; j >= 0; j-- {
					p.files[j].undo()
				}
				removeEmptyDirs(newDirs(p.install.CreatedDirectories, before))
				if before != nil {
					rec.put(*before)
				} else {
					rec.drop(p.install.AdapterID)
				}
				_ = rec.save(e.DataHome)
				return rep, stopped(f.path, err, "install",
					"acc install could not write %s for %s (%v); what it had written for %s was undone%s", f.path, name, errText(err), name, earlier(done, "installed"))
			}
		}
		p.install.State = "installed"
		rec.put(p.install)
		if err := rec.save(e.DataHome); err != nil {
			return rep, stopped(recordPath(e.DataHome), err, "install",
				"acc install wrote %s's files but could not mark it installed in its record %s (%v), which says its install is pending%s", name, recordPath(e.DataHome), errText(err), earlier(done, "installed"))
		}
		done = append(done, name)
	}
	return rep, nil
}

// planInstall reads the record and every file, and plans the edits.
//
// lk is the lock when the run holds it (nil for the read-only plan): the
// directories and lock file it says it created are reported as created.
func (e *Env) planInstall(o Options, dets map[string]Detection, lk *installLock) (rep *Report, rec *Record, plans []*planned, shim, shimOld []byte, err error) {
	rec, err = loadRecord(e.DataHome)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	rep = &Report{DryRun: o.DryRun, Record: recordPath(e.DataHome), Shim: e.shimPath(), Clients: []ClientReport{}, Shared: []Change{}}
	ie := e.installEnv()
	for _, id := range e.ids() {
		det, ok := dets[id]
		if !ok {
			continue
		}
		a := e.Adapters[id]
		if len(o.Adapters) == 0 && !det.Present {
			rep.Clients = append(rep.Clients, ClientReport{Detection: det, Action: "skip", Changes: []Change{}, Notes: []string{},
				Reason: det.DisplayName + " is not installed here (no " + a.Binary() + " on PATH, no " + det.ConfigDir + "); if it is, wire it with --adapter " + id})
			continue
		}
		p, err := e.plan(a, det, ie, rec.find(id), o)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		plans = append(plans, p)
	}
	shim = shimScript(e.HookBinary)
	if len(plans) > 0 {
		// acc's own files in the data home: checked alike for a dry run
		// and for the run, before anything is written.
		if err := e.checkDataPaths("install"); err != nil {
			return nil, nil, nil, nil, nil, err
		}
		if shimOld, _, err = readFile(e.shimPath()); err != nil {
			return nil, nil, nil, nil, nil, inTheWay(e.shimPath(), err)
		}
		rep.Shared = e.installShared(rec, plans, shim, shimOld, lk)
		if err := checkWritable(rep.Shared, "install"); err != nil {
			return nil, nil, nil, nil, nil, err
		}
	}
	for _, p := range plans {
		rep.Clients = append(rep.Clients, p.report)
	}
	slices.SortFunc(rep.Clients, func(a, b ClientReport) int { return compareStrings(a.Adapter, b.Adapter) })
	return rep, rec, plans, shim, shimOld, nil
}

// installShared lists what an install does in the data home, in the order
// it happens: the directories it creates (outermost first), the lock file,
// the shim and the record.
func (e *Env) installShared(rec *Record, plans []*planned, shim, shimOld []byte, lk *installLock) []Change {
	var out []Change
	lockOp := "unchanged"
	var dirs []string
	if lk != nil {
		dirs = lk.created
		if lk.createdFile {
			lockOp = "create"
		}
	} else {
		dirs = missingDirs(lockPath(e.DataHome))
		if _, err := os.Lstat(lockPath(e.DataHome)); err != nil {
			lockOp = "create"
		}
	}
	if !bytes.Equal(shimOld, shim) {
		dirs = union(dirs, missingDirs(e.shimPath()))
	}
	for _, d := range dirs {
		out = append(out, Change{Path: d, Kind: "directory", Op: "create"})
	}
	out = append(out, Change{Path: lockPath(e.DataHome), Kind: "file", Op: lockOp, Detail: "the install lock; the last uninstall removes it"})

	shimOp := "create"
	switch {
	case bytes.Equal(shimOld, shim):
		shimOp = "unchanged"
	case shimOld != nil:
		shimOp = "update"
	}
	out = append(out, Change{Path: e.shimPath(), Kind: "file", Op: shimOp, Detail: "runs " + e.HookBinary})

	recOp := "unchanged"
	if _, err := os.Lstat(recordPath(e.DataHome)); err != nil {
		recOp = "create"
	} else if shimOp != "unchanged" || rec.Shim == nil || rec.Shim.SHA256 != sum(shim) ||
		slices.ContainsFunc(plans, func(p *planned) bool { return !p.unchanged(rec.find(p.install.AdapterID)) }) {
		recOp = "update"
	}
	out = append(out, Change{Path: recordPath(e.DataHome), Kind: "file", Op: recOp, Detail: "acc's record of what it wrote"})
	return out
}

// unchanged reports whether applying p would change no file and only the
// install time of the record.
func (p *planned) unchanged(old *Install) bool {
	for _, f := range p.files {
		if !f.existed || f.new == nil || !bytes.Equal(f.old, f.new) {
			return false
		}
	}
	if old == nil || old.State != "installed" {
		return false
	}
	cur := p.install
	cur.InstalledAt, cur.State = old.InstalledAt, old.State
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(old)
	return bytes.Equal(a, b)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// stopped is the refusal of an install or uninstall that a failed write
// stopped part way (exit 4 install_failed): the message, built from format
// and args, says what failed and what the run had done by then; stopped
// adds that running the command again finishes the work, which holds at
// every point it is used: the record always says what is left to do.
func stopped(path string, err error, cmd, format string, args ...any) error {
	return protocol.Errorf(protocol.ReasonInstallFailed, "%s — fix the cause, then run acc %s again: it finishes the work", fmt.Sprintf(format, args...), cmd).
		With("path", path).Wrap(err)
}

// earlier lists, for a message, the clients a run finished before it
// stopped: "; Claude Code and Codex were installed before that and stay
// so" ("" when there were none).
func earlier(done []string, verb string) string {
	switch len(done) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("; %s was %s before that and stays so", done[0], verb)
	}
	return fmt.Sprintf("; %s and %s were %s before that and stay so", strings.Join(done[:len(done)-1], ", "), done[len(done)-1], verb)
}

// errText is the operating system's words for err, without the path that
// os errors repeat (the message names it already).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// write puts the file's new bytes in place (or removes it), creating its
// directories; an unchanged file is not touched.
func (f *fileState) write() error {
	if f.new == nil {
		if f.existed {
			return os.Remove(f.path)
		}
		return nil
	}
	if f.existed && bytes.Equal(f.old, f.new) {
		return nil
	}
	if err := mkdirAll(filepath.Dir(f.target())); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if f.executable {
		perm = 0o755
	}
	return writeAtomic(f.target(), f.new, perm)
}

// target is where the file's bytes go: through a symlink to its file.
func (f *fileState) target() string {
	if f.real != "" {
		return f.real
	}
	return f.path
}

// undo puts back what write changed (rollback after a later failure).
func (f *fileState) undo() {
	switch {
	case f.existed && !bytes.Equal(f.old, f.new):
		_ = writeAtomic(f.target(), f.old, 0o644)
	case !f.existed && f.new != nil:
		_ = os.Remove(f.target())
	}
}

// writable checks, before anything is written, that every file of p can
// be: its directory (or the nearest one that exists) is writable.
func (p *planned) writable() error {
	for _, f := range p.files {
		if f.existed && f.new != nil && bytes.Equal(f.old, f.new) {
			continue
		}
		dir := filepath.Dir(f.target())
		for {
			if _, err := os.Stat(dir); err == nil {
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		if err := unix.Access(dir, unix.W_OK); err != nil {
			return protocol.Errorf(protocol.ReasonInstallConflict, "%s is not writable (%v), so %s cannot be written; nothing was changed — make it writable, then run acc install again", dir, err, f.path).With("path", dir)
		}
	}
	return nil
}

// newDirs are the directories of created that before did not list.
func newDirs(created []string, before *Install) []string {
	if before == nil {
		return created
	}
	var out []string
	for _, d := range created {
		if !slices.Contains(before.CreatedDirectories, d) {
			out = append(out, d)
		}
	}
	return out
}

// plan computes one client's edits in memory.
func (e *Env) plan(a adapter.Installer, det Detection, ie adapter.InstallEnv, old *Install, o Options) (*planned, error) {
	id := a.ID()
	pl := a.InstallPlan(ie)
	action := "install"
	if old != nil {
		action = "reinstall"
	}
	policy := o.Delivery
	if policy == "" && old != nil {
		policy = old.DeliveryPolicy
	}
	if policy == "" {
		policy = "off"
	}
	p := &planned{
		report: ClientReport{Detection: det, Action: action, Changes: []Change{}, Notes: pl.Notes, DeliveryPolicy: policy, EffectiveDelivery: "off"},
		install: Install{AdapterID: id, ClientVersion: det.Version, AccVersion: e.AccVersion, InstalledAt: e.now(), Home: e.Home,
			ConfigDir: det.ConfigDir, DeliveryPolicy: policy, EffectiveDelivery: "off", Artifacts: []RecordedArtifact{}, CreatedDirectories: []string{}},
	}
	effective, reason := LiveDelivery(a, det.Version, e.DataHome, policy)
	p.install.EffectiveDelivery, p.install.DeliveryReason = effective, reason
	p.report.EffectiveDelivery, p.report.DeliveryReason = effective, reason
	p.install.MidTurnPolicy, p.install.EndOfTurnPolicy = o.MidTurn, o.EndOfTurn
	if old != nil && o.MidTurn == "" {
		p.install.MidTurnPolicy = old.MidTurnPolicy
	}
	if old != nil && o.EndOfTurn == "" {
		p.install.EndOfTurnPolicy = old.EndOfTurnPolicy
	}
	caps, _, _ := evidence.For(a, det.Version, e.DataHome)
	td := turnDelivery(a, det.Version, det.Binary != "", caps, p.install.MidTurnPolicy, p.install.EndOfTurnPolicy)
	p.report.TurnDelivery = &td
	if old != nil && old.Home != "" && old.Home != e.Home {
		return nil, protocol.Errorf(protocol.ReasonInstallConflict,
			"acc is installed for %s under the home %s (this data home keeps one installation per client); unwire it first: acc uninstall --adapter %s --home %s",
			det.DisplayName, old.Home, id, old.Home).With("home", old.Home)
	}
	var oldArts []RecordedArtifact
	if old != nil {
		oldArts = old.Artifacts
		p.install.CreatedDirectories = append(p.install.CreatedDirectories, old.CreatedDirectories...)
	}
	order, byPath := groupByPath(pl.Artifacts, func(x adapter.Artifact) string { return x.Path })
	_, oldByPath := groupByPath(oldArts, func(x RecordedArtifact) string { return x.Path })
	// Files of the old installation the plan no longer writes: undo them.
	for _, path := range sortedKeys(oldByPath) {
		if _, still := byPath[path]; still {
			continue
		}
		src, existed, err := readFile(path)
		if err != nil {
			return nil, inTheWay(path, err)
		}
		out, del, changes, err := unapply(path, src, existed, oldByPath[path], ie.Shim)
		if err != nil {
			return nil, err
		}
		f := &fileState{path: path, real: resolveLink(path), old: src, existed: existed, new: out}
		if del {
			f.new = nil
		}
		p.files = append(p.files, f)
		p.report.Changes = append(p.report.Changes, changes...)
	}
	for _, path := range order {
		arts := byPath[path]
		f, err := readTarget(path)
		if err != nil {
			return nil, err
		}
		src, existed := f.old, f.existed
		for _, d := range missingDirs(path) {
			if !slices.Contains(p.install.CreatedDirectories, d) {
				p.install.CreatedDirectories = append(p.install.CreatedDirectories, d)
			}
		}
		recorded, kept, err := e.planFile(f, arts, oldByPath[path], ie.Shim, id)
		if err != nil {
			return nil, err
		}
		p.install.Artifacts = append(p.install.Artifacts, recorded...)
		p.files = append(p.files, f)
		op := "create"
		switch {
		case existed && bytes.Equal(src, f.new):
			op = "unchanged"
		case existed:
			op = "update"
		}
		p.report.Changes = append(p.report.Changes, Change{Path: path, Kind: string(arts[0].Kind), Op: op, Detail: describe(arts)})
		for _, k := range kept {
			p.report.Changes = append(p.report.Changes, Change{Path: path, Kind: string(arts[0].Kind), Op: "kept", Detail: k})
		}
	}
	return p, nil
}

func describe(arts []adapter.Artifact) string {
	switch arts[0].Kind {
	case adapter.ArtifactJSONEntry:
		var labels []string
		for _, a := range arts {
			labels = append(labels, joinDots(a.Pointer))
		}
		return "acc's entries: " + joinComma(labels)
	case adapter.ArtifactTOMLBlock:
		return "acc's managed block at the end of the file"
	}
	return "acc's file"
}

func joinDots(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "."
		}
		out += x
	}
	return out
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func sortedKeys[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// planFile computes a file's new bytes for the plan's artifacts (all of
// one kind) and the records of what will be written. kept lists what a
// person changed of acc's earlier writes and acc therefore leaves as it is.
func (e *Env) planFile(f *fileState, arts []adapter.Artifact, old []RecordedArtifact, shim, id string) (recs []RecordedArtifact, kept []string, err error) {
	switch arts[0].Kind {
	case adapter.ArtifactFile:
		a := arts[0]
		f.executable = a.Executable
		recorded := len(old) == 1 && old[0].Kind == adapter.ArtifactFile
		ours := recorded && sum(f.old) == old[0].SHA256
		if f.existed && !bytes.Equal(f.old, a.Content) && !ours {
			if recorded {
				return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s was written by acc and changed since; remove it (or put back acc's version), then run acc install again", f.path).With("path", f.path)
			}
			return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s exists and acc did not write it; move it away (or merge it by hand), then run acc install again", f.path).With("path", f.path)
		}
		f.new = slices.Clone(a.Content)
		return []RecordedArtifact{{Kind: a.Kind, Path: f.path, SHA256: sum(a.Content), CreatedFile: !f.existed || (recorded && old[0].CreatedFile)}}, nil, nil
	case adapter.ArtifactTOMLBlock:
		a := arts[0]
		if err := checkTOML(stripBlocks(f.old, false)); err != nil {
			return nil, nil, invalidConfig(f.path, "TOML", err)
		}
		if id == "grok" && tomlHasTable(f.old, "mcp_servers", "acc") {
			return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s already registers an MCP server named acc outside acc's block; remove or rename it, then run acc install again", f.path).With("path", f.path)
		}
		block := blockText(a.Content)
		rec := RecordedArtifact{Kind: a.Kind, Path: f.path, SHA256: sum(block), CreatedFile: !f.existed}
		var prior *RecordedArtifact
		if len(old) == 1 && old[0].Kind == adapter.ArtifactTOMLBlock {
			prior = &old[0]
			rec.CreatedFile = prior.CreatedFile || !f.existed
		}
		regions := findBlocks(f.old)
		switch {
		case len(regions) == 0 && runsShim(f.old, shim):
			// A client that writes its config back from what it parsed
			// (Kimi Code's login and logout) keeps acc's tables and drops
			// the marker lines: a new block would run each hook twice.
			return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s already runs acc-hook outside acc's block (something rewrote the file and dropped acc's marker lines); remove the entries that run %s, then run acc install again", f.path, shim).With("path", f.path)
		case len(regions) == 0:
		case len(regions) == 1 && regions[0].closed && bytes.Equal(regions[0].block, block) && regions[0].end == len(f.old):
			f.new = slices.Clone(f.old) // already there, at the end
			if prior != nil {
				rec.Separator = prior.Separator
			}
			return []RecordedArtifact{rec}, nil, nil
		case len(regions) == 1 && regions[0].closed && prior != nil && sum(regions[0].block) == prior.SHA256:
			// acc's own block, unchanged since: replaced below.
		case prior != nil:
			// A person edited acc's block (or removed its end marker, or
			// copied it): their bytes stay, and acc says so.
			f.new = slices.Clone(f.old)
			return []RecordedArtifact{*prior}, []string{"acc's block was edited by hand; acc leaves it (remove it to let acc write it again)"}, nil
		default:
			return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s holds a block marked as acc's that acc has no record of writing; remove it, then run acc install again", f.path).With("path", f.path)
		}
		out, sep := addBlock(f.old, a.Content)
		if err := checkTOML(out); err != nil {
			return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s defines something acc's block cannot join (%v); acc left it untouched", f.path, err).With("path", f.path)
		}
		f.new, rec.Separator = out, sep
		if prior != nil && sum(regions0(regions)) == prior.SHA256 && regions[0].end == len(f.old) {
			// The block stays last: the newline acc added before it is still
			// acc's. Once a person wrote after it, that newline is theirs.
			rec.Separator = prior.Separator || sep
		}
		return []RecordedArtifact{rec}, nil, nil
	case adapter.ArtifactJSONEntry:
		src := f.old
		blank := len(bytes.TrimSpace(f.old)) == 0
		createdFile := !f.existed
		if blank && arts[0].Seed != nil {
			src = arts[0].Seed
		}
		doc, err := parseJSON(src)
		if err != nil {
			return nil, nil, invalidConfig(f.path, "JSON", err)
		}
		for _, a := range arts {
			if err := doc.checkKeys(a.Pointer, f.path); err != nil {
				return nil, nil, err
			}
		}
		// Entries of the old installation that the plan no longer has go.
		for _, o := range old {
			if !slices.ContainsFunc(arts, func(a adapter.Artifact) bool { return sameEntry(o, a) }) {
				if _, err := doc.removeEntry(o.Pointer, o.Value); err != nil {
					return nil, nil, shapeConflict(f.path, err)
				}
			}
		}
		var out []RecordedArtifact
		for _, a := range arts {
			var prior *RecordedArtifact
			for i := range old {
				if slices.Equal(old[i].Pointer, a.Pointer) {
					prior = &old[i]
				}
			}
			i, err := doc.indexOf(a.Pointer, a.Value)
			if err != nil {
				return nil, nil, shapeConflict(f.path, err)
			}
			if i < 0 {
				if n, _ := doc.accEntries(a.Pointer, a.Value, a.Identity); n > 0 {
					switch {
					case prior != nil || a.Identity == "":
						// acc's entry, edited by a person (even one whose
						// record an uninstall dropped): theirs now; not doubled.
						rec := RecordedArtifact{Kind: a.Kind, Path: f.path, Pointer: a.Pointer, Value: a.Value, Identity: a.Identity}
						if prior != nil {
							rec = *prior
						}
						out = append(out, rec)
						kept = append(kept, joinDots(a.Pointer)+": acc's entry was edited by hand; acc leaves it (remove it to let acc write it again)")
						continue
					default:
						return nil, nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s already holds an entry with %s like acc's that acc has no record of writing; remove it, then run acc install again", f.path, a.Identity).With("path", f.path)
					}
				}
			}
			created, _, err := doc.appendEntry(a.Pointer, a.Value)
			if err != nil {
				return nil, nil, shapeConflict(f.path, err)
			}
			rec := RecordedArtifact{Kind: a.Kind, Path: f.path, Pointer: a.Pointer, Value: a.Value, CreatedContainers: created, CreatedFile: createdFile, Identity: a.Identity}
			if blank {
				rec.Seed = arts[0].Seed
				if f.existed {
					o := string(f.old) // a blank file of the user's comes back as it was
					rec.Original = &o
				}
			}
			if prior != nil && sameEntry(*prior, a) { // still ours from before: keep what we created then
				rec.CreatedContainers = append(prior.CreatedContainers, created...)
				rec.CreatedFile, rec.Seed, rec.Original = prior.CreatedFile, prior.Seed, prior.Original
			}
			out = append(out, rec)
		}
		f.new = doc.bytes()
		if blank {
			// A file acc creates (or fills) is laid out in full (two
			// spaces, final newline).
			var v any
			if err := standardJSON(f.new, &v); err == nil {
				if b, err := marshalIndent(v); err == nil {
					f.new = b
				}
			}
		}
		return out, kept, nil
	}
	return nil, nil, errors.New("unknown artifact kind " + string(arts[0].Kind))
}

func regions0(r []tomlRegion) []byte {
	if len(r) == 0 {
		return nil
	}
	return r[0].block
}

// shapeConflict is a JSON file whose shape acc cannot join (a "hooks" that
// is not an object, say): exit 5, the file untouched.
func shapeConflict(path string, err error) error {
	return protocol.Errorf(protocol.ReasonInstallConflict, "%s: %v, so acc cannot add its entries there; acc left the file untouched", path, err).With("path", path)
}

func sameEntry(o RecordedArtifact, a adapter.Artifact) bool {
	return o.Kind == a.Kind && slices.Equal(o.Pointer, a.Pointer) && equalJSON(o.Value, a.Value)
}
