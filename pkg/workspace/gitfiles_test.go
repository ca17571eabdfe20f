package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGitFromFilesAgreesWithGit reads many repository layouts both ways —
// from the files, and by running Git — and requires the same facts wherever
// the file reader answers; where it declines, Git decides.
func TestGitFromFilesAgreesWithGit(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_ALLOW_PROTOCOL=file", "GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=protocol.file.allow", "GIT_CONFIG_VALUE_0=always")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	repo := filepath.Join(base, "repo")
	os.MkdirAll(filepath.Join(repo, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(repo, "src", "a.go"), []byte("x"), 0o644)
	run(base, "init", "-q", "-b", "main", repo)
	run(repo, "add", "-A")
	run(repo, "commit", "-q", "-m", "one")
	run(repo, "worktree", "add", "-q", "-b", "side", filepath.Join(base, "wt"))
	run(repo, "worktree", "add", "-q", "--detach", filepath.Join(base, "detached"))
	run(repo, "worktree", "add", "-q", "-b", "nested", filepath.Join(repo, "nested"))
	packed := filepath.Join(base, "packed")
	run(base, "clone", "-q", repo, packed)
	run(packed, "pack-refs", "--all")
	unborn := filepath.Join(base, "unborn")
	run(base, "init", "-q", "-b", "trunk", unborn)
	sub := filepath.Join(base, "super")
	run(base, "init", "-q", "-b", "main", sub)
	run(sub, "submodule", "add", "-q", repo, "lib")
	run(sub, "commit", "-q", "-m", "sub")
	bare := filepath.Join(base, "bare.git")
	run(base, "clone", "-q", "--bare", repo, bare)
	plain := filepath.Join(base, "plain")
	os.MkdirAll(plain, 0o755)

	answered := 0
	for _, dir := range []string{
		repo, filepath.Join(repo, "src", "deep"), filepath.Join(base, "wt"), filepath.Join(base, "wt", "src"),
		filepath.Join(base, "detached"), filepath.Join(repo, "nested", "src"), packed, unborn,
		sub, filepath.Join(sub, "lib"), filepath.Join(sub, "lib", "src"), bare, filepath.Join(repo, ".git"),
		filepath.Join(repo, ".git", "refs"), plain,
	} {
		want := probeGit(context.Background(), dir, true)
		if want != nil {
			want.Remote = nil
		}
		got, ok := GitFromFiles(dir)
		if !ok {
			t.Logf("%s: left to Git", dir)
			continue
		}
		answered++
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: files and Git disagree (-git +files):\n%s", dir, diff)
		}
	}
	if answered < 10 {
		t.Fatalf("the file reader answered only %d layouts; it should handle the common ones", answered)
	}
}
