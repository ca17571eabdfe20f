package realclient

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// TestKimiMCP registers acc-mcp in Kimi Code's $KIMI_CODE_HOME/mcp.json
// ({"mcpServers": {"acc": …}}, the participant and workspace in its env, as
// docs/mcp.md has it) and lets the model call acc's tools through it. Kimi
// offers them to the model as mcp__acc__<tool>. The model calls acc_status:
// the result lists the manual session already in the room and the
// server's own participant, attached with harness mcp; then acc_inbox lists
// the question that session sent it. `acc status` agrees:
// the MCP participant is in the room, advisory.
func TestKimiMCP(t *testing.T) {
	w := newWorld(t)
	peer := w.attach(w.wt, "peer")
	const me = "kimi-mcp"
	r := w.hooked(t, Kimi, w.repo, nil)
	r.setup.Install = nil // no hooks: Kimi joins through acc-mcp alone
	const question = "Which port does the dev server use? MCP_QUESTION_4471"
	var statusOut, inboxOut, sentID string
	var s steps
	r.model.Append(
		s.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			tools := req.Tools()
			for _, want := range []string{"mcp__acc__acc_status", "mcp__acc__acc_inbox"} {
				if !slices.Contains(tools, want) {
					return fakemodel.Reply{}, check(t, fmt.Errorf("the request offers no %s; acc's tools there: %v", want, slices.DeleteFunc(slices.Clone(tools), func(n string) bool { return !strings.Contains(n, "acc") })))
				}
			}
			return fakemodel.Run(fakemodel.Tool("mcp__acc__acc_status", map[string]any{})), nil
		}),
		s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			statusOut = res.Output
			// The server's participant is in the room now: the peer asks it.
			data, err := w.acc(w.wt, append([]string{"message", "--type", "question", "--subject", "port", "--body", question, "--to", me}, peer.args()...)...)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if sentID, err = sentMessageID(string(data)); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Run(fakemodel.Tool("mcp__acc__acc_inbox", map[string]any{})), nil
		}),
		s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			inboxOut = res.Output
			return fakemodel.Say("The peer asked about the dev server port."), nil
		}),
	)
	if err := r.setup.Configure(); err != nil {
		t.Fatal(err)
	}
	server := map[string]any{"mcpServers": map[string]any{"acc": map[string]any{
		"command": filepath.Join(w.bin, "acc-mcp"),
		"env":     map[string]any{"ACC_MCP_PARTICIPANT": me, "ACC_MCP_WORKSPACE": w.repo, "ACC_DATA_HOME": w.dataHome},
	}}}
	if err := writeJSONFile(filepath.Join(r.setup.Home, ".kimi-code", "mcp.json"), server); err != nil {
		t.Fatal(err)
	}
	r.exec("Check the room through acc, then your inbox.")
	r.wantModelCalls(3)
	t.Logf("acc_status through Kimi: %s", clip(statusOut, 400))
	t.Logf("acc_inbox through Kimi: %s", compactJSON(inboxOut))

	st, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, p := range st.Participants {
		if p.ParticipantID == me {
			mine = append(mine, p.SessionID)
			if p.Harness != "mcp" || p.Enforcement != "advisory" {
				t.Errorf("%s's session %s: harness %s, enforcement %s; want mcp, advisory", me, p.SessionID, p.Harness, p.Enforcement)
			}
		}
	}
	if len(mine) != 1 {
		t.Fatalf("acc status lists %d sessions of %s, want 1: %+v", len(mine), me, st.Participants)
	}
	for _, want := range []string{`"participantId":"peer"`, `"participantId":"` + me + `"`, mine[0]} {
		if !strings.Contains(compactJSON(statusOut), want) {
			t.Errorf("acc_status through Kimi does not show %s: %s", want, statusOut)
		}
	}
	for _, want := range []string{`"fromParticipantId":"peer"`, `"kind":"question"`, `"messageId":"` + sentID + `"`, `"recipientParticipantId":"` + me + `"`, `"subject":"port"`} {
		if sentID == "" || !strings.Contains(compactJSON(inboxOut), want) {
			t.Errorf("acc_inbox through Kimi does not show %s: %s", want, inboxOut)
		}
	}
	if _, err := os.Stat(filepath.Join(r.setup.Home, ".kimi-code", "mcp.json")); err != nil {
		t.Error(err)
	}
}

// compactJSON removes the insignificant spaces of a JSON text, after the
// "Wall time: <s> seconds" line Kimi puts before a tool's result (it is
// returned as it was when it is not JSON).
func compactJSON(s string) string {
	if _, rest, ok := strings.Cut(s, "\n"); ok && strings.HasPrefix(s, "Wall time: ") {
		s = rest
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
