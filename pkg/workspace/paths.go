package workspace

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// Environment variables read by ResolveDataHome (docs/protocol.md#environment-variables).
const (
	EnvDataHome    = "ACC_DATA_HOME"
	envXDGDataHome = "XDG_DATA_HOME"
	envHome        = "HOME"
)

// ResolveDataHome returns the base directory under which acc keeps its state
// (docs/protocol.md#runtime-location-and-containment,
// docs/decisions.md#15-storage-layout). It is the directory that
// contains "acc/", not "acc/" itself: callers use AccDir and StorePath.
//
// Inputs: goos is a runtime.GOOS value ("linux", "darwin", ...); getenv reads
// the environment (an empty value counts as unset). It reads no filesystem
// and creates nothing.
//
// Rules, in order:
//   - ACC_DATA_HOME when non-empty; it must be an absolute path.
//   - darwin: $HOME/Library/Application Support. XDG variables are ignored
//     on purpose, so a Linux-style shell setup cannot move a user's rooms.
//   - every other goos (Linux and other Unix systems): $XDG_DATA_HOME when
//     non-empty, which must then be absolute, else $HOME/.local/share.
//
// The platform directory of the last two rules is github.com/adrg/xdg's
// whenever getenv gives the values the library read from this process's
// environment (see platformBase). acc's checks stay on top of it, because
// the library differs from acc on exactly the inputs acc refuses or reads
// otherwise: it silently replaces a relative XDG_DATA_HOME with the default
// (acc refuses it), falls back to "/" when HOME is unset (acc refuses), and
// honours XDG_DATA_HOME on darwin (acc ignores it). getenv stays an input,
// rather than the library's snapshot of the process environment, so tests
// can ask about any environment without changing the process's.
//
// The result is filepath.Clean'ed.
//
// Errors (all exit 2): path_not_absolute when ACC_DATA_HOME, XDG_DATA_HOME or
// HOME is set to a relative path; home_missing when HOME is needed but unset.
func ResolveDataHome(goos string, getenv func(string) string) (string, error) {
	if v := getenv(EnvDataHome); v != "" {
		if !filepath.IsAbs(v) {
			return "", protocol.Errorf(protocol.ReasonPathNotAbsolute,
				"ACC_DATA_HOME must be an absolute path, got %q; set it to an absolute directory or unset it", v).
				With("variable", EnvDataHome)
		}
		return filepath.Clean(v), nil
	}
	home := getenv(envHome)
	if v := getenv(envXDGDataHome); goos != "darwin" && v != "" {
		if !filepath.IsAbs(v) {
			return "", protocol.Errorf(protocol.ReasonPathNotAbsolute,
				"XDG_DATA_HOME must be an absolute path, got %q; set it to an absolute directory, unset it, or set ACC_DATA_HOME", v).
				With("variable", envXDGDataHome)
		}
		dir, _ := platformBase(goos, getenv, home, dataKind)
		return dir, nil
	}
	if home == "" {
		return "", protocol.Errorf(protocol.ReasonHomeMissing,
			"HOME is not set, so acc cannot place its data directory; set HOME or ACC_DATA_HOME to an absolute path")
	}
	if !filepath.IsAbs(home) {
		return "", protocol.Errorf(protocol.ReasonPathNotAbsolute,
			"HOME must be an absolute path, got %q; fix HOME or set ACC_DATA_HOME to an absolute directory", home).
			With("variable", envHome)
	}
	dir, _ := platformBase(goos, getenv, home, dataKind)
	return dir, nil
}

// AccDir returns <dataHome>/acc, the directory holding everything acc writes
// (docs/protocol.md#runtime-location-and-containment). It does not create it.
func AccDir(dataHome string) string { return filepath.Join(dataHome, "acc") }

// StorePath returns the SQLite database of one workspace:
// <dataHome>/acc/workspaces/<workspaceID>/acc.db
// (docs/decisions.md#15-storage-layout). The
// workspace id must be a portable id (it cannot then name a path outside the
// workspaces directory). It does not create anything.
func StorePath(dataHome, workspaceID string) string {
	return filepath.Join(AccDir(dataHome), "workspaces", workspaceID, "acc.db")
}

// CheckContainment refuses a data home whose acc directory (AccDir(dataHome))
// equals or lies inside any of the workspace roots, so acc never writes its
// store into a repository (docs/protocol.md#runtime-location-and-containment).
//
// Inputs are absolute paths; they need not exist. Both sides are compared as
// canonical paths: the deepest existing ancestor is resolved through its
// symlinks and the missing rest is appended, then the comparison is
// segment-wise (/a/bc is not inside /a/b). As a second check, when a root
// exists, the existing ancestors of the acc directory are compared with it by
// device and inode, which also catches bind mounts and case-insensitive
// spellings.
//
// Errors: runtime_inside_workspace (exit 2) naming both paths.
func CheckContainment(dataHome string, roots []string) error {
	acc := canonicalPath(AccDir(dataHome))
	for _, root := range roots {
		r := canonicalPath(root)
		if PathWithin(acc, r) || sameFileAncestor(acc, r) {
			return protocol.Errorf(protocol.ReasonRuntimeInsideWorkspace,
				"runtime state must not live inside the workspace: acc's data home %s lies inside workspace root %s; run acc inside a repository or project directory, or set ACC_DATA_HOME to an absolute directory outside it",
				acc, r).With("dataDir", acc).With("root", r)
		}
	}
	return nil
}

// PathWithin reports whether child equals parent or lies below it, comparing
// whole path segments. Both must be clean absolute paths.
func PathWithin(child, parent string) bool {
	if child == parent || parent == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(child, parent+string(filepath.Separator))
}

// sameFileAncestor reports whether root (an existing directory) is the same
// file as p's deepest existing ancestor or any directory above it.
func sameFileAncestor(p, root string) bool {
	rootInfo, err := os.Stat(root)
	if err != nil {
		return false
	}
	for d := p; ; {
		if info, err := os.Stat(d); err == nil && os.SameFile(info, rootInfo) {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// canonicalPath resolves p (absolute; relative input is made absolute against
// the working directory) as PhysicalPath does: through every symbolic link
// of its existing part, one segment at a time, with ".." taken from where a
// link led, and the part that does not exist yet appended.
func canonicalPath(p string) string {
	if !filepath.IsAbs(p) {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	return PhysicalPath(p)
}

// PathProblem is a path on the way to acc's directory that exists but
// cannot be used as a directory.
type PathProblem struct {
	// Path is the path in the way.
	Path string
	// Is says what it is: "a broken symlink to /x", "a file, not a
	// directory".
	Is string
	// Fix says what makes it usable, without the common alternative of
	// setting ACC_DATA_HOME elsewhere.
	Fix string
}

// String is "<Path> is <Is>".
func (p *PathProblem) String() string { return p.Path + " is " + p.Is }

// DataHomeProblem reports what keeps acc from making or using its
// directory in dataHome (AccDir; see DirProblem). It reads only.
func DataHomeProblem(dataHome string) *PathProblem { return DirProblem(AccDir(dataHome)) }

// DirProblem reports what keeps dir (absolute) from being made or used as
// a directory: walking up from it, the first path that exists is checked,
// and must be a directory or a symlink to one. A broken symlink, a symlink
// loop, a file or anything else that is no directory is the problem; nil
// means none (a missing directory is no problem: it is created when first
// needed). It reads only.
func DirProblem(dir string) *PathProblem {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		info, err := os.Lstat(p)
		if err != nil {
			// Missing, or below a file (ENOTDIR): look further up.
			if filepath.Dir(p) == p {
				return nil
			}
			continue
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			st, err := os.Stat(p)
			switch {
			case err != nil && os.IsNotExist(err):
				return &PathProblem{Path: p, Is: "a broken symlink to " + target,
					Fix: "create the directory it points to, or remove the link"}
			case err != nil:
				return &PathProblem{Path: p, Is: "a symlink that cannot be followed (" + errText(err) + ")",
					Fix: "fix or remove the link"}
			case !st.IsDir():
				return &PathProblem{Path: p, Is: "a symlink to a file, not a directory",
					Fix: "point it at a directory, or remove it"}
			}
			return nil
		}
		if !info.IsDir() {
			what := "a file, not a directory"
			if !info.Mode().IsRegular() {
				what = "not a directory"
			}
			return &PathProblem{Path: p, Is: what, Fix: "move it away"}
		}
		return nil
	}
}

// DataHomeError is the refusal of a command that needs acc's directory in
// dataHome when DataHomeProblem finds one: data_home_unusable (exit 2),
// naming the path, what it is and the fix; nil when there is none.
func DataHomeError(dataHome string) error {
	pp := DataHomeProblem(dataHome)
	if pp == nil {
		return nil
	}
	return protocol.Errorf(protocol.ReasonDataHomeUnusable,
		"acc's data home %s cannot be used: %s; %s, or set ACC_DATA_HOME to an absolute directory elsewhere",
		dataHome, pp, pp.Fix).With("path", pp.Path).With("dataHome", dataHome)
}

// maxSymlinks bounds how many symbolic links PhysicalPath follows, as the
// kernel bounds a lookup (ELOOP).
const maxSymlinks = 255

// PhysicalPath returns the file the absolute path p names, as the kernel
// would find it: one segment at a time, following every symbolic link —
// also a dangling one, whose target is where a write through it lands — and
// taking ".." from the directory a link led to, never lexically. The part
// below the deepest existing ancestor is appended as written (cleaned), so a
// file that does not exist yet has a name. A link loop, or a segment that
// cannot be inspected, counts as not existing.
func PhysicalPath(p string) string {
	sep := string(filepath.Separator)
	todo := strings.Split(p, sep)
	resolved := sep
	var missing []string
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(missing) > 0 {
				missing = missing[:len(missing)-1]
			} else {
				resolved = filepath.Dir(resolved)
			}
			continue
		}
		if len(missing) > 0 {
			missing = append(missing, c)
			continue
		}
		next := filepath.Join(resolved, c)
		info, err := os.Lstat(next)
		if err != nil {
			missing = append(missing, c)
			continue
		}
		if info.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil || links > maxSymlinks || target == "" {
			missing = append(missing, c)
			continue
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		todo = append(strings.Split(target, sep), todo...)
	}
	return filepath.Join(append([]string{resolved}, missing...)...)
}
