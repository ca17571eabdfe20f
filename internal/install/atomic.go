package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/acc-go/acc/pkg/storage"
)

// tmpSuffix names the temporary file beside a file being replaced. The
// name is fixed, so a run that was killed between writing it and the
// rename leaves a file the next run recognises and replaces.
const tmpSuffix = ".acc-install-tmp"

// writeAtomic replaces path with data: write path+tmpSuffix, fsync it,
// rename it over path, fsync the directory. A reader sees the old bytes or
// the new, never a mix. An existing file keeps its permission bits;
// perm applies to a new one. The failpoint install-before-rename:<base
// name> (ACC_FAILPOINT) kills the process between the fsync and the rename
// of that file.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	owner := filepath.Dir(path) // a new file takes its directory's owner
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
		owner = path // an existing one keeps its own
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	chownLike(tmp, owner)
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	storage.Failpoint("install-before-rename:" + filepath.Base(path))
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // some file systems refuse a directory fsync; the rename stands
	return nil
}

// removeStaleTemp removes the temporary file a killed run may have left
// beside path (its name is acc's own, so nothing else is touched).
func removeStaleTemp(path string) {
	_ = os.Remove(path + tmpSuffix)
}

// chownLike gives path the owner of like, when acc runs as root (say, acc
// install --home for another user): a file acc writes into someone's home
// stays theirs. Otherwise files are acc's user's anyway.
func chownLike(path, like string) {
	if os.Geteuid() != 0 {
		return
	}
	if st, err := os.Stat(like); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			_ = os.Lchown(path, int(sys.Uid), int(sys.Gid))
		}
	}
}

// mkdirAll creates dir and its missing parents, each owned like its parent
// (chownLike).
func mkdirAll(dir string) error {
	missing := missingDirs(filepath.Join(dir, "x"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range missing {
		chownLike(d, filepath.Dir(d))
	}
	return nil
}
