package install

import (
	"testing"

	"github.com/acc-go/acc/internal/clients"
)

// TestLiveDeliveryFallback: where live push is off, the reason says where
// messages go instead — never "its next turn" for Grok, whose before-turn
// hook output reaches no model and of which nothing is proven.
func TestLiveDeliveryFallback(t *testing.T) {
	reg := clients.All()
	for _, c := range []struct {
		client, version, want string
	}{
		{"grok", "", "Grok has no live-push transport on this platform; messages wait in its inbox, which its agent reads with acc inbox or acc-mcp's tools"},
		{"grok", "0.1.0", "Grok has no live-push transport on this platform; messages wait in its inbox, which its agent reads with acc inbox or acc-mcp's tools"},
		{"kimi", "2.1.0", "Kimi Code has no live-push transport on this platform; messages reach it on its next turn and in its inbox"},
		{"gemini", "0.61.0", "Gemini CLI has no live-push transport on this platform; messages reach it on its next turn and in its inbox"},
	} {
		effective, reason := liveDelivery(reg[c.client], c.version, false, "actionable")
		if effective != "off" || reason != c.want {
			t.Errorf("%s %q: %q, %q\nwant off, %q", c.client, c.version, effective, reason, c.want)
		}
	}
}
