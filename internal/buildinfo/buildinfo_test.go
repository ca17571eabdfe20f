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
// (whatever GOFLAGS says), and runs it: it prints the stamp. In a Git
// clone Go then also records a pseudo-version from the commit as the module
// version, which acc printed instead (Go records none in a linked
// worktree, where TestPick alone shows the order).
func TestMakeBuildStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS := -X (\S+)=\$\(VERSION\)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no `LDFLAGS := -X <package>.<var>=$(VERSION)` line")
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command("go", "build", "-buildvcs=auto", "-ldflags", "-X "+string(m[1])+"=v9.8.7-stamped", "-o", bin, "./testdata/printversion")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "v9.8.7-stamped" {
		t.Errorf("a binary built as make build builds it says %q, want the stamp v9.8.7-stamped", got)
	}
}
