package core

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
)

// CanonicalResource is the one canonical name function of SPEC decision 8:
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
// (reference/core.md §7.1).
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
			"%s matches nothing: only a trailing /** is understood, so a directory is claimed as file:%s/**", raw, strings.TrimRight(beforeStar(p), "/")).
			With("resource", raw)
	}
	if !glob && strings.HasSuffix(p, "/") && p != "/" {
		return "", protocol.Errorf(protocol.ReasonResourceSpelling,
			"%s names a directory; claim %s** to cover what is in it", raw, raw).With("resource", raw)
	}
	return w.canonicalFile(raw, base, glob, cwd)
}

// CanonicalPath maps a filesystem path (a write target the guard sees) to
// its file: resource, with the same rules as CanonicalResource; a directory
// maps to its "/**" glob.
func (w *Workspace) CanonicalPath(path, cwd string) (string, error) {
	name, err := w.canonicalFile("file:"+path, path, false, cwd)
	if protocol.IsReason(err, protocol.ReasonResourceSpelling) {
		return w.canonicalFile("file:"+path, path, true, cwd)
	}
	return name, err
}

func beforeStar(p string) string {
	if i := strings.Index(p, "*"); i >= 0 {
		p = p[:i]
	}
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

func (w *Workspace) canonicalFile(raw, base string, glob bool, cwd string) (string, error) {
	abs := base
	if !filepath.IsAbs(abs) {
		if !filepath.IsAbs(cwd) {
			return "", protocol.Errorf(protocol.ReasonWorkspaceUnresolvable, "cannot resolve %s: the working directory %q is not absolute", raw, cwd)
		}
		abs = filepath.Join(cwd, base)
	}
	resolved := resolveExisting(filepath.Clean(abs))
	// The deepest anchor containing the path names it, so a worktree nested
	// inside another still maps to its own root.
	best, rel := "", ""
	for _, anchor := range w.anchors() {
		if r, ok := within(resolved, anchor); ok && len(anchor) > len(best) {
			best, rel = anchor, r
		}
	}
	if best != "" {
		name := filepath.ToSlash(rel)
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
		"%s lies outside the workspace (%s); resources name files inside it", raw, w.CheckoutRoot()).With("resource", raw)
}

// anchors are the directories a file name is relative to: the checkout
// root (a Git worktree's root, so names agree across worktrees), every other
// worktree of the repository (a path into a sibling worktree names the same
// file there), then the workspace's other roots; each as a real path.
func (w *Workspace) anchors() []string {
	seen := map[string]bool{}
	var out []string
	cands := append([]string{w.CheckoutRoot()}, gitWorktreeRoots(w.Git)...)
	for _, a := range append(cands, w.Roots...) {
		if a == "" {
			continue
		}
		r := resolveExisting(filepath.Clean(a))
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
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

// resolveExisting resolves symlinks through the deepest existing ancestor of
// p and appends the part that does not exist yet.
func resolveExisting(p string) string {
	var tail []string
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, tail...)...)
		}
		if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			return p
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		tail = append([]string{filepath.Base(cur)}, tail...)
		cur = parent
	}
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}
