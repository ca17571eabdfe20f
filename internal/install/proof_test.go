package install

import (
	"testing"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// TestProofDetail: acc doctor names where each built-in proof comes from
// and what it leaves unproven, from the records embedded in the adapters.
func TestProofDetail(t *testing.T) {
	reg := clients.All()
	for _, c := range []struct {
		client, version, want string
	}{
		{"kimi", "2.1.0", "acc's own run of Kimi Code 2.1.0: attach, next turn, file guard, shell guard, session end"},
		{"kimi", "0.36.1", "upstream's captures of Kimi Code 0.36.1: attach, next turn, file guard, shell guard; not proven: session end"},
		{"claude", "2.1.332", "acc's own run of Claude Code 2.1.332: attach, next turn, file guard, shell guard, session end"},
		// A hand capture is neither acc's real-client tests nor upstream's.
		{"claude", "2.1.197", "attach, next turn, shell guard, session end; not proven: file guard"},
	} {
		var ev *adapter.Evidence
		for _, e := range reg[c.client].Evidence() {
			if e.Version == c.version {
				ev = &e
			}
		}
		if ev == nil {
			t.Fatalf("%s has no embedded record for %s", c.client, c.version)
		}
		if got := proofDetail(reg[c.client], *ev); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.client, c.version, got, c.want)
		}
	}
	if got := unprovenList(adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, GuardShell: true, SessionEnd: true}); got != "" {
		t.Errorf("everything proven, yet unprovenList = %q", got)
	}
}
