package workspace

import (
	"testing"

	"github.com/acc-go/acc/pkg/protocol/slotcheck"
)

// TestRefusalsCarryNoSurfaceWords: workspace discovery serves every
// surface, so neither its refusals nor any other text in it spell a flag,
// an acc command line or an acc-mcp variable; its refusals name fields and
// next steps as slots each surface renders (docs/cli.md#refusal-details).
// Nothing here is allowed to name a command.
func TestRefusalsCarryNoSurfaceWords(t *testing.T) {
	slotcheck.Check(t, ".", nil)
}
