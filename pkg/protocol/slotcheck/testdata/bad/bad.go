package bad

import "github.com/acc-go/acc/pkg/protocol"

// Each report the checker must give is marked "want"; the rest must pass.

func refusals() error {
	_ = protocol.Errorf(protocol.ReasonUsage, "pass --cwd DIR")                         // want: a flag
	_ = protocol.Errorf(protocol.ReasonUsage, "run `acc inbox`")                        // want: a command line
	_ = protocol.Errorf(protocol.ReasonUsage, "call acc_inbox")                         // want: a tool
	_ = protocol.Errorf(protocol.ReasonUsage, "pass %s", protocol.Field("nosuchfield")) // want: an unknown field
	_ = protocol.Errorf(protocol.ReasonUsage, "do %s", protocol.Step{Command: "inbox"}) // want: a step that is no constant
	return protocol.Errorf(protocol.ReasonUsage, "%s or %s", protocol.Field("kind"), protocol.Step{Command: protocol.StepInbox})
}

func other() []string {
	return []string{
		"set ACC_MCP_WORKSPACE", // want: an acc-mcp variable
		"or pass --workspace",   // want: a start flag
		"git diff --name-only",  // a git flag is no surface's word
	}
}

func allowed() string { return "run `acc doctor`" }

func allowedRefusal() error {
	return protocol.Errorf(protocol.ReasonUsage, "run `acc doctor`") // want: refusals are checked even here
}
