package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// TestSetActivityKeepsTheTurnsStart: working then working again keeps the
// first Since (one turn); idle starts a new Since; a bad state or a stale
// generation changes nothing.
func TestSetActivityKeepsTheTurnsStart(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	a := tr.attach("alice", "cli")
	if _, err := tr.SetActivity(ctx, a, "busy"); !protocol.IsReason(err, protocol.ReasonInvalidInput) {
		t.Fatalf("bad state: %v", err)
	}
	wantReason(t, func() error {
		_, err := tr.SetActivity(ctx, Caller{SessionID: a.SessionID, Generation: "generation_stale"}, protocol.ActivityWorking)
		return err
	}(), protocol.ReasonStaleGeneration, protocol.ExitConflict)
	read := func() (protocol.Activity, bool) {
		t.Helper()
		var got protocol.Activity
		var ok bool
		err := tr.Store.View(ctx, func(tx storage.ReadTx) error {
			s, _, err := requireOwner(tx, a, "read")
			if err == nil {
				got, ok = protocol.SessionActivity(s)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}
	if _, ok := read(); ok {
		t.Fatal("a session that reported no turn has an activity")
	}
	start := protocol.FormatTime(clock)
	if got, err := tr.SetActivity(ctx, a, protocol.ActivityWorking); err != nil || got.Since != start {
		t.Fatalf("working: %+v %v", got, err)
	}
	clock = clock.Add(time.Minute)
	if got, err := tr.SetActivity(ctx, a, protocol.ActivityWorking); err != nil || got.Since != start {
		t.Fatalf("working again moved the turn's start: %+v %v", got, err)
	}
	clock = clock.Add(time.Minute)
	if got, err := tr.SetActivity(ctx, a, protocol.ActivityIdle); err != nil || got.Since != protocol.FormatTime(clock) || got.State != protocol.ActivityIdle {
		t.Fatalf("idle: %+v %v", got, err)
	}
	if got, ok := read(); !ok || got.State != protocol.ActivityIdle || got.Since != protocol.FormatTime(clock) {
		t.Fatalf("stored: %+v %v", got, ok)
	}
}

// TestBeginTurnStartsAfresh: a prompt after a turn that never reported its
// end (the person interrupted it) starts a new turn: Since moves, and the
// new turn may be held again although the old one was held to its bound.
func TestBeginTurnStartsAfresh(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	a := tr.attach("alice", "cli")
	b := tr.hookAttach("bob", "cs-bob", true, true)
	first, err := tr.BeginTurn(ctx, b)
	if err != nil || first.State != protocol.ActivityWorking {
		t.Fatalf("begin: %+v %v", first, err)
	}
	opts := TurnOptions{Policy: workspace.TurnDeliveryActionable}
	for i := range workspace.DefaultEndOfTurnMaxHolds {
		tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: fmt.Sprint("q", i), Body: "?"})
		got, _ := tr.ProjectTurnEnd(ctx, "claude", "cs-bob", opts)
		if got.Held == "" {
			t.Fatalf("hold %d not given", i)
		}
		if err := tr.RecordHold(ctx, b, got.Held, len(got.Offered) > 0, "claude", ""); err != nil {
			t.Fatal(err)
		}
	}
	tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "late", Body: "?"})
	if got, _ := tr.ProjectTurnEnd(ctx, "claude", "cs-bob", opts); got.Text != "" {
		t.Fatal("held past the bound")
	}
	// Interrupted: no turn end; the next prompt begins a new turn.
	again, err := tr.BeginTurn(ctx, b)
	if err != nil || again.Since == first.Since {
		t.Fatalf("a new prompt kept the old turn's start: %+v %v", again, err)
	}
	if got, _ := tr.ProjectTurnEnd(ctx, "claude", "cs-bob", opts); !strings.Contains(got.Text, "late") {
		t.Fatalf("the new turn may be held: %+v", got)
	}
}

// TestStatusShowsNoTurnOfAnOfflineSession: a session whose process is gone
// (a crash mid-turn records no turn end) is shown by status --all with no
// activity; while its process lives it shows working.
func TestStatusShowsNoTurnOfAnOfflineSession(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	tr.attach("alice", "cli")
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "bob", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	b := Caller{SessionID: res.SessionID, Generation: res.Generation}
	if _, err := tr.BeginTurn(ctx, b); err != nil {
		t.Fatal(err)
	}
	activity := func() *protocol.Activity {
		t.Helper()
		st, err := tr.Status(ctx, StatusQuery{All: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range st.Participants {
			if row.SessionID == b.SessionID {
				return row.Activity
			}
		}
		t.Fatal("bob's session is not listed")
		return nil
	}
	if a := activity(); a == nil || a.State != protocol.ActivityWorking {
		t.Fatalf("a live session in a turn: %+v", a)
	}
	tr.Probe = mapProbe{4242: {Exists: false}}
	if a := activity(); a != nil {
		t.Fatalf("an offline session shown in a turn: %+v", a)
	}
}
