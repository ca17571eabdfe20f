package pi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// AgentDirEnv names the variable that moves Pi's agent directory (its
// models, settings, sessions and extensions) away from ~/.pi/agent.
const AgentDirEnv = "PI_CODING_AGENT_DIR"

// Binary: Pi is started as pi.
func (client) Binary() string { return "pi" }

// ConfigDir is Pi's agent directory: $PI_CODING_AGENT_DIR when it is an
// absolute path, or ~ or ~/… (Pi reads a leading ~ as the home directory,
// here env.Home), else ~/.pi/agent (docs/adapters.md#what-acc-install-writes).
// A relative value, which Pi would take from its working directory, is
// ignored.
func (client) ConfigDir(env adapter.InstallEnv) string {
	if env.Getenv != nil {
		if v := env.Getenv(AgentDirEnv); v == "~" || strings.HasPrefix(v, "~/") {
			return filepath.Join(env.Home, v[1:])
		}
	}
	return env.Dir(AgentDirEnv, filepath.Join(".pi", "agent"))
}

// ExtensionFile is the extension acc installs for Pi:
// <ConfigDir>/extensions/acc.ts, which Pi loads with the others of that
// directory when it starts (or on /reload).
func ExtensionFile(env adapter.InstallEnv) string {
	return filepath.Join(client{}.ConfigDir(env), "extensions", "acc.ts")
}

// extensionSource is the extension with the placeholder shimPlaceholder
// where the shim's path goes.
//
//go:embed extension/acc.ts
var extensionSource []byte

// shimPlaceholder is the JavaScript string literal in extensionSource that
// Extension replaces.
const shimPlaceholder = `"__ACC_SHIM__"`

// Extension returns the extension's source for the hook shim at shim: the
// path is written as a JSON string, which is also a JavaScript string
// literal, so quotes, backslashes, newlines and any other character in it
// stay the path and cannot end the literal.
func Extension(shim string) []byte {
	lit, err := json.Marshal(shim)
	if err != nil {
		panic(err) // a string always marshals
	}
	return bytes.Replace(extensionSource, []byte(shimPlaceholder), lit, 1)
}

// InstallPlan wires Pi as measured on 0.73.1 (docs/adapters.md#what-acc-install-writes):
// the extension ExtensionFile, which runs the shim (env.Shim) for
// session_start, before_agent_start, tool_call, tool_result, agent_end and
// session_shutdown and does nothing when the shim is gone; and the skill
// in skills/acc/SKILL.md, where Pi looks for skills.
func (c client) InstallPlan(env adapter.InstallEnv) adapter.InstallPlan {
	return adapter.InstallPlan{Artifacts: []adapter.Artifact{
		{Kind: adapter.ArtifactFile, Path: ExtensionFile(env), Content: Extension(env.Shim)},
		{Kind: adapter.ArtifactFile, Path: filepath.Join(c.ConfigDir(env), "skills", "acc", "SKILL.md"), Content: env.Skill},
	}, Notes: []string{"restart Pi, or /reload in it: extensions load when Pi starts"}}
}
