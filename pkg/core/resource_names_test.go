package core

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// TestCanonicalNameFollowsTheKernel checks that the name of a path is the
// name of the file a write to it would really reach: ".." after a symlink
// climbs from where the link leads (not lexically), and a dangling symlink
// names its target (a write through it creates that target). Otherwise one
// file has two names and a guarded claim on one lets a write through the
// other slip by.
func TestCanonicalNameFollowsTheKernel(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(w.repo, "other", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(w.repo, "other", "b.go"), nil, 0o644))
	// src/lnk -> ../other/deep, so src/lnk/.. is other, not src.
	must(os.Symlink(filepath.Join("..", "other", "deep"), filepath.Join(w.repo, "src", "lnk")))
	// src/dang -> ../other/new.go, which does not exist yet.
	must(os.Symlink(filepath.Join("..", "other", "new.go"), filepath.Join(w.repo, "src", "dang")))
	// src/dangdir -> ../other/newdir, a directory that does not exist yet.
	must(os.Symlink(filepath.Join("..", "other", "newdir"), filepath.Join(w.repo, "src", "dangdir")))
	// src/out -> a file outside the workspace that does not exist yet.
	must(os.Symlink(filepath.Join(filepath.Dir(w.repo), "outside", "x.go"), filepath.Join(w.repo, "src", "out")))
	// src/loop -> loop.
	must(os.Symlink("loop", filepath.Join(w.repo, "src", "loop")))

	for _, c := range []struct{ spell, cwd, want string }{
		{"file:src/lnk/../b.go", w.repo, "file:other/b.go"},
		{"file:lnk/../b.go", filepath.Join(w.repo, "src"), "file:other/b.go"},
		{"file:../b.go", filepath.Join(w.repo, "src", "lnk"), "file:other/b.go"},
		{"file:src/lnk/../**", w.repo, "file:other/**"},
		{"file:src/dang", w.repo, "file:other/new.go"},
		{"file:src/dangdir/x.go", w.repo, "file:other/newdir/x.go"},
		{"file:src/new/../lnk/x.go", w.repo, "file:other/deep/x.go"},
	} {
		got, err := CanonicalResource(w.main.WS, c.spell, c.cwd)
		if err != nil || got != c.want {
			t.Errorf("CanonicalResource(%s) from %s = %q, %v; want %s", c.spell, c.cwd, got, err, c.want)
		}
		if c.spell[len(c.spell)-1] == '*' {
			continue
		}
		got, err = CanonicalPath(w.main.WS, c.spell[len("file:"):], c.cwd)
		if err != nil || got != c.want {
			t.Errorf("CanonicalPath(%s) from %s = %q, %v; want %s", c.spell[len("file:"):], c.cwd, got, err, c.want)
		}
	}
	// A write through src/out lands outside the workspace.
	_, err := CanonicalResource(w.main.WS, "file:src/out", w.repo)
	wantReason(t, err, protocol.ReasonPathOutsideWorkspace, protocol.ExitUsage)
	// A link loop names nothing real; it must still get an answer.
	if got, err := CanonicalResource(w.main.WS, "file:src/loop/a.go", w.repo); err != nil || got != "file:src/loop/a.go" {
		t.Errorf("a link loop: %q %v", got, err)
	}

	// And so claims on the two spellings of one file conflict.
	ctx := context.Background()
	a, err := w.main.Attach(ctx, AttachInput{ParticipantID: "codex"})
	must(err)
	b, err := w.side.Attach(ctx, AttachInput{ParticipantID: "claude"})
	must(err)
	_, err = w.main.Claim(ctx, ClaimInput{Caller: Caller{a.SessionID, a.Generation}, Resource: "file:other/new.go", Cwd: w.repo, Enforcement: "guarded"})
	must(err)
	_, err = w.main.Claim(ctx, ClaimInput{Caller: Caller{b.SessionID, b.Generation}, Resource: "file:src/dang", Cwd: w.repo})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
}

// TestCanonicalNamesOfAConfigWorkspaceNeverCollide checks a workspace whose
// acc.workspace.json names several roots: two different files never share a
// name, a path in no root is outside, and the name of a file does not
// depend on which repository the caller started in.
func TestCanonicalNamesOfAConfigWorkspaceNeverCollide(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ACC_DATA_HOME": filepath.Join(base, "data"), "HOME": base}
	open := func(dir string) *Room {
		t.Helper()
		r, err := Open(context.Background(), OpenOptions{Cwd: dir, Getenv: func(k string) string { return env[k] }, GOOS: "linux"})
		if err != nil {
			t.Fatalf("open %s: %v", dir, err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Two roots, a and b, each with an x.go.
	multi := filepath.Join(base, "multi")
	write(filepath.Join(multi, workspace.ConfigFileName), `{"schemaVersion":1,"workspaceId":"multi_ws","roots":["a","b"]}`)
	write(filepath.Join(multi, "a", "x.go"), "")
	write(filepath.Join(multi, "b", "x.go"), "")
	r := open(filepath.Join(multi, "a"))
	na, errA := CanonicalResource(r.WS, "file:x.go", filepath.Join(multi, "a"))
	nb, errB := CanonicalResource(r.WS, "file:x.go", filepath.Join(multi, "b"))
	if errA != nil || errB != nil || na == nb {
		t.Errorf("a/x.go = %q %v, b/x.go = %q %v: two files must have two names", na, errA, nb, errB)
	}
	if na != "file:a/x.go" || nb != "file:b/x.go" {
		t.Errorf("names are relative to the config's directory: %q %q", na, nb)
	}
	if nb2, err := CanonicalResource(open(filepath.Join(multi, "b")).WS, "file:x.go", filepath.Join(multi, "b")); err != nil || nb2 != nb {
		t.Errorf("b/x.go from a caller in b = %q %v, want %q", nb2, err, nb)
	}
	_, err = CanonicalResource(r.WS, "file:"+workspace.ConfigFileName, multi)
	wantReason(t, err, protocol.ReasonPathOutsideWorkspace, protocol.ExitUsage)

	// A config above two repositories: the same file has one name from
	// either, and a file beside the repositories is not one of theirs.
	proj := filepath.Join(base, "proj")
	write(filepath.Join(proj, workspace.ConfigFileName), `{"schemaVersion":1,"workspaceId":"proj_ws","roots":["."]}`)
	for _, repo := range []string{"r1", "r2"} {
		dir := filepath.Join(proj, repo)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "init", "-q", "-b", "main", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	write(filepath.Join(proj, "r1", "a.go"), "")
	write(filepath.Join(proj, "a.go"), "")
	r1, r2 := open(filepath.Join(proj, "r1")), open(filepath.Join(proj, "r2"))
	from1, err1 := CanonicalResource(r1.WS, "file:a.go", filepath.Join(proj, "r1"))
	from2, err2 := CanonicalResource(r2.WS, "file:../r1/a.go", filepath.Join(proj, "r2"))
	top, err3 := CanonicalResource(r1.WS, "file:../a.go", filepath.Join(proj, "r1"))
	if err1 != nil || err2 != nil || err3 != nil || from1 != from2 || from1 == top {
		t.Errorf("r1/a.go from r1 = %q %v, from r2 = %q %v; proj/a.go = %q %v: one file one name, two files two names",
			from1, err1, from2, err2, top, err3)
	}
}

// TestContainmentFollowsADanglingDataHomeLink checks a data home that is a
// symlink to a directory inside the workspace that does not exist yet: the
// store would be created there, so it is refused (exit 2), not accepted and
// then failed on as an internal error when the store directory is made.
func TestContainmentFollowsADanglingDataHomeLink(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "dh")
	if err := os.Symlink(filepath.Join(repo, ".accdata"), link); err != nil {
		t.Fatal(err)
	}
	wantReason(t, workspace.CheckContainment(link, []string{repo}), protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)
}

// TestGlobRefusalsNameASpellingThatWorks checks the hint of a refused glob:
// a star in the first segment of a relative path means the directory typed
// in, file:**, never file:/** (the filesystem root, itself refused).
func TestGlobRefusalsNameASpellingThatWorks(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	for spell, hint := range map[string]string{
		"file:*.go":       "claimed as file:**",
		"file:**/a.go":    "claimed as file:**",
		"file:*":          "claimed as file:**",
		"file:src/*.go":   "claimed as file:src/**",
		"file:src//x/*":   "claimed as file:src//x/**",
		"file:/tmp/*.txt": "claimed as file:/tmp/**",
	} {
		_, err := CanonicalResource(w.main.WS, spell, w.repo)
		wantReason(t, err, protocol.ReasonResourceSpelling, protocol.ExitUsage)
		if msg := err.Error(); !strings.Contains(msg, hint) || strings.Contains(msg, "file:/**") && spell[5] != '/' {
			t.Errorf("%s: %v; want the hint %q", spell, msg, hint)
		}
	}
}

// TestGuardDeniesWritesThroughAnotherSpelling checks the write guard with
// the spellings above: a write through a ".." after a symlink, or through a
// dangling symlink, reaches a file under a peer's guarded claim and is
// denied.
func TestGuardDeniesWritesThroughAnotherSpelling(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	for _, p := range []string{filepath.Join(w.repo, "other", "deep")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("..", "other", "deep"), filepath.Join(w.repo, "src", "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "other", "new.go"), filepath.Join(w.repo, "src", "dang")); err != nil {
		t.Fatal(err)
	}
	a, err := w.main.Attach(ctx, AttachInput{ParticipantID: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.main.Attach(ctx, AttachInput{ParticipantID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"file:other/new.go", "file:other/b.go"} {
		if _, err := w.main.Claim(ctx, ClaimInput{Caller: Caller{a.SessionID, a.Generation}, Resource: r, Cwd: w.repo, Enforcement: "guarded"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{"src/dang", w.repo + "/src/lnk/../b.go", "src/lnk/../b.go"} {
		d, err := w.main.CheckWrite(ctx, GuardInput{SessionID: b.SessionID, Cwd: w.repo, Targets: []string{target}})
		if err != nil || !d.Deny {
			t.Errorf("a write to %s reaches a guarded file of codex: %+v %v", target, d, err)
		}
	}
}
