package workspace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// GitFromFiles reads the Git facts of dir from the repository's own files —
// `.git` (a directory, or a file naming the gitdir), `commondir` and `HEAD`
// — instead of starting a Git process, which is most of what workspace
// discovery costs. It answers only the common layouts it can read with
// certainty: a plain repository, a linked worktree and a submodule, with a
// branch or a detached HEAD. ok=false means "ask Git" (anything unusual: a
// bare repository, core.worktree, a start inside a gitdir, an unreadable
// file); info=nil with ok=true means dir is in no repository at all.
func GitFromFiles(dir string) (info *GitInfo, ok bool) {
	for cur := dir; ; {
		dotgit := filepath.Join(cur, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil:
			return gitAt(dir, cur, dotgit, fi)
		case !os.IsNotExist(err):
			return nil, false
		}
		if filepath.Base(cur) == ".git" || isGitDir(cur) {
			return nil, false // inside a gitdir: Git's own rules decide
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return nil, true
		}
		cur = parent
	}
}

// isGitDir reports whether d looks like a gitdir (HEAD plus objects), so a
// start inside one is left to Git.
func isGitDir(d string) bool {
	_, e1 := os.Stat(filepath.Join(d, "HEAD"))
	_, e2 := os.Stat(filepath.Join(d, "objects"))
	return e1 == nil && e2 == nil
}

func gitAt(start, root, dotgit string, fi os.FileInfo) (*GitInfo, bool) {
	var gitdir string
	switch {
	case fi.IsDir():
		gitdir = dotgit
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return nil, false
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok || p == "" || strings.ContainsAny(p, "\n\r") {
			return nil, false
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		gitdir = p
	default:
		return nil, false
	}
	common := gitdir
	if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if p == "" || strings.ContainsAny(p, "\n\r") {
			return nil, false
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitdir, p)
		}
		common = p
	} else if !os.IsNotExist(err) {
		return nil, false
	} else if !fi.IsDir() && !strings.Contains(filepath.ToSlash(gitdir), "/modules/") {
		return nil, false // a .git file that is neither a worktree nor a submodule
	}
	if unusualConfig(filepath.Join(common, "config")) || unusualConfig(filepath.Join(gitdir, "config.worktree")) {
		return nil, false
	}
	head, err := os.ReadFile(filepath.Join(gitdir, "HEAD"))
	if err != nil {
		return nil, false
	}
	commonReal, err1 := filepath.EvalSymlinks(common)
	rootReal, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	g := &GitInfo{CommonDir: commonReal, WorktreeRoot: rootReal}
	h := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		b, isBranch := strings.CutPrefix(ref, "refs/heads/")
		if !isBranch || b == "" {
			return nil, false
		}
		g.Branch = &b
		sha, known := resolveRef(gitdir, common, ref)
		if !known {
			return nil, false
		}
		if sha != "" {
			g.Head = &sha
		}
		return g, true
	}
	if !isObjectID(h) {
		return nil, false
	}
	g.Head = &h
	return g, true
}

// unusualConfig reports a config that moves or hides the work tree
// (core.worktree, core.bare = true), or one that cannot be read; Git then
// decides.
func unusualConfig(path string) bool {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		return true
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(sc.Text()), " ", ""))
		if strings.HasPrefix(l, "worktree=") || l == "bare=true" || strings.HasPrefix(l, "[include") {
			return true
		}
	}
	return false
}

// resolveRef finds a branch's commit: a loose ref file (per worktree, then
// common), then packed-refs. sha "" with known=true is an unborn branch.
func resolveRef(gitdir, common, ref string) (sha string, known bool) {
	for _, d := range []string{gitdir, common} {
		b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref)))
		if err == nil {
			s := strings.TrimSpace(string(b))
			if isObjectID(s) {
				return s, true
			}
			return "", false // a symbolic or odd ref: ask Git
		}
		if !os.IsNotExist(err) {
			return "", false
		}
	}
	b, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if os.IsNotExist(err) {
		return "", true
	}
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref && isObjectID(sha) {
			return sha, true
		}
	}
	return "", true
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
