package core

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// CanonicalResource is the one canonical name function of
// docs/decisions.md#8-one-canonical-path:
// claims, intent hints, the write guard and status all call it. raw is a
// resource as a caller typed it ("file:./src//a.go", "file:src/**",
// "url:https://…"); cwd is the absolute directory it was typed in (the CLI's
// working directory or --cwd, a hook payload's cwd, ACC_MCP_WORKSPACE).
//
// A file: resource becomes the path relative to the workspace's checkout
// root, so one file has one name in every worktree and from every
// subdirectory: relative input is resolved against cwd, "." ".." and "//" are
// cleaned, symlinks are resolved through the deepest existing ancestor, and a
// trailing "/**" (the only glob understood) is kept. A file that does not
// exist yet is fine. Other schemes are opaque and kept verbatim
// (docs/protocol.md#resources).
//
// Errors (nothing is touched): exit 2 resource_spelling for "file:src/",
// "file:src/*", "file:src/*.go" and an existing directory without "/**",
// each naming the spelling to use; exit 2 path_outside_workspace for a path
// outside the workspace; exit 4 invalid_input for text that is no resource.
func (w *Workspace) CanonicalResource(raw, cwd string) (string, error) {
	if err := protocol.CheckResource("resource", raw); err != nil {
		return "", err
	}
	p, ok := strings.CutPrefix(raw, "file:")
	if !ok {
		return raw, nil
	}
	glob := p == "**" || strings.HasSuffix(p, "/**")
	base := strings.TrimSuffix(strings.TrimSuffix(p, "**"), "/")
	if glob && base == "" && p != "**" {
		base = "/" // "file:/**"
	}
	if strings.Contains(base, "*") {
		return "", protocol.Errorf(protocol.ReasonResourceSpelling,
			"%s matches nothing: only a trailing /** is understood, so a directory is claimed as %s", raw, globHint(p)).
			With("resource", raw)
	}
	if !glob && strings.HasSuffix(p, "/") && p != "/" {
		return "", protocol.Errorf(protocol.ReasonResourceSpelling,
			"%s names a directory; claim %s** to cover what is in it", raw, raw).With("resource", raw)
	}
	return w.canonicalFile(raw, base, glob, cwd, nil)
}

// CanonicalPath maps a filesystem path (a write target the guard sees) to
// its file: resource, with the same rules as CanonicalResource; a directory
// maps to its "/**" glob.
func (w *Workspace) CanonicalPath(path, cwd string) (string, error) {
	return w.canonicalPathIn(nil, path, cwd)
}

// canonicalPathIn is CanonicalPath against name bases already computed
// (nil: compute them), so that a caller naming many paths at once reads the
// worktree list and resolves the roots once, not once per path.
func (w *Workspace) canonicalPathIn(bases []nameBase, path, cwd string) (string, error) {
	name, err := w.canonicalFile("file:"+path, path, false, cwd, bases)
	if protocol.IsReason(err, protocol.ReasonResourceSpelling) {
		return w.canonicalFile("file:"+path, path, true, cwd, bases)
	}
	return name, err
}

// globHint is the spelling that claims the directory holding the first
// "*" of p: file:DIR/**, or file:** when the star is in the first segment of
// a relative path.
func globHint(p string) string {
	prefix := p
	if i := strings.Index(p, "*"); i >= 0 {
		prefix = p[:i]
	}
	i := strings.LastIndex(prefix, "/")
	if i < 0 {
		return "file:**"
	}
	dir := strings.TrimRight(prefix[:i], "/")
	if dir == "" && strings.HasPrefix(p, "/") {
		return "file:/**"
	}
	if dir == "" {
		return "file:**"
	}
	return "file:" + dir + "/**"
}

func (w *Workspace) canonicalFile(raw, base string, glob bool, cwd string, bases []nameBase) (string, error) {
	abs := base
	if !filepath.IsAbs(abs) {
		if !filepath.IsAbs(cwd) {
			return "", protocol.Errorf(protocol.ReasonWorkspaceUnresolvable, "cannot resolve %s: the working directory %q is not absolute", raw, cwd)
		}
		// Not filepath.Join: it would clean "link/.." lexically, and the
		// kernel climbs from where the link leads.
		abs = cwd + string(filepath.Separator) + base
	}
	resolved := physicalPath(abs)
	// The deepest base containing the path names it, so a worktree nested
	// inside another still maps to its own root.
	var best nameBase
	rel, found := "", false
	if bases == nil {
		bases = w.nameBases()
	}
	for _, b := range bases {
		if r, ok := within(resolved, b.dir); ok && (!found || len(b.dir) > len(best.dir)) {
			best, rel, found = b, r, true
		}
	}
	if found {
		name := filepath.ToSlash(filepath.Join(best.prefix, rel))
		if glob {
			if name == "." {
				return "file:**", nil
			}
			return "file:" + name + "/**", nil
		}
		if info, err := os.Stat(resolved); err == nil && info.IsDir() {
			if name == "." {
				return "", protocol.Errorf(protocol.ReasonResourceSpelling, "%s is the workspace root; claim file:** to cover all of it", raw).With("resource", raw)
			}
			return "", protocol.Errorf(protocol.ReasonResourceSpelling,
				"%s is a directory; claim file:%s/** to cover what is in it", raw, name).With("resource", raw)
		}
		return "file:" + name, nil
	}
	return "", protocol.Errorf(protocol.ReasonPathOutsideWorkspace,
		"%s lies outside the workspace (%s); resources name files inside it", raw, strings.Join(w.Roots, ", ")).With("resource", raw)
}

// nameBase is a directory whose contents are named prefix/<path relative to
// dir>.
type nameBase struct{ dir, prefix string }

// nameBases are the directories a file name is relative to, each a real path
// with the prefix its names carry. Names are relative to one base directory
// for the whole workspace — the config's directory for a config workspace,
// else the checkout root — so two different files never share a name and the
// name never depends on where the caller started: every root is a base whose
// prefix is its place under that directory. In Git, every other worktree of
// the repository mirrors the caller's, so a path into a sibling worktree
// names the same file there (docs/decisions.md#8-one-canonical-path). A path outside every base is
// outside the workspace.
func (w *Workspace) nameBases() []nameBase {
	top := w.CheckoutRoot()
	if w.Source == protocol.SourceConfig && w.ConfigPath != "" {
		top = filepath.Dir(w.ConfigPath)
	}
	top = physicalPath(top)
	roots := w.Roots
	if len(roots) == 0 {
		roots = []string{w.CheckoutRoot()}
	}
	seen := map[nameBase]bool{}
	var out []nameBase
	add := func(dir, prefix string) {
		b := nameBase{dir: physicalPath(dir), prefix: filepath.Clean(prefix)}
		if b.prefix == "." {
			b.prefix = ""
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	var wt string
	var others []string
	if w.Git != nil {
		wt = physicalPath(w.Git.WorktreeRoot)
		for _, o := range gitWorktreeRoots(w.Git) {
			if o = physicalPath(o); o != wt {
				others = append(others, o)
			}
		}
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		r = physicalPath(r)
		prefix, err := filepath.Rel(top, r)
		if err != nil {
			continue
		}
		add(r, prefix)
		if wt == "" {
			continue
		}
		if q, ok := within(r, wt); ok {
			// The root lies in the caller's worktree: the same place in
			// every other worktree names the same files.
			for _, o := range others {
				add(filepath.Join(o, q), prefix)
			}
		} else if q, ok := within(wt, r); ok {
			// The caller's worktree lies in the root: every other worktree
			// stands where the caller's does.
			for _, o := range others {
				add(o, filepath.Join(prefix, q))
			}
		}
	}
	return out
}

// within returns p relative to root when p is root or inside it
// (segment-wise), else ok=false.
func within(p, root string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// maxSymlinks bounds how many symbolic links physicalPath follows, as the
// kernel bounds a lookup (ELOOP).
const maxSymlinks = 255

// physicalPath returns the file the absolute path p names, as the kernel
// would find it: one segment at a time, following every symbolic link —
// also a dangling one, whose target is where a write through it lands — and
// taking ".." from the directory a link led to, never lexically. The part
// below the deepest existing ancestor is appended as written (cleaned), so a
// file that does not exist yet has a name. A link loop, or a segment that
// cannot be inspected, counts as not existing.
func physicalPath(p string) string {
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
		if info.Mode()&fs.ModeSymlink == 0 {
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
