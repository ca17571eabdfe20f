package acp

import (
	"testing"
)

func TestFamily(t *testing.T) {
	for name, want := range map[string]string{
		"@agentclientprotocol/claude-agent-acp": "claude-agent-acp",
		"@agentclientprotocol/codex-acp":        "codex-acp",
		"gemini-cli":                            "gemini-cli",
		" Gemini-CLI ":                          "gemini-cli",
		"":                                      "",
	} {
		if got := Family(name); got != want {
			t.Errorf("Family(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestEvidenceLoads: every family's records load strictly, and none claims
// a guard (the relay cannot guard an agent's own writes).
func TestEvidenceLoads(t *testing.T) {
	if len(Families()) != 3 {
		t.Fatalf("families %v", Families())
	}
	for _, f := range Families() {
		ev, err := Evidence(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(ev) == 0 {
			t.Errorf("%s has no evidence", f)
		}
		for _, e := range ev {
			if e.Proven.GuardFiles || e.Proven.GuardShell {
				t.Errorf("%s %s claims a guard", f, e.Version)
			}
		}
	}
	if ev, err := Evidence("no-such-agent"); err != nil || ev != nil {
		t.Errorf("an unknown family: %v %v", ev, err)
	}
}

// TestCapabilities: what is proven holds from the recorded version on, and
// nothing for an older version, an unknown agent or an unreadable version.
func TestCapabilities(t *testing.T) {
	caps, ev := Capabilities("gemini-cli", "0.61.0")
	if !caps.Attach || !caps.NextTurn || !caps.SessionEnd || ev == nil || ev.Version != "0.61.0" {
		t.Errorf("gemini-cli 0.61.0: %+v %+v", caps, ev)
	}
	if caps, ev := Capabilities("gemini-cli", "0.70.1"); !caps.NextTurn || ev == nil || ev.Version != "0.61.0" {
		t.Errorf("a newer gemini-cli carries the proof forward: %+v %+v", caps, ev)
	}
	for _, c := range [][2]string{{"gemini-cli", "0.50.0"}, {"someone-else", "1.0.0"}, {"gemini-cli", "latest"}, {"", ""}} {
		if caps, ev := Capabilities(c[0], c[1]); caps.Attach || caps.NextTurn || caps.SessionEnd || ev != nil {
			t.Errorf("%s %s: %+v %+v, want nothing", c[0], c[1], caps, ev)
		}
	}
}
