package core

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Files of the fixture repository, relative to its top.
const (
	fxA       = "src/a.go"
	fxB       = "src/b.go"
	fxSpace   = "src/with space.go"
	fxNewline = "src/new\nline.go"
	fxFeat    = "src/feat.go"
	fxReadme  = "docs/readme.md"
	fxIgnore  = ".gitignore"
	fxU       = "src/u.go"
	fxLog     = "build.log"
)

// gitTry runs git like git() but reports failure instead of stopping the
// test: the real command a case describes may be refused by git.
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no",
		"GIT_AUTHOR_NAME=acc test", "GIT_AUTHOR_EMAIL=test@acc.invalid",
		"GIT_COMMITTER_NAME=acc test", "GIT_COMMITTER_EMAIL=test@acc.invalid")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitFixture makes a repository: main has two commits (the second changes
// readme.md in docs); feature branches from the first, changes src/b.go and
// adds src/feat.go. The checkout is on main, clean.
func gitFixture(t *testing.T) string {
	t.Helper()
	return copyFixture(t, newGitTemplate(t))
}

// newGitTemplate builds the fixture in t's temporary directory, for
// copyFixture to copy: a copy costs far less than the dozen git processes
// that build it, and its index is stat-dirty, which is what tempts git to
// rewrite the index and so makes the read-only check stricter.
func newGitTemplate(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "template")
	buildGitFixture(t, repo)
	return repo
}

func copyFixture(t *testing.T, template string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	err = filepath.WalkDir(template, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(template, p)
		to := filepath.Join(repo, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// buildGitFixture makes the repository gitFixture describes, small to
// copy: no sample hooks (an empty template) and its objects in one pack,
// which git reads the same as loose ones.
func buildGitFixture(t *testing.T, repo string) {
	mustMkdir(t, repo)
	git(t, repo, "init", "-q", "--template=", "-b", "main")
	for p, c := range map[string]string{fxA: "a1\n", fxB: "b1\n", fxSpace: "s1\n", fxNewline: "n1\n", fxReadme: "r1\n", fxIgnore: "*.log\n"} {
		mustWrite(t, filepath.Join(repo, p), c)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "one")
	git(t, repo, "checkout", "-q", "-b", "feature")
	mustWrite(t, filepath.Join(repo, fxB), "b2\n")
	mustWrite(t, filepath.Join(repo, fxFeat), "f\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "feature")
	git(t, repo, "checkout", "-q", "main")
	mustWrite(t, filepath.Join(repo, fxReadme), "r2\n")
	git(t, repo, "commit", "-q", "-am", "two")
	git(t, repo, "repack", "-a", "-d", "-q")
}

// dirty leaves the usual mixture of local changes: a.go and the newline
// file changed (unstaged), the spaced file changed and staged, an untracked
// src/u.go and an ignored build.log.
func dirty(t *testing.T, repo string) {
	t.Helper()
	mustWrite(t, filepath.Join(repo, fxA), "a-local\n")
	mustWrite(t, filepath.Join(repo, fxNewline), "n-local\n")
	mustWrite(t, filepath.Join(repo, fxSpace), "s-staged\n")
	git(t, repo, "add", "--", fxSpace)
	mustWrite(t, filepath.Join(repo, fxU), "u\n")
	mustWrite(t, filepath.Join(repo, fxLog), "log\n")
}

// treeHashes hashes every file and directory under root (the .git directory
// included when withGit) by path, so any write shows.
func treeHashes(t *testing.T, root string, withGit bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if d.Name() == ".git" && !withGit {
				return filepath.SkipDir
			}
			m[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			if d.Type()&fs.ModeSymlink != 0 {
				m[rel] = "symlink"
				return nil
			}
			return err
		}
		fi, _ := d.Info()
		m[rel] = fmt.Sprintf("%x %v", sha256.Sum256(b), fi.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// changedFiles lists the files whose presence or bytes differ.
func changedFiles(before, after map[string]string) []string {
	var out []string
	for p, h := range before {
		if h != "dir" && after[p] != h {
			out = append(out, p)
		}
	}
	for p, h := range after {
		if _, ok := before[p]; !ok && h != "dir" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// indexAndHead is the index's entries and HEAD's tree, to see what a
// sweeping command recorded.
func indexAndHead(t *testing.T, repo string) map[string]string {
	t.Helper()
	m := map[string]string{}
	out, _ := gitTry(repo, "ls-files", "-s", "-z")
	for _, rec := range strings.Split(out, "\x00") {
		if meta, p, ok := strings.Cut(rec, "\t"); ok {
			m["index:"+p] = meta
		}
	}
	out, _ = gitTry(repo, "ls-tree", "-r", "-z", "HEAD")
	for _, rec := range strings.Split(out, "\x00") {
		if meta, p, ok := strings.Cut(rec, "\t"); ok {
			m["head:"+p] = meta
		}
	}
	return m
}

type gitCase struct {
	name    string
	setup   func(t *testing.T, repo string) // before the call; repo is clean on main
	sub     string                          // subdirectory git runs in
	args    []string
	none    bool     // GitTouched says (nil, nil)
	want    []string // paths relative to the worktree top
	sweeps  bool
	unknown string // a word Unknown must contain ("" means Unknown must be empty)
	clear   string
	noReal  bool // do not run the real command (it needs input or a network)
}

// TestGitTouched runs each case against a fresh fixture: GitTouched's
// answer must match the expected paths, must leave every byte of the
// repository (.git included) as it was, and must cover every file that
// the real git command then changes (or, for a sweep, records).
func TestGitTouched(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("makes many repositories")
	}
	twoStashes := func(t *testing.T, repo string) {
		mustWrite(t, filepath.Join(repo, fxA), "a-stash0\n")
		git(t, repo, "stash", "-q")
		mustWrite(t, filepath.Join(repo, fxB), "b-stash1\n")
		mustWrite(t, filepath.Join(repo, fxU), "u\n")
		git(t, repo, "stash", "-q", "-u")
	}
	onFeature := func(t *testing.T, repo string) { git(t, repo, "checkout", "-q", "feature") }
	cases := []gitCase{
		// stash push/save
		{name: "stash", setup: dirty, args: []string{"stash"}, want: []string{fxA, fxNewline, fxSpace}, clear: "git stash push -- {paths}"},
		{name: "stash -u", setup: dirty, args: []string{"stash", "-u"}, want: []string{fxA, fxNewline, fxU, fxSpace}, clear: "git stash push --include-untracked -- {paths}"},
		{name: "stash push -a", setup: dirty, args: []string{"stash", "push", "-a"}, want: []string{fxLog, fxA, fxNewline, fxU, fxSpace}},
		{name: "stash push pathspec", setup: dirty, args: []string{"stash", "push", "-m", "mine", "--", fxA}, want: []string{fxA}},
		{name: "stash push --staged", setup: dirty, args: []string{"stash", "push", "--staged"}, want: []string{fxSpace}},
		{name: "stash save", setup: dirty, args: []string{"stash", "save", "a message"}, want: []string{fxA, fxNewline, fxSpace}},
		{name: "stash clean tree", args: []string{"stash"}, want: nil, clear: "git stash push -- {paths}"},
		{name: "stash list", setup: twoStashes, args: []string{"stash", "list"}, none: true},
		{name: "stash drop", setup: twoStashes, args: []string{"stash", "drop"}, none: true},
		// stash pop/apply
		{name: "stash pop", setup: twoStashes, args: []string{"stash", "pop"}, want: []string{fxB, fxU}},
		{name: "stash apply n", setup: twoStashes, args: []string{"stash", "apply", "1"}, want: []string{fxA}},
		{name: "stash apply ref", setup: twoStashes, args: []string{"stash", "apply", "stash@{1}"}, want: []string{fxA}},
		{name: "stash pop empty", args: []string{"stash", "pop"}, unknown: "git stash list"},
		{name: "stash branch", setup: func(t *testing.T, repo string) {
			mustWrite(t, filepath.Join(repo, fxA), "a-stash\n")
			git(t, repo, "stash", "-q")
		}, args: []string{"stash", "branch", "fromstash"}, want: []string{fxA}},
		// reset
		{name: "reset --hard", setup: dirty, args: []string{"reset", "--hard"}, want: []string{fxA, fxNewline, fxSpace}, clear: "git restore --source=HEAD --staged --worktree -- {paths}"},
		{name: "reset --hard feature", setup: dirty, args: []string{"reset", "--hard", "feature"}, want: []string{fxReadme, fxA, fxB, fxFeat, fxNewline, fxSpace}},
		{name: "reset --keep", setup: func(t *testing.T, repo string) { git(t, repo, "update-index", "-q", "--refresh") }, args: []string{"reset", "--keep", "feature"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "reset mixed", setup: dirty, args: []string{"reset", "HEAD~"}, none: true},
		{name: "reset paths", setup: dirty, args: []string{"reset", "--", fxSpace}, none: true},
		{name: "reset unknown rev", args: []string{"reset", "--hard", "nosuch"}, unknown: "does not resolve"},
		// checkout of a branch or commit
		{name: "checkout branch", args: []string{"checkout", "feature"}, want: []string{fxReadme, fxB, fxFeat}, clear: ""},
		{name: "checkout branch dirty", setup: dirty, args: []string{"checkout", "feature"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "checkout -f branch", setup: dirty, args: []string{"checkout", "-f", "feature"}, want: []string{fxReadme, fxA, fxB, fxFeat, fxNewline, fxSpace}},
		{name: "checkout -b", setup: dirty, args: []string{"checkout", "-b", "new"}, none: true},
		{name: "checkout -b start", args: []string{"checkout", "-b", "new", "feature"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "checkout detach commit", args: []string{"checkout", "--detach", "HEAD~1"}, want: []string{fxReadme}},
		{name: "checkout previous", setup: func(t *testing.T, repo string) {
			git(t, repo, "checkout", "-q", "feature")
			git(t, repo, "checkout", "-q", "main")
		}, args: []string{"checkout", "-"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "checkout remote guess", setup: func(t *testing.T, repo string) {
			git(t, repo, "remote", "add", "origin", "https://example.invalid/r.git")
			git(t, repo, "update-ref", "refs/remotes/origin/topic", "feature")
		}, args: []string{"checkout", "topic"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "checkout branch named like a file", setup: func(t *testing.T, repo string) {
			mustWrite(t, filepath.Join(repo, "feature"), "a file\n")
		}, args: []string{"checkout", "feature"}, want: []string{fxReadme, fxB, fxFeat}},
		// checkout of paths
		{name: "checkout path no dashdash", setup: dirty, args: []string{"checkout", fxA}, want: []string{fxA}, clear: "git checkout -- {paths}"},
		{name: "checkout dot", setup: dirty, args: []string{"checkout", "."}, want: []string{fxA, fxNewline}},
		{name: "checkout -- dir", setup: dirty, args: []string{"checkout", "--", "src"}, want: []string{fxA, fxNewline}},
		{name: "checkout dot from subdir", setup: func(t *testing.T, repo string) {
			dirty(t, repo)
			mustWrite(t, filepath.Join(repo, fxReadme), "r-local\n")
		}, sub: "docs", args: []string{"checkout", "."}, want: []string{fxReadme}},
		{name: "checkout tree-ish paths", setup: dirty, args: []string{"checkout", "feature", "--", "src"}, want: []string{fxA, fxB, fxFeat, fxNewline, fxSpace}, clear: "git checkout feature -- {paths}"},
		{name: "checkout tree-ish paths no dashdash", args: []string{"checkout", "feature", fxB}, want: []string{fxB}},
		{name: "checkout glob", setup: dirty, args: []string{"checkout", "*.go"}, want: []string{fxA, fxNewline}},
		{name: "checkout -p", setup: dirty, args: []string{"checkout", "-p"}, want: []string{fxA, fxNewline}, noReal: true},
		{name: "restore -p", setup: dirty, sub: "docs", args: []string{"restore", "-p"}, want: []string{fxA, fxNewline}, noReal: true},
		{name: "checkout nothing matches", setup: dirty, args: []string{"checkout", "nosuch.go"}, want: nil},
		// switch
		{name: "switch", args: []string{"switch", "feature"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "switch -c", setup: dirty, args: []string{"switch", "-c", "x"}, none: true},
		{name: "switch --discard-changes", setup: dirty, args: []string{"switch", "--discard-changes", "feature"}, want: []string{fxReadme, fxA, fxB, fxFeat, fxNewline, fxSpace}},
		{name: "switch --orphan", args: []string{"switch", "--orphan", "x"}, want: []string{fxIgnore, fxReadme, fxA, fxB, fxNewline, fxSpace}},
		// restore
		{name: "restore path", setup: dirty, args: []string{"restore", fxA}, want: []string{fxA}, clear: "git restore -- {paths}"},
		{name: "restore top", setup: dirty, sub: "docs", args: []string{"restore", ":/"}, want: []string{fxA, fxNewline}},
		{name: "restore staged only", setup: dirty, args: []string{"restore", "--staged", "src"}, none: true},
		{name: "restore staged worktree", setup: dirty, args: []string{"restore", "--staged", "--worktree", "src"}, want: []string{fxA, fxNewline, fxSpace}},
		{name: "restore source", args: []string{"restore", "--source", "feature", fxB}, want: []string{fxB}, clear: "git restore --source=feature -- {paths}"},
		{name: "restore option-like source", args: []string{"restore", "--source=--output=pwned", fxA}, unknown: "not a revision"},
		{name: "rebase option-like onto", setup: onFeature, args: []string{"rebase", "--onto", "--output=pwned", "main"}, unknown: "not a revision", noReal: true},
		// clean
		{name: "clean -f", setup: dirty, args: []string{"clean", "-f"}, want: []string{fxU}, clear: "git clean -f -- {paths}"},
		{name: "clean -fdx", setup: func(t *testing.T, repo string) {
			dirty(t, repo)
			mustWrite(t, filepath.Join(repo, "tmp dir", "x\ny"), "x\n")
			mustWrite(t, filepath.Join(repo, "src", "é \"q\".go"), "x\n")
		}, args: []string{"clean", "-fdx"}, want: []string{fxLog, fxU, "src/é \"q\".go", "tmp dir", "tmp dir/x\ny"}, clear: "git clean -f -d -x -- {paths}"},
		{name: "clean -X", setup: dirty, args: []string{"clean", "-f", "-X"}, want: []string{fxLog}},
		{name: "clean subdir", setup: func(t *testing.T, repo string) {
			dirty(t, repo)
			mustWrite(t, filepath.Join(repo, "docs", "u.md"), "u\n")
		}, sub: "src", args: []string{"clean", "-f"}, want: []string{fxU}},
		{name: "clean exclude", setup: dirty, args: []string{"clean", "-f", "-e", "u.go"}, want: nil},
		{name: "clean -n", setup: dirty, args: []string{"clean", "-n"}, none: true},
		// apply and am
		{name: "apply", setup: func(t *testing.T, repo string) {
			writePatch(t, repo, "main", "feature", "p.patch")
		}, args: []string{"apply", "../p.patch"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "apply rename", setup: func(t *testing.T, repo string) {
			git(t, repo, "checkout", "-q", "-b", "moved")
			git(t, repo, "mv", fxA, "src/moved.go")
			git(t, repo, "commit", "-q", "-m", "move")
			writePatch(t, repo, "moved", "main", "p.patch")
		}, args: []string{"apply", "../p.patch"}, want: []string{fxA, "src/moved.go"}},
		{name: "apply -R -p1 from subdir", setup: func(t *testing.T, repo string) {
			writePatch(t, repo, "feature", "main", "p.patch")
		}, sub: "src", args: []string{"apply", "-R", "-p1", "../../p.patch"}, want: []string{fxB, fxFeat}},
		{name: "apply --cached", setup: func(t *testing.T, repo string) { writePatch(t, repo, "main", "feature", "p.patch") },
			args: []string{"apply", "--cached", "../p.patch"}, none: true},
		{name: "apply --check", setup: func(t *testing.T, repo string) { writePatch(t, repo, "main", "feature", "p.patch") },
			args: []string{"apply", "--check", "../p.patch"}, none: true},
		{name: "apply stdin", args: []string{"apply"}, unknown: "standard input", noReal: true},
		{name: "am", setup: func(t *testing.T, repo string) {
			out := git(t, repo, "format-patch", "--stdout", "main..feature")
			mustWrite(t, filepath.Join(filepath.Dir(repo), "series.mbox"), out+"\n")
		}, args: []string{"am", "../series.mbox"}, want: []string{fxB, fxFeat}},
		{name: "am stdin", args: []string{"am"}, unknown: "standard input", noReal: true},
		// merge, rebase, cherry-pick, revert
		{name: "merge", args: []string{"merge", "--no-edit", "feature"}, want: []string{fxB, fxFeat}},
		{name: "merge ff", setup: func(t *testing.T, repo string) {
			git(t, repo, "branch", "-f", "behind", "HEAD~1")
			git(t, repo, "checkout", "-q", "behind")
		},
			args: []string{"merge", "main"}, want: []string{fxReadme}},
		{name: "merge past the process bound", args: []string{"merge", "feature", "feature", "feature", "feature", "feature"}, want: []string{fxB, fxFeat}, unknown: "more look-ups", noReal: true},
		{name: "merge unknown", args: []string{"merge", "nosuch"}, unknown: "does not resolve"},
		{name: "merge unknown name with a newline", args: []string{"merge", "no\nsuch"}, unknown: `"no\nsuch"`},
		{name: "merge no upstream", args: []string{"merge"}, unknown: "does not resolve"},
		{name: "merge --abort", setup: func(t *testing.T, repo string) {
			mustWrite(t, filepath.Join(repo, fxB), "b-conflict\n")
			git(t, repo, "commit", "-q", "-am", "conflict")
			gitTry(repo, "merge", "feature")
		}, args: []string{"merge", "--abort"}, want: []string{fxB, fxFeat}},
		{name: "rebase", setup: onFeature, args: []string{"rebase", "main"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "rebase onto", setup: onFeature, args: []string{"rebase", "--onto", "main", "main~1"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "rebase --continue", setup: func(t *testing.T, repo string) {
			mustWrite(t, filepath.Join(repo, fxB), "b-conflict\n")
			git(t, repo, "commit", "-q", "-am", "conflict")
			gitTry(repo, "rebase", "feature")
		}, args: []string{"rebase", "--continue"}, want: []string{fxB}, unknown: "in progress", noReal: true},
		{name: "cherry-pick", args: []string{"cherry-pick", "feature"}, want: []string{fxB, fxFeat}},
		{name: "cherry-pick range", args: []string{"cherry-pick", "main~1..feature"}, want: []string{fxB, fxFeat}},
		{name: "cherry-pick unknown", args: []string{"cherry-pick", "nosuch"}, unknown: "does not resolve"},
		{name: "revert", args: []string{"revert", "--no-edit", "HEAD"}, want: []string{fxReadme}},
		{name: "pull", args: []string{"pull"}, unknown: "git fetch", noReal: true},
		// sweeping into a commit or the index
		{name: "commit -a", setup: dirty, args: []string{"commit", "-am", "x"}, want: []string{fxA, fxNewline, fxSpace}, sweeps: true, clear: "git commit -- {paths}"},
		{name: "commit staged", setup: dirty, args: []string{"commit", "-m", "x"}, want: []string{fxSpace}, sweeps: true},
		{name: "commit paths", setup: dirty, args: []string{"commit", "-m", "x", fxA}, want: []string{fxA}, sweeps: true},
		{name: "commit -- paths", setup: dirty, args: []string{"commit", "-m", "x", "--", "src"}, want: []string{fxA, fxNewline, fxSpace}, sweeps: true},
		{name: "commit -i", setup: dirty, args: []string{"commit", "-m", "x", "-i", fxA}, want: []string{fxA, fxSpace}, sweeps: true},
		{name: "commit -S key is not -a", setup: dirty, args: []string{"commit", "-Sabc", "--no-gpg-sign", "-m", "x"}, want: []string{fxSpace}, sweeps: true},
		{name: "commit --dry-run", setup: dirty, args: []string{"commit", "--dry-run", "-a"}, none: true},
		{name: "add -A", setup: dirty, args: []string{"add", "-A"}, want: []string{fxA, fxNewline, fxU}, sweeps: true, clear: "git add -- {paths}"},
		{name: "add -A from subdir", setup: dirty, sub: "docs", args: []string{"add", "-A"}, want: []string{fxA, fxNewline, fxU}, sweeps: true},
		{name: "add dot", setup: dirty, args: []string{"add", "."}, want: []string{fxA, fxNewline, fxU}, sweeps: true},
		{name: "add -u", setup: dirty, args: []string{"add", "-u"}, want: []string{fxA, fxNewline}, sweeps: true},
		{name: "add -p offers the tracked changes", setup: dirty, args: []string{"add", "-p"}, want: []string{fxA, fxNewline}, sweeps: true},
		{name: "add -i", setup: dirty, args: []string{"add", "-i"}, want: []string{fxA, fxNewline}, sweeps: true},
		{name: "add path", setup: dirty, args: []string{"add", fxU}, want: []string{fxU}, sweeps: true},
		{name: "stage", setup: dirty, args: []string{"stage", "."}, want: []string{fxA, fxNewline, fxU}, sweeps: true},
		{name: "add nothing", setup: dirty, args: []string{"add"}, none: true},
		// other writers
		{name: "rm", args: []string{"rm", "-q", fxB}, want: []string{fxB}},
		{name: "rm -r dir", args: []string{"rm", "-r", "-q", "docs"}, want: []string{fxReadme}},
		{name: "rm --cached", args: []string{"rm", "--cached", "-q", fxB}, none: true},
		{name: "mv", args: []string{"mv", fxB, "src/c.go"}, want: []string{fxB, "src/c.go"}},
		{name: "bisect", args: []string{"bisect", "start"}, unknown: "bisect", noReal: true},
		{name: "alias", setup: func(t *testing.T, repo string) {
			dirty(t, repo)
			git(t, repo, "config", "alias.co", "checkout")
		}, args: []string{"co", fxA}, want: []string{fxA}},
		{name: "shell alias", setup: func(t *testing.T, repo string) { git(t, repo, "config", "alias.wipe", "!rm -f src/a.go") },
			args: []string{"wipe"}, unknown: "shell alias", noReal: true},
		{name: "unknown subcommand", args: []string{"frobnicate"}, unknown: "does not know", noReal: true},
		// read-only
		{name: "status", setup: dirty, args: []string{"status"}, none: true},
		{name: "log", args: []string{"log", "--oneline"}, none: true},
		{name: "diff", setup: dirty, args: []string{"diff"}, none: true},
		{name: "branch", args: []string{"branch", "-l"}, none: true},
		{name: "empty", args: nil, none: true, noReal: true},
	}
	template := newGitTemplate(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := copyFixture(t, template)
			if c.setup != nil {
				c.setup(t, repo)
			}
			checkGitCase(t, repo, c)
		})
	}
}

func writePatch(t *testing.T, repo, from, to, name string) {
	t.Helper()
	out, err := gitTry(repo, "diff", "--binary", "-M", from, to)
	if err != nil {
		t.Fatal(err, out)
	}
	mustWrite(t, filepath.Join(filepath.Dir(repo), name), out)
}

// checkGitCase asks GitTouched in repo (at c.sub), proves it read only,
// compares its answer with c, then runs the real command and requires the
// answer to cover what changed.
func checkGitCase(t *testing.T, repo string, c gitCase) {
	t.Helper()
	dir := filepath.Join(repo, c.sub)
	before := treeHashes(t, repo, true)
	e, err := GitTouched(context.Background(), dir, c.args)
	if err != nil {
		t.Fatalf("GitTouched: %v", err)
	}
	if diff := cmp.Diff(before, treeHashes(t, repo, true)); diff != "" {
		t.Fatalf("GitTouched wrote into the repository (-before +after):\n%s", diff)
	}
	if c.none {
		if e != nil {
			t.Fatalf("want (nil, nil), got %+v", *e)
		}
		runReal(t, repo, dir, c, e)
		return
	}
	if e == nil {
		t.Fatal("want an effect, got nil")
	}
	if e.Worktree != repo {
		t.Errorf("Worktree = %q, want %q", e.Worktree, repo)
	}
	var want []string
	for _, p := range c.want {
		want = append(want, filepath.Join(repo, p))
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, e.Paths); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
	if e.Sweeps != c.sweeps {
		t.Errorf("Sweeps = %v, want %v", e.Sweeps, c.sweeps)
	}
	if c.unknown == "" && e.Unknown != "" || !strings.Contains(e.Unknown, c.unknown) {
		t.Errorf("Unknown = %q, want it to contain %q", e.Unknown, c.unknown)
	}
	if strings.ContainsAny(e.Unknown, "\n\r") {
		t.Errorf("Unknown is more than one line: %q", e.Unknown)
	}
	if c.clear != "" && e.Clear != c.clear {
		t.Errorf("Clear = %q, want %q", e.Clear, c.clear)
	}
	runReal(t, repo, dir, c, e)
}

// runReal runs the case's command for real and requires every file it
// changed (or, for a sweep, recorded) to be among e's paths; for (nil, nil)
// it requires the working tree unchanged.
func runReal(t *testing.T, repo, dir string, c gitCase, e *GitEffect) {
	t.Helper()
	if c.noReal || (e != nil && e.Unknown != "") {
		return
	}
	files := treeHashes(t, repo, false)
	// Only a sweep is judged by what it records, so only a sweep pays
	// for the two git processes that read the index and HEAD.
	sweeps := e != nil && e.Sweeps
	var recorded map[string]string
	if sweeps {
		recorded = indexAndHead(t, repo)
	}
	out, err := gitTry(dir, c.args...)
	t.Logf("real git %q: %v\n%s", c.args, err, out)
	changed := changedFiles(files, treeHashes(t, repo, false))
	if sweeps {
		for _, k := range changedFiles(recorded, indexAndHead(t, repo)) {
			_, p, _ := strings.Cut(k, ":")
			changed = append(changed, p)
		}
	}
	var got []string
	if e != nil {
		got = e.Paths
	}
	for _, p := range changed {
		abs := filepath.Join(repo, p)
		if !slices.Contains(got, abs) {
			t.Errorf("the real command changed %q, which GitTouched did not name (it named %q)", p, got)
		}
	}
}

// TestGitTouchedLinkedWorktree: in a linked worktree the paths are that
// worktree's, and the main checkout's changes do not count.
func TestGitTouchedLinkedWorktree(t *testing.T) {
	t.Parallel()
	repo := gitFixture(t)
	wt := filepath.Join(filepath.Dir(repo), "linked")
	git(t, repo, "worktree", "add", "-q", wt, "feature")
	dirty(t, repo)
	mustWrite(t, filepath.Join(wt, fxB), "b-wt\n")
	mustWrite(t, filepath.Join(wt, "src", "deep", "x.go"), "x\n")
	for _, c := range []gitCase{
		{name: "stash -u", args: []string{"stash", "-u"}, want: []string{fxB, "src/deep/x.go"}},
		{name: "checkout main", sub: "src", args: []string{"checkout", "-f", "main"}, want: []string{fxReadme, fxB, fxFeat}},
		{name: "commit -a", args: []string{"commit", "-am", "x"}, want: []string{fxB}, sweeps: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := GitTouched(context.Background(), filepath.Join(wt, c.sub), c.args)
			if err != nil || e == nil {
				t.Fatalf("GitTouched = %v, %v", e, err)
			}
			if e.Worktree != wt {
				t.Errorf("Worktree = %q, want %q", e.Worktree, wt)
			}
			var want []string
			for _, p := range c.want {
				want = append(want, filepath.Join(wt, p))
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, e.Paths); diff != "" {
				t.Errorf("Paths (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("worktree remove", func(t *testing.T) {
		e, err := GitTouched(context.Background(), repo, []string{"worktree", "remove", "--force", wt})
		if err != nil || e == nil {
			t.Fatalf("GitTouched = %v, %v", e, err)
		}
		for _, p := range []string{wt, filepath.Join(wt, fxB), filepath.Join(wt, "src", "deep", "x.go")} {
			if !slices.Contains(e.Paths, p) {
				t.Errorf("worktree remove: %q missing from %q", p, e.Paths)
			}
		}
	})
}

// TestGitTouchedOutsideARepository: git refuses every command but apply
// outside a worktree, so GitTouched answers (nil, nil) there; apply writes
// relative to the directory.
func TestGitTouchedOutsideARepository(t *testing.T) {
	t.Parallel()
	repo := gitFixture(t)
	writePatch(t, repo, "main", "feature", "p.patch")
	plain := filepath.Join(filepath.Dir(repo), "plain")
	mustMkdir(t, plain)
	for _, args := range [][]string{{"stash"}, {"checkout", "src/a.go"}, {"reset", "--hard"}, {"commit", "-am", "x"}, {"clean", "-fdx"}} {
		e, err := GitTouched(context.Background(), plain, args)
		if e != nil || err != nil {
			t.Errorf("%q outside a repository: got %+v, %v; want nil, nil", args, e, err)
		}
	}
	e, err := GitTouched(context.Background(), plain, []string{"apply", "../p.patch"})
	if err != nil || e == nil {
		t.Fatalf("apply outside a repository: %v, %v", e, err)
	}
	want := []string{filepath.Join(plain, fxReadme), filepath.Join(plain, fxB), filepath.Join(plain, fxFeat)}
	slices.Sort(want)
	if e.Worktree != plain || !slices.Equal(e.Paths, want) {
		t.Errorf("apply outside a repository: %+v, want paths %q in %q", *e, want, plain)
	}
}

// TestGitTouchedBudget: an expired context is an error, with Unknown
// saying the budget ran out, and nothing is claimed known.
func TestGitTouchedBudget(t *testing.T) {
	t.Parallel()
	repo := gitFixture(t)
	dirty(t, repo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, err := GitTouched(ctx, repo, []string{"stash"})
	if err == nil || e == nil || !strings.Contains(e.Unknown, "budget") {
		t.Fatalf("GitTouched with an expired context = %+v, %v; want Unknown about the budget and an error", e, err)
	}
}

func TestParseGitArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want gitArgs
	}{
		{[]string{"-am", "msg", "file"}, gitArgs{opts: map[string][]string{"-a": {""}, "-m": {"msg"}}, pos: []string{"file"}}},
		{[]string{"-mmsg", "--author", "me", "--", "-x"}, gitArgs{opts: map[string][]string{"-m": {"msg"}, "--author": {"me"}}, after: []string{"-x"}, dashdash: true}},
		{[]string{"-Sabc", "f"}, gitArgs{opts: map[string][]string{"-S": {"abc"}}, pos: []string{"f"}}},
		{[]string{"-S", "f"}, gitArgs{opts: map[string][]string{"-S": {""}}, pos: []string{"f"}}},
		{[]string{"--source=x", "--end-of-options", "-f"}, gitArgs{opts: map[string][]string{"--source": {"x"}}, pos: []string{"-f"}}},
	} {
		got := parseGitArgs(c.args, "m?S", "--author")
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(gitArgs{})); diff != "" {
			t.Errorf("parseGitArgs(%q) (-want +got):\n%s", c.args, diff)
		}
	}
}
