package realclient

// Capability evidence of the ACP agent families (pkg/adapters/acp), from
// TestACPAgents: attach (session/new answered and the session is live in
// the room), nextTurn (the block the relay added to a prompt reached the
// model's next request), sessionEnd (the session left the room when the
// agent exited). guardFiles and guardShell are never claimed: the relay
// refuses only writes made through the editor.
//
// As for the native clients (evidence_test.go), without
// ACC_UPDATE_EVIDENCE=1 each run is checked against the family's recorded
// evidence for the version the agent reported; with it, a passing package
// run rewrites pkg/adapters/acp/families/<family>/evidence/<version>.json
// and evidence/<version>/observations.json.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	acpfam "github.com/acc-go/acc/pkg/adapters/acp"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

var acpCapNames = []string{"attach", "nextTurn", "sessionEnd"}

type acpObservation struct {
	agent            Agent
	name, version    string
	observed         map[string]bool
	test, recordedAt string
}

var (
	acpMu           sync.Mutex
	acpObservations = map[string]*acpObservation{}
)

// observeACP checks (or, updating, collects) what one run of agent a,
// which reported itself as name at version, observed.
func observeACP(t *testing.T, a Agent, name, version string, observed map[string]bool) {
	t.Helper()
	if fam := acpfam.Family(name); fam != a.Family {
		t.Errorf("the agent reports %q (family %q), not of family %s", name, fam, a.Family)
		return
	}
	if updatingEvidence() {
		acpMu.Lock()
		acpObservations[a.Family] = &acpObservation{agent: a, name: name, version: version, observed: observed, test: t.Name()}
		acpMu.Unlock()
		return
	}
	records, err := acpfam.Evidence(a.Family)
	if err != nil {
		t.Fatalf("the %s evidence does not load: %v", a.Family, err)
	}
	var exact *adapter.Evidence
	for i := range records {
		if records[i].Version == version {
			exact = &records[i]
		}
	}
	inherited, _ := adapter.ProvenFor(records, version)
	for _, n := range acpCapNames {
		got := observed[n]
		switch {
		case exact != nil && capOf(exact.Proven, n) != got:
			t.Errorf("pkg/adapters/acp/families/%s/evidence/%s.json records %s=%v, but this run observed %v; rerun with %s=1 if the agent changed",
				a.Family, version, n, capOf(exact.Proven, n), got, UpdateEvidenceEnv)
		case exact == nil && capOf(inherited, n) && !got:
			t.Errorf("%s is claimed for %s %s (carried forward), but this run did not prove it", n, a.Family, version)
		default:
			t.Logf("%s %s: %s=%v", a.Family, version, n, got)
		}
	}
	if inherited.GuardFiles || inherited.GuardShell {
		t.Errorf("the %s evidence claims a guard; the relay cannot guard an ACP agent's own writes", a.Family)
	}
}

// finishACPEvidence writes the collected ACP evidence after a passing run
// (TestMain, with ACC_UPDATE_EVIDENCE=1).
func finishACPEvidence(code int) int {
	if !updatingEvidence() || evidenceClients() != nil || code != 0 {
		return code // a list of clients names no ACP family
	}
	acpMu.Lock()
	defer acpMu.Unlock()
	fams := make([]string, 0, len(acpObservations))
	for f := range acpObservations {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	now := time.Now().UTC().Format(time.RFC3339)
	for _, f := range fams {
		o := acpObservations[f]
		var proven adapter.Capabilities
		proven.Attach, proven.NextTurn, proven.SessionEnd = o.observed["attach"], o.observed["nextTurn"], o.observed["sessionEnd"]
		ev := adapter.Evidence{Version: o.version, Proven: proven, Recorded: now,
			Test: "internal/realclient " + o.test + " (ACC_UPDATE_EVIDENCE=1 go test ./internal/realclient)",
			Note: fmt.Sprintf("%s-%s, %s@%s (agentInfo %q) behind acc acp, driven by a test editor against the loopback fake model. "+
				"session/new attached a live advisory acc session; the text block the relay added to session/prompt, holding a peer's question "+
				"as untrusted peer content, reached the next model request and the receipt became offered; the session left the room when the "+
				"agent exited after end of input. Writes the agent makes with its own tools are not guarded.",
				runtime.GOOS, map[string]string{"amd64": "x64"}[runtime.GOARCH], o.agent.Package, o.agent.Version, o.name)}
		dir := filepath.Join("..", "..", "pkg", "adapters", "acp", "families", f, "evidence")
		if err := os.MkdirAll(filepath.Join(dir, o.version), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		path := filepath.Join(dir, o.version+".json")
		if err := writePretty(path, ev); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := writePretty(filepath.Join(dir, o.version, "observations.json"), map[string]any{
			"agentInfo": map[string]string{"name": o.name, "version": o.version}, "package": o.agent.Package + "@" + o.agent.Version,
			"observed": o.observed, "test": o.test, "recorded": now,
		}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "%s=1: wrote %s\n", UpdateEvidenceEnv, path)
	}
	return code
}
