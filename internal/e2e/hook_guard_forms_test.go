package e2e

import (
	"archive/tar"
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// formsRoom is the repository of TestHookGuardForms: committed files under
// src/, a branch "other" on which src/a.go differs, a stash entry that
// changes src/a.go, and an uncommitted edit of src/a.go by the peer who
// holds it guarded (the work a stash, reset, checkout or commit -a would
// take). An archive, a zip and two patches that name src/a.go sit beside
// them.
type formsRoom struct {
	sb    *sandbox
	repo  string
	peer  session
	files map[string]string // path → content every denied form must leave
	state string            // git's view: refs, stash list, index
}

func newFormsRoom(t *testing.T) *formsRoom {
	t.Helper()
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	g := &formsRoom{sb: sb, repo: repo, files: map[string]string{}}
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/a.go", "package a\n")
	write("src/b.go", "package b\n")
	write("src/notes.txt", "notes\n")
	write("docs/readme.md", "docs\n")
	sb.git(repo, "add", "-A")
	sb.git(repo, "commit", "-q", "-m", "sources")
	sb.git(repo, "checkout", "-q", "-b", "other")
	write("src/a.go", "package a // on other\n")
	sb.git(repo, "commit", "-q", "-am", "other's a.go")
	sb.git(repo, "checkout", "-q", "main")
	write("src/a.go", "package a // stashed\n")
	sb.git(repo, "stash", "-q")
	write("src/a.go", "package a // the holder's work\n")
	write("docs/readme.md", "docs, edited by the writer\n")

	// Inputs the forms read: patches, an archive and a zip naming src/a.go.
	patch := "--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1 @@\n-package a // the holder's work\n+package hacked\n"
	for _, name := range []string{"fix.diff", "fix.patch"} {
		if err := os.WriteFile(filepath.Join(sb.base, name), []byte(patch), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeArchives(t, sb.base)

	g.peer = sb.attach(repo, "holder", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded", "--reason", "refactoring"}, g.peer.creds()...)...)
	for _, rel := range []string{"src/a.go", "src/b.go", "src/notes.txt", "docs/readme.md"} {
		b, err := os.ReadFile(filepath.Join(repo, rel))
		if err != nil {
			t.Fatal(err)
		}
		g.files[rel] = string(b)
	}
	g.state = g.gitState(t)
	return g
}

// writeArchives puts x.tar and x.zip, each holding src/a.go, in dir.
func writeArchives(t *testing.T, dir string) {
	t.Helper()
	tf, err := os.Create(filepath.Join(dir, "x.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(tf)
	body := []byte("package hacked\n")
	if err := tw.WriteHeader(&tar.Header{Name: "src/a.go", Mode: 0o644, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tf.Close()
	zf, err := os.Create(filepath.Join(dir, "x.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	w, err := zw.Create("a.go")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zf.Close()
}

// gitState is what the denied forms must not change in git: every ref,
// the stash list and the index.
func (g *formsRoom) gitState(t *testing.T) string {
	t.Helper()
	var out []string
	for _, args := range [][]string{{"show-ref"}, {"stash", "list"}, {"ls-files", "-s"}, {"status", "--porcelain"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = g.repo
		cmd.Env = g.sb.environ()
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n--\n")
}

// TestHookGuardForms (docs/hooks.md#how-the-guard-reads-a-shell-command):
// through the built acc-hook, for every adapter's shell tool, each way an agent
// writes a file a peer holds guarded — expansions, writers, inline code, git
// operations that change the worktree or sweep it into a commit, a later
// syntax error — is denied with a reason that names the holder; each
// read-only or unclaimed counterpart is allowed. Every adapter's file tool
// is checked on the held and an unclaimed file too. No file, ref, stash
// or index entry changes (acc-hook runs nothing; the check proves it
// wrote nothing either).
func TestHookGuardForms(t *testing.T) {
	t.Parallel()
	g := newFormsRoom(t)
	base := g.sb.base
	denied := []string{
		"git stash",
		"git stash push",
		"git stash pop",
		"git stash apply",
		"git reset --hard",
		"git checkout src/a.go",
		"git checkout -- src/a.go",
		"git checkout other",
		"git switch other",
		"git restore src/a.go",
		"git restore .",
		"git commit -am 'wip'",
		"git add -A",
		"git add .",
		"git merge other",
		"git rebase other",
		"git cherry-pick other",
		"git revert --no-edit other",
		"git apply " + base + "/fix.diff",
		"git pull",
		"rm src/*.go",
		"touch src/{a,b}.go",
		"f=src/a.go; echo x > $f",
		"echo x > ~/../repo/src/a.go",
		`python3 -c "open('src/a.go','w')"`,
		`node -e "require('fs').writeFileSync('src/a.go', '')"`,
		"awk -i inplace '{print}' src/a.go",
		"gofmt -w src/a.go",
		"gofmt -w src",
		"find src -delete",
		"find src -name '*.go' -exec sed -i s/a/b/ {} +",
		"ls src/*.go | xargs rm",
		"patch -p1 < " + base + "/fix.patch",
		"patch src/a.go " + base + "/fix.diff",
		"tar -xf " + base + "/x.tar",
		"unzip -o -d src " + base + "/x.zip",
		"chmod 000 src/a.go",
		`cd "$(git rev-parse --show-toplevel)/src" && rm a.go`,
		"echo x > src/a.go\nif then fi",
		"rm src/a.go\necho (",
		`git -c core.pager='sh -c "cat > src/a.go"' log -1`,
		"git submodule foreach 'rm src/a.go'",
		"git difftool -y -x 'cp /dev/null' src/a.go",
		"git format-patch -o src -1",
		// Git commands past the common ones, and an alias given on the
		// command line.
		"git -c alias.x='!rm src/a.go' x",
		"git -c alias.co=checkout co src/a.go",
		"git checkout-index -f src/a.go",
		"git read-tree -mu HEAD",
		"git checkout -f",
		"git sparse-checkout set docs",
		"git archive -o src/a.go HEAD",
		"yes | git add -p",
		"git commit -p",
		// A shell reading its script from its input, and xargs's input
		// from a here-string.
		"bash -s <<< 'rm src/a.go'",
		"bash <<'X'\ncd src\nrm a.go\nX",
		"echo 'rm src/a.go' | bash",
		"xargs rm <<< src/a.go",
		// Variables set by builtins rather than NAME=value.
		`set -- src/a.go; rm "$1"`,
		`read f <<< src/a.go; rm "$f"`,
		`printf -v f %s src/a.go; rm "$f"`,
		`while read f; do rm "$f"; done <<< src/a.go`,
		// Editors driven by commands, and GNU parallel.
		"vim -c wq src/a.go",
		"printf ',s/a/b/\\nw\\n' | ed -s src/a.go",
		"parallel rm ::: src/a.go",
		// git's read-only commands writing a file by an option.
		"git diff --output=src/a.go",
		"git log -p --output src/a.go",
		"git config -f src/a.go x.y z",
	}
	allowed := []string{
		"git stash list",
		"git status",
		"git diff --stat",
		"git log --oneline -3",
		"git show other:src/a.go",
		"git checkout -b feature",
		"git stash push -- docs/readme.md",
		"git commit -m wip -- docs/readme.md",
		"git add docs",
		"git restore docs/readme.md",
		"cat src/a.go",
		"ls src/*.go",
		"wc -l src/*.go",
		"rm src/*.txt",
		"touch src/{c,d}.go",
		"f=src/c.go; echo x > $f",
		`python3 -c "print(1 + 1)"`,
		"awk '{print}' src/a.go",
		"gofmt -l src/a.go",
		"find src -name '*.go'",
		"find src -name '*.go' -exec grep -n package {} +",
		"ls src/*.go | xargs wc -l",
		"tar -tf " + base + "/x.tar",
		"unzip -l " + base + "/x.zip",
		`cd "$(git rev-parse --show-toplevel)/src" && cat a.go`,
		"echo x > src/c.go\nif then fi",
		"git -c core.pager=cat log -1",
		"git -c color.ui=never log -1",
		"git format-patch -o " + base + "/patches -1",
		"git sparse-checkout list",
		"git diff --output=docs/diff.txt",
		"git config -f src/a.go --get x.y",
		"git read-tree HEAD",
		"git worktree list",
		"git bisect log",
		"git add -p docs",
		"git -c color.ui=never diff",
		"bash -s <<< 'cat src/a.go'",
		"xargs cat <<< src/a.go",
		`set -- src/a.go; cat "$1"`,
		`read f <<< src/c.go; rm "$f"`,
		"vim -R src/a.go",
		"parallel cat ::: src/a.go",
	}
	// The sessions start here, one at a time: the sandbox reports to t.
	for _, c := range hookClients {
		g.sb.hookSession(c, "forms-"+c.id, g.repo, "ACC_PARTICIPANT=writer-"+c.id)
	}
	t.Run("clients", func(t *testing.T) {
		for _, c := range hookClients {
			t.Run(c.id, func(t *testing.T) {
				t.Parallel()
				sid := "forms-" + c.id
				for _, cmd := range denied {
					r := g.sb.hook(hookOpts{}, c.shellPayload(t, sid, g.repo, cmd), c.id, c.tool)
					reason, ok := c.denial(t, r)
					switch {
					case !ok:
						t.Errorf("%q was not denied\n%s", cmd, r)
					case !strings.Contains(reason, "claimed by holder (session "):
						t.Errorf("%q: the reason does not name the holder: %q", cmd, reason)
					case strings.Contains(reason, g.peer.Generation):
						t.Errorf("%q: the reason carries the holder's generation: %q", cmd, reason)
					}
				}
				for _, cmd := range allowed {
					r := g.sb.hook(hookOpts{}, c.shellPayload(t, sid, g.repo, cmd), c.id, c.tool)
					if reason, ok := c.denial(t, r); ok {
						t.Errorf("%q was denied: %q", cmd, reason)
					}
				}
				if reason, ok := c.denial(t, g.sb.hook(hookOpts{}, c.writePayload(t, sid, g.repo, "src/a.go"), c.id, c.tool)); !ok || !strings.Contains(reason, "claimed by holder") {
					t.Errorf("the file tool on src/a.go: denied=%v %q", ok, reason)
				}
				if reason, ok := c.denial(t, g.sb.hook(hookOpts{}, c.writePayload(t, sid, g.repo, "src/c.go"), c.id, c.tool)); ok {
					t.Errorf("the file tool on the unclaimed src/c.go was denied: %q", reason)
				}
			})
		}
	})
	for rel, want := range g.files {
		if b, err := os.ReadFile(filepath.Join(g.repo, rel)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", rel, b, err, want)
		}
	}
	if got := g.gitState(t); got != g.state {
		t.Errorf("git's state changed:\n%s\nwant:\n%s", got, g.state)
	}
}

// TestHookDenyNamesARunnableWait: every kind of denial — a plain target, a
// git operation, a write whose file acc cannot know — ends with an `acc
// wait --released …` the agent can run as it stands: it waits while the
// holder holds the file and returns 0 once the holder releases it.
func TestHookDenyNamesARunnableWait(t *testing.T) {
	t.Parallel()
	g := newFormsRoom(t)
	c := clientByID(t, "claude")
	g.sb.hookSession(c, "waiter", g.repo, "ACC_PARTICIPANT=waiter")
	waitRE := regexp.MustCompile("`(acc wait --released [^`]+)`")
	var waits []string
	for _, cmd := range []string{"echo x > src/a.go", "git stash", `python3 -c "open('src/a.go','w')"`} {
		reason, ok := c.denial(t, g.sb.hook(hookOpts{}, c.shellPayload(t, "waiter", g.repo, cmd), c.id, c.tool))
		m := waitRE.FindStringSubmatch(reason)
		if !ok || m == nil {
			t.Fatalf("%q: denied=%v, and the reason names no acc wait: %q", cmd, ok, reason)
		}
		waits = append(waits, m[1])
	}
	for _, w := range waits {
		if res := g.sb.runShell(g.repo, w+" --timeout 1s"); res.code != 3 {
			t.Errorf("%s while the claim is held: want exit 3 (timeout)\n%s", w, res)
		}
	}
	g.sb.ok(g.repo, append([]string{"release", "--resource", "file:src/a.go"}, g.peer.creds()...)...)
	for _, w := range waits {
		if res := g.sb.runShell(g.repo, w+" --timeout 30s"); res.code != 0 {
			t.Errorf("%s once released: want exit 0\n%s", w, res)
		}
	}
}

// TestHookDenyWordsADirectory: a denial says which way round the write and
// the claim are — a directory target holds the claimed file; a file target
// lies inside a claimed directory.
func TestHookDenyWordsADirectory(t *testing.T) {
	t.Parallel()
	g := newFormsRoom(t)
	c := clientByID(t, "claude")
	g.sb.hookSession(c, "words", g.repo, "ACC_PARTICIPANT=words")
	for cmd, want := range map[string]string{
		"rm -rf src":         "acc: file:src/** holds file:src/a.go, which is claimed by holder (session ",
		"echo x > src/a.go":  "acc: file:src/a.go is claimed by holder (session ",
		"echo x > docs/n.md": "acc: file:docs/n.md is inside file:docs/**, claimed by holder (session ",
	} {
		if cmd == "echo x > docs/n.md" {
			g.sb.ok(g.repo, append([]string{"claim", "--resource", "file:docs/**", "--enforcement", "guarded"}, g.peer.creds()...)...)
		}
		reason, ok := c.denial(t, g.sb.hook(hookOpts{}, c.shellPayload(t, "words", g.repo, cmd), c.id, c.tool))
		if !ok || !strings.HasPrefix(reason, want) {
			t.Errorf("%q: denied=%v %q; want it to start %q", cmd, ok, reason, want)
		}
	}
}
