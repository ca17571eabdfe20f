package clients

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// npmTree makes <root>/node_modules/@x/tool with a package.json and a bin
// script, linked from node_modules/.bin/<link> as npm does, and puts .bin on
// PATH.
func npmTree(t *testing.T, packageJSON, link string) {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "node_modules", "@x", "tool")
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(packageJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "tool.js"), []byte("#!/bin/sh\necho 9.9.9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "@x", "tool", "bin", "tool.js"), filepath.Join(bin, link)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
}

// TestNPMVersion: the version comes from the package.json of the npm
// package whose bin the program on PATH is, and from nothing else.
func TestNPMVersion(t *testing.T) {
	cases := []struct {
		name, packageJSON, link, want string
	}{
		{"bin map", `{"name":"@x/tool","version":"1.2.3","bin":{"tool":"bin/tool.js"}}`, "tool", "1.2.3"},
		{"bin string", `{"name":"@x/tool","version":"0.61.0","bin":"bin/tool.js"}`, "tool", "0.61.0"},
		// A per-platform package names its program after itself
		// (@github/copilot-linux-x64: {"copilot-linux-x64": "copilot"}).
		{"bin names the program otherwise", `{"name":"@x/tool","version":"1.2.3","bin":{"tool-linux-x64":"bin/tool.js"}}`, "tool", "1.2.3"},
		{"bin names another file", `{"name":"@x/tool","version":"1.2.3","bin":{"tool":"bin/other.js"}}`, "tool", ""},
		{"no version", `{"name":"@x/tool","bin":{"tool":"bin/tool.js"}}`, "tool", ""},
		{"broken package.json", `{"name":`, "tool", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			npmTree(t, c.packageJSON, c.link)
			if got := NPMVersion("tool"); got != c.want {
				t.Errorf("NPMVersion = %q, want %q", got, c.want)
			}
		})
	}
	t.Run("not on PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if got := NPMVersion("tool"); got != "" {
			t.Errorf("NPMVersion = %q", got)
		}
	})
	t.Run("outside node_modules", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"tool","version":"1.0.0","bin":{"tool":"tool"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
		if got := NPMVersion("tool"); got != "" {
			t.Errorf("NPMVersion = %q for a program outside node_modules", got)
		}
	})
}

// launcherTree makes an npm tree under a temporary root: the launcher
// package at node_modules/<launcher> whose bin bin/<bin>.js is linked from
// node_modules/.bin/<bin> (on PATH), and each package of installed at
// node_modules/<path> with a package.json naming its version; it returns
// the root.
func launcherTree(t *testing.T, launcherJSON, launcher, bin string, installed map[string]string) string {
	t.Helper()
	root := t.TempDir()
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	nm := filepath.Join(root, "node_modules")
	write(filepath.Join(nm, launcher, "package.json"), launcherJSON, 0o644)
	write(filepath.Join(nm, launcher, "bin", bin+".js"), "#!/bin/sh\n", 0o755)
	for path, version := range installed {
		write(filepath.Join(nm, filepath.FromSlash(path), "package.json"), `{"name":"x","version":"`+version+`"}`, 0o644)
	}
	if err := os.MkdirAll(filepath.Join(nm, ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", launcher, "bin", bin+".js"), filepath.Join(nm, ".bin", bin)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(nm, ".bin"))
	return root
}

// TestNPMVersionOfALauncher: a launcher package runs its program's build
// for this system, whose version (where npm installed one) is the
// program's, found the way Node resolves it from the launcher.
func TestNPMVersionOfALauncher(t *testing.T) {
	osName := map[string]string{"linux": "linux", "darwin": "darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		t.Skipf("no npm platform name for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	sys := osName + "-" + arch
	other := "win32-" + arch
	droid := `{"name":"@f/cli","version":"0.225.1","bin":{"droid":"bin/droid.js"},"optionalDependencies":{"@f/cli-` + sys + `":"0.225.1","@f/cli-` + sys + `-baseline":"0.225.1","@f/cli-` + other + `":"0.225.1"}}`
	cases := []struct {
		name, launcherJSON, launcher, bin string
		installed                         map[string]string
		want                              string
	}{
		{"the program's build beside the launcher", droid, "@f/cli", "droid",
			map[string]string{"@f/cli-" + sys: "0.225.2"}, "0.225.2"},
		{"two variants of one version", droid, "@f/cli", "droid",
			map[string]string{"@f/cli-" + sys: "0.225.2", "@f/cli-" + sys + "-baseline": "0.225.2"}, "0.225.2"},
		// Which of two versions runs depends on the processor: ask it.
		{"two variants that disagree", droid, "@f/cli", "droid",
			map[string]string{"@f/cli-" + sys: "0.225.2", "@f/cli-" + sys + "-baseline": "0.225.1"}, ""},
		// Node looks in the launcher's own node_modules first.
		{"a nested build comes first", droid, "@f/cli", "droid",
			map[string]string{"@f/cli/node_modules/@f/cli-" + sys: "0.225.0", "@f/cli-" + sys: "0.225.2"}, "0.225.0"},
		{"no build installed", droid, "@f/cli", "droid",
			map[string]string{"@f/cli-" + other: "0.225.9"}, "0.225.1"},
		// An unscoped launcher whose builds are named after its program.
		{"named after the program", `{"name":"opencode-ai","version":"1.18.33","bin":{"opencode":"bin/opencode.js"},"optionalDependencies":{"opencode-` + sys + `":"1.18.33"}}`,
			"opencode-ai", "opencode", map[string]string{"opencode-" + sys: "1.18.34"}, "1.18.34"},
		// Only the launcher's own scope, and only a known variant.
		{"another scope", `{"name":"@f/cli","version":"0.225.1","bin":{"droid":"bin/droid.js"},"optionalDependencies":{"@o/cli-` + sys + `":"9.0.0"}}`,
			"@f/cli", "droid", map[string]string{"@o/cli-" + sys: "9.0.0"}, "0.225.1"},
		{"an unknown variant", `{"name":"@f/cli","version":"0.225.1","bin":{"droid":"bin/droid.js"},"optionalDependencies":{"@f/cli-` + sys + `-extra":"9.0.0"}}`,
			"@f/cli", "droid", map[string]string{"@f/cli-" + sys + "-extra": "9.0.0"}, "0.225.1"},
		{"a musl build", `{"name":"@f/cli","version":"0.225.1","bin":{"droid":"bin/droid.js"},"optionalDependencies":{"@f/cli-` + osName + `musl-` + arch + `":"0.225.1"}}`,
			"@f/cli", "droid", map[string]string{"@f/cli-" + osName + "musl-" + arch: "0.225.3"}, "0.225.3"},
		{"a build without a version", droid, "@f/cli", "droid",
			map[string]string{"@f/cli-" + sys: "unknown"}, ""},
		// A second name of the program (Kilo's kilocode beside kilo)
		// that its builds are named after.
		{"named after the program's other name", `{"name":"@k/cli","version":"7.7.7","bin":{"kilocode":"bin/kilo.js","kilo":"bin/kilo.js"},"optionalDependencies":{"@k/kilo-` + sys + `":"7.7.7"}}`,
			"@k/cli", "kilo", map[string]string{"@k/kilo-" + sys: "7.7.9"}, "7.7.9"},
		// Another package's native build is not the program.
		{"a dependency's build", `{"name":"@g/cli","version":"0.61.0","bin":{"gem":"bin/gem.js"},"optionalDependencies":{"@l/node-pty-` + sys + `":"1.1.0"}}`,
			"@g/cli", "gem", map[string]string{"@l/node-pty-" + sys: "1.1.0"}, "0.61.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			launcherTree(t, c.launcherJSON, c.launcher, c.bin, c.installed)
			if got := NPMVersion(c.bin); got != c.want {
				t.Errorf("NPMVersion = %q, want %q", got, c.want)
			}
		})
	}
}
