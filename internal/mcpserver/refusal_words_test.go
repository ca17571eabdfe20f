package mcpserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRefusalsAreWordedForMCP: a refusal core builds with slots reaches an
// MCP client in acc-mcp's words (arguments.kind, acc_inbox), never in its
// neutral form or the CLI's, and its details carry the slots as data
// (docs/mcp.md#refusal-details).
func TestRefusalsAreWordedForMCP(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		text   string
		detail string
		want   any
	}{
		{"field", core.CheckSyncQuery(core.SyncQuery{Kind: "note"}),
			`acc_sync: only arguments.scope "history" takes arguments.kind (this is arguments.scope "delta"); add arguments.scope "history" (usage, sync_usage)`,
			"fields", []string{"scope", "kind"}},
		{"step", core.CheckSend(core.SendInput{Kind: protocol.KindAnswer}),
			"acc_sync: an answer is sent with acc_reply, which keeps it in the thread (usage, kind_not_allowed)",
			"nextSteps", []protocol.Step{{Command: protocol.StepReply}}},
	} {
		res := errorResult("acc_sync", c.err)
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content %T is not text", c.name, res.Content[0])
		}
		got := tc.Text
		if got != c.text {
			t.Errorf("%s: text %q\nwant      %q", c.name, got, c.text)
		}
		if protocol.Unrendered(got) || strings.Contains(got, "--") || strings.Contains(got, "`acc ") {
			t.Errorf("%s: text %q is not in acc-mcp's words", c.name, got)
		}
		body := res.StructuredContent.(map[string]any)["error"].(map[string]any)
		if d := body["details"].(map[string]any)[c.detail]; !reflect.DeepEqual(d, c.want) {
			t.Errorf("%s: details.%s = %#v, want %#v", c.name, c.detail, d, c.want)
		}
		if body["message"] != strings.TrimPrefix(strings.SplitN(got, " (usage", 2)[0], "acc_sync: ") {
			t.Errorf("%s: structured message %q differs from the text", c.name, body["message"])
		}
	}
}
