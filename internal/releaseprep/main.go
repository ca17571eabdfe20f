// Command releaseprep makes the workspace installable with
// `go install github.com/acc-go/acc/cmd/acc@VERSION` from a release commit,
// following docs/design.md#modules-and-releases:
//
//	releaseprep prepare -version vX.Y.Z [-dir DIR]
//	    rewrites every go.mod of go.work's modules to require its siblings at
//	    vX.Y.Z, drops the root go.mod's replace directives (the go command
//	    refuses `go install module@version` when the main module has any),
//	    and fills the root go.sum with the siblings' hashes. The hashes are
//	    those of module zips built here, with golang.org/x/mod/zip, from the
//	    files Git tracks in each module directory as they are on disk now —
//	    what the module proxy will serve for the tags once this state is
//	    committed — served to `go mod tidy` from a file:// proxy in a
//	    temporary directory, with a temporary module cache so the unpublished
//	    version is never cached for good. The sub-modules keep their replace
//	    directives: the go command ignores them in a dependency, and they
//	    let each sub-module still build with GOWORK=off at the release commit.
//	releaseprep tags -version vX.Y.Z [-dir DIR]
//	    prints the Git tags that release vX.Y.Z needs, one a line: vX.Y.Z for
//	    the root module and <dir>/vX.Y.Z for each other module.
//	releaseprep proxy -version vX.Y.Z -out PROXYDIR [-rev REV] [-dir DIR]
//	    writes a file:// module proxy serving every module at vX.Y.Z from Git
//	    revision REV (default HEAD) the way a module proxy builds it from a
//	    tag (git archive, the root LICENSE added to a module without one), for
//	    checking a release commit before tagging it (scripts/check-install.sh).
//
// DIR (default ".") is the directory holding go.work and must be the top of
// a Git work tree. VERSION must be a canonical semantic version with major
// version 0 or 1 (our module paths carry no /vN suffix), other than v0.0.0.
// Errors go to stderr with exit status 1 and leave the files as they were,
// except that prepare may have rewritten go.mod files when `go mod tidy`
// fails (scripts/release-prepare.sh restores them).
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// rootPath is the module path of the root module; every module of ours lies under it.
const rootPath = "github.com/acc-go/acc"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "releaseprep:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: releaseprep prepare|tags|proxy -version vX.Y.Z [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	version := fs.String("version", "", "the release version, vX.Y.Z")
	dir := fs.String("dir", ".", "the directory holding go.work (the top of the Git work tree)")
	out := fs.String("out", "", "proxy: the directory to write the file:// module proxy into")
	rev := fs.String("rev", "HEAD", "proxy: the Git revision to build the modules from")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := checkVersion(*version); err != nil {
		return err
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	mods, err := workspaceModules(root)
	if err != nil {
		return err
	}
	switch args[0] {
	case "prepare":
		return prepare(root, mods, *version)
	case "tags":
		for _, m := range mods {
			fmt.Fprintln(stdout, tagName(m, *version))
		}
		return nil
	case "proxy":
		if *out == "" {
			return errors.New("proxy needs -out PROXYDIR")
		}
		return proxyFromGit(root, mods, *version, *rev, *out)
	}
	return fmt.Errorf("unknown command %q: want prepare, tags or proxy", args[0])
}

// checkVersion accepts the versions a release of ours may have.
func checkVersion(v string) error {
	switch {
	case v == "":
		return errors.New("-version is required (vX.Y.Z)")
	case !semver.IsValid(v) || semver.Canonical(v) != v:
		return fmt.Errorf("version %q is not a canonical semantic version such as v1.2.3", v)
	case v == "v0.0.0":
		return errors.New("version v0.0.0 is what the modules require of each other inside the repository; a release needs another")
	case semver.Major(v) != "v0" && semver.Major(v) != "v1":
		return fmt.Errorf("version %q has major version %s, which would need a /%s suffix on every module path", v, semver.Major(v), semver.Major(v))
	}
	return nil
}

// mod is one module of the workspace.
type mod struct {
	Dir  string // slash-separated, relative to the workspace root; "." for the root module
	Path string // module path
}

// tagName is the Git tag that gives module m the version v: a module in a
// subdirectory is tagged with the directory as a prefix.
func tagName(m mod, v string) string {
	if m.Dir == "." {
		return v
	}
	return m.Dir + "/" + v
}

// workspaceModules reads go.work's use list and each module's path. It
// refuses a workspace without the root module, or with a module outside
// rootPath or in a directory that does not match its path.
func workspaceModules(root string) ([]mod, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []mod
	for _, u := range wf.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		p := modfile.ModulePath(data)
		want := rootPath
		if dir != "." {
			want = rootPath + "/" + dir
		}
		if p != want {
			return nil, fmt.Errorf("%s/go.mod declares module %q; a release tag %s works only for module %q", dir, p, tagName(mod{Dir: dir}, "vX.Y.Z"), want)
		}
		mods = append(mods, mod{Dir: dir, Path: p})
	}
	if !slices.ContainsFunc(mods, func(m mod) bool { return m.Dir == "." }) {
		return nil, errors.New("go.work does not use the root module \".\"")
	}
	return mods, nil
}

// ours reports whether p is the path of a module of the workspace.
func ours(mods []mod, p string) bool {
	return slices.ContainsFunc(mods, func(m mod) bool { return m.Path == p })
}

func prepare(root string, mods []mod, version string) error {
	// Every go.mod is rewritten in memory first, so a refusal changes none.
	rewritten := map[string][]byte{}
	for _, m := range mods {
		file := filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod")
		data, err := rewriteGoMod(file, mods, m, version)
		if err != nil {
			return err
		}
		rewritten[file] = data
	}
	top, err := gitOutput(root, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	if top = strings.TrimSpace(top); top != root {
		if r, err := filepath.EvalSymlinks(root); err != nil || r != top {
			return fmt.Errorf("%s is not the top of its Git work tree (%s)", root, top)
		}
	}
	for file, data := range rewritten {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "acc-releaseprep-")
	if err != nil {
		return err
	}
	defer removeAll(tmp)
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range mods {
		if m.Dir == "." {
			continue
		}
		files, err := trackedFiles(root, m)
		if err != nil {
			return err
		}
		if err := writeProxyModule(proxy, m, version, files, time.Now()); err != nil {
			return err
		}
	}
	// go mod tidy in the root resolves the siblings at version from the
	// proxy above and records their hashes in go.sum; everything else comes
	// from the shared module cache's download directory, then from the
	// caller's GOPROXY.
	shared, err := goEnv(root, "GOMODCACHE")
	if err != nil {
		return err
	}
	fallback := os.Getenv("GOPROXY")
	if fallback == "" {
		fallback = "https://proxy.golang.org,direct"
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = root
	tidy.Env = append(os.Environ(),
		"GOWORK=off", "GOFLAGS=-modcacherw",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOPROXY="+fileURL(proxy)+","+fileURL(filepath.Join(shared, "cache", "download"))+","+fallback,
		"GONOSUMDB="+rootPath, "GONOPROXY=", "GOPRIVATE=")
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in the root module: %v\n%s", err, out)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	for _, m := range mods {
		if m.Dir != "." && !bytes.Contains(sum, []byte(m.Path+" "+version+" h1:")) {
			return fmt.Errorf("go.sum has no hash for %s %s after go mod tidy", m.Path, version)
		}
	}
	return nil
}

// rewriteGoMod returns m's go.mod (the file named file) requiring every
// module of ours at version and, in the root module, without the replace
// directives of ours. Any other replace directive in the root is refused:
// `go install module@version` would refuse it too.
func rewriteGoMod(file string, mods []mod, m mod, version string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	mf, err := modfile.Parse(file, data, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range mf.Require {
		if ours(mods, r.Mod.Path) {
			if err := mf.AddRequire(r.Mod.Path, version); err != nil {
				return nil, err
			}
		}
	}
	if m.Dir == "." {
		for _, r := range slices.Clone(mf.Replace) {
			if !ours(mods, r.Old.Path) {
				return nil, fmt.Errorf("the root go.mod replaces %s, which `go install %s/cmd/acc@%s` would refuse; remove that replace first", r.Old.Path, rootPath, version)
			}
			if err := mf.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, err
			}
		}
	}
	mf.Cleanup()
	return mf.Format()
}

// diskFile is a file of the work tree as golang.org/x/mod/zip reads it.
type diskFile struct{ name, file string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.file) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.file) }

// trackedFiles lists the files Git tracks under m's directory with their
// content on disk, as the tagged commit will hold them. Files of modules in
// subdirectories are left out by modzip.Create. Like the go command and
// module proxies, a module without a LICENSE of its own gets the root's.
func trackedFiles(root string, m mod) ([]modzip.File, error) {
	out, err := gitOutput(root, "ls-files", "-z", "--", m.Dir)
	if err != nil {
		return nil, err
	}
	var files []modzip.File
	hasLicense := false
	for _, name := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		if name == "" {
			continue
		}
		rel := strings.TrimPrefix(name, m.Dir+"/")
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
			return nil, fmt.Errorf("%s is tracked but %v; commit or restore it first", name, err)
		}
		files = append(files, diskFile{rel, filepath.Join(root, filepath.FromSlash(name))})
		hasLicense = hasLicense || rel == "LICENSE"
	}
	if !hasLicense {
		if _, err := os.Stat(filepath.Join(root, "LICENSE")); err == nil {
			files = append(files, diskFile{"LICENSE", filepath.Join(root, "LICENSE")})
		}
	}
	return files, nil
}

// proxyFromGit writes every module at version, built from Git revision rev,
// into the file:// proxy at out.
func proxyFromGit(root string, mods []mod, version, rev, out string) error {
	when, err := gitOutput(root, "show", "-s", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(when))
	if err != nil {
		return err
	}
	for _, m := range mods {
		subdir := ""
		if m.Dir != "." {
			subdir = m.Dir
		}
		var zbuf bytes.Buffer
		if err := modzip.CreateFromVCS(&zbuf, module.Version{Path: m.Path, Version: version}, root, rev, subdir); err != nil {
			return err
		}
		gomod, err := gitOutput(root, "show", rev+":"+path.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		if err := writeProxyFiles(out, m, version, zbuf.Bytes(), []byte(gomod), t); err != nil {
			return err
		}
	}
	return nil
}

// writeProxyModule zips files as module m at version into the proxy at dir.
func writeProxyModule(dir string, m mod, version string, files []modzip.File, t time.Time) error {
	var zbuf bytes.Buffer
	if err := modzip.Create(&zbuf, module.Version{Path: m.Path, Version: version}, files); err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	if err != nil {
		return err
	}
	f, err := zr.Open(m.Path + "@" + version + "/go.mod")
	if err != nil {
		return fmt.Errorf("module %s: no go.mod in its zip: %v", m.Path, err)
	}
	defer f.Close()
	gomod, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	return writeProxyFiles(dir, m, version, zbuf.Bytes(), gomod, t)
}

// writeProxyFiles lays out one module version the way the GOPROXY protocol
// reads a file:// proxy: <path>/@v/{list,<version>.info,.mod,.zip}.
func writeProxyFiles(dir string, m mod, version string, zipData, gomod []byte, t time.Time) error {
	ep, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	ev, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(ep), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":       []byte(version + "\n"),
		ev + ".info": info,
		ev + ".mod":  gomod,
		ev + ".zip":  zipData,
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func goEnv(dir, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// fileURL is the file:// URL of an absolute path, as GOPROXY takes it.
func fileURL(p string) string {
	return "file://" + filepath.ToSlash(p)
}

// removeAll removes a tree the go command may have made read-only.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
