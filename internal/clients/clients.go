// Package clients is the one list of the native clients acc supports: each
// client id with its adapter (pkg/adapters/*), which carries what the hook,
// acc install, acc certify and acc doctor need of it (display name,
// program, install plan, evidence). It also reads the version of a
// client's program where its npm package says it. Nothing under pkg/
// imports it; it imports only the adapters.
package clients

import (
	"maps"
	"slices"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/claude"
	"github.com/acc-go/acc/pkg/adapters/codex"
	"github.com/acc-go/acc/pkg/adapters/copilot"
	"github.com/acc-go/acc/pkg/adapters/droid"
	"github.com/acc-go/acc/pkg/adapters/gemini"
	"github.com/acc-go/acc/pkg/adapters/grok"
	"github.com/acc-go/acc/pkg/adapters/kilo"
	"github.com/acc-go/acc/pkg/adapters/kimi"
	"github.com/acc-go/acc/pkg/adapters/opencode"
	"github.com/acc-go/acc/pkg/adapters/pi"
	"github.com/acc-go/acc/pkg/adapters/qwen"
)

// All returns a fresh map of the native-client adapters by client id
// (claude, codex, copilot, droid, gemini, grok, kilo, kimi, opencode, pi,
// qwen:
// docs/decisions.md#14-client-ids).
func All() map[string]adapter.Adapter {
	out := map[string]adapter.Adapter{}
	for _, a := range []adapter.Adapter{claude.New(), codex.New(), copilot.New(), droid.New(), gemini.New(), grok.New(), kilo.New(), kimi.New(), opencode.New(), pi.New(), qwen.New()} {
		out[a.ID()] = a
	}
	return out
}

// Get returns the adapter of client id, or nil when acc has none by that
// id (ids are exact: lower case).
func Get(id string) adapter.Adapter { return All()[id] }

// IDs returns the client ids, sorted.
func IDs() []string { return slices.Sorted(maps.Keys(All())) }

// Installers returns the adapters acc install can wire into their client
// (adapter.Installer), by client id.
func Installers() map[string]adapter.Installer {
	out := map[string]adapter.Installer{}
	for id, a := range All() {
		if in, ok := a.(adapter.Installer); ok {
			out[id] = in
		}
	}
	return out
}
