// Package realclient runs the real AI coding clients acc supports natively —
// Claude Code, Codex, Gemini CLI, Kimi Code, GitHub Copilot CLI, Qwen Code,
// OpenCode, Pi, Factory Droid and Kilo Code, installed from npm at pinned versions (Kimi Code run on
// the pinned Node 22, Client.PathFor) — headless and offline against the
// loopback fake model (internal/fakemodel), with their hooks pointed at a
// command of the caller's choice (OpenCode, Kilo Code and Pi have no hook commands:
// acc's plugin or extension runs a shim that calls it).
//
// # Pins and the cache
//
// The versions live in one table (ClaudeCodeVersion, CodexVersion,
// GeminiCLIVersion, KimiCodeVersion, CopilotVersion, QwenCodeVersion,
// OpenCodeVersion, PiVersion, DroidVersion, KiloVersion; Pinned). Client.Install puts a client into a cache outside
// any clone (CacheRoot: $ACC_CLIENTS_CACHE, else the user cache directory's
// acc-clients) exactly as scripts/install-clients.sh does, and reuses a
// complete install. A cache directory is complete or absent: installs are
// checked with --version and renamed into place.
//
// # Runs
//
// A Setup is one client in its own HOME and working directory: Configure
// writes the client's user-level settings (the fake model as provider, no
// telemetry or update checks, the hooks), Environ builds the whole
// environment from nothing but PATH, and Run runs one headless prompt and
// kills the client's process group when it ends. The hook command is a
// parameter (Setup.Hook): the tests use the recorder below; acc's own tests
// point it at acc-hook, optionally through the recorder.
//
// # The hook recorder
//
// RecorderMain, reached as `<program> acc-hook-recorder <dir> <client>
// <event> [-- <hook>...]`, logs each firing (payload, argv, client
// environment, its answer) to <dir>/hooks.jsonl and answers as a response file
// says, or as the wrapped hook answers, or with nothing. The tests' binary
// is the program: TestMain dispatches on RecorderArg.
//
// docs/real-clients.md says what each client needs to run offline and what
// the tests observed.
package realclient
