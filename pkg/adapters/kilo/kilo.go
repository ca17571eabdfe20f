package kilo

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

// Client is the Kilo Code adapter: acc's plugin (jsplugin), which Kilo
// 7.7.9 runs as OpenCode does, the program kilo, its pid in KILO_PID and
// its version in KILOCODE_VERSION, its
// configuration in $XDG_CONFIG_HOME/kilo (~/.config/kilo), and
// @kilocode/plugin as the package it fetches there
// (docs/adapters.md#kilo-code).
type Client struct{ jsplugin.Client }

// New returns the Kilo Code adapter.
func New() adapter.Adapter {
	return Client{jsplugin.New(jsplugin.Config{ID: ID, Display: DisplayName,
		Binary: "kilo", PIDEnv: "KILO_PID", VersionEnv: "KILOCODE_VERSION", ConfigDir: "kilo", PluginPackage: "@kilocode/plugin",
		Evidence: loadEvidence})}
}
