package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/internal/livepush"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// TestInstallPoliciesAgree: what installs.json records for Claude Code is
// what the three readers of a room opened over that data home judge by —
// the status's live-push column, the router's decision for a send
// (livepush.AfterSend), and the hook's mid-turn delivery — first with
// live push actionable and mid-turn off, then, rewritten, with live push
// off and mid-turn unset (the room's actionable).
func TestInstallPoliciesAgree(t *testing.T) {
	w := newWorld(t)
	data := w.env[core.EnvDataHome]
	w.r.ClientVersion = func(context.Context, adapter.Adapter) string { return "9.8.7" }
	w.r.ReadInstall = install.ReadPolicies
	w.env["ACC_PARTICIPANT"] = "bob"
	if _, err := evidence.Write(data, "claude", evidence.Record{Evidence: adapter.Evidence{Version: "9.8.7", Test: "stand-in",
		Recorded: "2026-12-02T00:00:00Z", Proven: adapter.Capabilities{Attach: true, NextTurn: true, MidTurn: true, EndOfTurn: true, LivePush: true}},
		Why: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	record := func(live, mid string) {
		t.Helper()
		b, err := json.Marshal(install.Record{SchemaVersion: install.RecordSchemaVersion,
			Installs: []install.Install{{AdapterID: "claude", State: "installed", DeliveryPolicy: live, MidTurnPolicy: mid}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(data, "acc"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "acc", "installs.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *core.Room {
		t.Helper()
		r, err := core.Open(context.Background(), core.OpenOptions{Cwd: w.repo, Getenv: func(k string) string { return w.env[k] },
			ReadInstall: install.ReadPolicies})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	ctx := context.Background()

	record(router.PolicyActionable, router.PolicyOff)
	if res := w.hook("claude", "SessionStart", "c1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	r := open()
	bob, err := r.HookCaller(ctx, "claude", "c1")
	if err != nil || bob == nil {
		t.Fatalf("the hooked session is not bound: %v", err)
	}
	// An endpoint no transport can use: an offer is tried, and refused.
	if err := r.RecordLiveBinding(ctx, *bob, livepush.ClaudeInboxName, "{}"); err != nil {
		t.Fatal(err)
	}
	a, err := r.Attach(ctx, core.AttachInput{ParticipantID: "alice", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	alice := core.Caller{SessionID: a.SessionID, Generation: a.Generation}
	send := func(r *core.Room) []router.Delivery {
		t.Helper()
		res, err := r.Send(ctx, core.SendInput{Caller: alice, To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "?"})
		if err != nil {
			t.Fatal(err)
		}
		d := livepush.AfterSend(ctx, r, &res.Message)
		if len(d) != 1 {
			t.Fatalf("delivery %+v", d)
		}
		return d
	}
	livePolicy := func(r *core.Room) (string, bool) {
		t.Helper()
		st, err := r.Status(ctx, core.StatusQuery{LivePolicy: r.Install.LivePush})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range st.Participants {
			if row.ParticipantID == "bob" {
				return row.LivePolicy, row.Reachable
			}
		}
		t.Fatal("bob is not in the status")
		return "", false
	}

	// Live push actionable: the status shows bob reachable live, and a
	// question to the idle session is offered live (refused here by the
	// endpoint, not by the policy).
	if p, ok := livePolicy(r); p != router.PolicyActionable || !ok {
		t.Errorf("status: live policy %q, reachable %v; want actionable, reachable", p, ok)
	}
	if d := send(r); d[0].ErrorCode == nil || *d[0].ErrorCode != router.ErrRecipientUnavailable {
		t.Errorf("an idle recipient under actionable: %+v, want live push tried (recipient_unavailable)", d[0])
	}
	// Mid-turn off: a question to the working session is not for its
	// post-tool hook, and that hook shows nothing.
	if res := w.hook("claude", "UserPromptSubmit", "c1"); res.code != 0 {
		t.Fatalf("UserPromptSubmit: %+v", res)
	}
	if d := send(r); d[0].Transport == router.TransportMidTurn {
		t.Errorf("the router chose mid-turn though the installation turned it off: %+v", d[0])
	}
	if res := w.hook("claude", "PostToolUse", "c1"); res.stdout != "{}\n" {
		t.Errorf("the post-tool hook delivered though the installation turned mid-turn off: %+v", res)
	}

	// Rewritten: live push off, mid-turn unset. A room opened now reads
	// the new record; the one opened before keeps what it read.
	record(router.PolicyOff, "")
	r2 := open()
	if p, ok := livePolicy(r2); p != "" || ok {
		t.Errorf("status with live push off: live policy %q, reachable %v; want not reachable", p, ok)
	}
	if p, _ := livePolicy(r); p != router.PolicyActionable {
		t.Errorf("the room opened first changed its reading: %q", p)
	}
	d := send(r2)
	if d[0].Transport != router.TransportMidTurn {
		t.Errorf("a working recipient with mid-turn unset: %+v, want mid-turn", d[0])
	}
	// The hook shows the oldest of the two questions waiting, and counts
	// the other.
	if res := w.hook("claude", "PostToolUse", "c1"); !strings.Contains(res.stdout, "```acc-peer-message") || !strings.Contains(res.stdout, "1 more waiting") {
		t.Errorf("the post-tool hook did not deliver under the room's actionable: %+v", res)
	}
}
