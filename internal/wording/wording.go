// Package wording holds each surface's words for the slots of a refusal:
// core names fields and next steps as data (protocol.Field, protocol.Step),
// and the acc command (with acc-hook, acc top, acc certify and acc acp) and
// acc-mcp spell them here, so that a refusal names the flag a CLI user typed
// or the argument an MCP client sent (docs/cli.md#refusal-details,
// docs/mcp.md#refusal-details).
package wording

import (
	"fmt"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// CLI is the acc command's speller: flags and `acc …` command lines.
var CLI protocol.Speller = cli{}

// MCP is acc-mcp's speller: arguments.<field> and tool calls.
var MCP protocol.Speller = mcp{}

// cliFlags maps a field's neutral id to the flag that carries it, where the
// two differ; any other field is --<id>.
var cliFlags = map[string]string{
	"kind":            "--type",
	"messageId":       "--message",
	"clientMessageId": "--client-message-id",
	"query":           "the QUERY argument",
}

type cli struct{}

func (cli) Field(name string) string {
	if flag, ok := cliFlags[name]; ok {
		return flag
	}
	return "--" + name
}

func (c cli) Value(name, value string) string { return c.Field(name) + " " + value }

func (cli) Step(s protocol.Step) string {
	a := s.Args
	switch s.Command {
	case protocol.StepInbox:
		return "`acc inbox`"
	case protocol.StepStatus:
		if a["all"] == "true" {
			return "`acc status --all`"
		}
		return "`acc status`"
	case protocol.StepHistory:
		if a["kind"] != "" {
			return "`acc sync --scope history --type " + a["kind"] + "`"
		}
		return "`acc sync --scope history`"
	case protocol.StepReply:
		if a["messageId"] != "" {
			return "`acc reply --message " + a["messageId"] + " --body …`"
		}
		return "`acc reply --message ID`"
	case protocol.StepFinish:
		return "`acc finish --goal …`"
	case protocol.StepMessage:
		if a["to"] == "" {
			return "`acc message`"
		}
		return "`acc message --to " + a["to"] + "`"
	case protocol.StepReattach:
		return "attach again with `acc attach`"
	case protocol.StepRepeatFinish:
		return "repeat the first finish with its --client-message-id to get its handoff back, or open a new session with `acc attach`"
	case protocol.StepWaitRelease:
		wait := "acc wait --released " + core.ShellWord(a["resource"])
		if a["flags"] != "" {
			wait += " " + a["flags"]
		}
		return "wait for its release (`" + wait + "`)"
	case protocol.StepForceRelease:
		return "force release requires --authority human or policy and a --reason (a peer's request is not authority)"
	case protocol.StepStartInDirectory:
		if a["variable"] == "" {
			return "run acc from an existing directory or pass --cwd"
		}
		return "start acc in an existing directory (check --cwd and " + a["variable"] + ")"
	case protocol.StepRunInProject:
		if a["variable"] != "" {
			return "set " + a["variable"] + " to your project's directory, or unset it (it overrides the working directory and --cwd)"
		}
		return "run acc inside your project (or pass --cwd DIR)"
	}
	if w := shared(s); w != "" {
		return w
	}
	return unknownStep(s)
}

// shared words the steps that read the same on every surface: each is
// something only the acc command does (a person's forced release, an
// attach, the hook's trusted line, doctor, config init and the sessions it
// waits for) or, for sync, a step whose
// refusal only the acc command can produce.
func shared(s protocol.Step) string {
	a := s.Args
	switch s.Command {
	case protocol.StepReleaseAsHuman:
		return "`acc release --claim " + a["claimId"] + " --authority human --reason …`"
	case protocol.StepAttach:
		if a["participant"] != "" {
			return "`acc attach --participant " + a["participant"] + "`"
		}
		return "`acc attach`"
	case protocol.StepTrustedLine:
		session := "…"
		if a["session"] != "" {
			session = a["session"]
		}
		return "`acc: --session " + session + " --generation …`"
	case protocol.StepSync:
		return "`acc sync`"
	case protocol.StepDoctor:
		return "`acc doctor`"
	case protocol.StepConfigInit:
		return "acc config init"
	case protocol.StepCloseSessions:
		return "close them (acc detach or acc finish)"
	}
	return ""
}

// cliOnly are the fields no acc-mcp tool takes: the caller's session pair
// (acc-mcp holds its own session), the participant to attach as, and a
// forced release's authority (a person's, at a terminal), the start
// directory and config (--cwd, --workspace: acc-mcp takes its directory
// from ACC_MCP_WORKSPACE), and config init's --force. A refusal naming
// one comes from the acc command, so acc-mcp spells it as the flag.
var cliOnly = map[string]bool{"session": true, "generation": true, "participant": true, "authority": true, "claim": true,
	"cwd": true, "workspace": true, "force": true}

type mcp struct{}

// mcpWorkspace is the variable acc-mcp takes its start directory from
// (docs/mcp.md).
const mcpWorkspace = "ACC_MCP_WORKSPACE"

func (mcp) Field(name string) string {
	if cliOnly[name] {
		return cli{}.Field(name)
	}
	return "arguments." + name
}

func (m mcp) Value(name, value string) string {
	if cliOnly[name] {
		return cli{}.Value(name, value)
	}
	return m.Field(name) + ` "` + value + `"`
}

func (mcp) Step(s protocol.Step) string {
	a := s.Args
	switch s.Command {
	case protocol.StepInbox:
		return "acc_inbox"
	case protocol.StepStatus:
		return "acc_status"
	case protocol.StepHistory:
		if a["kind"] != "" {
			return fmt.Sprintf(`acc_sync {scope: "history", kind: %q}`, a["kind"])
		}
		return `acc_sync {scope: "history"}`
	case protocol.StepReply:
		if a["messageId"] != "" {
			return fmt.Sprintf("acc_reply {messageId: %q, body: …}", a["messageId"])
		}
		return "acc_reply"
	case protocol.StepFinish:
		return "acc_finish"
	case protocol.StepMessage:
		if a["to"] == "" {
			return "acc_message"
		}
		return fmt.Sprintf("acc_message {to: [%q]}", a["to"])
	case protocol.StepReattach:
		return "call again: the next call opens a new session"
	case protocol.StepRepeatFinish:
		return "repeat the first acc_finish with its clientMessageId to get its handoff back"
	case protocol.StepWaitRelease:
		// acc-mcp has no wait tool: a claim is simply tried again.
		return "claim again once it is released"
	case protocol.StepForceRelease:
		return "ask its holder to release it (only a person can force a release, with acc release --authority)"
	case protocol.StepStartInDirectory:
		// acc-mcp's directory is ACC_MCP_WORKSPACE's (else where it was
		// launched); it never reads ACC_WORKSPACE_ROOT.
		return "set " + mcpWorkspace + " to the project's existing directory"
	case protocol.StepRunInProject:
		return "set " + mcpWorkspace + " to your project's directory"
	}
	if w := shared(s); w != "" {
		return w
	}
	return unknownStep(s)
}

// unknownStep leaves a step this speller does not know in its neutral,
// marked form, which the renderers' test reports.
func unknownStep(s protocol.Step) string { return "{step " + s.Command + "}" }

// CLIError is err with its message in the acc command's words.
func CLIError(err error) error { return protocol.Render(err, CLI) }

// MCPError is err with its message in acc-mcp's words.
func MCPError(err error) error { return protocol.Render(err, MCP) }
