package clients

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// NPMVersion returns the version of the npm package that provides the
// command name found on PATH, or "" when the program is not an npm package's
// bin. Clients written for Node (Gemini CLI; Codex's launcher) may take
// longer to answer --version than the probe allows — Gemini CLI 0.61 needs
// 1.1–1.4 s on an idle two-core machine (it relaunches itself unless
// GEMINI_CLI_NO_RELAUNCH is set), so its sessions would never get the
// capabilities their evidence proves — and their package says it without
// running anything. The package is the nearest package.json above the resolved
// program, inside a node_modules tree, one of whose "bin" entries is exactly
// this file (by its resolved path, whatever its name); any doubt returns ""
// and the caller falls back to --version.
//
// A launcher package, whose bin starts the native program of a
// per-platform package it lists in optionalDependencies (Factory Droid's
// @factory/cli runs @factory/cli-linux-x64's droid), runs that package's
// version, which npm may hold at another version than the launcher's
// (docs/adapters.md#factory-droid): see platformVersion.
func NPMVersion(name string) string {
	path, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return NPMVersionAt(path)
}

// NPMVersionAt is NPMVersion for a program given by its path (acc
// certify's --client): the version of the npm package whose bin it is, or
// "".
func NPMVersionAt(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !strings.Contains(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)) {
		return ""
	}
	dir := filepath.Dir(real)
	for range 4 {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var pkg struct {
				Name     string            `json:"name"`
				Version  string            `json:"version"`
				Bin      json.RawMessage   `json:"bin"`
				Optional map[string]string `json:"optionalDependencies"`
			}
			if json.Unmarshal(b, &pkg) != nil || !versionPattern().MatchString(pkg.Version) {
				return ""
			}
			var bins map[string]string
			if json.Unmarshal(pkg.Bin, &bins) != nil {
				var one string
				if json.Unmarshal(pkg.Bin, &one) != nil {
					return ""
				}
				bins = map[string]string{pkg.Name[strings.LastIndex(pkg.Name, "/")+1:]: one}
			}
			// The program is one of the package's bins, under whatever
			// name it is on PATH: a client's per-platform package may
			// declare its native program under the package's own name
			// (@github/copilot-linux-x64 names copilot
			// "copilot-linux-x64") while the program runs as copilot.
			// Every name of the program counts for its platform builds
			// (Kilo's kilo and kilocode), in a fixed order.
			matched := false
			for _, name := range slices.Sorted(maps.Keys(bins)) {
				if t, err := filepath.EvalSymlinks(filepath.Join(dir, bins[name])); err == nil && t == real {
					if v, ok := platformVersion(dir, pkg.Name, name, pkg.Optional); ok {
						return v
					}
					matched = true
				}
			}
			if matched {
				return versionPattern().FindString(pkg.Version)
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir || filepath.Base(dir) == "node_modules" {
			return ""
		}
		dir = parent
	}
	return ""
}

// platformVersion returns the version of the per-platform program a
// launcher package at dir, named launcher, starts as its bin: among its
// optionalDependencies, the builds of that program for this system
// (platformPackage) that Node would resolve from dir (dir/node_modules/
// <name>, then each enclosing node_modules). Other platform packages it
// depends on (Gemini CLI's @lydell/node-pty-linux-x64) are not its
// program and do not count.
// ok is false when none is installed (the launcher's own version stands:
// it may carry or fetch its program itself); v is "" with ok true when the
// installed ones disagree (an x64 and an x64-baseline build of different
// versions), since which one runs depends on the processor: the caller
// then asks the program.
func platformVersion(dir, launcher, bin string, optional map[string]string) (v string, ok bool) {
	for name := range optional {
		if !platformPackage(name, launcher, bin) {
			continue
		}
		for d := dir; ; {
			b, err := os.ReadFile(filepath.Join(d, "node_modules", filepath.FromSlash(name), "package.json"))
			if err == nil {
				var dep struct {
					Version string `json:"version"`
				}
				got := ""
				if json.Unmarshal(b, &dep) == nil {
					got = versionPattern().FindString(dep.Version)
				}
				if got == "" || (ok && got != v) {
					return "", true
				}
				v, ok = got, true
				break
			}
			parent := filepath.Dir(d)
			if filepath.Base(parent) == "node_modules" {
				// d is a package in a node_modules tree (for a scoped
				// one, its scope is one level further up): the next
				// place Node looks is the node_modules holding it.
				parent = filepath.Dir(parent)
			} else if filepath.Base(filepath.Dir(parent)) == "node_modules" && strings.HasPrefix(filepath.Base(parent), "@") {
				parent = filepath.Dir(filepath.Dir(parent))
			} else {
				break
			}
			d = parent
		}
	}
	return v, ok
}

// platformPackage reports whether the npm package name is a build of the
// launcher package's program bin for the system acc runs on: in the
// launcher's scope, named after the launcher or the program, then the
// operating system and the processor the way npm's os and cpu fields name
// them, and perhaps a variant (@factory/cli-linux-x64 for @factory/cli,
// opencode-linux-x64-baseline for opencode-ai's opencode,
// @github/copilot-linuxmusl-arm64).
func platformPackage(name, launcher, bin string) bool {
	osName := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return false
	}
	scope, base := splitPackage(name)
	launcherScope, launcherBase := splitPackage(launcher)
	if scope != launcherScope {
		return false
	}
	for _, prefix := range []string{launcherBase, bin} {
		for _, sys := range []string{osName, osName + "musl"} {
			if rest, found := strings.CutPrefix(base, prefix+"-"+sys+"-"+arch); found {
				switch rest {
				case "", "-baseline", "-musl", "-baseline-musl":
					return true
				}
			}
		}
	}
	return false
}

// splitPackage splits an npm package name into its scope ("@x", or "")
// and the rest.
func splitPackage(name string) (scope, base string) {
	if i := strings.IndexByte(name, '/'); i >= 0 && strings.HasPrefix(name, "@") {
		return name[:i], name[i+1:]
	}
	return "", name
}

// versionPattern is a dotted version, compiled when first used.
var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(?:\.\d+)*`) })
