package realclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// holderEdit is the uncommitted change the holder of src/a.go has made in
// TestGuardAgentWays: what a stash, a checkout or a rewrite would lose.
const holderEdit = "package a\n\n// the holder's work in progress\n"

// TestGuardAgentWays proves on real Claude Code and
// Codex: in a room whose peer holds a guarded claim on src/a.go (with an
// uncommitted edit in it), the model tries the ways agents take when a
// write is denied — `git stash`, `git checkout src/a.go` (no `--`) and a
// rewrite from inline Python. Each is denied before it runs, the model is
// told who holds the file, and afterwards the file still holds the
// holder's edit and the stash list is empty. A read of the same file and a
// read-only git command pass.
func TestGuardAgentWays(t *testing.T) {
	for _, c := range []Client{Claude, Codex} {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			holder := w.holdsClaim(w.repo)
			absA := filepath.Join(w.repo, "src", "a.go")
			if err := os.WriteFile(absA, []byte(holderEdit), 0o644); err != nil {
				t.Fatal(err)
			}
			steps := []guardStep{
				{call: fakemodel.Shell("git stash"), deny: true},
				{call: fakemodel.Shell("git checkout src/a.go"), deny: true},
				{call: fakemodel.Shell(`python3 -c "open('src/a.go','w').write('package hacked')"`), deny: true},
				{call: fakemodel.Shell("cat src/a.go"), want: "work in progress"},
				{call: fakemodel.Shell("git diff --stat"), want: "src/a.go"},
			}
			r := w.hooked(t, c, w.repo, nil)
			playGuard(t, w, r, holder, steps, "Clean up the working tree and reset src/a.go.")
			if got := mustRead(t, absA); got != holderEdit {
				t.Errorf("src/a.go holds %q, want the holder's edit %q", got, holderEdit)
			}
			cmd := exec.Command("git", "stash", "list")
			cmd.Dir = w.repo
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "" {
				t.Errorf("git stash list: %q (%v), want it empty", out, err)
			}
		})
	}
}
