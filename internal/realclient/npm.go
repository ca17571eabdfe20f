package realclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// NpmInstall makes sure <cache>/<name>@<version> (CacheRoot) holds a
// complete npm install and returns that directory. A complete install is
// one that carries the mark this function writes last and that check
// accepts (fresh false); there is nothing to do then. Otherwise npm runs
//
//	npm install --prefix <tmp> --no-audit --no-fund --save-exact --loglevel=error <args…>
//
// with env (nil: this process's), into a temporary directory beside the
// final one; check (fresh true, where it may also run what was installed)
// must accept it before it is marked and renamed into place, so the cache
// holds whole installs or none, and concurrent installers are safe.
// Temporary directories older than an hour were left by killed runs and
// are removed. scripts/install-clients.sh does the same from the shell.
//
// npm only runs when installing is allowed (InstallAllowed): the test
// command installs every pin before the tests start (`make clients`), so a
// test never waits on the registry inside go test's time limit. Otherwise a
// missing install is an error that names the command to run.
func NpmInstall(ctx context.Context, name, version string, args, env []string, check func(dir string, fresh bool) error) (string, error) {
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, name+"@"+version)
	complete := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, completeMark))
		return err == nil && check(d, false) == nil
	}
	if complete(dir) {
		return dir, nil
	}
	if !InstallAllowed() {
		return "", fmt.Errorf("%s@%s is not in the client cache %s: run `make clients` (scripts/install-clients.sh) first, or set %s=1 to let the tests install it", name, version, root, EnvClientsInstall)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("installing %s@%s needs npm on PATH: %w", name, version, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	// A directory without the mark is not an install.
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if old, _ := filepath.Glob(dir + ".partial-*"); len(old) > 0 {
		for _, p := range old {
			if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Hour {
				_ = os.RemoveAll(p)
			}
		}
	}
	tmp, err := os.MkdirTemp(root, name+"@"+version+".partial-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--prefix", tmp, "--no-audit", "--no-fund", "--save-exact", "--loglevel=error"}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %v failed: %v\n%s", args, err, lastLines(out.String(), 20))
	}
	if err := check(tmp, true); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMark), []byte(name+"@"+version+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another installer may have finished first; use its copy.
		if complete(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("moving the install of %s@%s into place: %w", name, version, err)
	}
	return dir, nil
}

// EnvClientsInstall, set to 1, lets the tests install a client that is not
// in the cache with npm themselves (docs/real-clients.md).
const EnvClientsInstall = "ACC_CLIENTS_INSTALL"

// InstallAllowed reports whether NpmInstall may run npm: with
// ACC_CLIENTS_INSTALL=1, or with ACC_CLIENTS_LATEST=1, whose versions no
// pinned install script knows.
func InstallAllowed() bool {
	return os.Getenv(EnvClientsInstall) == "1" || os.Getenv("ACC_CLIENTS_LATEST") == "1"
}

// PackageVersion checks that the install in dir holds npm package pkg at
// exactly version (its package.json).
func PackageVersion(dir, pkg, version string) error {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.Version != version {
		return fmt.Errorf("%s is at %q, not %s", pkg, p.Version, version)
	}
	return nil
}
