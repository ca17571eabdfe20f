package sourcetree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
