package realclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/jsplugin"
	"github.com/acc-go/acc/pkg/adapters/kilo"
	"github.com/acc-go/acc/pkg/adapters/opencode"
	"github.com/acc-go/acc/pkg/adapters/pi"
)

// FakeAPIKey is the credential every client is given; the fake model ignores
// it and records it redacted.
const FakeAPIKey = "acc-fake-model-key"

// GeminiModel is the model Gemini CLI is told to use: a named model keeps it
// from making routing calls before the real one.
const GeminiModel = "gemini-2.5-flash"

// A Setup is one real client configured for a headless, offline run against
// a fake model, in its own HOME.
type Setup struct {
	Client Client
	// Exe is the client's installed program (Client.Install).
	Exe string
	// Home is the HOME of the run; the client's user-level configuration is
	// written there and XDG_* directories point inside it.
	Home string
	// Dir is the working directory of the run, normally a Git repository.
	Dir string
	// ModelURL is the fake model's base URL, with no path.
	ModelURL string
	// Hook gives the command line the client runs for one of its own hook
	// events, e.g. "acc-hook claude PreToolUse". Nil configures no hooks.
	Hook func(event string) string
	// Events are the client's hook events to configure; nil means
	// Client.Events().
	Events []string
	// Env is added to the run's environment, overriding the defaults of
	// Environ; all three clients pass it on to their hooks.
	Env []string
	// Args are added to the client's command line, before the prompt.
	Args []string
	// Resume continues the most recent session in Dir instead of starting
	// one (claude --continue, codex exec resume --last, gemini --resume
	// latest, kimi -c, pi -c; for Droid the JSON-RPC load_session of
	// the directory's newest session, droidDriver).
	Resume bool
	// Install, when set, wires the hooks with `acc install` instead of
	// writing them, into a HOME that first gets realistic configuration of
	// other tools (LivedIn); Hook is then unused.
	Install *Install
}

// Install is how a run's hooks are installed by acc itself.
type Install struct {
	// Acc is the built acc binary.
	Acc string
	// DataHome is where acc install keeps its record and the hook shim.
	// It is the run's own (installs of several HOMEs must not share one
	// record); the room's store is the one ACC_DATA_HOME names in Env.
	DataHome string
	// HookBinary is what the shim runs (ACC_HOOK_BINARY): acc-hook, or a
	// wrapper that records the hook call around it.
	HookBinary string
}

// Configure writes the client's configuration into Home: the fake model as
// its provider, no telemetry or update checks, and the hooks.
func (s Setup) Configure() error {
	if err := os.MkdirAll(filepath.Join(s.Home, "tmp"), 0o755); err != nil {
		return err
	}
	events := s.Events
	if events == nil {
		events = s.Client.Events()
	}
	if s.Install != nil {
		return s.configureLivedIn()
	}
	switch s.Client.Name {
	case "claude":
		settings := map[string]any{}
		if s.Hook != nil {
			settings["hooks"] = s.hookTable(events, "*", 30)
		}
		return writeJSONFile(filepath.Join(s.Home, ".claude", "settings.json"), settings)
	case "codex":
		home := filepath.Join(s.Home, ".codex")
		config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "ACC_FAKE_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
hooks = true

[analytics]
enabled = false

[feedback]
enabled = false
`, s.ModelURL+"/v1")
		if err := os.MkdirAll(home, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
			return err
		}
		if s.Hook == nil {
			return nil
		}
		return writeJSONFile(filepath.Join(home, "hooks.json"), map[string]any{"hooks": s.hookTable(events, "*", 30)})
	case "gemini":
		settings := map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
			"general": map[string]any{
				"disableAutoUpdate": true, "disableUpdateNag": true,
				"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
			},
		}
		if s.Hook != nil {
			settings["hooks"] = s.hookTable(events, ".*", 30000)
		}
		return writeJSONFile(filepath.Join(s.Home, ".gemini", "settings.json"), settings)
	case "copilot":
		if s.Hook == nil {
			return nil
		}
		hooks := map[string]any{}
		for _, ev := range events {
			hooks[ev] = []any{map[string]any{"type": "command", "bash": s.Hook(ev), "timeoutSec": 30}}
		}
		return writeJSONFile(filepath.Join(s.Home, ".copilot", "hooks", "acc-test.json"), map[string]any{"version": 1, "hooks": hooks})
	case "qwen":
		settings := qwenSettings()
		if s.Hook != nil {
			settings["hooks"] = s.hookTable(events, "*", 30)
		}
		return writeJSONFile(filepath.Join(s.Home, ".qwen", "settings.json"), settings)
	case "opencode", "kilo":
		if err := s.openCodeConfig(nil); err != nil {
			return err
		}
		if s.Hook == nil {
			return nil
		}
		// The plugin acc installs, calling a shim of the test's own.
		shim, err := s.testShim(events)
		if err != nil {
			return err
		}
		plugin := jsPlugin(s.Client)
		return writeFile(plugin.PluginFile(adapter.InstallEnv{Home: s.Home}), plugin.Plugin(shim))
	case "pi":
		if err := writeJSONFile(filepath.Join(s.Home, ".pi", "agent", "models.json"), piModels(s.ModelURL)); err != nil {
			return err
		}
		if s.Hook == nil {
			return nil
		}
		// The extension acc installs, calling a shim of the test's own.
		shim, err := s.testShim(events)
		if err != nil {
			return err
		}
		return writeFile(pi.ExtensionFile(adapter.InstallEnv{Home: s.Home}), pi.Extension(shim))
	case "droid":
		// Droid tests a matcher as a regular expression over the tool
		// name (docs/adapters.md#factory-droid).
		if err := writeDroidDriver(s.Home); err != nil {
			return err
		}
		settings := droidSettings(s.ModelURL)
		if s.Hook != nil {
			settings["hooks"] = s.hookTable(events, ".*", 30)
		}
		return writeJSONFile(filepath.Join(s.Home, ".factory", "settings.json"), settings)
	case "kimi":
		config := kimiProvider(s.ModelURL)
		if s.Hook != nil {
			config += s.kimiHooks(events, 30)
		}
		home := filepath.Join(s.Home, ".kimi-code")
		if err := os.MkdirAll(home, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644)
	}
	return fmt.Errorf("unknown client %q", s.Client.Name)
}

// testShim writes Home/acc-test-shim, which stands in for acc's hook shim
// under a plugin or extension of acc's (OpenCode, Pi): called as
// `sh <shim> <client> <event>`, it runs Hook's command for event when
// event is one of events (with the resumed session's start beside the
// session start, where the client has one), and does nothing otherwise.
func (s Setup) testShim(events []string) (string, error) {
	shim := filepath.Join(s.Home, "acc-test-shim")
	if s.Client.ResumeStart != "" && slices.Contains(events, s.Client.SessionStart) {
		events = append(slices.Clone(events), s.Client.ResumeStart)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncase \"$2\" in\n")
	for _, ev := range events {
		fmt.Fprintf(&b, "%s) %s ;;\n", ShellQuote(ev), s.Hook(ev))
	}
	b.WriteString("esac\n")
	return shim, os.WriteFile(shim, []byte(b.String()), 0o755)
}

// piModels is Pi's models.json: the fake model as its one provider,
// fake, over Chat Completions (docs/real-clients.md#pi); Argv names the
// model as fake/fake-model.
func piModels(modelURL string) map[string]any {
	return map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": modelURL + "/v1",
		"api":     "openai-completions",
		"apiKey":  FakeAPIKey,
		"models":  []any{map[string]any{"id": "fake-model"}},
	}}}
}

// qwenSettings is Qwen Code's settings.json without hooks: no usage
// statistics, telemetry or update check, and none of the background
// agents (memory extraction and consolidation, skill review) that 0.24.4
// starts with tools after a turn, each a model call no script expects.
func qwenSettings() map[string]any {
	return map[string]any{
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false},
		"memory":    map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false},
	}
}

// jsPlugin is the adapter of a client that runs acc's plugin: OpenCode's
// or Kilo Code's.
func jsPlugin(c Client) jsplugin.Client {
	if c.Name == "kilo" {
		return kilo.New().(kilo.Client).Client
	}
	return opencode.New().(opencode.Client).Client
}

// openCodeConfig writes the configuration of OpenCode (opencode.json in
// ~/.config/opencode) or Kilo Code (kilo.json in ~/.config/kilo): the fake
// model as an OpenAI-compatible provider, and the model, and no update or
// sharing; extra holds more top-level keys (a lived-in home's). Kilo is
// also limited to that provider (otherwise it asks api.kilo.ai for its
// gateway's models) and allowed bash, as its first start would otherwise
// write into kilo.json ("migrated bash permission"). Beside it goes what
// the client would fetch from npm at start, its plugin package
// (@opencode-ai/plugin, @kilocode/plugin), stood for by its package.json
// and lock naming it and an empty node_modules
// (docs/real-clients.md#opencode): offline, the client waits 75–80 s for
// npm otherwise. Kilo's run also gets an empty models catalogue to read
// (kiloModels) in place of the one built into it. Files already there are
// kept.
func (s Setup) openCodeConfig(extra map[string]any) error {
	dir, file, schema, pkg, version := filepath.Join(s.Home, ".config", "opencode"), "opencode.json", "https://opencode.ai/config.json", "@opencode-ai/plugin", OpenCodeVersion
	if s.Client.Name == "kilo" {
		dir, file, schema, pkg, version = filepath.Join(s.Home, ".config", "kilo"), "kilo.json", "https://app.kilo.ai/config.json", "@kilocode/plugin", KiloVersion
	}
	config := map[string]any{
		"$schema":     schema,
		"model":       "fake/fake-model",
		"small_model": "fake/fake-model",
		"autoupdate":  false,
		"share":       "disabled",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "fake",
			"options": map[string]any{"baseURL": s.ModelURL + "/v1", "apiKey": FakeAPIKey},
			"models":  map[string]any{"fake-model": map[string]any{"name": "fake-model", "tool_call": true}},
		}},
	}
	if s.Client.Name == "kilo" {
		config["enabled_providers"] = []string{"fake"}
		config["permission"] = map[string]any{"bash": "allow"}
		if err := writeFile(s.kiloModels(), []byte("{}\n")); err != nil {
			return err
		}
	}
	for k, v := range extra {
		config[k] = v
	}
	deps := `{"` + pkg + `":"` + version + `"}`
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		return err
	}
	for name, content := range map[string]string{
		"package.json":      `{"dependencies":` + deps + "}\n",
		"package-lock.json": `{"lockfileVersion":3,"packages":{"":{"dependencies":` + deps + "}}}\n",
	} {
		if path := filepath.Join(dir, name); !fileExists(path) {
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	if fileExists(filepath.Join(dir, file)) {
		return nil
	}
	return writeJSONFile(filepath.Join(dir, file), config)
}

// kiloModels is the models catalogue a Kilo run reads (KILO_MODELS_PATH),
// an empty JSON object: the fake model is described in kilo.json, and
// turning the catalogue built into Kilo into providers costs a tenth to a
// quarter of a short run's CPU time (docs/real-clients.md#opencode).
func (s Setup) kiloModels() string {
	return filepath.Join(s.Home, ".cache", "acc-test-kilo-models.json")
}

// kimiProvider is the part of Kimi Code's config.toml that makes the fake
// model its only model: an Anthropic-style provider at modelURL (Kimi
// posts to <base_url>/v1/messages) and telemetry off. max_context_size is
// required.
func kimiProvider(modelURL string) string {
	return fmt.Sprintf(`default_model = "fake"
telemetry = false

[providers.fake]
type = "anthropic"
base_url = %s
api_key = %s

[models.fake]
provider = "fake"
model = "fake"
max_context_size = 200000
`, strconv.Quote(modelURL), strconv.Quote(FakeAPIKey))
}

// kimiHooks is Kimi Code's hook list: one [[hooks]] table per event, with
// no matcher (every tool), the timeout in seconds; its schema allows no
// other keys.
func (s Setup) kimiHooks(events []string, timeout int) string {
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "\n[[hooks]]\nevent = %s\ncommand = %s\ntimeout = %d\n", strconv.Quote(ev), strconv.Quote(s.Hook(ev)), timeout)
	}
	return b.String()
}

// configureLivedIn writes the client's configuration as a person who uses
// other tools would have it — their hooks and MCP servers, comments,
// tabs or four-space indentation — with the fake model as provider and no
// hook of acc's: acc install adds those (InstallAcc). It is written only
// once, so a resumed run keeps what the first run and acc left.
func (s Setup) configureLivedIn() error {
	var files map[string]string
	switch s.Client.Name {
	case "claude":
		files = map[string]string{
			".claude/settings.json": "{\n\t\"permissions\": {\n\t\t\"allow\": [\"Bash(make test)\"]\n\t},\n" +
				"\t\"hooks\": {\n\t\t\"PreCompact\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}\n\t\t]\n\t},\n" +
				"\t\"env\": {\"FORMATTER\": \"gofmt\"}\n}\n",
		}
	case "codex":
		files = map[string]string{
			".codex/config.toml": fmt.Sprintf(`# Codex, configured by hand
model = "fake-model"          # the model the fake server answers as
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "ACC_FAKE_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

# another tool's MCP server, switched off for now
[mcp_servers.docs]
command = "true"
enabled = false`, s.ModelURL+"/v1"), // no final newline, as an editor may leave it
			".codex/hooks.json": "{\n    \"hooks\": {\n        \"PreCompact\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"true\", \"timeout\": 5}]}\n        ]\n    }\n}\n",
		}
	case "gemini":
		files = map[string]string{
			".gemini/settings.json": `{
    // set up by hand
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": false},
    "telemetry": {"enabled": false},
    "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
    "hooks": {
        "PreCompress": [
            {"hooks": [{"name": "backup", "type": "command", "command": "true", "timeout": 2000}]}
        ]
    }
}
`,
		}
	case "kimi":
		files = map[string]string{
			".kimi-code/config.toml": "# Kimi Code, set up by hand\n" + kimiProvider(s.ModelURL) +
				"\n# another tool's hook: a formatter after each edit\n[[hooks]]\nevent = \"PostToolUse\"\nmatcher = \"Edit\"\ncommand = \"true\"\ntimeout = 5\n",
			".kimi-code/mcp.json": "{\n\t\"mcpServers\": {\n\t\t\"docs\": {\"command\": \"true\", \"args\": []}\n\t}\n}\n",
		}
	case "copilot":
		files = map[string]string{
			// settings.json is the user's; Copilot rewrites config.json
			// itself.
			".copilot/settings.json": "{\n  \"banner\": \"never\"\n}\n",
			// another tool's hook: a formatter after each edit
			".copilot/hooks/format.json": "{\n\t\"version\": 1,\n\t\"hooks\": {\n\t\t\"postToolUse\": [{\"type\": \"command\", \"bash\": \"true\", \"timeoutSec\": 5}]\n\t}\n}\n",
		}
	case "qwen":
		files = map[string]string{
			".qwen/settings.json": "{\n  // set up by hand\n  \"$version\": 4,\n  \"model\": {\"name\": \"fake-model\"},\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": false},\n" +
				"  \"general\": {\"enableAutoUpdate\": false},\n" +
				"  \"memory\": {\"enableManagedAutoMemory\": false, \"enableManagedAutoDream\": false, \"enableAutoSkill\": false},\n" +
				"  \"hooks\": {\n    \"PostToolUse\": [\n      {\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\", \"timeout\": 5}]}\n    ]\n  }\n}\n",
		}
	case "opencode", "kilo":
		// Another tool's plugin beside where acc's goes, and a command of
		// the person's own.
		dir := ".config/" + s.Client.Name
		files = map[string]string{
			dir + "/plugin/notify.js":  "// tells the desktop when a session is idle\nexport const Notify = async () => ({\n  event: async () => {},\n});\n",
			dir + "/command/review.md": "---\ndescription: review the diff\n---\nReview the staged diff.\n",
		}
		if err := s.openCodeConfig(map[string]any{"instructions": []string{"CONTRIBUTING.md"}}); err != nil {
			return err
		}
	case "pi":
		// A person's settings (Pi has run here before, so it has nothing
		// to note about its changelog), another tool's extension beside
		// where acc's goes, a prompt template, and the fake model's
		// provider, tab-indented.
		models, err := json.MarshalIndent(piModels(s.ModelURL), "", "\t")
		if err != nil {
			return err
		}
		files = map[string]string{
			".pi/agent/settings.json": "{\n  \"lastChangelogVersion\": \"" + PiVersion + "\",\n  \"defaultProvider\": \"fake\",\n  \"defaultModel\": \"fake-model\",\n" +
				"  \"quietStartup\": true,\n  \"enableInstallTelemetry\": false\n}\n",
			".pi/agent/extensions/notify.ts": "// Marks the end of each agent run; another tool's extension.\n" +
				"import type { ExtensionAPI } from \"@mariozechner/pi-coding-agent\";\n\n" +
				"export default function (pi: ExtensionAPI) {\n  pi.on(\"agent_end\", async () => {});\n}\n",
			".pi/agent/prompts/review.md": "---\ndescription: review the diff\n---\nReview the staged diff.\n",
			".pi/agent/models.json":       string(models) + "\n",
		}
	case "droid":
		// A person's settings, tab-indented: the fake model, a hook of
		// another tool's, and a personal droid beside where acc's skill
		// goes.
		if err := writeDroidDriver(s.Home); err != nil {
			return err
		}
		settings := droidSettings(s.ModelURL)
		settings["hooks"] = map[string]any{"PreCompact": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true"}}}}}
		b, err := json.MarshalIndent(settings, "", "\t")
		if err != nil {
			return err
		}
		files = map[string]string{
			".factory/settings.json":      string(b) + "\n",
			".factory/droids/reviewer.md": "---\nname: reviewer\ndescription: reviews the staged diff\n---\nReview the staged diff.\n",
		}
	default:
		return fmt.Errorf("unknown client %q", s.Client.Name)
	}
	for rel, content := range files {
		path := filepath.Join(s.Home, rel)
		if _, err := os.Stat(path); err == nil {
			continue // a resumed run: the first run's configuration stays
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// InstallAcc runs `acc install --home Home --adapter <client>` (Install
// must be set), returning its output.
func (s Setup) InstallAcc(ctx context.Context, args ...string) (string, error) {
	return s.runAcc(ctx, append([]string{"install", "--home", s.Home, "--adapter", s.Client.Name}, args...)...)
}

// UninstallAcc runs `acc uninstall --home Home --adapter <client>`.
func (s Setup) UninstallAcc(ctx context.Context) (string, error) {
	return s.runAcc(ctx, "uninstall", "--home", s.Home, "--adapter", s.Client.Name)
}

func (s Setup) runAcc(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.Install.Acc, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "ACC_DATA_HOME=" + s.Install.DataHome, "ACC_HOOK_BINARY=" + s.Install.HookBinary}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("acc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// hookTable is the event → matcher group → command handler table that all
// three clients read (Gemini names each handler and counts the timeout in
// milliseconds; the others count seconds).
func (s Setup) hookTable(events []string, matchAll string, timeout int) map[string]any {
	table := map[string]any{}
	for _, ev := range events {
		handler := map[string]any{"type": "command", "command": s.Hook(ev), "timeout": timeout}
		if s.Client.Name == "gemini" {
			handler["name"] = "acc-" + ev
		}
		group := map[string]any{"hooks": []any{handler}}
		if toolEvent(ev) {
			group["matcher"] = matchAll
		}
		table[ev] = []any{group}
	}
	return table
}

func toolEvent(ev string) bool {
	switch ev {
	case "PreToolUse", "PostToolUse", "PermissionRequest", "BeforeTool", "AfterTool":
		return true
	}
	return false
}

// Environ is the whole environment of a run: nothing is inherited but PATH,
// so the caller's own credentials and settings never reach the client.
// TMPDIR is inside Home, which keeps Claude Code's scratch files and sockets
// out of the shared /tmp.
func (s Setup) Environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Home,
		"USER=" + userName(),
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"TMPDIR=" + filepath.Join(s.Home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(s.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
	}
	switch s.Client.Name {
	case "claude":
		env = append(env,
			"ANTHROPIC_BASE_URL="+s.ModelURL,
			"ANTHROPIC_API_KEY="+FakeAPIKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_ERROR_REPORTING=1",
			"DISABLE_BUG_COMMAND=1",
			"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		)
	case "codex":
		env = append(env,
			"CODEX_HOME="+filepath.Join(s.Home, ".codex"),
			"ACC_FAKE_MODEL_KEY="+FakeAPIKey,
		)
	case "kimi":
		// Without the two switches each run waits on DNS for an update
		// check and telemetry (docs/real-clients.md); SHELL=/bin/sh keeps
		// its login-shell probe of PATH short.
		env = append(env,
			"KIMI_CODE_HOME="+filepath.Join(s.Home, ".kimi-code"),
			"KIMI_CODE_NO_AUTO_UPDATE=1",
			"KIMI_DISABLE_TELEMETRY=1",
			"SHELL=/bin/sh",
		)
	case "qwen":
		// The fake model as an OpenAI-compatible provider
		// (--auth-type openai in Argv). QWEN_CODE_NO_RELAUNCH: the
		// program started by the launcher does not start itself again
		// with a larger heap (a third load of the whole program, 1.3-1.7 s
		// of CPU per run); the hooks still run below the launcher whose
		// pid they inherit (docs/real-clients.md#qwen-code).
		env = append(env,
			"OPENAI_BASE_URL="+s.ModelURL+"/v1",
			"OPENAI_API_KEY="+FakeAPIKey,
			"OPENAI_MODEL=fake-model",
			"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
			"QWEN_CODE_NO_RELAUNCH=true",
		)
	case "copilot":
		// Offline: no GitHub login, telemetry or update; the model is
		// the fake one, over Chat Completions.
		env = append(env,
			"COPILOT_OFFLINE=true",
			"COPILOT_PROVIDER_BASE_URL="+s.ModelURL+"/v1",
			"COPILOT_PROVIDER_API_KEY="+FakeAPIKey,
			"COPILOT_MODEL=fake-model",
			"COPILOT_AUTO_UPDATE=false",
		)
		// The program the test install unpacked is used, where there is
		// one, rather than a copy of 235 MB in every HOME; a copilot
		// installed otherwise (acc certify --client) unpacks its own.
		if dist := s.Client.CopilotDistDir(s.Exe); fileExists(filepath.Join(dist, "app.js")) {
			env = append(env, "COPILOT_CLI_DIST_DIR="+dist)
		}
	case "opencode":
		// No fetch of the models catalogue, update, LSP download or
		// sharing: each would reach the network.
		env = append(env,
			"OPENCODE_DISABLE_MODELS_FETCH=1",
			"OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			"OPENCODE_DISABLE_SHARE=1",
		)
	case "kilo":
		// No fetch of the models catalogue (kilo.json's enabled_providers
		// keeps it from Kilo's gateway too), no telemetry, update, LSP
		// download, sharing, session upload or presence, and no daemon to
		// look for; the catalogue is kiloModels.
		env = append(env,
			"KILO_DISABLE_MODELS_FETCH=1",
			"KILO_MODELS_PATH="+s.kiloModels(),
			"KILO_TELEMETRY_LEVEL=off",
			"KILO_DISABLE_AUTOUPDATE=1",
			"KILO_DISABLE_LSP_DOWNLOAD=1",
			"KILO_DISABLE_SHARE=1",
			"KILO_DISABLE_SESSION_INGEST=1",
			"KILO_DISABLE_PRESENCE=1",
			"KILO_NO_DAEMON=1",
		)
	case "droid":
		// Airgap mode blocks every request but the custom model's.
		env = append(env, "FACTORY_AIRGAP_ENABLED=1")
	case "pi":
		// Argv's --offline stops every start-up fetch (update and package
		// checks, the install ping); no install ping either way.
		env = append(env, "PI_TELEMETRY=0")
	case "gemini":
		env = append(env,
			"GEMINI_API_KEY="+FakeAPIKey,
			"GOOGLE_GEMINI_BASE_URL="+s.ModelURL,
			"GEMINI_CLI_TRUST_WORKSPACE=true",
			"GEMINI_TELEMETRY_ENABLED=false",
			"GEMINI_CLI_NO_RELAUNCH=true",
			"NO_BROWSER=true",
		)
	}
	return append(env, s.Env...)
}

// Argv is the client's headless command line for one prompt.
func (s Setup) Argv(prompt string) []string {
	var argv, tail []string
	switch s.Client.Name {
	case "claude":
		// Running as root rules out --dangerously-skip-permissions, and an
		// untrusted folder's permission settings are ignored, so the tools
		// the script uses are allowed on the command line.
		argv = []string{s.Exe, "-p", "--output-format", "json", "--allowedTools", "Bash,Write,Edit,Read"}
		if s.Resume {
			argv = append(argv, "--continue")
		}
		tail = []string{"--", prompt} // --allowedTools takes several values
	case "codex":
		argv = []string{s.Exe, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "-s", "danger-full-access"}
		if s.Resume {
			argv = append(argv, "resume", "--last")
		}
		tail = []string{prompt}
	case "gemini":
		argv = []string{s.Exe, "-m", GeminiModel, "-y"}
		if s.Resume {
			argv = append(argv, "--resume", "latest")
		}
		tail = []string{"-p", prompt}
	case "copilot":
		// Paths outside the directory (acc's binary, the data home)
		// would otherwise need an approval no one can give headless.
		argv = []string{s.Exe, "--allow-all-tools", "--allow-all-paths"}
		if s.Resume {
			argv = append(argv, "--continue")
		}
		tail = []string{"-p", prompt}
	case "qwen":
		argv = []string{s.Exe, "--approval-mode", "yolo", "--auth-type", "openai"}
		if s.Resume {
			argv = append(argv, "--continue")
		}
		tail = []string{"-p", prompt}
	case "opencode":
		// run approves every tool call of its build agent itself. A
		// prompt of several words given as one argument reaches the model
		// in double quotes (1.18.33), which no test minds.
		argv = []string{s.Exe, "run", "--format", "json"}
		if s.Resume {
			argv = append(argv, "--continue")
		}
		tail = []string{prompt}
	case "kilo":
		// Kilo's run approves its code agent's tools, but rejects what
		// would ask a person (a path outside the directory, say) unless
		// --auto lets it through, as the other clients' flags do.
		argv = []string{s.Exe, "run", "--format", "json", "--auto"}
		if s.Resume {
			argv = append(argv, "--continue")
		}
		tail = []string{prompt}
	case "pi":
		// Pi asks no approval for a tool call; --offline fetches nothing
		// at start; -c continues the directory's last session.
		argv = []string{s.Exe, "-p", "--offline", "--model", "fake/fake-model"}
		if s.Resume {
			argv = append(argv, "-c")
		}
		tail = []string{prompt}
	case "droid":
		// droidDriver, on the Node of PATH, drives Droid's own protocol
		// at autonomy high (no approvals); "resume" loads the
		// directory's newest session under its id.
		mode := "new"
		if s.Resume {
			mode = "resume"
		}
		argv = []string{"node", droidDriverFile(s.Home), s.Exe, mode, droidModel}
		tail = []string{prompt}
	case "kimi":
		// Under -p Kimi Code approves every tool call itself.
		argv = []string{s.Exe}
		if s.Resume {
			argv = append(argv, "-c")
		}
		tail = []string{"-p", prompt}
	}
	argv = append(argv, s.Args...)
	return append(argv, tail...)
}

// A Result is how one client run ended.
type Result struct {
	ExitCode       int
	Stdout, Stderr string
	Elapsed        time.Duration
}

// Run runs the client once, headless, with prompt, and waits for it to exit
// (killing its whole process group when ctx ends).
func (s Setup) Run(ctx context.Context, prompt string) (Result, error) {
	argv := s.Argv(prompt)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = s.Environ()
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	// Whatever the client left running in its group goes too.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		res.ExitCode = ee.ExitCode()
	default:
		return res, fmt.Errorf("running %s: %w", s.Client.Name, err)
	}
	return res, nil
}

// InitRepo makes dir a Git repository with one commit.
func InitRepo(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("scratch repository for a real-client test\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=acc test", "-c", "user.email=test@acc.invalid", "add", "README.md"},
		{"-c", "user.name=acc test", "-c", "user.email=test@acc.invalid", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func writeFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}

func writeJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "acc"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
