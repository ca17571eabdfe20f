package adapter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// readCase is one command and what ReadShell must read from it in the
// fixture of readFixture: the targets ("<top>" stands for the fixture's
// directory), the git operations ("dir|arg arg…"), how many unknown writes
// and hints that must be among theirs.
type readCase struct {
	cmd     string
	targets []string
	git     []string
	unknown int
	hints   []string
}

// writes is a case that writes the targets, and nothing else.
func writes(cmd string, targets ...string) readCase { return readCase{cmd: cmd, targets: targets} }

// gits is a case whose only effect is the git operations.
func gits(cmd string, ops ...string) readCase { return readCase{cmd: cmd, git: ops} }

// unknownWith is a case whose only effect is one unknown write carrying
// the hints.
func unknownWith(cmd string, hints ...string) readCase {
	return readCase{cmd: cmd, unknown: 1, hints: hints}
}

// reads is a case with no effect at all: a read, never denied.
func reads(cmd string) readCase { return readCase{cmd: cmd} }

const fixturePatch = `diff --git a/src/a.go b/src/a.go
--- a/src/a.go	2026-01-01 00:00:00
+++ b/src/a.go	2026-01-01 00:00:01
@@ -1 +1 @@
-package a
+package b
`

// readFixture is a directory holding src/a.go, src/b.go, src/c_test.go,
// README.md, fix.diff (a patch of src/a.go) and list.txt (naming
// src/b.go), and the ShellEnv of a session whose cwd it is (Home
// /home/u, Toplevel the directory itself).
func readFixture(t testing.TB) (string, ShellEnv) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"src/a.go": "package a\n", "src/b.go": "package a\n", "src/c_test.go": "package a\n",
		"README.md": "# x\n", "fix.diff": fixturePatch, "list.txt": "src/b.go\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, ShellEnv{Cwd: dir, Home: "/home/u", Toplevel: func(d string) (string, bool) {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			return dir, true
		}
		return "", false
	}}
}

// issueForms are forms that once slipped through the guard (git
// operations, writers, inline code), each with what ReadShell must now see.
var issueForms = []readCase{
	gits(`git stash`, "|stash"),
	gits(`git stash pop`, "|stash pop"),
	gits(`git reset --hard`, "|reset --hard"),
	gits(`git checkout src/a.go`, "|checkout src/a.go"),
	gits(`git checkout feature`, "|checkout feature"),
	gits(`git commit -am 'wip'`, "|commit -am wip"),
	writes(`rm src/*.go`, "src/a.go", "src/b.go", "src/c_test.go"),
	writes(`touch src/{a,b}.go`, "src/a.go", "src/b.go"),
	writes(`f=src/a.go; echo x > $f`, "src/a.go"),
	unknownWith(`python3 -c "open('src/a.go','w')"`, "src/a.go"),
	writes(`awk -i inplace '{print}' src/a.go`, "src/a.go"),
	writes(`gofmt -w src/a.go`, "src/a.go"),
	writes(`find src -delete`, "src"),
	unknownWith(`ls src/*.go | xargs rm`, "src/*.go"),
	writes(`patch -p1 < fix.diff`, "src/a.go"),
	writes(`tar -xf x.tar`, "."),
	writes(`unzip -d src x.zip`, "src"),
	writes(`cd "$(git rev-parse --show-toplevel)/src" && rm a.go`, "<top>/src/a.go"),
	writes(`cd /other/repo && rm src/a.go`, "/other/repo/src/a.go"),
}

// readOnly are the read-only counterparts of issueForms: nothing at all.
var readOnly = []readCase{
	reads(`git stash list`),
	reads(`git stash show -p`),
	reads(`git reset HEAD~1`),
	reads(`git status --short`),
	reads(`git diff src/a.go`),
	reads(`git log -p -- src`),
	reads(`git show HEAD:src/a.go`),
	reads(`git commit -m 'only what is staged'`),
	reads(`git add -n .`),
	reads(`git clean -n`),
	reads(`git apply --check fix.diff`),
	reads(`ls src/*.go`),
	reads(`cat src/{a,b}.go`),
	reads(`f=src/a.go; cat $f`),
	reads(`python3 script.py src/a.go`),
	reads(`python3 -m pytest src`),
	reads(`python3 < script.py`),
	reads(`awk '{print}' src/a.go`),
	reads(`gofmt -l src`),
	reads(`gofmt -d src/a.go`),
	reads(`find src -name '*.go'`),
	reads(`find src -name '*.go' -exec grep -n x {} +`),
	reads(`ls src | xargs grep x`),
	reads(`xargs`),
	reads(`patch --dry-run -p1 < fix.diff`),
	reads(`tar -tf x.tar`),
	reads(`tar -xOf x.tar src/a.go`),
	reads(`tar -cf - src | wc -c`),
	reads(`unzip -l x.zip`),
	reads(`unzip -p x.zip src/a.go`),
	reads(`black --check .`),
	reads(`black --diff src`),
	reads(`prettier --check .`),
	reads(`ruff check src`),
	reads(`ruff format --check src`),
	reads(`rustfmt --check src/main.rs`),
	reads(`isort --check-only src`),
	reads(`autopep8 --diff src/a.py`),
	reads(`eslint src`),
	reads(`shfmt -d run.sh`),
	reads(`clang-format a.c`),
	reads(`go fmt -n ./...`),
	reads(`go vet ./...`),
	reads(`cd "$(git rev-parse --show-toplevel)/src" && cat a.go`),
	reads(`grep -rn x src`),
	reads(`echo $HOME; cat ~/notes`),
	reads(`echo $(cat src/a.go)`),
	reads(`for f in src/*.go; do cat $f; done`),
	reads(`node build.mjs`),
	reads(`chmod --help`),
}

// moreForms are the other writers and expansions of docs/hooks.md.
var moreForms = []readCase{
	// expansions
	writes(`rm src/[ab].go`, "src/a.go", "src/b.go"),
	writes(`rm src/?.go`, "src/a.go", "src/b.go"),
	writes(`cd src && rm *_test.go`, "src/c_test.go"),
	writes(`rm ./src/a*`, "./src/a.go"),
	{cmd: `rm "src/*.go"`, targets: []string{"src/*.go"}, unknown: 1, hints: []string{"src/*.go"}},
	writes(`echo x > ~/notes`, "/home/u/notes"),
	writes(`echo x > "$HOME/notes"`, "/home/u/notes"),
	writes(`d=src; f=$d/a.go; rm "$f"`, "src/a.go"),
	writes(`export OUT=src/b.go; echo x > "$OUT"`, "src/b.go"),
	unknownWith(`x=src/a.go; declare -n r=x; rm $r`, "x"),
	writes(`cd && rm notes`, "/home/u/notes"),
	writes(`files=(src/a.go README.md); rm "${files[@]}"`, "src/a.go", "README.md"),
	writes(`for f in src/*.go; do rm $f; done`, "src/a.go", "src/b.go", "src/c_test.go"),
	writes(`for f in a b; do touch src/$f.go; done`, "src/a.go", "src/b.go"),
	writes(`n=1; touch "out$((n+1)).txt"`, "out2.txt"),
	writes(`touch src/{x,y}{1,2}.go`, "src/x1.go", "src/x2.go", "src/y1.go", "src/y2.go"),
	writes(`r=rm; $r src/a.go`, "src/a.go"),
	writes(`cd src; echo x > $PWD/new.go`, "<top>/src/new.go"),
	writes(`echo x > "$(git rev-parse --show-toplevel)/README.md"`, "<top>/README.md"),
	writes(`(f=src/a.go); f=README.md; rm $f`, "README.md"),
	{cmd: `rm src/*.rs`, targets: []string{"src/*.rs"}, unknown: 1, hints: []string{"src/*.rs"}},
	unknownWith(`echo x > "$OUT/src/a.go"`, "/src/a.go"),
	unknownWith(`rm $(ls src | head -1)`, "src"),
	unknownWith(`X=$(ls src); rm $X/a.go`, "/a.go", "src"),
	unknownWith(`echo x > "$(mktemp)"`),
	unknownWith(`rm "${TARGET:-src/a.go}"`, "src/a.go"),
	unknownWith(`echo x > ~bob/notes`, "~bob/notes"),
	unknownWith(`for f in "$@"; do rm "$f"; done`),
	unknownWith(`while read f; do rm "$f"; done < list.txt`),
	unknownWith(`$EDITOR src/a.go`, "src/a.go"),
	unknownWith(`eval "$CMD"`),
	unknownWith(`bash -c "$SCRIPT"`),
	writes(`c='rm src/a.go'; eval "$c"`, "src/a.go"),
	writes(`s='rm src/b.go'; bash -c "$s"`, "src/b.go"),
	// chmod, chown
	writes(`chmod +x src/a.go src/b.go`, "src/a.go", "src/b.go"),
	writes(`chmod -R 644 src`, "src"),
	writes(`chmod -w src/a.go`, "src/a.go"),
	writes(`chmod --reference=README.md src/a.go`, "src/a.go"),
	writes(`chown -R me:me src`, "src"),
	writes(`chgrp staff README.md`, "README.md"),
	// formatters
	writes(`gawk -i inplace -v x=1 '{print}' src/a.go src/b.go`, "src/a.go", "src/b.go"),
	writes(`goimports -w -local example.com src`, "src"),
	writes(`go fmt ./...`, "."),
	writes(`go fmt ./src/...`, "./src"),
	writes(`go mod tidy`, "go.mod", "go.sum"),
	writes(`prettier --write src/a.ts`, "src/a.ts"),
	writes(`npx prettier -w src`, "src"),
	writes(`black src`, "src"),
	writes(`python3 -m black src`, "src"),
	writes(`ruff format`, "."),
	writes(`ruff check --fix src/a.py`, "src/a.py"),
	writes(`rustfmt src/main.rs`, "src/main.rs"),
	writes(`clang-format -i -style=file a.c b.h`, "a.c", "b.h"),
	writes(`shfmt -i 2 -w run.sh`, "run.sh"),
	writes(`eslint --fix src`, "src"),
	writes(`isort src`, "src"),
	writes(`autopep8 -i src/a.py`, "src/a.py"),
	// find, xargs
	writes(`find . -name '*.tmp' -delete`, "."),
	writes(`find src -name '*.go' -exec sed -i 's/a/b/' {} +`, "src"),
	writes(`find src -type f -execdir rm {} \;`, "src"),
	writes(`find src -exec cp {} /backup/ \;`, "src", "/backup/"),
	writes(`find -delete`, "."),
	writes(`cd src && find . -delete`, "src"),
	writes(`find src -fprint found.txt`, "found.txt"),
	writes(`find src -exec sh -c 'rm "$1"' _ {} \;`, "src"),
	unknownWith(`xargs rm < list.txt`, "src/b.go"),
	unknownWith(`xargs -a list.txt rm -f`, "src/b.go"),
	unknownWith(`git ls-files src | xargs -I{} sed -i s/a/b/ {}`, "src"),
	unknownWith(`cat list.txt | xargs -0 -n1 gofmt -w`, "list.txt"),
	unknownWith(`git ls-files | xargs sed -i s/a/b/`, "*"),
	{cmd: `f() { rm "$1"; }; f src/a.go`, unknown: 2, hints: []string{"src/a.go"}},
	{cmd: `bash -c 'rm "$1"' _ src/a.go`, unknown: 2, hints: []string{"src/a.go"}},
	writes(`g() { cat "$1"; }; g src/a.go`),
	unknownWith(`dd if=/dev/zero of="$F"`),
	writes(`f=src/a.go; dd if=/dev/zero of=$f`, "src/a.go"),
	unknownWith(`rsync -a /tmp/x/ "$DEST"`),
	unknownWith(`ln -s "$T"`),
	unknownWith(`find . -type f | xargs rm`, "*"),
	unknownWith(`for f in $(git ls-files); do gofmt -w $f; done`, "*"),
	unknownWith(`git --work-tree=/srv/app checkout -- .`, "/srv/app"),
	reads(`git --git-dir=/srv/app.git log`),
	// patch
	writes(`patch src/a.go fix.diff`, "src/a.go"),
	writes(`patch -p1 -i fix.diff`, "src/a.go"),
	writes(`patch -i fix.diff`, "a/src/a.go", "a.go", "b/src/a.go"),
	writes(`patch -d src -p2 -i ../fix.diff`, "src/a.go"),
	writes(`patch -o out.go src/a.go fix.diff`, "out.go"),
	writes("patch -p1 <<'EOF'\n"+fixturePatch+"EOF", "src/a.go"),
	unknownWith(`git diff | patch -p1`, "git", "diff"),
	unknownWith(`patch -p1 < missing.diff`, "missing.diff"),
	// tar, unzip
	writes(`tar xzf x.tgz -C src`, "src"),
	writes(`tar --extract --file=x.tar --directory=/srv/out`, "/srv/out"),
	writes(`tar -xf x.tar src/a.go`, "src/a.go"),
	writes(`tar -czf out.tgz src`, "out.tgz"),
	writes(`unzip x.zip`, "."),
	writes(`unzip -o x.zip src/a.go`, "src/a.go"),
	writes(`unzip -q x.zip -d /tmp/out`, "/tmp/out"),
	// inline interpreter code
	unknownWith(`python -c 'import os; os.remove("src/b.go")'`, "src/b.go"),
	unknownWith(`python3 -Bc "open('README.md','a')"`, "README.md"),
	unknownWith("python3 - <<'EOF'\nopen('src/a.go','w').write('x')\nEOF", "src/a.go"),
	unknownWith(`node -e "require('fs').writeFileSync('src/a.js','')"`, "src/a.js"),
	unknownWith(`node --eval="fs.rmSync('src')"`, "src"),
	unknownWith(`perl -e 'unlink "src/a.go"'`, "src/a.go"),
	unknownWith(`ruby -e 'File.write("src/a.rb", "")'`, "src/a.rb"),
	unknownWith(`php -r 'unlink("src/a.php");'`, "src/a.php"),
	unknownWith(`deno eval 'Deno.removeSync("src/a.ts")'`, "src/a.ts"),
	unknownWith(`bun -e 'await Bun.write("src/a.ts", "")'`, "src/a.ts"),
	unknownWith(`echo "open('x','w')" | python3`, "open"),
	writes(`perl -pi -e 's/a/b/' src/a.go`, "src/a.go"),
	// git operations
	gits(`git stash push -m wip`, "|stash push -m wip"),
	gits(`git stash -u`, "|stash -u"),
	gits(`git stash apply stash@{0}`, "|stash apply stash@{0}"),
	gits(`git reset --merge ORIG_HEAD`, "|reset --merge ORIG_HEAD"),
	gits(`git switch -c topic`, "|switch -c topic"),
	gits(`git clean -fdx`, "|clean -fdx"),
	gits(`git apply fix.diff`, "|apply fix.diff"),
	gits(`git am < mbox`, "|am"),
	gits(`git merge topic`, "|merge topic"),
	gits(`git rebase -i main`, "|rebase -i main"),
	gits(`git pull --rebase`, "|pull --rebase"),
	gits(`git cherry-pick abc123`, "|cherry-pick abc123"),
	gits(`git revert HEAD`, "|revert HEAD"),
	gits(`git commit --all -m x`, "|commit --all -m x"),
	gits(`git commit -m x src/a.go`, "|commit -m x src/a.go"),
	gits(`git add -A`, "|add -A"),
	gits(`git add .`, "|add ."),
	gits(`git add -u`, "|add -u"),
	gits(`git -C src stash`, "src|stash"),
	gits(`cd src && git --no-pager checkout main`, "src|checkout main"),
	gits(`b=main; git checkout $b`, "|checkout main"),
	gits(`git add src/*.go`, "|add src/a.go src/b.go src/c_test.go"),
	gits(`cd /other && git reset --hard`, "/other|reset --hard"),
	{cmd: `git restore src/a.go`, targets: []string{"src/a.go"}, git: []string{"|restore src/a.go"}},
	{cmd: `git checkout -- src/a.go`, targets: []string{"src/a.go"}, git: []string{"|checkout -- src/a.go"}},
	unknownWith(`git checkout "$BRANCH"`),
	unknownWith(`cd "$D" && git stash`),
	// a syntax error later on: what comes before is read (Partial)
	writes("rm src/a.go\nif ( ; then", "src/a.go"),
	{cmd: "git stash\necho 'unterminated", git: []string{"|stash"}},
	{cmd: "touch src/{a,b}.go; rm README.md &&", targets: []string{"src/a.go", "src/b.go"}},
}

// check compares what ReadShell read from c.cmd with c.
func (c readCase) check(t *testing.T, top string, r ShellReading) {
	t.Helper()
	want := make([]string, len(c.targets))
	for i, tg := range c.targets {
		want[i] = strings.ReplaceAll(tg, "<top>", top)
	}
	if !slices.Equal(r.Targets, want) && (len(r.Targets) > 0 || len(want) > 0) {
		t.Errorf("%q: targets\n got  %q\n want %q", c.cmd, r.Targets, want)
	}
	var git []string
	for _, g := range r.Git {
		git = append(git, g.Dir+"|"+strings.Join(g.Args, " "))
	}
	if !slices.Equal(git, c.git) {
		t.Errorf("%q: git\n got  %q\n want %q", c.cmd, git, c.git)
	}
	if len(r.Unknown) != c.unknown {
		t.Errorf("%q: %d unknown writes %+v, want %d", c.cmd, len(r.Unknown), r.Unknown, c.unknown)
	}
	var hints []string
	for _, u := range r.Unknown {
		if u.Why == "" || strings.Contains(u.Why, c.cmd) && len(c.cmd) > 20 {
			t.Errorf("%q: unknown write's reason %q is empty or the command's text", c.cmd, u.Why)
		}
		hints = append(hints, u.Hints...)
	}
	for _, h := range c.hints {
		if !slices.Contains(hints, h) {
			t.Errorf("%q: hints %q lack %q", c.cmd, hints, h)
		}
	}
}

// triedForms are what an agent denied by the guard tried next: each once
// slipped past the reader, and its read-only counterpart must still give
// nothing.
var triedForms = []readCase{
	writes(`bash -s <<< 'rm src/a.go'`, "src/a.go"),
	writes("bash <<'X'\ncd src\nrm a.go\nX", "src/a.go"),
	writes(`source /dev/stdin <<< 'rm src/a.go'`, "src/a.go"),
	unknownWith(`echo 'rm src/a.go' | bash`, "src/a.go"),
	unknownWith(`xargs rm <<< src/a.go`, "src/a.go"),
	gits(`git checkout-index -f src/a.go`, "|checkout-index -f src/a.go"),
	gits(`git read-tree -mu HEAD`, "|read-tree -mu HEAD"),
	gits(`git sparse-checkout set docs`, "|sparse-checkout set docs"),
	gits(`git my-alias`, "|my-alias"),
	gits(`yes | git add -p`, "|add -p"),
	gits(`git commit -p`, "|commit -p"),
	unknownWith(`git -c alias.x='!rm src/a.go' x`, "src/a.go"),
	writes(`set -- src/a.go; rm "$1"`, "src/a.go"),
	writes(`set src/a.go src/b.go; rm "$@"`, "src/a.go", "src/b.go"),
	unknownWith(`read f <<< src/a.go; rm "$f"`, "src/a.go"),
	unknownWith(`printf -v f '%s' src/a.go; rm "$f"`, "src/a.go"),
	unknownWith(`mapfile -t a <<< src/a.go; rm "${a[@]}"`, "src/a.go"),
	unknownWith(`echo src/a.go | while read f; do rm "$f"; done`, "src/a.go"),
	unknownWith(`while read f; do rm "$f"; done <<< src/a.go`, "src/a.go"),
	unknownWith(`getopts x f src/a.go; rm "$f"`, "src/a.go"),
	writes(`vim -c '%s/a/b/|wq' src/a.go`, "src/a.go"),
	writes(`ex -sc '%s/a/b/|x' src/a.go`, "src/a.go"),
	writes(`vim -s /dev/null -es src/a.go`, "src/a.go"),
	writes(`printf ',s/a/b/\nw\n' | ed -s src/a.go`, "src/a.go"),
	writes(`nvim --headless +wq src/a.go`, "src/a.go"),
	writes(`emacs --batch src/a.go --eval '(save-buffer)'`, "src/a.go"),
	unknownWith(`parallel rm ::: src/a.go`, "src/a.go"),
	unknownWith(`echo src/a.go | parallel -j2 sed -i s/a/b/`, "src/a.go"),
	reads(`vim -R src/a.go`),
	reads(`view src/a.go`),
	reads(`parallel cat ::: src/a.go`),
	reads(`set -- src/a.go; cat "$1"`),
	reads(`set -euo pipefail; cat src/a.go`),
	reads(`while read f; do cat "$f"; done <<< src/a.go`),
	reads(`bash -s <<< 'cat src/a.go'`),
	reads(`xargs cat <<< src/a.go`),
	reads(`git sparse-checkout list`),
	reads(`git -c color.ui=never diff`),
	reads(`git update-index --refresh`),
	// git's diff and revision options write the --output file, whatever
	// the subcommand; git config -f writes its file unless it only reads.
	writes(`git diff --output=src/a.go`, "src/a.go"),
	writes(`git log -p --output src/a.go`, "src/a.go"),
	writes(`git show HEAD --output=src/a.go`, "src/a.go"),
	writes(`git blame --output=src/a.go README.md`, "src/a.go"),
	writes(`git config -f src/a.go x.y z`, "src/a.go"),
	writes(`git config --file=src/a.go --unset x.y`, "src/a.go"),
	reads(`git diff -- --output=src/a.go`),
	reads(`git config -f src/a.go --get x.y`),
	reads(`git config --file src/a.go -l`),
}

// TestReadShellForms: every form in issueForms is seen (a target, a git
// operation or an unknown write with a hint naming the file), its
// read-only counterpart gives nothing, and so for the other writers and
// expansions docs/hooks.md lists.
func TestReadShellForms(t *testing.T) {
	top, env := readFixture(t)
	for _, group := range []struct {
		name  string
		cases []readCase
	}{{"issue", issueForms}, {"reads", readOnly}, {"more", moreForms}, {"tried", triedForms}} {
		t.Run(group.name, func(t *testing.T) {
			for _, c := range group.cases {
				r, err := ReadShell(c.cmd, env)
				if err != nil {
					t.Errorf("%q: %v", c.cmd, err)
					continue
				}
				if r.Partial != nil && !strings.Contains(c.cmd, "\n") && !strings.HasSuffix(c.cmd, "&&") {
					t.Errorf("%q: partial %v", c.cmd, r.Partial)
				}
				c.check(t, top, r)
			}
		})
	}
}

// TestReadShellIssueHintsReachTheFile: the unknown writes among the
// issue's forms carry a hint that reaches the file they write, and the
// read-only ones none (so the guard can deny the one and allow the other).
func TestReadShellIssueHintsReachTheFile(t *testing.T) {
	_, env := readFixture(t)
	for cmd, file := range map[string]string{
		`python3 -c "open('src/a.go','w')"`: "src/a.go",
		`ls src/*.go | xargs rm`:            "src/b.go",
		`xargs rm < list.txt`:               "src/b.go",
		`echo x > "$OUT/src/a.go"`:          "src/a.go",
		`rm "${TARGET:-src/a.go}"`:          "src/a.go",
		`rm $(ls src | head -1)`:            "src/c_test.go",
		`node --eval="fs.rmSync('src')"`:    "src/a.go",
	} {
		r, err := ReadShell(cmd, env)
		if err != nil || len(r.Unknown) == 0 {
			t.Fatalf("%q: %+v %v", cmd, r, err)
		}
		reached := false
		for _, u := range r.Unknown {
			for _, h := range u.Hints {
				reached = reached || HintReaches(h, file)
			}
		}
		if !reached {
			t.Errorf("%q: no hint of %+v reaches %s", cmd, r.Unknown, file)
		}
	}
	for _, cmd := range []string{`python3 -c "print(1)"`, `echo x > "$OUT"`} {
		r, _ := ReadShell(cmd, env)
		for _, u := range r.Unknown {
			for _, h := range u.Hints {
				if HintReaches(h, "src/a.go") {
					t.Errorf("%q: hint %q reaches src/a.go", cmd, h)
				}
			}
		}
	}
}

func TestHintReaches(t *testing.T) {
	for _, c := range []struct {
		hint, path string
		want       bool
	}{
		{"src/a.go", "src/a.go", true},
		{"./src/a.go", "src/a.go", true},
		{"/src/a.go", "src/a.go", true},
		{"/work/repo/src/a.go", "src/a.go", true},
		{"a.go", "src/a.go", true},
		{"src", "src/a.go", true},
		{"src/", "src/a.go", true},
		{"src/*.go", "src/a.go", true},
		{"*.go", "src/a.go", true},
		{"s*", "src/a.go", true},
		{"src/[ab].go", "src/b.go", true},
		{"src/a.go", "src/b.go", false},
		{"rc/a.go", "src/a.go", true}, // its tail a.go ends the path
		{"lib/b.go", "src/a.go", false},
		{"a.g", "src/a.go", false},
		{"*.rs", "src/a.go", false},
		{"print", "src/a.go", false},
		{"1", "src/a.go", false},
		{"", "src/a.go", false},
		{"/", "src/a.go", false},
		{"..", "src/a.go", false},
		{"src/a.go", "", false},
		{"[", "src/a.go", false},
	} {
		if got := HintReaches(c.hint, c.path); got != c.want {
			t.Errorf("HintReaches(%q, %q) = %v, want %v", c.hint, c.path, got, c.want)
		}
	}
}

// TestReadShellPartial: a syntax error later in the command leaves what
// bash runs before it read, and says so; a command that does not parse
// at its first statement reads nothing, and says so too.
func TestReadShellPartial(t *testing.T) {
	_, env := readFixture(t)
	for cmd, want := range map[string][]string{
		"rm src/a.go\nif ( ; then":    {"src/a.go"},
		"touch README.md; echo 'open": {"README.md"},
		"((":                          nil,
		"rm a &&":                     nil,
	} {
		r, err := ReadShell(cmd, env)
		if err != nil || !errors.Is(r.Partial, ErrShellUnparsable) {
			t.Errorf("%q: err %v, partial %v; want a Partial wrapping ErrShellUnparsable", cmd, err, r.Partial)
		}
		if !slices.Equal(r.Targets, want) {
			t.Errorf("%q: targets %q, want %q", cmd, r.Targets, want)
		}
	}
	if r, _ := ReadShell("rm src/a.go", env); r.Partial != nil {
		t.Errorf("a whole command read as partial: %v", r.Partial)
	}
}

// TestReadShellWithoutEnvironment: with no cwd, home or toplevel, the words
// that need them are unknown writes, never guesses.
func TestReadShellWithoutEnvironment(t *testing.T) {
	for _, cmd := range []string{
		`rm src/*.go`,
		`echo x > ~/notes`,
		`cd "$(git rev-parse --show-toplevel)/src" && rm a.go`,
		`cd "$D" && rm *.go`,
	} {
		r, err := ReadShell(cmd, ShellEnv{})
		if err != nil || len(r.Targets) != 0 || len(r.Unknown) != 1 {
			t.Errorf("%q: %+v %v; want one unknown write", cmd, r, err)
		}
	}
	// An absolute glob needs no cwd.
	top, _ := readFixture(t)
	r, err := ReadShell("rm "+top+"/src/a*", ShellEnv{})
	if err != nil || !slices.Equal(r.Targets, []string{top + "/src/a.go"}) {
		t.Errorf("absolute glob: %+v %v", r, err)
	}
}

// TestReadShellBounds: globs list at most maxGlobEntries entries, a long
// loop is read once with its variable unknown, and the size, nesting and
// work bounds of ShellWriteTargets hold.
func TestReadShellBounds(t *testing.T) {
	entries := make([]fs.DirEntry, 3000)
	for i := range entries {
		entries[i] = fakeEntry(fmt.Sprintf("f%04d.go", i))
	}
	listed := 0
	env := ShellEnv{Cwd: "/r", ReadDir: func(string) ([]fs.DirEntry, error) { listed++; return entries, nil }}
	r, err := ReadShell(strings.Repeat("rm *.go; ", 20), env)
	if err != nil {
		t.Fatal(err)
	}
	if listed*len(entries) > maxGlobEntries+2*len(entries) {
		t.Errorf("listed %d directories of %d entries, past the bound of %d", listed, len(entries), maxGlobEntries)
	}
	if len(r.Targets) != len(entries) || len(r.Unknown) != 1 || !strings.Contains(r.Unknown[0].Why, "files acc lists") {
		t.Errorf("%d targets, unknown %+v; want all %d files once and one unknown write past the bound", len(r.Targets), r.Unknown, len(entries))
	}
	loop := "for f in " + strings.Repeat("src/x ", maxLoopItems+1) + "; do rm $f; done"
	if r, err := ReadShell(loop, env); err != nil || len(r.Targets) != 0 || len(r.Unknown) != 1 || !slices.Equal(r.Unknown[0].Hints, []string{"src/x"}) {
		t.Errorf("long loop: %+v %v", r, err)
	}
	if _, err := ReadShell(strings.Repeat("x", MaxShellCommand+1), env); !errors.Is(err, ErrShellTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, err := ReadShell(strings.Repeat("(", MaxShellDepth+1), env); !errors.Is(err, ErrShellTooComplex) {
		t.Errorf("too deep: %v", err)
	}
	many := strings.Repeat("a=1;", 20000) + strings.Repeat("echo $b > x;", 20000)
	if _, err := ReadShell(many, env); !errors.Is(err, ErrShellTooComplex) {
		t.Errorf("20,000 assignments then 20,000 lookups: %v, want ErrShellTooComplex (the work bound)", err)
	}
}

type fakeEntry string

func (e fakeEntry) Name() string               { return string(e) }
func (e fakeEntry) IsDir() bool                { return false }
func (e fakeEntry) Type() fs.FileMode          { return 0 }
func (e fakeEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrNotExist }

// TestShellWriteTargetsUnchanged: ShellWriteTargets, which the hook uses
// until it reads with ReadShell, reads words as written, as before.
func TestShellWriteTargetsUnchanged(t *testing.T) {
	for cmd, want := range map[string][]string{
		`rm src/*.go`:          {"src/*.go"},
		`f=a; echo x > $f`:     {"$f"},
		`find src -delete`:     nil,
		`git stash`:            nil,
		`touch src/{a,b}.go`:   {"src/{a,b}.go"},
		`chmod +x src/a.go`:    nil,
		`python3 -c "open(1)"`: nil,
	} {
		if got, err := ShellWriteTargets(cmd); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q %v, want %q", cmd, got, err, want)
		}
	}
}

func FuzzReadShell(f *testing.F) {
	for _, group := range [][]readCase{issueForms, readOnly, moreForms} {
		for _, c := range group {
			f.Add(c.cmd)
		}
	}
	for _, c := range ownVectors {
		f.Add(c.cmd)
	}
	for _, s := range []string{"((", "'x", "a=$((1+", "${x:-$(rm y)}", "coproc rm a", "for x in {1..100000}; do rm $x; done",
		"touch {1..9}{1..9}{1..9}{1..9}{1..9}", "x=(); rm ${x[@]:1}", "rm ~+/a ~-/b", "rm @(a|b)", "declare -n r=x; rm $r"} {
		f.Add(s)
	}
	top, env := readFixture(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		r, err := ReadShell(cmd, env)
		if err != nil {
			if !errors.Is(err, ErrShellTooLarge) && !errors.Is(err, ErrShellTooComplex) && !errors.Is(err, ErrShellUnparsable) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if r.Partial != nil && !errors.Is(r.Partial, ErrShellUnparsable) {
			t.Fatalf("partial that is no syntax error: %v", r.Partial)
		}
		seen := map[string]bool{}
		for _, tg := range r.Targets {
			if tg == "" || seen[tg] || discardSink(tg) {
				t.Fatalf("bad target %q in %q", tg, r.Targets)
			}
			seen[tg] = true
		}
		for _, u := range r.Unknown {
			if u.Why == "" || !u.DirKnown && u.Dir != "" {
				t.Fatalf("bad unknown write %+v", u)
			}
		}
		for _, g := range r.Git {
			if len(g.Args) == 0 {
				t.Fatalf("git operation without a subcommand: %+v", g)
			}
		}
		// Reading never writes: the fixture is as it was.
		if b, err := os.ReadFile(filepath.Join(top, "src/a.go")); err != nil || string(b) != "package a\n" {
			t.Fatalf("the fixture changed: %q %v", b, err)
		}
	})
}

// BenchmarkReadShell measures ReadShell, and ShellWriteTargets on the same
// commands beside it (legacy-…), in the fixture plus a directory of 500
// files for the glob500 command.
func BenchmarkReadShell(b *testing.B) {
	top, env := readFixture(b)
	if err := os.MkdirAll(filepath.Join(top, "gen"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 500 {
		if err := os.WriteFile(filepath.Join(top, "gen", fmt.Sprintf("f%03d.go", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ name, cmd string }{
		{"plain", `go test ./... 2>&1 | tail -20 > test.log`},
		{"glob", `rm -f src/*.go && touch src/{a,b}.go`},
		{"glob500", `rm -f gen/*.go`},
		{"git", `git add -A && git commit -m wip`},
		{"inline", `python3 -c "import os; os.remove('src/a.go')"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ReadShell(c.cmd, env); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("legacy-"+c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ShellWriteTargets(c.cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadShellKeepsTheVectors: on every vector of ShellWriteTargets,
// ReadShell reads the same targets, except where it now expands a word or
// knows a writer (listed here with what it reads instead).
func TestReadShellKeepsTheVectors(t *testing.T) {
	_, env := readFixture(t)
	changed := map[string]readCase{
		`echo x > "dir/$NAME.txt"`:     unknownWith(`echo x > "dir/$NAME.txt"`, "dir/", ".txt"),
		`echo x > $OUT`:                unknownWith(`echo x > $OUT`),
		`echo x > ~/notes`:             writes(`echo x > ~/notes`, "/home/u/notes"),
		`find . -name '*.tmp' -delete`: writes(`find . -name '*.tmp' -delete`, "."),
	}
	// The vectors in which ReadShell also sees a write it cannot know.
	unknownToo := map[string]bool{
		`python3 -c "open('f','w')"`: true, `eval "$CMD"`: true, `node - <<< 'x'`: true,
		`echo x > *.go`: true, `"$EDITOR" f`: true, `$RM f`: true, `perl -pe 's/a/b/' f`: true,
		`xargs rm < list`: true,
	}
	for _, c := range append(slices.Clone(referenceVectors), ownVectors...) {
		r, err := ReadShell(c.cmd, env)
		if err != nil {
			t.Errorf("%q: %v", c.cmd, err)
			continue
		}
		if want, ok := changed[c.cmd]; ok {
			want.check(t, "", r)
			continue
		}
		if !slices.Equal(r.Targets, c.want) {
			t.Errorf("%q: ShellWriteTargets reads %q, ReadShell %q", c.cmd, c.want, r.Targets)
		}
		if (len(r.Unknown) > 0) != unknownToo[c.cmd] {
			t.Errorf("%q: unknown writes %+v", c.cmd, r.Unknown)
		}
	}
}

// TestReadShellReadsOnlyRegularFiles: the patch or list a command reads
// from is read only when it is a regular file of at most
// MaxShellReadFile bytes; a FIFO (which could block the hook) or a larger
// file is an unknown write.
func TestReadShellReadsOnlyRegularFiles(t *testing.T) {
	top, env := readFixture(t)
	if err := syscall.Mkfifo(filepath.Join(top, "pipe.diff"), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	big := "--- a/src/a.go\n+++ b/src/a.go\n" + strings.Repeat("+x\n", MaxShellReadFile/3+1)
	if err := os.WriteFile(filepath.Join(top, "big.diff"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{`patch -p1 < pipe.diff`, `patch -p1 -i big.diff`, `patch -p1 < src`} {
		r, err := ReadShell(cmd, env)
		if err != nil || len(r.Targets) != 0 || len(r.Unknown) != 1 {
			t.Errorf("%q: %+v %v; want one unknown write", cmd, r, err)
		}
	}
	// A glob through the FIFO neither blocks nor matches.
	r, err := ReadShell(`rm pipe.diff/* src/a*`, env)
	if err != nil || !slices.Equal(r.Targets, []string{"pipe.diff/*", "src/a.go"}) {
		t.Errorf("glob past a FIFO: %+v %v", r, err)
	}
}

// TestReadShellExpansionIsCounted: the work bound counts what expanding
// costs, so a command made of expansions is bounded like one of text: a
// MiB of brace expansions or of globs is not read to the end
// (ErrShellTooComplex, which the guard treats as a write anywhere), nested
// loops are read per item only up to maxLoopWalks bodies, and a long list
// of variables stays short to look up.
func TestReadShellExpansionIsCounted(t *testing.T) {
	_, env := readFixture(t)
	for name, cmd := range map[string]string{
		"braces": strings.Repeat("touch {1..16000};", MaxShellCommand/18),
		"globs":  strings.Repeat("rm src/*.go;", MaxShellCommand/13),
	} {
		if _, err := ReadShell(cmd, env); !errors.Is(err, ErrShellTooComplex) {
			t.Errorf("%s: %v, want ErrShellTooComplex", name, err)
		}
	}
	items := strings.Repeat("x ", maxLoopItems)
	nested := "for a in " + items + "; do for b in " + items + "; do for c in " + items + "; do rm $a$b$c; done; done; done"
	r, err := ReadShell(nested, env)
	if err != nil || !slices.Equal(r.Targets, []string{"xxx"}) || len(r.Unknown) == 0 {
		t.Errorf("nested loops: %+v %v; want xxx while loop walks last, then unknown writes", r.Targets, err)
	}
	many := ""
	for i := range 3 * maxShellVars {
		many += fmt.Sprintf("v%d=src/a.go; ", i)
	}
	r, err = ReadShell(many+fmt.Sprintf("rm $v%d; rm $v0", 3*maxShellVars-1), env)
	if err != nil || !slices.Equal(r.Targets, []string{"src/a.go"}) || len(r.Unknown) != 1 {
		t.Errorf("%d variables: %+v %v; want the newest followed, the oldest unknown", 3*maxShellVars, r, err)
	}
}

// TestReadShellUnknownWriteDir: an unknown write says which directory its
// relative hints are relative to, and whether that is known.
func TestReadShellUnknownWriteDir(t *testing.T) {
	_, env := readFixture(t)
	for cmd, want := range map[string]UnknownWrite{
		`cd src && python3 -c "open('a.go','w')"`: {Dir: "src", DirKnown: true, Hints: []string{"open", "a.go", "w"}},
		`cd /srv && echo x > "$OUT"`:              {Dir: "/srv", DirKnown: true},
		`cd "$D" && rm a.go`:                      {Dir: "", DirKnown: false, Hints: []string{"a.go"}},
		`python3 -c "open('a.go','w')"`:           {Dir: "", DirKnown: true, Hints: []string{"open", "a.go", "w"}},
	} {
		r, err := ReadShell(cmd, env)
		if err != nil || len(r.Unknown) != 1 {
			t.Errorf("%q: %+v %v", cmd, r, err)
			continue
		}
		got := r.Unknown[0]
		if got.Dir != want.Dir || got.DirKnown != want.DirKnown || !slices.Equal(got.Hints, want.Hints) {
			t.Errorf("%q: %+v, want dir %q known %v hints %q", cmd, got, want.Dir, want.DirKnown, want.Hints)
		}
	}
}
