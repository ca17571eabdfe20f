package certify

import (
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/realclient"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/kimi"
)

// A NOT proven line must say what happened: for Kimi Code, which acc
// gives no post-tool hook and which fires no session end hook under
// kimi -p, not that a hook of acc's failed.
func TestNotProvenReasons(t *testing.T) {
	for _, tc := range []struct {
		c               realclient.Client
		midTurn, unseen string
		end             string
	}{
		{realclient.Kimi, "the client starts its PostToolUse hook without waiting for it, so acc installs none", "did not carry", "(the client fires none in a headless run)"},
		{realclient.Claude, "acc-hook's post-tool hook did not carry the question", "without waiting", "its session end hook did not run"},
		{realclient.Gemini, "acc-hook's post-tool hook did not carry the question", "without waiting", "its session end hook did not run"},
	} {
		if got := midTurnNotCarried(tc.c); !strings.Contains(got, tc.midTurn) || strings.Contains(got, tc.unseen) {
			t.Errorf("%s midTurn: %q, want it to say %q and not %q", tc.c.Name, got, tc.midTurn, tc.unseen)
		}
		got := sessionStillOpen(tc.c, false)
		if !strings.HasSuffix(got, tc.end) {
			t.Errorf("%s sessionEnd: %q, want it to end with %q", tc.c.Name, got, tc.end)
		}
		if headless := strings.Contains(got, "headless"); headless != (tc.c.SessionEnd == "") {
			t.Errorf("%s sessionEnd: %q names the headless run: %v, want %v", tc.c.Name, got, headless, tc.c.SessionEnd == "")
		}
	}
}

// A Kimi Code version whose session end acc's own interactive run proved
// gets a line that says so: the headless run fired none, the record keeps
// the interactive proof.
func TestSessionEndProvenElsewhere(t *testing.T) {
	got := sessionStillOpen(realclient.Kimi, true)
	for _, want := range []string{"fires none in a headless run", "acc's own interactive run proved it for this version, and the record keeps that"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if got := sessionStillOpen(realclient.Claude, true); strings.Contains(got, "interactive") {
		t.Errorf("a client that fires its session end headless gets %q", got)
	}
}

// "acc installs none" is true: Kimi's install plan subscribes no
// post-tool event.
func TestKimiInstallsNoPostToolHook(t *testing.T) {
	if !realclient.Kimi.PostToolUnawaited {
		t.Fatal("realclient.Kimi no longer marks its post-tool hook as not awaited; this test's premise is gone")
	}
	inst, ok := kimi.New().(adapter.Installer)
	if !ok {
		t.Fatal("the kimi adapter is no adapter.Installer")
	}
	plan := inst.InstallPlan(adapter.InstallEnv{Home: t.TempDir(), Shim: "/data/acc/bin/acc-hook-shim", AccVersion: "test"})
	for _, a := range plan.Artifacts {
		if a.Kind != adapter.ArtifactTOMLBlock {
			continue
		}
		if !strings.Contains(string(a.Content), `event = "PreToolUse"`) {
			t.Fatalf("the config block has no PreToolUse table, so it is not the hooks block:\n%s", a.Content)
		}
		if strings.Contains(string(a.Content), `event = "`+realclient.Kimi.PostTool+`"`) {
			t.Errorf("acc install subscribes %s for Kimi Code, so certify's reason %q is false:\n%s", realclient.Kimi.PostTool, midTurnNotCarried(realclient.Kimi), a.Content)
		}
		return
	}
	t.Fatal("kimi's install plan has no config.toml block")
}
