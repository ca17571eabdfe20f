package clients

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The capability table in docs/adapters.md lies between these lines.
const (
	tableBegin = "<!-- capability table: generated from pkg/adapters/*/evidence by `ACC_UPDATE=1 go test ./internal/clients -run TestCapabilityTable`; do not edit by hand -->"
	tableEnd   = "<!-- end of the capability table -->"
)

// parenthesised matches a parenthesised aside of an evidence record's test
// field (the command that reruns it, the files it rests on).
var parenthesised = regexp.MustCompile(`\s*\([^()]*\)`)

// capabilityTable renders one row per evidence record of every adapter,
// clients by id and each client's records lowest version first, and one
// row saying so for an adapter with none: what acc-hook grants a version
// is exactly what these rows say (adapter.CapabilitiesFor).
func capabilityTable() string {
	var b strings.Builder
	b.WriteString("| client | version | attach | next turn | guard files | guard shell | session end | live push | mid-turn | end of turn | recorded | by |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: "no"}
	for _, id := range IDs() {
		evs := Get(id).Evidence()
		if len(evs) == 0 {
			b.WriteString("| " + id + " | – | – | – | – | – | – | – | – | – | – | no evidence recorded: advisory |\n")
			continue
		}
		for _, ev := range evs {
			p := ev.Proven
			by := strings.Join(strings.Fields(parenthesised.ReplaceAllString(ev.Test, "")), " ")
			by = strings.ReplaceAll(by, "|", `\|`)
			recorded, _, _ := strings.Cut(ev.Recorded, "T")
			b.WriteString("| " + strings.Join([]string{id, ev.Version, yes[p.Attach], yes[p.NextTurn], yes[p.GuardFiles], yes[p.GuardShell],
				yes[p.SessionEnd], yes[p.LivePush], yes[p.MidTurn], yes[p.EndOfTurn], recorded, by}, " | ") + " |\n")
		}
	}
	return b.String()
}

// TestCapabilityTable: the table of proven capabilities in
// docs/adapters.md is the one the embedded evidence records give; with
// ACC_UPDATE=1 the test rewrites it.
func TestCapabilityTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "adapters.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tableBegin+"\n")
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("docs/adapters.md lacks the lines\n%s\n%s\naround its capability table", tableBegin, tableEnd)
	}
	want := before + tableBegin + "\n" + capabilityTable() + tableEnd + after
	if want == string(doc) {
		return
	}
	if os.Getenv("ACC_UPDATE") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("the capability table in docs/adapters.md is out of date; run `ACC_UPDATE=1 go test ./internal/clients -run TestCapabilityTable`")
}
