package clients

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
				Name    string          `json:"name"`
				Version string          `json:"version"`
				Bin     json.RawMessage `json:"bin"`
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
			for _, target := range bins {
				if t, err := filepath.EvalSymlinks(filepath.Join(dir, target)); err == nil && t == real {
					return versionPattern().FindString(pkg.Version)
				}
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

// versionPattern is a dotted version, compiled when first used.
var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(?:\.\d+)*`) })
