package kilo

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
)

// testdataFS holds the 7.7.9 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

func payloads(t testing.TB) fs.FS {
	t.Helper()
	s, err := fs.Sub(testdataFS, "testdata/7.7.9")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) { adaptertest.Run(t, New(), payloads(t)) }

func FuzzNormalize(f *testing.F) { adaptertest.Fuzz(f, New(), payloads(f)) }

// TestIdentity: Kilo's own id, program, pid variable and directory; the
// payloads are read as Kilo's, not OpenCode's.
func TestIdentity(t *testing.T) {
	a := New()
	c, ok := a.(Client)
	if !ok {
		t.Fatalf("New() is %T", a)
	}
	if c.ID() != "kilo" || c.DisplayName() != "Kilo Code" || c.Binary() != "kilo" || c.ClientCommand() != "kilo" || c.ClientPIDEnv() != "KILO_PID" || c.ClientVersionEnv() != "KILOCODE_VERSION" {
		t.Errorf("identity: %s %q %s %s %s %s", c.ID(), c.DisplayName(), c.Binary(), c.ClientCommand(), c.ClientPIDEnv(), c.ClientVersionEnv())
	}
	b, err := fs.ReadFile(payloads(t), "tool.execute.before-write.json")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := a.Normalize("tool.execute.before", b)
	if err != nil || ev.Adapter != "kilo" || !ev.Write || len(ev.Targets) != 1 {
		t.Errorf("write: %+v, %v", ev, err)
	}
}

// TestInstallPlan: the plugin in ~/.config/kilo/plugin naming client kilo,
// the skill beside it, and the note naming Kilo's plugin package.
func TestInstallPlan(t *testing.T) {
	c := New().(Client)
	plan := c.InstallPlan(adapter.InstallEnv{Home: "/home/u", Shim: "/data/shim", Skill: []byte("s\n")})
	var paths []string
	for _, a := range plan.Artifacts {
		paths = append(paths, a.Path)
	}
	if want := []string{"/home/u/.config/kilo/plugin/acc.js", "/home/u/.config/kilo/skills/acc/SKILL.md"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	js := string(plan.Artifacts[0].Content)
	if !strings.Contains(js, `const CLIENT = "kilo";`) || !strings.Contains(js, "KILO_PID") || strings.Contains(js, "OpenCode") {
		t.Errorf("the plugin is not Kilo's:\n%s", js)
	}
	if !strings.Contains(strings.Join(plan.Notes, "\n"), "@kilocode/plugin") {
		t.Errorf("notes %q do not name @kilocode/plugin", plan.Notes)
	}
}

func TestEvidence(t *testing.T) {
	if _, err := loadEvidence(); err != nil {
		t.Fatal(err)
	}
}
