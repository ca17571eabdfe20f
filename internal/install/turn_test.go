package install

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// TestTurnWords: what install and doctor say of delivery inside a turn,
// for each combination of version, proof and recorded policy.
func TestTurnWords(t *testing.T) {
	claude := clients.Get("claude")
	proven := adapter.Capabilities{MidTurn: true, EndOfTurn: true}
	for _, c := range []struct {
		version  string
		caps     adapter.Capabilities
		mid, end string
		wantMid  string
		wantEnd  string
	}{
		{"", proven, "all", "", "off: the version of Claude Code is unreadable, so delivery after each tool call is not assumed; messages wait for the next turn",
			"off: the version of Claude Code is unreadable, so delivery holding a stopping agent with a message to answer is not assumed; a stopping agent is not held; messages wait for the next turn"},
		{"2.1.197", adapter.Capabilities{}, "all", "actionable", "off: not proven for Claude Code 2.1.197; messages wait for the next turn",
			"off: not proven for Claude Code 2.1.197; a stopping agent is not held; messages wait for the next turn"},
		{"2.1.400", proven, "", "", "as the room's policy.midTurn says (actionable unless the room changes it)",
			"as the room's policy.endOfTurn says (actionable unless the room changes it)"},
		{"2.1.400", proven, "off", "actionable", "off for this client (acc install set it); messages wait for the next turn",
			"actionable, or narrower where the room's policy.endOfTurn is"},
	} {
		td := turnDelivery(claude, c.version, true, c.caps, c.mid, c.end)
		if td.MidTurnWords != c.wantMid || td.EndOfTurnWords != c.wantEnd {
			t.Errorf("%s %+v %q/%q:\n got %q\n     %q\nwant %q\n     %q", c.version, c.caps, c.mid, c.end, td.MidTurnWords, td.EndOfTurnWords, c.wantMid, c.wantEnd)
		}
	}
}

// TestTurnWordsNotFound: a client with no program on PATH is said to be
// not found, not to have an unreadable version.
func TestTurnWordsNotFound(t *testing.T) {
	td := turnDelivery(clients.Get("codex"), "", false, adapter.Capabilities{MidTurn: true, EndOfTurn: true}, "", "")
	if want := "off: Codex is not found here, so delivery after each tool call is not assumed; messages wait for the next turn"; td.MidTurnWords != want {
		t.Errorf("mid-turn:\n got %q\nwant %q", td.MidTurnWords, want)
	}
	if want := "off: Codex is not found here, so delivery holding a stopping agent with a message to answer is not assumed; a stopping agent is not held; messages wait for the next turn"; td.EndOfTurnWords != want {
		t.Errorf("end of turn:\n got %q\nwant %q", td.EndOfTurnWords, want)
	}
	if td.MidTurnProven || td.EndOfTurnProven {
		t.Errorf("proven for a client that is not here: %+v", td)
	}
	// Grok: nothing proven at any version, and no next turn to wait for.
	td = turnDelivery(clients.Get("grok"), "0.1.0", true, adapter.Capabilities{}, "", "")
	if want := "off: not proven for Grok 0.1.0; messages wait in its inbox"; td.MidTurnWords != want {
		t.Errorf("grok mid-turn:\n got %q\nwant %q", td.MidTurnWords, want)
	}
	if want := "off: not proven for Grok 0.1.0; a stopping agent is not held; messages wait in its inbox"; td.EndOfTurnWords != want {
		t.Errorf("grok end of turn:\n got %q\nwant %q", td.EndOfTurnWords, want)
	}
}

// TestReadPolicies: what a room opened over the data home carries of the
// record, read once: each client's live-push and turn policies, off and
// "" for what is not set, for a client not installed, and for a record
// that cannot be read; a change to the record after the read is not seen
// by that read's policies.
func TestReadPolicies(t *testing.T) {
	home := t.TempDir()
	if p := ReadPolicies(home); p.LivePush("claude") != "off" {
		t.Errorf("no record: live push %q", p.LivePush("claude"))
	} else if m, e := p.Turn("claude"); m != "" || e != "" {
		t.Errorf("no record: %q %q", m, e)
	}
	rec := &Record{SchemaVersion: RecordSchemaVersion}
	rec.put(Install{AdapterID: "claude", MidTurnPolicy: "all", DeliveryPolicy: "actionable"})
	rec.put(Install{AdapterID: "codex", EndOfTurnPolicy: "off"})
	if err := rec.save(home); err != nil {
		t.Fatal(err)
	}
	read := ReadPolicies(home)
	for _, c := range [][4]string{{"claude", "all", "", "actionable"}, {"codex", "", "off", "off"}, {"gemini", "", "", "off"}} {
		if m, e := read.Turn(c[0]); m != c[1] || e != c[2] {
			t.Errorf("%s: %q %q, want %q %q", c[0], m, e, c[1], c[2])
		}
		if l := read.LivePush(c[0]); l != c[3] {
			t.Errorf("%s: live push %q, want %q", c[0], l, c[3])
		}
	}
	if err := os.WriteFile(filepath.Join(home, "acc", "installs.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, _ := read.Turn("claude"); m != "all" || read.LivePush("claude") != "actionable" {
		t.Errorf("the first read changed with the record: %q %q", m, read.LivePush("claude"))
	}
	if p := ReadPolicies(home); p.LivePush("claude") != "off" {
		t.Errorf("unreadable record: live push %q", p.LivePush("claude"))
	} else if m, e := p.Turn("claude"); m != "" || e != "" {
		t.Errorf("unreadable record: %q %q", m, e)
	}
	if got := EffectiveTurnPolicy("actionable", "all"); got != "actionable" {
		t.Errorf("effective %q", got)
	}
}
