package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/protocol"
)

// childEnv, when set, makes the test binary an install or uninstall run
// instead of a test: the processes TestConcurrentInstallUninstall starts.
const childEnv = "ACC_TEST_INSTALL_CHILD"

func TestMain(m *testing.M) {
	if op := os.Getenv(childEnv); op != "" {
		os.Exit(runChild(op))
	}
	os.Exit(m.Run())
}

var hammerAdapters = []string{"claude", "gemini", "kimi"}

// runChild installs or uninstalls Claude Code, Gemini CLI and Kimi Code for
// the home and data home named by ACC_TEST_HOME and ACC_TEST_DATA_HOME, as
// `acc install` and `acc uninstall` do, and exits with the exit code of
// the result.
func runChild(op string) int {
	// Eight runs queue for the lock on a machine that may be busy with
	// other tests: waiting longer than a person would keeps install_busy
	// out of what this test measures.
	lockWait = 30 * time.Second
	adapters := map[string]adapter.Installer{}
	for id, a := range clients.All() {
		if in, ok := a.(adapter.Installer); ok {
			adapters[id] = in
		}
	}
	e := &Env{DataHome: os.Getenv("ACC_TEST_DATA_HOME"), Home: os.Getenv("ACC_TEST_HOME"), HomeGiven: true, Getenv: os.Getenv,
		LookPath:   func(string) (string, error) { return "", exec.ErrNotFound },
		HookBinary: "/bin/true", MCPBinary: "/bin/true", AccVersion: "0.0.0-test", Adapters: adapters}
	var err error
	switch op {
	case "install":
		_, err = e.Install(context.Background(), Options{Adapters: hammerAdapters})
	case "uninstall":
		_, err = e.Uninstall(context.Background(), Options{})
	default:
		err = fmt.Errorf("unknown child operation %q", op)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return int(protocol.CodeOf(err))
	}
	return 0
}

// snapshot is every file, directory and symlink under root: path → type,
// mode and bytes.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for p, v := range want {
		if got[p] != v {
			t.Fatalf("%s: %s differs (or is gone)", what, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Fatalf("%s: %s was left behind", what, p)
		}
	}
}

// Eight processes at a time install and uninstall on one home and one data
// home that does not exist yet. After every round the record parses and
// agrees with the disk: either nothing is installed, and the home is byte
// for byte as it was and nothing of acc's is left in the data home (no
// lock, no directory); or what the record lists is installed once, intact,
// beside the user's own bytes, and every directory acc created for its
// files is recorded, so that the last uninstall can remove it. At the end
// one uninstall gives everything back.
func TestConcurrentInstallUninstall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	files := map[string]string{
		".claude/settings.json":  "{\"model\": \"opus\"}\n",
		".gemini/settings.json":  "{\n  // mine\n  \"theme\": \"dark\",\n}\n",
		".kimi-code/config.toml": "default_model = \"k2\"\n",
	}
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(base, "xdg") // neither it nor the data home exists yet
	dataHome := filepath.Join(top, "share")
	created := []string{top, dataHome, filepath.Join(dataHome, "acc"), filepath.Join(dataHome, "acc", "bin")}
	before := snapshot(t, home)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(op string) error {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+op, "ACC_TEST_HOME="+home, "ACC_TEST_DATA_HOME="+dataHome)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v: %s", op, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}

	rng := rand.New(rand.NewSource(15))
	const procs = 8
	installedRounds := 0
	for round := 0; round < 10; round++ {
		ops := make([]string, procs)
		for i := range ops {
			ops[i] = "install"
			if rng.Intn(2) == 0 {
				ops[i] = "uninstall"
			}
		}
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for i, op := range ops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = run(op)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d %v:\n%v", round, ops, err)
		}

		rec, err := loadRecord(dataHome)
		if err != nil {
			t.Fatalf("round %d: the record is corrupted: %v", round, err)
		}
		if _, err := os.Stat(recordPath(dataHome)); errors.Is(err, fs.ErrNotExist) {
			sameSnapshot(t, fmt.Sprintf("round %d %v, nothing installed: the home", round, ops), before, snapshot(t, home))
			if _, err := os.Lstat(top); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("round %d %v, nothing installed: %s is left: %v", round, ops, top, snapshot(t, top))
			}
			t.Logf("round %d %v: nothing installed", round, ops)
			continue
		}
		installedRounds++
		t.Logf("round %d %v: installed", round, ops)
		checkInstalled(t, fmt.Sprintf("round %d %v", round, ops), rec, home, dataHome, files, created)
	}
	if installedRounds == 0 || installedRounds == 10 {
		t.Logf("every round ended the same way (%d of 10 installed); the mix did not cover both", installedRounds)
	}

	if err := run("uninstall"); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after the last uninstall: the home", before, snapshot(t, home))
	if _, err := os.Lstat(top); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after the last uninstall %s is left: %v", top, snapshot(t, top))
	}
}

// checkInstalled asserts that an installation the record lists is on disk
// exactly once, intact, beside the user's bytes, and that the record holds
// every directory acc created in the data home.
func checkInstalled(t *testing.T, what string, rec *Record, home, dataHome string, files map[string]string, created []string) {
	t.Helper()
	var ids []string
	for _, in := range rec.Installs {
		ids = append(ids, in.AdapterID)
		if in.State != "installed" {
			t.Fatalf("%s: %s is %s", what, in.AdapterID, in.State)
		}
		for _, a := range in.Artifacts {
			if st := checkArtifact(a, ""); st.Status != "intact" {
				t.Fatalf("%s: %s %s is %s", what, in.AdapterID, a.Path, st.Status)
			}
		}
	}
	if !slices.Equal(ids, hammerAdapters) {
		t.Fatalf("%s: the record lists %v, want %v", what, ids, hammerAdapters)
	}
	if rec.Shim == nil {
		t.Fatalf("%s: no shim recorded", what)
	}
	if b, err := os.ReadFile(rec.Shim.Path); err != nil || sum(b) != rec.Shim.SHA256 {
		t.Fatalf("%s: the shim is not as recorded (%v)", what, err)
	}
	for _, d := range created {
		if !slices.Contains(rec.DataDirectories, d) {
			t.Fatalf("%s: %s, which acc created, is not recorded (%v)", what, d, rec.DataDirectories)
		}
	}
	if _, err := os.Stat(lockPath(dataHome)); err != nil {
		t.Fatalf("%s: no lock file while installed: %v", what, err)
	}
	// The user's bytes are kept, and acc's entries are there once.
	claude, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	gemini, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	kimi, _ := os.ReadFile(filepath.Join(home, ".kimi-code", "config.toml"))
	for _, c := range []struct {
		name      string
		got       []byte
		mine, acc string
	}{
		{"claude", claude, `"model": "opus"`, "acc-hook-shim claude SessionStart"},
		{"gemini", gemini, "// mine", "acc-hook-shim gemini SessionStart"},
		{"kimi", kimi, `default_model = "k2"`, "# >>> agents-can-communicate"},
	} {
		if !bytes.Contains(c.got, []byte(c.mine)) {
			t.Fatalf("%s: %s lost the user's %q:\n%s", what, c.name, c.mine, c.got)
		}
		if n := bytes.Count(c.got, []byte(c.acc)); n != 1 {
			t.Fatalf("%s: %s holds %q %d times:\n%s", what, c.name, c.acc, n, c.got)
		}
	}
}
