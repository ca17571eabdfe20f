package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// wantReason fails t unless err is a protocol error with reason and code.
func wantReason(t testing.TB, err error, reason string, code protocol.ExitCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s (exit %d), got success", reason, code)
	}
	pe := protocol.AsError(err)
	if pe.Reason != reason || pe.Code() != code {
		t.Fatalf("want %s (exit %d), got %s (exit %d): %s", reason, code, pe.Reason, pe.Code(), pe.Message)
	}
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// assertOneLine checks the refusal rule: one line of text.
func assertOneLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	for _, r := range msg {
		if r == '\n' || r == '\r' {
			t.Fatalf("error message is not one line: %q", msg)
		}
	}
	if msg == "" {
		t.Fatal("empty error message")
	}
}

// git runs git for test setup with a neutral configuration and no GIT_*
// variables from the environment, and returns its trimmed stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is required for the workspace tests: %v", err)
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=acc test", "GIT_AUTHOR_EMAIL=test@acc.invalid",
		"GIT_COMMITTER_NAME=acc test", "GIT_COMMITTER_EMAIL=test@acc.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo creates a repository with one commit on branch main and an origin.
func newRepo(t *testing.T, dir string) {
	t.Helper()
	mustMkdir(t, dir)
	git(t, dir, "init", "-q", "-b", "main")
	mustWrite(t, filepath.Join(dir, "README"), "hello\n")
	git(t, dir, "add", "README")
	git(t, dir, "commit", "-q", "-m", "first")
	git(t, dir, "remote", "add", "origin", "https://example.invalid/repo.git")
}

func discover(t *testing.T, cwd string, env map[string]string) *Workspace {
	t.Helper()
	ws, err := Discover(context.Background(), DiscoverOptions{Cwd: cwd, Getenv: envMap(env)})
	if err != nil {
		t.Fatalf("Discover(%s): %v", cwd, err)
	}
	return ws
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
