package realclient

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPinsAgree keeps the pinned versions in one place in practice: the
// install script and docs/real-clients.md must name exactly the versions of
// the Go table, and every version must be exact.
func TestPinsAgree(t *testing.T) {
	exact := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install-clients.sh"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "real-clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^\s*"(\S+) (\S+) (\S+)"$`).FindAllStringSubmatch(string(script), -1)
	if len(entries) != len(Pinned) {
		t.Fatalf("scripts/install-clients.sh lists %d clients, the Go table %d", len(entries), len(Pinned))
	}
	for i, c := range Pinned {
		if !exact.MatchString(c.Version) {
			t.Errorf("%s: version %q is not exact", c.Name, c.Version)
		}
		if e := entries[i]; e[1] != c.Name || e[2] != c.Package || e[3] != c.Version {
			t.Errorf("scripts/install-clients.sh pins %q %q %q; the Go table %q %q %q", e[1], e[2], e[3], c.Name, c.Package, c.Version)
		}
		if row := "| `" + c.Package + "` | " + c.Version + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/real-clients.md has no row %q", row)
		}
	}
	if !strings.Contains(string(script), `DROID_LAUNCHER="@factory/cli@`+DroidLauncherVersion+`"`) {
		t.Errorf("scripts/install-clients.sh does not install Droid's launcher %s", DroidLauncherVersion)
	}
	if !strings.Contains(string(script), `KILO_LAUNCHER="@kilocode/cli@`+KiloLauncherVersion+`"`) {
		t.Errorf("scripts/install-clients.sh does not install Kilo Code's launcher %s", KiloLauncherVersion)
	}
}

// TestAgentPinsAgree does the same for the ACP agents: the script's
// ACP_AGENTS, its NODE, and docs/real-clients.md name the Go table's
// versions (Gemini CLI's agent is the pinned client itself).
func TestAgentPinsAgree(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install-clients.sh"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "real-clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^\s*"(acp-[a-z]+):(\S+):(\S+)"$`).FindAllStringSubmatch(string(script), -1)
	var own []Agent
	for _, a := range PinnedAgents {
		if a.Name != GeminiACP.Name {
			own = append(own, a)
		}
	}
	if len(entries) != len(own) {
		t.Fatalf("scripts/install-clients.sh lists %d ACP agents, the Go table %d", len(entries), len(own))
	}
	for i, a := range own {
		if e := entries[i]; e[1] != a.Name || e[2] != a.Package || e[3] != a.Version {
			t.Errorf("scripts/install-clients.sh pins %q %q %q; the Go table %q %q %q", e[1], e[2], e[3], a.Name, a.Package, a.Version)
		}
	}
	for _, a := range PinnedAgents {
		if row := "| `" + a.Package + "` | " + a.Version + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/real-clients.md has no row %q", row)
		}
	}
	if !strings.Contains(string(script), `NODE="node:`+NodeVersion+`"`) {
		t.Errorf("scripts/install-clients.sh does not pin Node %s", NodeVersion)
	}
	if GeminiACP.Version != Gemini.Version {
		t.Error("Gemini CLI's agent is not the pinned client")
	}
}
