package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace writes a small copy of our layout: a root module and two
// sub-modules that require each other at v0.0.0 with replace directives.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.work": "go 1.26\n\nuse (\n\t.\n\t./pkg/protocol\n\t./pkg/core\n)\n",
		"go.mod": "module github.com/acc-go/acc\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/acc-go/acc/pkg/core v0.0.0\n\tgithub.com/acc-go/acc/pkg/protocol v0.0.0\n\tgolang.org/x/mod v0.42.0\n)\n\n" +
			"replace (\n\tgithub.com/acc-go/acc/pkg/core => ./pkg/core\n\tgithub.com/acc-go/acc/pkg/protocol => ./pkg/protocol\n)\n",
		"pkg/protocol/go.mod": "module github.com/acc-go/acc/pkg/protocol\n\ngo 1.26\n",
		"pkg/core/go.mod":     "module github.com/acc-go/acc/pkg/core\n\ngo 1.26.0\n\nrequire github.com/acc-go/acc/pkg/protocol v0.0.0\n\nreplace github.com/acc-go/acc/pkg/protocol => ../protocol\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// snapshot returns every go.mod of dir, to compare before and after.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{"go.mod", "pkg/protocol/go.mod", "pkg/core/go.mod"} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(name + "\n" + string(data))
	}
	return b.String()
}

// TestRefusesVersionsAReleaseCannotHave: a missing, non-canonical, v0.0.0
// or v2+ version is refused with a message saying why, and no go.mod changes.
func TestRefusesVersionsAReleaseCannotHave(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	before := snapshot(t, dir)
	for version, want := range map[string]string{
		"":         "-version is required",
		"1.2.3":    "is not a canonical semantic version",
		"v1.2":     "is not a canonical semantic version",
		"v0.0.0":   "a release needs another",
		"v2.0.0":   "would need a /v2 suffix",
		"v1.2.3+x": "is not a canonical semantic version",
	} {
		err := run([]string{"prepare", "-dir", dir, "-version", version}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("version %q: got %v, want an error with %q", version, err, want)
		}
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a refused version changed the go.mod files:\n%s", after)
	}
}

// TestRefusesAModuleWhosePathDoesNotMatchItsDirectory: the tag
// <dir>/vX.Y.Z names the module in <dir> only if its path is the root's
// path plus <dir>.
func TestRefusesAModuleWhosePathDoesNotMatchItsDirectory(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	if err := os.WriteFile(filepath.Join(dir, "pkg", "core", "go.mod"), []byte("module github.com/acc-go/acc/core\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	err := run([]string{"prepare", "-dir", dir, "-version", "v1.0.0"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `pkg/core/go.mod declares module "github.com/acc-go/acc/core"`) {
		t.Fatalf("got %v", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the refusal changed the go.mod files:\n%s", after)
	}
}

// TestTags: the root module is tagged vX.Y.Z, each sub-module <dir>/vX.Y.Z.
func TestTags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run([]string{"tags", "-dir", workspace(t), "-version", "v1.4.0"}, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "v1.4.0\npkg/protocol/v1.4.0\npkg/core/v1.4.0\n"; got != want {
		t.Errorf("tags:\n%s\nwant:\n%s", got, want)
	}
}

// TestRewriteGoMod: every requirement of ours moves to the release version;
// the root loses its replace directives of ours (go install refuses a main
// module with any), a sub-module keeps them (ignored in a dependency), and
// third-party requirements are left alone.
func TestRewriteGoMod(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	mods, err := workspaceModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		file := filepath.Join(dir, filepath.FromSlash(m.Dir), "go.mod")
		data, err := rewriteGoMod(file, mods, m, "v1.4.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := snapshot(t, dir)
	want := "go.mod\nmodule github.com/acc-go/acc\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/acc-go/acc/pkg/core v1.4.0\n\tgithub.com/acc-go/acc/pkg/protocol v1.4.0\n\tgolang.org/x/mod v0.42.0\n)\n" +
		"pkg/protocol/go.mod\nmodule github.com/acc-go/acc/pkg/protocol\n\ngo 1.26\n" +
		"pkg/core/go.mod\nmodule github.com/acc-go/acc/pkg/core\n\ngo 1.26.0\n\nrequire github.com/acc-go/acc/pkg/protocol v1.4.0\n\nreplace github.com/acc-go/acc/pkg/protocol => ../protocol\n"
	if got != want {
		t.Errorf("after the rewrite:\n%s\nwant:\n%s", got, want)
	}
}

// TestRefusesAThirdPartyReplaceInTheRoot: the root go.mod may not replace
// anything but our own modules, since go install would refuse the release.
func TestRefusesAThirdPartyReplaceInTheRoot(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	root := filepath.Join(dir, "go.mod")
	data, _ := os.ReadFile(root)
	if err := os.WriteFile(root, append(data, "replace golang.org/x/mod => ../mod\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	err := run([]string{"prepare", "-dir", dir, "-version", "v1.4.0"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "the root go.mod replaces golang.org/x/mod") {
		t.Fatalf("got %v", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the refusal changed the go.mod files:\n%s", after)
	}
}
