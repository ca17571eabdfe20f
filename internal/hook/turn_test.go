package hook

import (
	"context"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// provenWorld is a world whose Claude Code reports version 9.8.7, which a
// local certification record proves midTurn and endOfTurn for.
func provenWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	w.r.ClientVersion = func(context.Context, adapter.Adapter) string { return "9.8.7" }
	if _, err := evidence.Write(w.env[core.EnvDataHome], "claude", evidence.Record{Evidence: adapter.Evidence{Version: "9.8.7", Test: "stand-in",
		Recorded: "2026-12-02T00:00:00Z", Proven: adapter.Capabilities{Attach: true, NextTurn: true, MidTurn: true, EndOfTurn: true}},
		Why: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	w.env["ACC_PARTICIPANT"] = "bob"
	return w
}

// TestTurnPolicyNarrowsTheWorkspace: an installation's turn policy off
// (Runner.ReadInstall, read into the room the hook opens) stops mid-turn
// delivery and holds though the workspace allows both; "" (no opinion)
// leaves the workspace's policy.
func TestTurnPolicyNarrowsTheWorkspace(t *testing.T) {
	w := provenWorld(t)
	if res := w.hook("claude", "SessionStart", "c1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	ctx := context.Background()
	alice, err := r.Attach(ctx, core.AttachInput{ParticipantID: "alice", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := r.Send(ctx, core.SendInput{Caller: core.Caller{SessionID: alice.SessionID, Generation: alice.Generation}, To: []string{"bob"},
		Kind: protocol.KindQuestion, Subject: "q", Body: "?"})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	w.r.ReadInstall = func(home string) core.InstallPolicies {
		if home != r.DataHome {
			t.Errorf("the installations were read from %s, not the room's data home %s", home, r.DataHome)
		}
		return core.InstallPolicies{Turn: func(id string) (string, string) {
			asked = append(asked, id)
			return core.TurnDeliveryOff, core.TurnDeliveryOff
		}}
	}
	if res := w.hook("claude", "PostToolUse", "c1"); res.stdout != "{}\n" {
		t.Fatalf("the installation's off must stop mid-turn delivery: %+v", res)
	}
	if res := w.hook("claude", "Stop", "c1"); res.stdout != "{}\n" {
		t.Fatalf("the installation's off must stop holds: %+v", res)
	}
	if len(asked) != 2 || asked[0] != "claude" {
		t.Fatalf("the turn policy was asked for %v", asked)
	}
	w.r.ReadInstall = func(string) core.InstallPolicies {
		return core.InstallPolicies{Turn: func(string) (string, string) { return "", "" }}
	}
	if res := w.hook("claude", "PostToolUse", "c1"); !strings.Contains(res.stdout, q.Message.MessageID) {
		t.Fatalf("no opinion leaves the workspace's actionable: %+v", res)
	}
}

// TestBeforeTurnRecordsWorking: a before-turn hook records the session
// working, on the attach path too (no session start first); a turn end
// with nothing to hold records it idle.
func TestBeforeTurnRecordsWorking(t *testing.T) {
	w := provenWorld(t)
	if res := w.hook("claude", "UserPromptSubmit", "fresh"); res.code != 0 || !strings.HasPrefix(res.stdout, `{"hookSpecificOutput"`) {
		t.Fatalf("UserPromptSubmit: %+v", res)
	}
	r := w.room()
	activity := func() protocol.Activity {
		t.Helper()
		hs, err := r.HookSession(context.Background(), "claude", "fresh", 0)
		if err != nil || hs == nil {
			t.Fatalf("%v %v", hs, err)
		}
		return hs.Activity
	}
	if a := activity(); a.State != protocol.ActivityWorking {
		t.Fatalf("after the first prompt: %+v", a)
	}
	if res := w.hook("claude", "Stop", "fresh"); res.stdout != "{}\n" {
		t.Fatalf("Stop: %+v", res)
	}
	if a := activity(); a.State != protocol.ActivityIdle {
		t.Fatalf("after the stop: %+v", a)
	}
}

// TestKimiHoldIsOnStderr: a client whose hold is exit 2 with the reason
// on stderr (Kimi) has the hold recorded only once stderr took it; a
// stderr that refuses the bytes leaves the message queued and the session
// idle.
func TestKimiHoldIsOnStderr(t *testing.T) {
	w := provenWorld(t)
	if _, err := evidence.Write(w.env[core.EnvDataHome], "kimi", evidence.Record{Evidence: adapter.Evidence{Version: "9.8.7", Test: "stand-in",
		Recorded: "2026-12-02T00:00:00Z", Proven: adapter.Capabilities{Attach: true, NextTurn: true, EndOfTurn: true}},
		Why: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if res := w.hook("kimi", "SessionStart", "k1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	if res := w.hook("kimi", "UserPromptSubmit", "k1"); res.code != 0 {
		t.Fatalf("UserPromptSubmit: %+v", res)
	}
	r := w.room()
	ctx := context.Background()
	alice, err := r.Attach(ctx, core.AttachInput{ParticipantID: "alice", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := r.Send(ctx, core.SendInput{Caller: core.Caller{SessionID: alice.SessionID, Generation: alice.Generation}, To: []string{"bob"},
		Kind: protocol.KindQuestion, Subject: "q", Body: "?"})
	if err != nil {
		t.Fatal(err)
	}
	id := q.Message.MessageID
	state := func() (string, protocol.Activity) {
		t.Helper()
		st, err := r.ReceiptState(ctx, id, "bob")
		hs, err2 := r.HookSession(ctx, "kimi", "k1", 0)
		if err != nil || err2 != nil || hs == nil {
			t.Fatal(err, err2)
		}
		return st, hs.Activity
	}
	// stderr refuses the bytes: nothing recorded but the stop, and the
	// answer is "proceed" (exit 0), not a hold without its reason.
	fw := &failingWriter{}
	code := w.r.Run([]string{"kimi", "Stop"}, strings.NewReader(string(w.payload("kimi", "Stop", "k1"))), &strings.Builder{}, fw)
	if st, a := state(); code != 0 || fw.tried == 0 || st != protocol.ReceiptQueued || a.State != protocol.ActivityIdle {
		t.Fatalf("exit %d, %d writes; receipt %s, activity %+v: want exit 0, queued, idle", code, fw.tried, st, a)
	}
	// A turn again (recorded directly: a prompt hook would carry the
	// message itself), and its stop holds, recorded once stderr took it.
	hs, err := r.HookSession(ctx, "kimi", "k1", 0)
	if err != nil || hs == nil {
		t.Fatal(err)
	}
	if _, err := r.SetActivity(ctx, hs.Caller, protocol.ActivityWorking); err != nil {
		t.Fatal(err)
	}
	res := w.hook("kimi", "Stop", "k1")
	if res.code != 2 || res.stdout != "" || !strings.Contains(res.stderr, "messageId: "+id) {
		t.Fatalf("hold: %+v", res)
	}
	if st, a := state(); st != protocol.ReceiptOffered || a.State != protocol.ActivityWorking {
		t.Fatalf("after the hold: receipt %s, activity %+v (a held session stays working)", st, a)
	}
}
