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
)

// A Client is one real AI coding client, as acc's real-client tests run it.
type Client struct {
	// Name is the acc adapter name: "claude", "codex", "gemini", "kimi" or
	// "copilot", "qwen".
	Name string
	// Package and Version are the npm package and its pinned exact version.
	Package, Version string
	// The client's own names for the hook events acc handles; empty where the
	// client has no such event.
	SessionStart, BeforeTurn, PreTool, PostTool, Stop, SessionEnd string
	// ShellTool is the tool name the pre-tool hook sees for a shell command.
	ShellTool string
	// PostToolUnawaited is true for a client that starts its post-tool hook
	// without waiting for it (Kimi Code): the hook may be cut off when the
	// client exits, and its answer never reaches the model.
	PostToolUnawaited bool
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
	}
	// Qwen Code fires no SessionEnd in headless (-p) runs; it repeats
	// UserPromptSubmit, with an empty prompt, after each tool result.
	Qwen = Client{
		Name: "qwen", Package: "@qwen-code/qwen-code", Version: QwenCodeVersion,
		SessionStart: "SessionStart", BeforeTurn: "UserPromptSubmit", PreTool: "PreToolUse",
		PostTool: "PostToolUse", Stop: "Stop", ShellTool: "run_shell_command",
	}
)

// Pinned is every client with hooks that acc proves itself on.
var Pinned = []Client{Claude, Codex, Gemini, Kimi, Copilot, Qwen}
