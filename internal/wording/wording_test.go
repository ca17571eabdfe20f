package wording

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// sample gives every step the arguments core passes with it, so that each
// renderer is exercised with and without its optional arguments.
var sample = map[string][]map[string]string{
	protocol.StepStatus:           {nil, {"all": "true"}},
	protocol.StepHistory:          {nil, {"kind": protocol.KindDecision}},
	protocol.StepReply:            {nil, {"messageId": "message_x"}},
	protocol.StepMessage:          {{"to": "bob"}},
	protocol.StepWaitRelease:      {{"resource": "file:src/a.go"}, {"resource": "file:src/**", "flags": "--session s"}},
	protocol.StepReleaseAsHuman:   {{"claimId": "claim_x"}},
	protocol.StepAttach:           {nil, {"participant": "NAME"}},
	protocol.StepTrustedLine:      {nil, {"session": "session_x"}},
	protocol.StepStartInDirectory: {nil, {"variable": "ACC_WORKSPACE_ROOT"}},
	protocol.StepRunInProject:     {nil, {"variable": "ACC_WORKSPACE_ROOT"}},
}

// commandOnly are the steps only the acc command takes (a person's forced
// release, attach, the hook's trusted line, doctor, and sync without a
// session): acc-mcp names them as the acc command does.
var commandOnly = map[string]bool{
	protocol.StepReleaseAsHuman: true, protocol.StepAttach: true, protocol.StepTrustedLine: true,
	protocol.StepSync: true, protocol.StepDoctor: true, protocol.StepConfigInit: true,
	protocol.StepCloseSessions: true,
}

// TestEverySlotIsRendered: every step and field core can put into a
// refusal has words on both surfaces, so no surface shows a refusal with a
// slot left in its neutral form; the CLI names no tool and acc-mcp no flag.
func TestEverySlotIsRendered(t *testing.T) {
	for _, sp := range []struct {
		name string
		s    protocol.Speller
		bad  func(string) bool
	}{
		{"cli", CLI, func(w string) bool { return strings.Contains(w, "acc_") || strings.Contains(w, "arguments.") }},
		{"mcp", MCP, func(w string) bool { return strings.Contains(w, "--type") }},
	} {
		for _, cmd := range protocol.StepCommands {
			argsets := sample[cmd]
			if argsets == nil {
				argsets = []map[string]string{nil}
			}
			for _, args := range argsets {
				e := protocol.Errorf(protocol.ReasonUsage, "do %s", protocol.Step{Command: cmd, Args: args})
				got := protocol.AsError(protocol.Render(e, sp.s)).Message
				if protocol.Unrendered(got) || got == "do " || sp.bad(got) || sp.name == "mcp" && !commandOnly[cmd] && strings.Contains(got, "`acc ") {
					t.Errorf("%s: step %s %v renders as %q", sp.name, cmd, args, got)
				}
			}
		}
		for _, f := range protocol.FieldIDs {
			e := protocol.Errorf(protocol.ReasonUsage, "%s %s %s", protocol.Field(f),
				protocol.FieldValue{Name: f, Value: "v"}, protocol.FieldList{Conj: "or", Names: []string{f, f}})
			got := protocol.AsError(protocol.Render(e, sp.s)).Message
			if protocol.Unrendered(got) || sp.bad(got) {
				t.Errorf("%s: field %s renders as %q", sp.name, f, got)
			}
		}
	}
	// A step no speller knows stays marked, so the loop above would catch it.
	e := protocol.Errorf(protocol.ReasonUsage, "%s", protocol.Step{Command: "no-such-step"})
	if got := protocol.AsError(protocol.Render(e, CLI)).Message; !protocol.Unrendered(got) {
		t.Errorf("an unknown step renders as %q, not marked", got)
	}
}

// TestWords pins each surface's words for the slots: these are the texts
// the testscripts and acc-mcp's tests assert inside whole refusals.
func TestWords(t *testing.T) {
	step := func(cmd string, args map[string]string) protocol.Step { return protocol.Step{Command: cmd, Args: args} }
	for _, c := range []struct {
		slot     protocol.Slot
		cli, mcp string
	}{
		{protocol.Field("kind"), "--type", "arguments.kind"},
		{protocol.Field("messageId"), "--message", "arguments.messageId"},
		{protocol.Field("cursor"), "--cursor", "arguments.cursor"},
		{protocol.FieldValue{Name: "scope", Value: "history"}, "--scope history", `arguments.scope "history"`},
		{protocol.FieldList{Conj: "or", Names: []string{"kind", "cursor", "limit"}}, "--type, --cursor or --limit", "arguments.kind, arguments.cursor or arguments.limit"},
		{step(protocol.StepInbox, nil), "`acc inbox`", "acc_inbox"},
		{step(protocol.StepStatus, map[string]string{"all": "true"}), "`acc status --all`", "acc_status"},
		{step(protocol.StepHistory, map[string]string{"kind": "decision"}), "`acc sync --scope history --type decision`", `acc_sync {scope: "history", kind: "decision"}`},
		{step(protocol.StepReply, map[string]string{"messageId": "m1"}), "`acc reply --message m1 --body …`", `acc_reply {messageId: "m1", body: …}`},
		{step(protocol.StepMessage, map[string]string{"to": "bob"}), "`acc message --to bob`", `acc_message {to: ["bob"]}`},
		{step(protocol.StepWaitRelease, map[string]string{"resource": "file:src/**", "flags": "--session s"}),
			"wait for its release (`acc wait --released 'file:src/**' --session s`)", "claim again once it is released"},
		// acc-mcp takes its directory from ACC_MCP_WORKSPACE and never
		// reads ACC_WORKSPACE_ROOT or a --cwd.
		{protocol.Field("cwd"), "--cwd", "--cwd"},
		{protocol.Field("workspace"), "--workspace", "--workspace"},
		{step(protocol.StepStartInDirectory, nil), "run acc from an existing directory or pass --cwd", "set ACC_MCP_WORKSPACE to the project's existing directory"},
		{step(protocol.StepStartInDirectory, map[string]string{"variable": "ACC_WORKSPACE_ROOT"}),
			"start acc in an existing directory (check --cwd and ACC_WORKSPACE_ROOT)", "set ACC_MCP_WORKSPACE to the project's existing directory"},
		{step(protocol.StepRunInProject, nil), "run acc inside your project (or pass --cwd DIR)", "set ACC_MCP_WORKSPACE to your project's directory"},
		{step(protocol.StepRunInProject, map[string]string{"variable": "ACC_WORKSPACE_ROOT"}),
			"set ACC_WORKSPACE_ROOT to your project's directory, or unset it (it overrides the working directory and --cwd)", "set ACC_MCP_WORKSPACE to your project's directory"},
		{step(protocol.StepConfigInit, nil), "acc config init", "acc config init"},
		{step(protocol.StepCloseSessions, nil), "close them (acc detach or acc finish)", "close them (acc detach or acc finish)"},
		{protocol.Field("force"), "--force", "--force"},
	} {
		e := protocol.Errorf(protocol.ReasonUsage, "%s", c.slot)
		if got := protocol.AsError(CLIError(e)).Message; got != c.cli {
			t.Errorf("cli: %#v = %q, want %q", c.slot, got, c.cli)
		}
		if got := protocol.AsError(MCPError(e)).Message; got != c.mcp {
			t.Errorf("mcp: %#v = %q, want %q", c.slot, got, c.mcp)
		}
	}
}

// TestWaitCommandPastesBack: the `acc wait --released …` a claim refusal
// names is shown through the display rule (every acc: line is). For a
// resource holding a C1 control or a bidi override the shown line must
// still paste back the resource's exact bytes: single quotes showed
// 'file:src/evil\u009b…', which the shell passes as those six characters —
// a resource no claim holds, so `acc wait` answered at once while the peer
// still held the file.
func TestWaitCommandPastesBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	resource := "file:src/evil\u009b31m\u202egpj.go\u2066x"
	e := protocol.Errorf(protocol.ReasonClaimConflict, "or %s",
		protocol.Step{Command: protocol.StepWaitRelease, Args: map[string]string{"resource": resource, "flags": "--session s"}})
	shown := protocol.EscapeText(CLIError(e).Error(), protocol.TextLine)
	const lead = "or wait for its release (`acc wait --released "
	if !strings.HasPrefix(shown, lead) || !strings.HasSuffix(shown, " --session s`)") {
		t.Fatalf("no wait command in %q", shown)
	}
	word := strings.TrimSuffix(strings.TrimPrefix(shown, lead), " --session s`)")
	out, err := exec.Command(bash, "-c", "printf '%s\\0' "+word).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	if got := strings.TrimSuffix(string(out), "\x00"); got != resource {
		t.Errorf("pasting the shown %s passes the resource %q, not the claimed %q", word, got, resource)
	}
}
