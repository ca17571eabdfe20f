package opencode

import (
	"embed"
	"sync"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/jsplugin"
)

// files holds the evidence records and the payloads they rest on.
//
//go:embed evidence
var files embed.FS

// loadEvidence decodes the embedded records when first asked.
var loadEvidence = sync.OnceValues(func() ([]adapter.Evidence, error) { return adapter.LoadEvidence(files) })

// Client is the OpenCode adapter: acc's plugin (jsplugin) as OpenCode
// 1.18.33 runs it, the program opencode, its pid in OPENCODE_PID, its
// configuration in $XDG_CONFIG_HOME/opencode (~/.config/opencode), and
// @opencode-ai/plugin as the package it fetches there
// (docs/adapters.md#opencode).
type Client struct{ jsplugin.Client }

// New returns the OpenCode adapter.
func New() adapter.Adapter {
	return Client{jsplugin.New(jsplugin.Config{ID: ID, Display: DisplayName,
		Binary: "opencode", PIDEnv: "OPENCODE_PID", ConfigDir: "opencode", PluginPackage: "@opencode-ai/plugin",
		Evidence: loadEvidence})}
}
