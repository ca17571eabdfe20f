package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkGitTouched measures one whole GitTouched call (every git
// process it starts) on a repository of 2,000 tracked files with ten local
// edits, where feature differs from main in 50 files.
func BenchmarkGitTouched(b *testing.B) {
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	write := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run := func(args ...string) {
		if out, err := gitTry(repo, args...); err != nil {
			b.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	write(filepath.Join(repo, "README"), "r\n")
	run("init", "-q", "-b", "main")
	for i := 0; i < 2000; i++ {
		write(filepath.Join(repo, fmt.Sprintf("pkg%02d", i/50), fmt.Sprintf("f%04d.go", i)), fmt.Sprintf("package p\n// %d\n", i))
	}
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	run("checkout", "-q", "-b", "feature")
	for i := 0; i < 2000; i += 40 {
		write(filepath.Join(repo, fmt.Sprintf("pkg%02d", i/50), fmt.Sprintf("f%04d.go", i)), "package p\n// feature\n")
	}
	run("commit", "-q", "-am", "feature")
	run("checkout", "-q", "main")
	for i := 1; i < 2000; i += 200 {
		write(filepath.Join(repo, fmt.Sprintf("pkg%02d", i/50), fmt.Sprintf("f%04d.go", i)), "package p\n// local\n")
	}
	for _, c := range []struct {
		name  string
		args  []string
		paths int
	}{
		{"stash", []string{"stash"}, 10},
		{"checkout branch", []string{"checkout", "feature"}, 50},
		{"commit -a", []string{"commit", "-am", "x"}, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				e, err := GitTouched(context.Background(), repo, c.args)
				if err != nil || e == nil || len(e.Paths) != c.paths || e.Unknown != "" {
					b.Fatalf("GitTouched(%q) = %+v, %v; want %d paths", c.args, e, err, c.paths)
				}
			}
		})
	}
}
