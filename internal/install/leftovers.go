package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// What a run cut short (kill -9, a crash) can leave in acc's directory in
// the data home, besides the directories the lock file lists (installLock):
// the temporary files of the shim and the record, and — killed between
// writing the shim and recording it — a shim no record lists. They are
// acc's own by name and, for the shim, by content: the next install
// replaces them, the next uninstall removes them
// (docs/adapters.md#if-a-run-is-cut-short).

// shimPathIn is the hook shim's path in dataHome (Env.shimPath).
func shimPathIn(dataHome string) string {
	return filepath.Join(dataHome, "acc", "bin", "acc-hook-shim")
}

// isAccShim reports whether b is a hook shim exactly as acc install writes
// one (shimScript), for whichever acc-hook path: a shim a person changed is
// not.
func isAccShim(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		q, ok := strings.CutPrefix(line, "hook=")
		if !ok {
			continue
		}
		if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			return false
		}
		hook := strings.ReplaceAll(q[1:len(q)-1], `'\''`, `'`)
		return bytes.Equal(b, shimScript(hook))
	}
	return false
}

// leftovers lists, read-only, what a run cut short left in dataHome that
// no record lists (call it only when the record lists no shim): acc's own
// unrecorded shim and the temporary files of the shim and the record, as
// changes an uninstall makes ("remove").
func leftovers(dataHome string) []Change {
	var out []Change
	shim := shimPathIn(dataHome)
	if b, _, _ := readFile(shim); b != nil && isAccShim(b) {
		out = append(out, Change{Path: shim, Kind: "file", Op: "remove", Detail: "acc's hook shim, left unrecorded by a run that was cut short"})
	}
	for _, p := range []string{shim + tmpSuffix, recordPath(dataHome) + tmpSuffix} {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, Change{Path: p, Kind: "file", Op: "remove", Detail: "a temporary file left by a run that was cut short"})
		}
	}
	return out
}

// removeLeftoverShim removes what leftovers lists of the shim: acc's own
// shim and its temporary file. Call it holding the lock, with no
// installation recorded.
func removeLeftoverShim(dataHome string) {
	shim := shimPathIn(dataHome)
	removeStaleTemp(shim)
	if b, _, _ := readFile(shim); b != nil && isAccShim(b) {
		_ = os.Remove(shim)
	}
}

// listedDirs reads, without the lock, the directories the lock file lists
// (for a plan: the run reads them again holding the lock).
func listedDirs(dataHome string) []string {
	path := lockPath(dataHome)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	return readListed(f, dataHome)
}
