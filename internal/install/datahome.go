package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"golang.org/x/sys/unix"
)

// checkDataPaths refuses (exit 5 install_conflict, nothing written) what
// would stop a run from writing acc's own files in the data home, before
// anything is written. A dry run checks the same, so that it never
// promises what the run refuses (docs/adapters.md#in-accs-data-home):
//
//   - a path on the way to acc/bin (acc's directory, the data home, their
//     parents) that exists but is no usable directory: a broken symlink, a
//     file (workspace.DirProblem);
//   - an install lock that is no regular file (a symlink, a directory): the
//     lock is never followed through a link;
//   - a directory where shared lists a file to create, update or remove
//     (the lock, the shim, the record) that this user cannot write.
//
// checkDataPaths checks the first two, checkWritable the last.
func (e *Env) checkDataPaths(cmd string) error {
	if pp := workspace.DirProblem(filepath.Dir(e.shimPath())); pp != nil {
		return protocol.Errorf(protocol.ReasonInstallConflict,
			"acc's data home %s cannot be used: %s; %s, or set ACC_DATA_HOME to an absolute directory elsewhere, then run acc %s again",
			e.DataHome, pp, pp.Fix, cmd).With("path", pp.Path)
	}
	return lockFileProblem(lockPath(e.DataHome), "acc "+cmd)
}

// checkWritable: see checkDataPaths.
func checkWritable(shared []Change, cmd string) error {
	for _, ch := range shared {
		if ch.Kind != "file" || (ch.Op != "create" && ch.Op != "update" && ch.Op != "remove") {
			continue
		}
		// Only a refusal to write counts: a directory that another run
		// removed meanwhile is for the plan under the lock to see.
		dir := nearestDir(filepath.Dir(ch.Path))
		if err := unix.Access(dir, unix.W_OK); errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return protocol.Errorf(protocol.ReasonInstallConflict,
				"%s is not writable (%v), so acc cannot %s %s; nothing was changed — make it writable, then run acc %s again",
				dir, err, ch.Op, ch.Path, cmd).With("path", dir)
		}
	}
	return nil
}

// lockFileProblem refuses an install lock that exists but is no regular
// file (exit 5 install_conflict); nil when it is one or is missing. run
// names the command to run again ("acc install").
func lockFileProblem(path, run string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR):
		return nil
	case err != nil:
		return inTheWay(path, err)
	case st.Mode()&fs.ModeSymlink != 0:
		return protocol.Errorf(protocol.ReasonInstallConflict,
			"%s is a symlink; acc never follows its install lock through a link — remove the link (acc makes a new lock file), then run %s again", path, run).With("path", path)
	case st.IsDir():
		return protocol.Errorf(protocol.ReasonInstallConflict,
			"%s is a directory where acc keeps its install lock file; move it away, then run %s again", path, run).With("path", path)
	case !st.Mode().IsRegular():
		return protocol.Errorf(protocol.ReasonInstallConflict,
			"%s is not a regular file, and acc keeps its install lock there; move it away, then run %s again", path, run).With("path", path)
	}
	return nil
}

// nearestDir is dir, or its nearest ancestor that exists.
func nearestDir(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}
