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
}
