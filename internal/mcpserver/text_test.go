package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tool arguments holding invalid UTF-8 or a lone surrogate escape are
// refused as the CLI refuses such text (invalid_input, exit 4, naming the
// argument), in every era and in every text argument of every write tool,
// and nothing is recorded. encoding/json would have stored U+FFFD in
// their place. The bytes go to a real acc-mcp exactly as written here.
func TestInvalidTextRefused(t *testing.T) {
	bads := []struct{ name, text string }{
		{"byte ff", "bad \xff byte"},
		{"cut rune", "cut \xe2\x80"},
		{"encoded surrogate", "cesu \xed\xa0\x80"},
		{"lone high surrogate", `lone \ud800 high`},
		{"lone low surrogate", `lone \udc00 low`},
		{"high then not low", `\ud83d\u0041`},
	}
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			r := newRoom(t)
			c := startBinary(t, r, "research")
			e.open(t, c)
			e.ok(t, c, "acc_status", map[string]any{}) // research is here
			alice := r.acc("attach", "--participant", "alice")
			as := []string{"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string)}
			q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "q", "--body", "b"}, as...)...)
			qid := q["message"].(map[string]any)["messageId"].(string)
			// Each call is valid but for the one argument marked TEXT.
			calls := []struct{ tool, field, args string }{
				{"acc_message", "subject", `{"to":["alice"],"subject":"TEXT","body":"b"}`},
				{"acc_message", "body", `{"to":["alice"],"subject":"s","body":"TEXT"}`},
				{"acc_message", "clientMessageId", `{"to":[],"subject":"s","body":"b","clientMessageId":"TEXT"}`},
				{"acc_request", "title", `{"toParticipantId":"alice","title":"TEXT"}`},
				{"acc_request", "detail", `{"toParticipantId":"alice","title":"t","detail":"TEXT"}`},
				{"acc_reply", "body", `{"messageId":"` + qid + `","body":"TEXT"}`},
				{"acc_reply", "subject", `{"messageId":"` + qid + `","body":"b","subject":"TEXT"}`},
				{"acc_claim", "reason", `{"action":"acquire","resource":"file:a.go","reason":"TEXT"}`},
				{"acc_claim", "resource", `{"action":"acquire","resource":"file:TEXT.go"}`},
				{"acc_work", "summary", `{"summary":"TEXT","mode":"edit"}`},
				{"acc_work", "resourceHints", `{"summary":"s","mode":"edit","resourceHints":["file:TEXT"]}`},
				{"acc_finish", "goal", `{"goal":"TEXT"}`},
				{"acc_finish", "completed", `{"goal":"g","completed":["ok","TEXT"]}`},
				{"acc_finish", "remaining", `{"goal":"g","remaining":["TEXT"]}`},
				{"acc_finish", "blockers", `{"goal":"g","blockers":["TEXT"]}`},
			}
			fp := r.fingerprint()
			for _, call := range calls {
				for _, bad := range bads {
					args := strings.Replace(call.args, "TEXT", bad.text, 1)
					out := e.tool(t, c, call.tool, json.RawMessage(args))
					want := call.tool + ": arguments." + call.field + " must be valid UTF-8: "
					if !out.isErr || out.reason != "invalid_input" || !strings.HasPrefix(out.text, want) || !strings.HasSuffix(out.text, "(data, invalid_input)") {
						t.Errorf("%s %s (%s): got isError %v reason %q text %q, want invalid_input %q…",
							call.tool, call.field, bad.name, out.isErr, out.reason, out.text, want)
					}
				}
			}
			if got := r.fingerprint(); got != fp {
				t.Errorf("refused calls changed the data home")
			}
			// A valid surrogate pair is text like any other.
			sent := e.ok(t, c, "acc_message", json.RawMessage(`{"to":["alice"],"subject":"smile \ud83d\ude00","body":"b"}`))
			if s := sent.(map[string]any)["message"].(map[string]any)["subject"]; s != "smile 😀" {
				t.Errorf("subject stored as %q", s)
			}
		})
	}
}
