package sourcetree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReleasePrepareRefusesADirtyTree: scripts/release-prepare.sh
// (docs/design.md#modules-and-releases) commits what it changes, so it
// refuses to start in a work tree with changes of its own, with exit 1 and
// a message, leaving HEAD on its branch and the files as they were.
func TestReleasePrepareRefusesADirtyTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(workspaceRoot(t), "scripts", "release-prepare.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"scripts/release-prepare.sh": string(script),
		"go.mod":                     "module github.com/acc-go/acc\n\ngo 1.26\n",
	})
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(envWithoutGit(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet", "--initial-branch=main")
	git("add", "-A")
	git("commit", "--quiet", "-m", "base")
	head := git("rev-parse", "HEAD")
	dirty := "module github.com/acc-go/acc\n\ngo 1.26\n\n// an edit not committed\n"
	writeFiles(t, dir, map[string]string{"go.mod": dirty})

	cmd := exec.Command("bash", filepath.Join(dir, "scripts", "release-prepare.sh"), "v1.0.0")
	cmd.Env = envWithoutGit()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v:\n%s", err, out)
	}
	if want := "release-prepare: the work tree has changes; commit or stash them first"; !strings.Contains(string(out), want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if got := git("rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
	if got := git("symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("HEAD is on %q, not main", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(data) != dirty {
		t.Errorf("go.mod changed:\n%s", data)
	}
}

// envWithoutGit is the environment without the GIT_* variables a caller
// (a Git hook running the tests) may have set, which would point git at the
// caller's repository.
func envWithoutGit() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestCheckInstallLeavesOtherRunsAlone: scripts/check-install.sh
// (docs/design.md#modules-and-releases) removes from the shared module
// cache only what is its own — its run's throwaway version, the fixed
// version runs used before, and per-run versions a killed run left more
// than a day ago — never the copy of a run going on at the same time,
// which it used to delete from under that run's go install. Here the run
// stops early (release-prepare fails), so only its clean-up is exercised.
func TestCheckInstallLeavesOtherRunsAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(workspaceRoot(t), "scripts", "check-install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"src/scripts/check-install.sh":   string(script),
		"src/scripts/release-prepare.sh": "#!/usr/bin/env bash\necho release-prepare: stopped by the test >&2\nexit 1\n",
	})
	if err := os.Chmod(filepath.Join(dir, "src", "scripts", "release-prepare.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "--quiet", "--initial-branch=main", filepath.Join(dir, "src"))
	git.Env = envWithoutGit()
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	mc := filepath.Join(dir, "modcache")
	dl := "cache/download/github.com/acc-go/acc/@v/"
	concurrent := []string{dl + "v0.0.1-installcheck.1700000000.42.zip", dl + "v0.0.1-installcheck.1700000000.42.info",
		"github.com/acc-go/acc@v0.0.1-installcheck.1700000000.42/go.mod"}
	legacy := []string{dl + "v0.0.1-installcheck.zip", dl + "v0.0.1-installcheck.mod", "github.com/acc-go/acc@v0.0.1-installcheck/go.mod"}
	stale := []string{dl + "v0.0.1-installcheck.1600000000.7.zip", "github.com/acc-go/acc@v0.0.1-installcheck.1600000000.7/go.mod"}
	files := map[string]string{}
	for _, f := range append(append(append([]string{}, concurrent...), legacy...), stale...) {
		files[f] = "x"
	}
	writeFiles(t, mc, files)
	old := time.Now().Add(-48 * time.Hour)
	for _, f := range stale {
		for p := filepath.Join(mc, filepath.FromSlash(f)); p != mc; p = filepath.Dir(p) {
			if strings.Contains(filepath.Base(p), "1600000000") {
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	cmd := exec.Command("bash", filepath.Join(dir, "src", "scripts", "check-install.sh"))
	cmd.Env = append(envWithoutGit(), "GOMODCACHE="+mc, "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "stopped by the test") {
		t.Fatalf("want the run to stop at release-prepare with exit 1, got %v:\n%s", err, out)
	}
	exists := func(f string) bool {
		_, err := os.Stat(filepath.Join(mc, filepath.FromSlash(f)))
		return err == nil
	}
	for _, f := range concurrent {
		if !exists(f) {
			t.Errorf("the run removed %s, another run's copy", f)
		}
	}
	for _, f := range append(legacy, stale...) {
		if exists(f) {
			t.Errorf("the run left %s, a copy no run uses any more", f)
		}
	}
}
