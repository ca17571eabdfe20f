package sourcetree

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// workspaceRoot is the directory holding go.work: this package lives two levels below it.
func workspaceRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller failed")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at %s: %v", root, err)
	}
	return root
}

// writeFiles makes each name (slash-separated, relative to dir) with its content.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runCheckModules runs scripts/check-modules.sh on a workspace in dir, offline.
func runCheckModules(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(workspaceRoot(t), "scripts", "check-modules.sh"), dir)
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOWORK=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCheckModulesNamesEachBrokenModule: scripts/check-modules.sh
// (docs/design.md#modules-and-releases) fails naming every module that does
// not stand on its own, with the command that fixes it — a go.mod that
// go.work does not list, a module that is not tidy, a module whose tests do
// not compile — and passes a workspace whose modules are all sound.
func TestCheckModulesNamesEachBrokenModule(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.work": "go 1.26\n\nuse (\n\t./untidy\n\t./badtest\n\t./good\n)\n",
		// imports a module its go.mod does not require
		"untidy/go.mod": "module example.com/untidy\n\ngo 1.26\n",
		"untidy/u.go":   "package untidy\n\nimport _ \"example.com/good\"\n",
		// builds, but its test does not compile
		"badtest/go.mod":       "module example.com/badtest\n\ngo 1.26\n",
		"badtest/b.go":         "package badtest\n",
		"badtest/b_test.go":    "package badtest\n\nvar _ int = \"not an int\"\n",
		"good/go.mod":          "module example.com/good\n\ngo 1.26\n",
		"good/g.go":            "package good\n",
		"unlisted/go.mod":      "module example.com/unlisted\n\ngo 1.26\n",
		"good/testdata/go.mod": "module example.com/fixture\n\ngo 1.26\n",
	})
	out, err := runCheckModules(t, dir)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v:\n%s", err, out)
	}
	for _, want := range []string{
		"module unlisted: has a go.mod that go.work does not list: run `go work use ./unlisted`",
		"module untidy: go.mod or go.sum is not tidy: run `cd untidy && go mod tidy`",
		"module badtest: `GOWORK=off go vet` fails",
		"check-modules: FAILED (3 modules",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, notWant := range []string{"module good:", "module good/testdata"} {
		if strings.Contains(out, notWant) {
			t.Errorf("output blames a sound module (%q):\n%s", notWant, out)
		}
	}

	// The same workspace with only the sound module passes.
	writeFiles(t, dir, map[string]string{"go.work": "go 1.26\n\nuse ./good\n"})
	for _, m := range []string{"untidy", "badtest", "unlisted"} {
		if err := os.RemoveAll(filepath.Join(dir, m)); err != nil {
			t.Fatal(err)
		}
	}
	out, err = runCheckModules(t, dir)
	if err != nil || !strings.Contains(out, "check-modules: 1 modules tidy") {
		t.Fatalf("sound workspace: %v\n%s", err, out)
	}
}
