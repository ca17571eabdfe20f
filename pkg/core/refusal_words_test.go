package core

import (
	"testing"

	"github.com/acc-go/acc/pkg/protocol/slotcheck"
)

// Why these texts may name acc's commands (docs/design.md#layers).
const (
	forAgent  = "guidance for the agent, delivered through acc-hook or live push, where the acc command is the agent's tool"
	forDoctor = "acc doctor's report, which only the acc command gives"
	forPeer   = "a message body stored for another session, which reads it as text wherever it is"
)

// commandGuidance is the explicit allowance of the source check below:
// the declarations whose texts may name an `acc …` command, each with why.
// Refusals are checked even there.
var commandGuidance = map[string]string{
	"Room.CheckWrite": forAgent, "Room.denyGit": forAgent, "Room.denyHidden": forAgent, "waitFor": forAgent,
	"Room.Project": forAgent, "reminderLines": forAgent, "recoveryLine": forAgent, "LiveFrame": forAgent,
	"answerLine": forAgent, "summaryLine": forAgent, "frame": forAgent, "DamagedLine": forAgent,
	"NoStoreNote": forDoctor, "Doctor": forDoctor, "inspectStore": forDoctor, "faultFix": forDoctor,
	"aside": forDoctor, "doctorNoRoom": forDoctor, "inspectServer": forDoctor, "olderSchemaWarning": forDoctor,
	"Room.tellForced": forPeer,
}

// TestRefusalsCarryNoSurfaceWords: core's rules are the same on every
// surface, so no refusal core builds (a protocol.Errorf call, its format
// and arguments) spells a flag, a tool or a command, and no other text in
// core names an acc command line, an acc-mcp tool or variable, or the
// start-directory flags, outside commandGuidance; refusals name fields and
// next steps as slots each surface renders (docs/cli.md#refusal-details).
// Every field a slot names is one of protocol.FieldIDs, and every step's
// command a protocol.Step constant, so the renderers' test in
// internal/wording covers it.
func TestRefusalsCarryNoSurfaceWords(t *testing.T) {
	t.Parallel()
	slotcheck.Check(t, ".", commandGuidance)
}
