package realclient

import (
	"context"
	"path/filepath"
	"runtime"
)

// The pinned ACP agents `acc acp` is tested with
// (docs/decisions.md#20-tests-and-time: exact versions;
// docs/real-clients.md#acp-agents-behind-acc-acp). Gemini CLI is its own agent
// (gemini --acp, the pinned client); the other two are adapters from the
// ACP project that drive the vendors' agents. claude-agent-acp needs
// Node 22 (its engines field), which the tests run it with.
const (
	ClaudeAgentACPVersion = "0.101.0"
	CodexACPVersion       = "2.6.0"
	// NodeVersion is the Node the Claude adapter runs on (npm's
	// node-<os>-<arch> package; scripts/install-clients.sh installs it too).
	NodeVersion = "22.23.5"
)

// An Agent is one real ACP agent as the relay tests run it.
type Agent struct {
	// Name names the agent in the tests and its cache directory.
	Name string
	// Family is the agent family acc keeps evidence for
	// (pkg/adapters/acp), from the name its initialize answer gives.
	Family string
	// Package and Version are the npm package and its pinned version.
	Package, Version string
	// Client is the native client whose configuration and model API the
	// agent uses (its HOME, provider settings, environment).
	Client Client
}

// The pinned agents.
var (
	ClaudeACP = Agent{Name: "acp-claude", Family: "claude-agent-acp", Package: "@agentclientprotocol/claude-agent-acp", Version: ClaudeAgentACPVersion, Client: Claude}
	CodexACP  = Agent{Name: "acp-codex", Family: "codex-acp", Package: "@agentclientprotocol/codex-acp", Version: CodexACPVersion, Client: Codex}
	GeminiACP = Agent{Name: "gemini", Family: "gemini-cli", Package: Gemini.Package, Version: Gemini.Version, Client: Gemini}
	// PinnedAgents lists them.
	PinnedAgents = []Agent{ClaudeACP, CodexACP, GeminiACP}
)

// Argv is the agent's command line, installed under the cache: Gemini CLI
// with --acp and the model the fake serves; the adapters as Node scripts.
func (a Agent) Argv(ctx context.Context) ([]string, error) {
	switch a.Name {
	case GeminiACP.Name:
		exe, err := Gemini.Install(ctx)
		if err != nil {
			return nil, err
		}
		return []string{exe, "--acp", "-m", GeminiModel}, nil
	}
	dir, err := installLibrary(ctx, a.Name, a.Package, a.Version)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "node_modules", filepath.FromSlash(a.Package), "dist", "index.js")
	node := "node"
	if a.Name == ClaudeACP.Name {
		if node, err = Node22(ctx); err != nil {
			return nil, err
		}
	}
	return []string{node, script}, nil
}

// Environ is the agent's whole environment in home, talking to the fake
// model at modelURL: its client's (Setup.Environ), and for Claude's
// adapter IS_SANDBOX=1, without which Claude's runtime refuses to run as
// root (docs/real-clients.md#acp-agents-behind-acc-acp).
func (a Agent) Environ(home, modelURL string) []string {
	env := Setup{Client: a.Client, Home: home, ModelURL: modelURL}.Environ()
	if a.Name == ClaudeACP.Name {
		env = append(env, "IS_SANDBOX=1")
	}
	return env
}

// Configure writes the agent's user configuration into home, as its
// client's with no hooks.
func (a Agent) Configure(home, modelURL string) error {
	return Setup{Client: a.Client, Home: home, ModelURL: modelURL}.Configure()
}

// Node22 returns the pinned Node's binary, installing npm's platform
// package of it into the cache when missing.
func Node22(ctx context.Context) (string, error) {
	pkg := "node-" + runtime.GOOS + "-" + map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	dir, err := installLibrary(ctx, "node", pkg, NodeVersion)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules", pkg, "bin", "node"), nil
}

// installLibrary makes sure <cache>/<name>@<version> holds npm's install of
// pkg@version (install scripts skipped), checked by the version in its
// package.json, and returns the directory (NpmInstall).
func installLibrary(ctx context.Context, name, pkg, version string) (string, error) {
	return NpmInstall(ctx, name, version, []string{"--ignore-scripts", pkg + "@" + version}, nil,
		func(d string, _ bool) error { return PackageVersion(d, pkg, version) })
}
