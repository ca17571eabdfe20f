package realclient

import "slices"

// The pinned client versions (docs/decisions.md#20-tests-and-time: always
// exact; docs/real-clients.md#pinned-versions). They are the
// newest releases that install from npm and run headless here (Kimi Code on
// the pinned Node 22, NodeVersion; the others on Node 20);
// scripts/install-clients.sh and docs/real-clients.md name the same ones, and
// a test keeps the three in step.
const (
	ClaudeCodeVersion = "2.1.332"
	CodexVersion      = "0.171.0"
	GeminiCLIVersion  = "0.61.0"
	KimiCodeVersion   = "2.1.0"
	CopilotVersion    = "1.0.102"
	QwenCodeVersion   = "0.24.4"
	OpenCodeVersion   = "1.18.33"
	PiVersion         = "0.73.1"
	// DroidVersion is Factory Droid's program, the native binary of its
	// platform package; DroidLauncherVersion the npm launcher installed
	// beside it, which exists only as 0.225.1.
	DroidVersion         = "0.225.2"
	DroidLauncherVersion = "0.225.1"
	// KiloVersion is Kilo Code's program, the native binary of its
	// platform package; KiloLauncherVersion the npm launcher installed
	// beside it, whose newest release, 7.7.7, is older than the program.
	KiloVersion         = "7.7.9"
	KiloLauncherVersion = "7.7.7"
)

// A Client is one real AI coding client, as acc's real-client tests run it.
type Client struct {
	// Name is the acc adapter name: "claude", "codex", "gemini", "kimi",
	// "copilot", "qwen", "opencode", "pi", "droid" or "kilo".
	Name string
	// Package and Version are the npm package and its pinned exact version.
	Package, Version string
	// The client's own names for the hook events acc handles; empty where the
	// client has no such event.
	SessionStart, BeforeTurn, PreTool, PostTool, Stop, SessionEnd string
	// ResumeStart is the event that starts a resumed session, where it is
	// not SessionStart (OpenCode's plugin says session.resumed).
	ResumeStart string
	// ResumeSource is the source a resumed session's start names, where
	// it is not "resume" (Pi says startup for -c too).
	ResumeSource string
	// NoHold: nothing the turn-end hook answers keeps the agent working
	// (acc's OpenCode plugin reads no answer to session.idle; nothing Pi's
	// extension does at agent_end makes a -p run go on).
	NoHold bool
	// JSONDenyOnly: the client has no exit-code deny, only an answer on
	// stdout (acc's OpenCode plugin and Pi extension read nothing else).
	JSONDenyOnly bool
	// ShellTool is the tool name the pre-tool hook sees for a shell command.
	ShellTool string
	// PostToolUnawaited is true for a client that starts its post-tool hook
	// without waiting for it (Kimi Code): the hook may be cut off when the
	// client exits, and its answer never reaches the model.
	PostToolUnawaited bool
	// StartsTogether is true for a client that starts its before-turn hook
	// without waiting for its session-start hook (Copilot CLI): the two
	// run at once, so either may be recorded first.
	StartsTogether bool
	// Slow: one headless run takes 25–80 s on a loaded two-core machine
	// (Kilo Code 7.7.9, whose `run` builds its server's whole OpenAPI
	// document before every prompt), several times another client's. Such
	// a client runs only in the tests its evidence and its acceptance
	// rest on (TestConversation, TestGuard, TestMidTurnNoHold,
	// TestInstallLivedIn, TestCertify), not in those that prove again,
	// for the plugin it shares with a faster client, what those do
	// (Quick).
	Slow bool
}

// Events lists the client's hook events acc handles, in firing order.
func (c Client) Events() []string {
	var out []string
	for _, e := range []string{c.SessionStart, c.BeforeTurn, c.PreTool, c.PostTool, c.Stop, c.SessionEnd} {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// AwaitedEvents is Events without a post-tool event the client does not
// wait for (PostToolUnawaited), which may not fire at all.
func (c Client) AwaitedEvents() []string {
	out := c.Events()
	if c.PostToolUnawaited {
		out = slices.DeleteFunc(out, func(e string) bool { return e == c.PostTool })
	}
	return out
}

// The pinned clients.
var (
	Claude = Client{
		Name: "claude", Package: "@anthropic-ai/claude-code", Version: ClaudeCodeVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", SessionEnd: "SessionEnd", ShellTool: "Bash",
	}
	Codex = Client{
		Name: "codex", Package: "@openai/codex", Version: CodexVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", SessionEnd: "SessionEnd", ShellTool: "Bash",
	}
	Gemini = Client{
		Name: "gemini", Package: "@google/gemini-cli", Version: GeminiCLIVersion,
		SessionStart: "SessionStart", BeforeTurn: "BeforeAgent", PreTool: "BeforeTool",
		PostTool: "AfterTool", Stop: "AfterAgent", SessionEnd: "SessionEnd", ShellTool: "run_shell_command",
	}
	// Kimi fires no SessionEnd in headless (-p) runs, and does not wait
	// for PostToolUse.
	Kimi = Client{
		Name: "kimi", Package: "@moonshot-ai/kimi-code", Version: KimiCodeVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", ShellTool: "Bash", PostToolUnawaited: true,
	}
	// Copilot is GitHub Copilot CLI with a hook file that names Claude
	// Code's events, which makes it send Claude's payloads; its tools reach
	// the hooks under Claude's names (Bash, Write, Edit).
	Copilot = Client{
		Name: "copilot", Package: "@github/copilot", Version: CopilotVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", SessionEnd: "SessionEnd", ShellTool: "Bash",
		StartsTogether: true,
	}
	// Qwen Code fires no SessionEnd in headless (-p) runs; it repeats
	// UserPromptSubmit, with an empty prompt, after each tool result.
	Qwen = Client{
		Name: "qwen", Package: "@qwen-code/qwen-code", Version: QwenCodeVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", ShellTool: "run_shell_command",
	}
)

// OpenCode runs acc's plugin (pkg/adapters/opencode), whose event names
// are OpenCode's hooks and events, and process.exit for its exit.
var OpenCode = Client{
	Name: "opencode", Package: "opencode-ai", Version: OpenCodeVersion,
	SessionStart: "session.created", BeforeTurn: "chat.message", PreTool: "tool.execute.before",
	PostTool: "tool.execute.after", Stop: "session.idle", SessionEnd: "process.exit", ShellTool: "bash",
	ResumeStart: "session.resumed", JSONDenyOnly: true, NoHold: true,
}

// Pi runs acc's extension (pkg/adapters/pi), whose event names are Pi's
// extension events; session_shutdown ends every -p run. `pi -c` starts
// the session it continues with session_start again, source startup.
var Pi = Client{
	Name: "pi", Package: "@mariozechner/pi-coding-agent", Version: PiVersion,
	SessionStart: "session_start", BeforeTurn: "before_agent_start", PreTool: "tool_call",
	PostTool: "tool_result", Stop: "agent_end", SessionEnd: "session_shutdown", ShellTool: "bash",
	ResumeSource: "startup", JSONDenyOnly: true, NoHold: true,
}

// Droid is Factory Droid, driven over its own JSON-RPC protocol on stdin
// (`droid exec --input-format stream-jsonrpc`, droidDriver): under plain
// `droid exec` UserPromptSubmit never fires, and `-s <id>` cannot resume
// offline, where the protocol's load_session continues the session under
// its id (docs/real-clients.md#factory-droid). Package is the platform
// package whose binary runs; the launcher is installed beside it.
var Droid = Client{
	Name: "droid", Package: "@factory/cli-linux-x64", Version: DroidVersion,
	SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
	PostTool: "PostToolUse", Stop: "Stop", SessionEnd: "SessionEnd", ShellTool: "Execute",
}

// Kilo is Kilo Code, a fork of OpenCode running the same plugin of acc's
// (pkg/adapters/kilo), so its event names are OpenCode's. Package is the
// platform package whose binary runs; the launcher is installed beside it
// (docs/real-clients.md#opencode).
var Kilo = Client{
	Name: "kilo", Package: "@kilocode/cli-linux-x64", Version: KiloVersion,
	SessionStart: "session.created", BeforeTurn: "chat.message", PreTool: "tool.execute.before",
	PostTool: "tool.execute.after", Stop: "session.idle", SessionEnd: "process.exit", ShellTool: "bash",
	ResumeStart: "session.resumed", JSONDenyOnly: true, NoHold: true, Slow: true,
}

// Resumed is the event that starts a resumed session of c.
func (c Client) Resumed() string {
	if c.ResumeStart != "" {
		return c.ResumeStart
	}
	return c.SessionStart
}

// ResumedSource is the source the start of a resumed session of c names.
func (c Client) ResumedSource() string {
	if c.ResumeSource != "" {
		return c.ResumeSource
	}
	return "resume"
}

// Pinned is every client with hooks that acc proves itself on.
var Pinned = []Client{Claude, Codex, Gemini, Kimi, Copilot, Qwen, OpenCode, Pi, Droid, Kilo}

// Quick is Pinned without the Slow clients: the clients of the tests that
// each run every client although, for a Slow one, what they prove is
// proven by the tests it does run.
func Quick() []Client {
	return slices.DeleteFunc(slices.Clone(Pinned), func(c Client) bool { return c.Slow })
}
