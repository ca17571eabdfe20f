package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPick: what make build stamped wins over the module version, which
// is a pseudo-version in any build from a checkout; the module version
// serves when nothing was stamped.
func TestPick(t *testing.T) {
	for _, c := range []struct{ stamped, module, want string }{
		{"v0.4.0-3-g0e04dab", "v0.0.0-20260101000000-0e04dab1dd48", "v0.4.0-3-g0e04dab"},
		{"v0.4.0", "v0.4.0", "v0.4.0"},
		{"", "v0.4.0", "v0.4.0"},
		{"0e04dab-dirty", "(devel)", "0e04dab-dirty"},
		{"", "(devel)", "(devel)"},
		{"", "", "(devel)"},
	} {
		if got := pick(c.stamped, c.module); got != c.want {
			t.Errorf("pick(%q, %q) = %q, want %q", c.stamped, c.module, got, c.want)
		}
	}
}

// TestMakeBuildStamp builds a program that prints Version() with the
// -ldflags of the Makefile's build target and Go's default -buildvcs=auto
// (whatever GOFLAGS says), and runs it: it prints the stamp although Go
// also recorded a module version from Git. It builds in a Git repository
// of its own — this package and the program, committed, as module
// github.com/acc-go/acc — because Go records no module version in a linked
// worktree or a tarball, where building from this checkout would leave
// nothing to compete with the stamp. The program prints the module version
// too, so the test fails rather than passes unchecked if Go recorded none.
func TestMakeBuildStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH: Go records a module version only from version control")
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS := -X (\S+)=\$\(VERSION\)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no `LDFLAGS := -X <package>.<var>=$(VERSION)` line")
	}
	repo := t.TempDir()
	files := map[string]string{
		"go.mod": "module github.com/acc-go/acc\n\ngo 1.24\n",
		"cmd/printversion/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime/debug\"\n\n\t\"github.com/acc-go/acc/internal/buildinfo\"\n)\n\n" +
			"func main() {\n\tbi, _ := debug.ReadBuildInfo()\n\tfmt.Println(buildinfo.Version())\n\tfmt.Println(bi.Main.Version)\n}\n",
	}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join("internal", "buildinfo", src)] = string(b)
	}
	for name, text := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No GIT_* variable of the caller's (run from a Git hook,
	// GIT_INDEX_FILE and GIT_DIR name the user's repository, for git and
	// for go build's VCS stamp alike) and none of the user's Git
	// configuration (hooks, templates).
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=acc test", "-c", "user.email=acc@example.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "stamp test"},
	} {
		c := exec.Command(git, append([]string{"-C", repo}, args...)...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command("go", "build", "-buildvcs=auto", "-ldflags", "-X "+string(m[1])+"=v9.8.7-stamped", "-o", bin, "./cmd/printversion")
	build.Dir = repo
	build.Env = append(env, "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, module, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if module == "" || module == "(devel)" {
		t.Fatalf("Go recorded no module version (%q) for a build in a Git repository, so nothing competed with the stamp", module)
	}
	if got != "v9.8.7-stamped" {
		t.Errorf("a binary built as make build builds it, with module version %s, says %q, want the stamp v9.8.7-stamped", module, got)
	}
}
