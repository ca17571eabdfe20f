package clients

import (
	"os"
	"path/filepath"
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
