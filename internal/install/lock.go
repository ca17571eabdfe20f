package install

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"golang.org/x/sys/unix"
)

// lockWait bounds how long install and uninstall wait for another one
// working on the same data home.
var lockWait = 5 * time.Second

// lockPoll is how often a waiting run tries the lock again.
const lockPoll = 20 * time.Millisecond

// lockPath is <data home>/acc/install.lock.
func lockPath(dataHome string) string { return filepath.Join(dataHome, "acc", "install.lock") }

// installLock is the data home's install lock, held: an exclusive flock(2)
// on the file at lockPath.
//
// The lock file also lists, one absolute path a line, the directories
// install runs made for acc's files in the data home (acc's directory and
// the missing parents the lock needs, acc/bin), each written as soon as it
// is made — acc/bin before it is made. Until a run records them in
// installs.json, the lock file is their only record: a run killed before
// that (kill -9 during a first install) leaves them listed there, and the
// next run holding the lock adopts them, so the next install records them
// and the next uninstall removes them
// (docs/adapters.md#if-a-run-is-cut-short).
type installLock struct {
	dataHome string
	f        *os.File
	// created are the directories this run made to hold the lock file,
	// outermost first; createdFile: it made the lock file too.
	created     []string
	createdFile bool
	// listed are the directories the lock file lists (see above), as read
	// once the lock was held, and those this run added.
	listed []string
}

// lock takes <data home>/acc/install.lock, so that two runs never
// interleave their reads and writes of the record and the clients' files.
// It creates the file and its directories when they are missing, and
// remembers which ones it created.
//
// The last uninstall removes the lock file while holding it (release), so a
// run waiting on the file may get it after it left the path. Having the
// lock, a run therefore checks that the file it holds is still the one at
// lockPath (same device and inode) and, when it is not, starts again on the
// file now there: only one run at a time holds the file at the path.
//
// A path that is in the way for good — a broken symlink or a file on the
// way to acc's directory, a lock that is a symlink — is refused at once,
// never waited on: only the race above, and a directory or lock file that
// the last uninstall removed between two of these steps (ENOENT), make it
// try again, lockPoll apart.
//
// Errors: exit 3 install_busy when another run keeps the lock past
// lockWait; exit 5 install_conflict when the path cannot be used (a
// symlink, a file where a directory goes, no permission).
func lock(ctx context.Context, dataHome string) (*installLock, error) {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	path := lockPath(dataHome)
	l := &installLock{dataHome: dataHome}
	for {
		made, err := makeDirs(filepath.Dir(path))
		l.created = union(l.created, made)
		if err == nil {
			var f *os.File
			var fresh bool
			f, fresh, err = openLock(path)
			if err == nil {
				l.createdFile = l.createdFile || fresh
				if len(made) > 0 {
					// At once: from here on, a run killed leaves them listed.
					appendLines(f, made)
				}
				if err := flockWait(ctx, f); err != nil {
					f.Close()
					return nil, err
				}
				if heldAtPath(f, path) {
					l.f = f
					l.listed = readListed(f, dataHome)
					l.note(l.created...)
					return l, nil
				}
				f.Close() // released and removed by the last uninstall meanwhile
				if ctx.Err() != nil {
					return nil, busy(dataHome)
				}
				continue
			}
		}
		if pp := workspace.DirProblem(filepath.Dir(path)); pp != nil {
			return nil, protocol.Errorf(protocol.ReasonInstallConflict,
				"acc's data home %s cannot be used: %s; %s, or set ACC_DATA_HOME to an absolute directory elsewhere, then run the command again",
				dataHome, pp, pp.Fix).With("path", pp.Path)
		}
		if perr := lockFileProblem(path, "the command"); perr != nil {
			return nil, perr
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, inTheWay(path, err)
		}
		// Removed by the last uninstall between two of these steps: start
		// again once that run is done.
		select {
		case <-ctx.Done():
			return nil, busy(dataHome)
		case <-time.After(lockPoll):
		}
	}
}

func busy(dataHome string) error {
	return protocol.Errorf(protocol.ReasonInstallBusy, "another acc install or uninstall is working on %s; let it finish, then run the command again", dataHome)
}

// openLock opens the lock file to read and append, creating it (0600)
// when it does not exist; fresh says it did. A symlink at the path is
// refused (ELOOP). A lock file this user may only read is opened to read:
// it locks all the same, and lists nothing new.
func openLock(path string) (f *os.File, fresh bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		chownLike(path, filepath.Dir(path))
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	}
	return f, false, err
}

// maxListed bounds how much of the lock file is read: a real one lists a
// handful of directories.
const maxListed = 64 << 10

// readListed reads the directories the lock file f lists (see
// installLock): complete lines holding a clean absolute path that is acc's
// directory, one of its parents, or lies inside it; anything else (a line
// a killed run left half written) is skipped.
func readListed(f *os.File, dataHome string) []string {
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, maxListed))
	acc := filepath.Dir(lockPath(dataHome))
	var out []string
	for {
		line, rest, ok := strings.Cut(string(b), "\n")
		if !ok {
			break
		}
		b = []byte(rest)
		if filepath.IsAbs(line) && filepath.Clean(line) == line && (pathWithin(acc, line) || pathWithin(line, acc)) {
			out = union(out, []string{line})
		}
	}
	return out
}

// appendLines appends one line per path to the lock file f (opened to
// append); a lock file opened only to read takes nothing.
func appendLines(f *os.File, paths []string) {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p + "\n")
	}
	_, _ = f.Write([]byte(b.String()))
}

// note lists dirs in the held lock file, those it does not list yet.
func (l *installLock) note(dirs ...string) {
	var add []string
	for _, d := range dirs {
		if !slices.Contains(l.listed, d) {
			add = append(add, d)
		}
	}
	if len(add) > 0 {
		appendLines(l.f, add)
		l.listed = append(l.listed, add...)
	}
}

// flockWait takes an exclusive flock on f, trying every lockPoll until ctx
// ends (install_busy).
func flockWait(ctx context.Context, f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return err
		}
		select {
		case <-ctx.Done():
			return busy(filepath.Dir(filepath.Dir(f.Name())))
		case <-time.After(lockPoll):
		}
	}
}

// heldAtPath reports whether f is the file now at path.
func heldAtPath(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// release ends the locked section; rec is the record as the run left it
// (nil when it has none). While an installation stays recorded the lock file
// stays for the next run. Once none does (no installs.json), the run takes
// away what install created in the data home: the lock file, unlinked while
// still held (a run waiting on it then starts again, see lock), and the
// directories of rec.DataDirectories, of this run's lock and acc/bin that
// are empty.
func (l *installLock) release(rec *Record) {
	if l == nil || l.f == nil {
		return
	}
	if _, err := os.Lstat(recordPath(l.dataHome)); !errors.Is(err, fs.ErrNotExist) {
		l.f.Close()
		return
	}
	// acc/bin is install's own: no other part of acc writes there.
	dirs := union(union(l.created, l.listed), []string{filepath.Join(filepath.Dir(lockPath(l.dataHome)), "bin")})
	if rec != nil {
		dirs = union(rec.DataDirectories, dirs)
	}
	l.tidy(dirs)
}

// tidy removes the lock file and dirs (those that are empty), l being held
// and no installation recorded.
//
// Another run may start while this one removes: it then makes again, and
// records as its own, only the directories that were gone when it looked,
// so one that tidy could not remove because that run had already put
// something in it would be nobody's. When a directory of dirs is left and
// holds nothing but the lock, record and shim of a run at work (or nothing),
// tidy therefore takes the lock again: if that run left an installation,
// the directories go into its record, to be removed with it; if not, tidy
// removes them now. Anything else in them (acc's evidence records, a
// workspace store, files of yours) keeps them, as it should.
func (l *installLock) tidy(dirs []string) {
	acc := filepath.Dir(lockPath(l.dataHome))
	deadline := time.Now().Add(lockWait)
	for round := 0; ; round++ {
		dirs = withChainBelow(dirs, acc)
		removeStaleTemp(recordPath(l.dataHome))
		// With no installation recorded, a shim is a leftover of a run cut
		// short (or of an uninstall that stopped): acc's own goes.
		removeLeftoverShim(l.dataHome)
		// Directories off the lock's path go while the lock is held, so
		// that no run that holds it next can lose one it is about to use.
		var chain, off []string
		for _, d := range dirs {
			if pathWithin(acc, d) {
				chain = append(chain, d)
			} else {
				off = append(off, d)
			}
		}
		removeEmptyDirs(off)
		_ = os.Remove(lockPath(l.dataHome))
		l.f.Close()
		removeEmptyDirs(chain)

		left := existing(dirs)
		if len(left) == 0 || round >= 20 || !slices.ContainsFunc(left, func(d string) bool { return onlyInstall(d, acc) }) {
			return
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		next, err := lock(ctx, l.dataHome)
		cancel()
		if err != nil {
			return
		}
		if _, err := os.Lstat(recordPath(l.dataHome)); !errors.Is(err, fs.ErrNotExist) {
			if rec, err := loadRecord(l.dataHome); err == nil {
				rec.adopt(existing(withChainBelow(union(left, union(next.created, next.listed)), acc))...)
				_ = rec.save(l.dataHome)
			}
			next.f.Close()
			return
		}
		l, dirs = next, union(left, union(next.created, next.listed))
	}
}

// withChainBelow adds to dirs the directories on the way down from the
// outermost of them that holds acc's directory to acc's directory itself:
// a directory made inside one install created was made after it, for acc.
// Only empty ones are ever removed.
func withChainBelow(dirs []string, acc string) []string {
	top := ""
	for _, d := range dirs {
		if pathWithin(acc, d) && (top == "" || len(d) < len(top)) {
			top = d
		}
	}
	if top == "" {
		return dirs
	}
	var chain []string
	for d := acc; pathWithin(d, top); d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	return union(dirs, chain)
}

// onlyInstall reports whether dir holds nothing but what install and
// uninstall put there: for acc's directory its lock, record, shim directory
// and their temporary files; for a directory above it, only the way down to
// it; for acc/bin, the shim.
func onlyInstall(dir, acc string) bool {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true // gone meanwhile: it holds nothing
	}
	if err != nil {
		return false
	}
	own := map[string]bool{}
	switch {
	case dir == acc:
		for _, n := range []string{"install.lock", "installs.json", "installs.json" + tmpSuffix} {
			own[n] = true
		}
	case dir == filepath.Join(acc, "bin"):
		own["acc-hook-shim"], own["acc-hook-shim"+tmpSuffix] = true, true
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case own[e.Name()]:
		case e.IsDir() && (p == filepath.Join(acc, "bin") || pathWithin(acc, p)) && onlyInstall(p, acc):
		default:
			return false
		}
	}
	return true
}

// makeDirs creates dir and its missing parents (0755, each owned like its
// parent, see chownLike) one level at a time, and returns the ones this
// call created, outermost first: a directory another run made at the same
// moment is not counted.
func makeDirs(dir string) ([]string, error) {
	var made []string
	for _, d := range missingDirs(filepath.Join(dir, "x")) {
		err := os.Mkdir(d, 0o755)
		switch {
		case err == nil:
			chownLike(d, filepath.Dir(d))
			made = append(made, d)
		case errors.Is(err, fs.ErrExist):
			if st, serr := os.Stat(d); serr != nil || !st.IsDir() {
				return made, syscall.ENOTDIR
			}
		default:
			return made, err
		}
	}
	return made, nil
}

// pathWithin reports whether child is parent or lies below it (clean
// absolute paths, compared segment by segment).
func pathWithin(child, parent string) bool {
	return child == parent || strings.HasPrefix(child, parent+string(filepath.Separator))
}

// existing keeps the directories of dirs that exist.
func existing(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// union is a and then what of b a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
