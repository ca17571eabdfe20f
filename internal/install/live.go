package install

import (
	"fmt"

	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/internal/livepush"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// LiveDelivery is the live-push policy acc can honour for client a at
// version (docs/delivery.md#live-push-waking-an-idle-session:
// consent cannot create a capability): the requested policy when a has a live transport on this
// platform and live push is proven for version (built-in evidence or acc
// certify's record in dataHome), else "off" with the reason in words.
// Requested "off" is always "off", with no reason.
func LiveDelivery(a adapter.Adapter, version, dataHome, requested string) (effective, reason string) {
	caps, _, _ := evidence.For(a, version, dataHome)
	return liveDelivery(a, version, caps.LivePush, requested)
}

// liveDelivery is LiveDelivery with what is proven for version already
// read (livePush). The reason ends with where messages go instead: to the
// next turn and the inbox, or to the inbox alone for a client of which no
// capability is proven at any version (Grok, whose client gives its model
// no hook output before a turn: docs/delivery.md), since the router
// declares next-turn delivery only where it is proven (pkg/router).
func liveDelivery(a adapter.Adapter, version string, livePush bool, requested string) (effective, reason string) {
	if requested == "" || requested == "off" {
		return "off", ""
	}
	name := a.DisplayName()
	fallback := "; messages reach it on its next turn and in its inbox"
	if len(a.Evidence()) == 0 {
		fallback = "; messages wait in its inbox, which its agent reads with acc inbox or acc-mcp's tools"
	}
	if !livepush.Has(a.ID()) {
		return "off", name + " has no live-push transport on this platform" + fallback
	}
	if version == "" {
		return "off", "the version of " + name + " is unreadable, so live push is not assumed" + fallback
	}
	if !livePush {
		return "off", fmt.Sprintf("live push is not proven for %s %s%s", name, version, fallback)
	}
	return requested, ""
}
