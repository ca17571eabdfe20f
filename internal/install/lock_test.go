package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/protocol"
)

// lock refuses a path that is in the way for good at once, as a conflict
// naming it: it never waits on it (and spins) as if another run held the
// lock, to answer install_busy after lockWait.
func TestLockRefusesWhatIsInTheWayAtOnce(t *testing.T) {
	base := t.TempDir()
	broken := filepath.Join(base, "broken")
	if err := os.Symlink(filepath.Join(base, "missing"), broken); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(base, "linked")
	if err := os.MkdirAll(filepath.Join(linked, "acc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, lockPath(linked)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dataHome, path, says string }{
		{broken, broken, "is a broken symlink to " + filepath.Join(base, "missing")},
		{filepath.Join(broken, "deeper"), broken, "is a broken symlink to "},
		{file, file, "is a file, not a directory"},
		{linked, lockPath(linked), "is a symlink; acc never follows its install lock through a link"},
	} {
		start := time.Now()
		l, err := lock(context.Background(), c.dataHome)
		t.Logf("%s: answered in %v: %v", c.dataHome, time.Since(start), err)
		if l != nil {
			l.f.Close()
		}
		pe := protocol.AsError(err)
		if !protocol.IsReason(err, protocol.ReasonInstallConflict) || !strings.Contains(pe.Message, c.says) || pe.Details["path"] != c.path {
			t.Errorf("%s: %v (details %v), want install_conflict at %s saying %q", c.dataHome, err, pe.Details, c.path, c.says)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "missing")); !os.IsNotExist(err) {
		t.Fatalf("something was created through the broken link: %v", err)
	}
}

// testEnv is an Env for one home and data home that installs Claude Code
// (found by its configuration directory) with a hook binary that exists.
func testEnv(t *testing.T) *Env {
	t.Helper()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	adapters := map[string]adapter.Installer{}
	for id, a := range clients.All() {
		if in, ok := a.(adapter.Installer); ok {
			adapters[id] = in
		}
	}
	return &Env{DataHome: filepath.Join(base, "data"), Home: home, HomeGiven: true, Getenv: os.Getenv,
		LookPath:   func(string) (string, error) { return "", exec.ErrNotFound },
		HookBinary: "/bin/true", MCPBinary: "/bin/true", AccVersion: "0.0.0-test", Adapters: adapters}
}

// A data home this user cannot write is refused before anything is
// written, by the dry run as by the run (exit 5, naming the directory): an
// uninstall no longer removes a client's files and then fails to update
// the record. (Root writes anywhere, so the test needs another user.)
func TestUnwritableDataHomeIsRefusedFirst(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write into any directory; run the test as another user")
	}
	e := testEnv(t)
	claude := Options{Adapters: []string{"claude"}}
	if _, err := e.Install(context.Background(), claude); err != nil {
		t.Fatal(err)
	}
	acc := filepath.Join(e.DataHome, "acc")
	if err := os.Chmod(acc, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(acc, 0o755)
	home0, data0 := snapshot(t, e.Home), snapshot(t, e.DataHome)
	for _, dry := range []bool{true, false} {
		o := claude
		o.DryRun = dry
		_, err := e.Uninstall(context.Background(), o)
		pe := protocol.AsError(err)
		if !protocol.IsReason(err, protocol.ReasonInstallConflict) || pe.Details["path"] != acc || !strings.Contains(pe.Message, "nothing was changed") {
			t.Fatalf("uninstall (dry run %v): %v, want install_conflict naming %s", dry, err, acc)
		}
		o.Delivery = "all" // something for install to write in the record
		_, err = e.Install(context.Background(), o)
		if !protocol.IsReason(err, protocol.ReasonInstallConflict) || protocol.AsError(err).Details["path"] != acc {
			t.Fatalf("install (dry run %v): %v, want install_conflict naming %s", dry, err, acc)
		}
	}
	sameSnapshot(t, "home", home0, snapshot(t, e.Home))
	sameSnapshot(t, "data home", data0, snapshot(t, e.DataHome))
	if err := os.Chmod(acc, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Uninstall(context.Background(), Options{}); err != nil {
		t.Fatalf("uninstall once writable: %v", err)
	}
}
