package realclient

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// completeMark is the file an install leaves last, once its binary ran.
const completeMark = ".acc-installed"

// CacheRoot is the directory the pinned clients are installed under, outside
// any clone: $ACC_CLIENTS_CACHE, else $XDG_CACHE_HOME/acc-clients, else
// $HOME/.cache/acc-clients. scripts/install-clients.sh uses the same rule.
func CacheRoot() (string, error) {
	if d := os.Getenv("ACC_CLIENTS_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "acc-clients"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the clients (set ACC_CLIENTS_CACHE): %w", err)
	}
	return filepath.Join(home, ".cache", "acc-clients"), nil
}

// Dir is where the client is installed under root: <root>/<name>@<version>.
func (c Client) Dir(root string) string { return filepath.Join(root, c.Name+"@"+c.Version) }

// Executable is the client's program inside an install directory. Claude Code
// ships its native binary in a per-platform optional dependency and copies it
// over its bin stub in a postinstall script; installs skip scripts, so the
// binary is run from the platform package directly. Codex and Gemini CLI are
// run through their npm launchers (Node scripts).
func (c Client) Executable(dir string) (string, error) {
	nm := filepath.Join(dir, "node_modules")
	var candidates []string
	switch c.Name {
	case "claude":
		// The glibc build before the musl one when both are present.
		matches, _ := filepath.Glob(filepath.Join(nm, "@anthropic-ai", "claude-code-"+runtime.GOOS+"-*", "claude"))
		slices.SortFunc(matches, func(a, b string) int {
			return strings.Count(a, "musl") - strings.Count(b, "musl")
		})
		candidates = matches
	case "codex":
		candidates = []string{filepath.Join(nm, ".bin", "codex")}
	case "gemini", "kimi", "qwen", "pi":
		candidates = []string{filepath.Join(nm, ".bin", c.Name)}
	case "opencode":
		// The native binary, which the package's install script linked
		// over its bin stub: run by that path, the process is named
		// opencode, and its npm package names the version.
		candidates = []string{filepath.Join(nm, ".bin", "opencode")}
	case "droid":
		// The native binary of the platform package, not the launcher.
		candidates = []string{filepath.Join(nm, "@factory", "cli-"+platform(), "bin", "droid")}
	case "kilo":
		// The native binary of the platform package: the launcher, 7.7.7,
		// would look for its own version of the program.
		candidates = []string{filepath.Join(nm, "@kilocode", "cli-"+platform(), "bin", "kilo")}
	case "copilot":
		// The native binary of the platform package, not the Node
		// loader in front of it.
		candidates = []string{filepath.Join(nm, "@github", "copilot-"+platform(), "copilot")}
	default:
		return "", fmt.Errorf("unknown client %q", c.Name)
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s@%s: no runnable program in %s", c.Package, c.Version, dir)
}

// Install makes sure the pinned client is in the cache, installing it with npm
// when it is not and NpmInstall may (InstallAllowed), and returns its
// executable. The install goes into a
// temporary directory next to the final one, is checked by running the
// program with --version, and is then renamed into place (NpmInstall, with
// install scripts skipped but OpenCode's, as scripts/install-clients.sh
// runs it).
func (c Client) Install(ctx context.Context) (string, error) {
	if c.Name == "kimi" {
		// Kimi Code runs on the pinned Node, which its check needs too.
		if _, err := Node22(ctx); err != nil {
			return "", err
		}
	}
	dir, err := NpmInstall(ctx, c.Name, c.Version, c.npmArgs(), nil,
		func(d string, fresh bool) error {
			exe, err := c.Executable(d)
			if err != nil || !fresh {
				return err
			}
			return c.checkVersion(ctx, exe)
		})
	if err != nil {
		return "", err
	}
	return c.Executable(dir)
}

// npmArgs are the arguments npm install is given for c: install scripts
// are skipped, except OpenCode's, which puts its native binary where its
// bin points (without it the bin is a 479-byte stub). Droid's launcher
// (DroidLauncherVersion) is installed beside its pinned platform package,
// and so is Kilo Code's (KiloLauncherVersion), without the launcher's
// optional dependency on its own version of the program (227 MB).
func (c Client) npmArgs() []string {
	if c.Name == "opencode" {
		return []string{c.Package + "@" + c.Version}
	}
	if c.Name == "droid" {
		return []string{"--ignore-scripts", "@factory/cli@" + DroidLauncherVersion, c.Package + "@" + c.Version}
	}
	if c.Name == "kilo" {
		return []string{"--ignore-scripts", "--omit=optional", "@kilocode/cli@" + KiloLauncherVersion, c.Package + "@" + c.Version}
	}
	return []string{"--ignore-scripts", c.Package + "@" + c.Version}
}

// checkVersion runs exe --version in a scratch HOME and wants the pinned
// version in its output. Copilot CLI's binary unpacks its program (235 MB)
// under $HOME/.cache on a first run; its scratch HOME is CopilotHome inside
// the install, kept, so that every run can use that copy
// (CopilotDistDir) instead of unpacking its own.
func (c Client) checkVersion(ctx context.Context, exe string) error {
	home, err := os.MkdirTemp("", "acc-client-version-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if c.Name == "copilot" {
		home = copilotHome(exe)
		if err := os.MkdirAll(home, 0o755); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--version")
	cmd.Env = []string{"HOME=" + home, "PATH=" + c.PathFor(os.Getenv("PATH")), "COPILOT_AUTO_UPDATE=false", "CODEX_HOME=" + filepath.Join(home, ".codex"),
		"KIMI_CODE_HOME=" + filepath.Join(home, ".kimi-code"), "KIMI_CODE_NO_AUTO_UPDATE=1", "KIMI_DISABLE_TELEMETRY=1"}
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version failed: %v\n%s", exe, err, lastLines(string(out), 20))
	}
	if !strings.Contains(string(out), c.Version) {
		return fmt.Errorf("%s --version printed %q, not version %s", exe, strings.TrimSpace(string(out)), c.Version)
	}
	if c.Name == "copilot" {
		if _, err := os.Stat(filepath.Join(c.CopilotDistDir(exe), "app.js")); err != nil {
			return fmt.Errorf("%s --version did not unpack its program: %w", exe, err)
		}
	}
	return nil
}

// copilotHome is the HOME Copilot CLI's install check ran in: beside
// node_modules in the install directory of exe.
func copilotHome(exe string) string {
	// A link to the program (acc certify's PATH) stands for the program.
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Join(filepath.Dir(exe), "..", "..", "..", "copilot-home")
}

// CopilotDistDir is where the install check left Copilot CLI's unpacked
// program for exe, the directory COPILOT_CLI_DIST_DIR names in a run.
func (c Client) CopilotDistDir(exe string) string {
	return filepath.Clean(filepath.Join(copilotHome(exe), ".cache", "copilot", "pkg", platform(), c.Version))
}

// PathFor is the PATH the tests run the client with, given path: for Kimi
// Code, whose program is a Node script (#!/usr/bin/env node) that needs
// Node 22.19 or later, the pinned Node's directory in the cache
// (NodeVersion) comes first; the others run on path as it is.
func (c Client) PathFor(path string) string {
	if c.Name != "kimi" {
		return path
	}
	root, err := CacheRoot()
	if err != nil {
		return path
	}
	pkg := "node-" + runtime.GOOS + "-" + map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	return filepath.Join(root, "node@"+NodeVersion, "node_modules", pkg, "bin") + string(os.PathListSeparator) + path
}

// Latest is the client at the version npm's latest tag names now, for a run
// against the newest releases (ACC_CLIENTS_LATEST=1 in the tests).
func (c Client) Latest(ctx context.Context) (Client, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return c, fmt.Errorf("looking up the latest %s needs npm on PATH: %w", c.Package, err)
	}
	out, err := exec.CommandContext(ctx, npm, "view", c.Package+"@latest", "version").Output()
	if err != nil {
		return c, fmt.Errorf("npm view %s@latest version: %w", c.Package, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" || strings.ContainsAny(v, " \n/") {
		return c, fmt.Errorf("npm view %s@latest version printed %q", c.Package, v)
	}
	c.Version = v
	return c, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// platform is npm's name for this machine's platform packages: linux-x64,
// linux-arm64, darwin-arm64.
func platform() string {
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return runtime.GOOS + "-" + arch
}
