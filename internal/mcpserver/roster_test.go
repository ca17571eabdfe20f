package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// TestRosterSubscription: a client subscribed to acc://roster (before the
// room has a store) hears when the first session joins and when a
// session's turn starts or ends, recorded by another process; the roster
// it reads then carries the activity. A heartbeat alone, or the same
// state again, is no change; after unsubscribing nothing more comes.
func TestRosterSubscription(t *testing.T) {
	r := newRoom(t)
	c, p := spawnBinary(t, r, "research")
	t.Cleanup(func() { p.in.Close(); p.cmd.Wait() })
	c.initialize("2025-11-25")
	result(t, c.request("resources/subscribe", map[string]any{"uri": "acc://roster"}))
	waitNotes := func(n int, what string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for len(c.notifications()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no notification within 15 s of %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
		var note struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if err := json.Unmarshal(c.notifications()[n-1], &note); err != nil || note.Method != "notifications/resources/updated" || note.Params.URI != "acc://roster" {
			t.Fatalf("notification %s", c.notifications()[n-1])
		}
	}
	bob := r.acc("attach", "--participant", "bob", "--harness", "claude")
	waitNotes(1, "the first attach")

	ctx := context.Background()
	room, err := core.Open(ctx, core.OpenOptions{Cwd: r.ws, Getenv: r.getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer room.Close()
	caller := core.Caller{SessionID: bob["sessionId"].(string), Generation: bob["generation"].(string)}
	n := len(c.notifications())
	set := time.Now()
	if _, err := room.SetActivity(ctx, caller, protocol.ActivityWorking); err != nil {
		t.Fatal(err)
	}
	waitNotes(n+1, "the turn's start")
	t.Logf("notified %v after the turn's start was recorded", time.Since(set).Round(time.Millisecond))
	read := result(t, c.request("resources/read", map[string]any{"uri": "acc://roster"}))
	text := read["contents"].([]any)[0].(map[string]any)["text"].(string)
	var roster []core.RosterRow
	if err := json.Unmarshal([]byte(text), &roster); err != nil || len(roster) != 1 || roster[0].Activity == nil || roster[0].Activity.State != protocol.ActivityWorking {
		t.Fatalf("roster %s (%v)", text, err)
	}

	// The same state again only moves the heartbeat: no change.
	n = len(c.notifications())
	if _, err := room.SetActivity(ctx, caller, protocol.ActivityWorking); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if got := len(c.notifications()); got != n {
		t.Fatalf("%d notifications for a heartbeat", got-n)
	}
	if _, err := room.SetActivity(ctx, caller, protocol.ActivityIdle); err != nil {
		t.Fatal(err)
	}
	waitNotes(n+1, "the turn's end")

	result(t, c.request("resources/unsubscribe", map[string]any{"uri": "acc://roster"}))
	n = len(c.notifications())
	if _, err := room.SetActivity(ctx, caller, protocol.ActivityWorking); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if got := c.notifications()[n:]; len(got) != 0 {
		t.Errorf("notified after unsubscribing: %s", strings.TrimSpace(string(got[0])))
	}
}
