package realclient

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestInstallLivedIn: for each real client, a HOME that already holds a
// person's configuration (other tools' hooks and MCP servers, comments,
// tabs or four-space indentation, a TOML file without a final newline);
// `acc install --home` wires acc in; the client, run as usual, fires acc's
// hooks and its session joins the room; `acc uninstall` then leaves every
// file that was there before byte for byte as it was, and nothing of acc's.
func TestInstallLivedIn(t *testing.T) {
	for _, c := range Pinned {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			var mu sync.Mutex
			var live []string
			var taught bool
			script := fakemodel.Script{{Build: func(req *fakemodel.Request) (fakemodel.Reply, error) {
				st, err := w.status()
				if err != nil {
					return fakemodel.Reply{}, err
				}
				mu.Lock()
				live = st.liveOf(c.Name)
				// The skill (its description, at least) reaches the model.
				taught = strings.Contains(string(req.Body), "Coordinate with the other AI coding sessions")
				mu.Unlock()
				return fakemodel.Say("I can see the room."), nil
			}}}
			r := w.hooked(t, c, w.repo, script)
			if err := r.setup.Configure(); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, r.setup.Home)
			if len(before) == 0 {
				t.Fatal("the lived-in home is empty")
			}
			out, err := r.setup.InstallAcc(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("acc install:\n%s", out)
			_, recs := r.exec("Say hello.")
			r.wantEvents(recs, c.SessionStart, c.BeforeTurn, c.SessionEnd)
			mu.Lock()
			if len(live) != 1 {
				t.Errorf("while %s ran, the room showed %d live %s sessions, want 1", c.Name, len(live), c.Name)
			}
			if !taught {
				t.Errorf("the model's request did not carry acc's skill")
			}
			mu.Unlock()

			out, err = r.setup.UninstallAcc(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("acc uninstall:\n%s", out)
			if strings.Contains(out, "KEPT") {
				t.Errorf("uninstall kept something of acc's")
			}
			after := snapshot(t, r.setup.Home)
			for path, b := range before {
				if got, ok := after[path]; !ok {
					t.Errorf("%s is gone", path)
				} else if got != b {
					t.Errorf("%s differs after uninstall:\n--- before\n%s\n--- after\n%s", path, b, got)
				}
			}
			for path, b := range after {
				switch filepath.Base(path) {
				case "settings.json", "hooks.json", "config.toml", "installed.json":
					if strings.Contains(b, "acc-hook-shim") {
						t.Errorf("%s still runs acc's hooks", path)
					}
				}
			}
			for _, gone := range []string{".claude/skills/acc", ".agents/skills/acc", ".gemini/extensions/agents-can-communicate", ".kimi-code/plugins/managed/agents-can-communicate", ".pi/agent/extensions/acc.ts", ".pi/agent/skills/acc"} {
				if _, err := os.Stat(filepath.Join(r.setup.Home, gone)); err == nil {
					t.Errorf("acc's %s is still there", gone)
				}
			}
			if _, err := os.Stat(filepath.Join(r.setup.Install.DataHome, "acc", "installs.json")); err == nil {
				t.Error("the install record is still there")
			}
		})
	}
}

// snapshot reads every regular file under dir (relative path → content).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
