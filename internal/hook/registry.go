package hook

import (
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/claude"
	"github.com/acc-go/acc/pkg/adapters/codex"
	"github.com/acc-go/acc/pkg/adapters/gemini"
	"github.com/acc-go/acc/pkg/adapters/grok"
	"github.com/acc-go/acc/pkg/adapters/kimi"
)

// Registry returns the five native-client adapters by id
// (docs/decisions.md#14-client-ids).
func Registry() map[string]adapter.Adapter {
	out := map[string]adapter.Adapter{}
	for _, a := range []adapter.Adapter{claude.New(), codex.New(), gemini.New(), grok.New(), kimi.New()} {
		out[a.ID()] = a
	}
	return out
}
