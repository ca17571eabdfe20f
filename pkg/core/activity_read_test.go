package core

import (
	"context"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestPeerConditions: idle needs an open session and none of the open,
// not offline ones working; a working session gone offline no longer
// counts, but it still keeps the participant from being finished. The
// roster digest moves with a turn, not with a heartbeat.
func TestPeerConditions(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	b1 := tr.attach("bob", "cli")
	b2 := tr.attach("bob", "cli")
	look := func(kind string) *WaitResult {
		t.Helper()
		res, err := tr.CheckCondition(ctx, WaitQuery{For: kind, Participant: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := look(WaitIdle); !res.Satisfied || len(res.Sessions) != 2 || res.Sessions[0].Activity != nil {
		t.Fatalf("no activity recorded counts as not working: %+v", res)
	}
	d0, _ := tr.RosterDigest(ctx)
	if _, err := tr.SetActivity(ctx, b1, protocol.ActivityWorking); err != nil {
		t.Fatal(err)
	}
	d1, _ := tr.RosterDigest(ctx)
	if d1 == d0 {
		t.Error("the roster digest did not move with a turn's start")
	}
	if _, err := tr.SetActivity(ctx, b2, protocol.ActivityIdle); err != nil {
		t.Fatal(err)
	}
	if res := look(WaitIdle); res.Satisfied {
		t.Fatalf("idle while b1 works: %+v", res)
	}
	// b1 falls silent past the offline limit; b2 keeps beating.
	clock = clock.Add(UnknownPIDExpiry + time.Minute)
	if _, err := tr.SetActivity(ctx, b2, protocol.ActivityIdle); err != nil {
		t.Fatal(err)
	}
	res := look(WaitIdle)
	if !res.Satisfied || len(res.Sessions) != 2 {
		t.Fatalf("an offline working session still counts: %+v", res)
	}
	for _, s := range res.Sessions {
		if s.SessionID == b1.SessionID && (s.Presence != PresenceOffline || s.Working()) {
			t.Errorf("b1: %+v", s)
		}
	}
	d2, _ := tr.RosterDigest(ctx)
	if _, err := tr.SetActivity(ctx, b2, protocol.ActivityIdle); err != nil { // a heartbeat
		t.Fatal(err)
	}
	if d3, _ := tr.RosterDigest(ctx); d3 != d2 {
		t.Error("the roster digest moved with a heartbeat alone")
	}
	if look(WaitFinished).Satisfied {
		t.Fatal("finished while an offline session is still open")
	}
	if _, err := tr.CheckCondition(ctx, WaitQuery{For: WaitIdle, Participant: "carol"}); !protocol.IsReason(err, protocol.ReasonUnknownRecipient) {
		t.Fatalf("unknown participant: %v", err)
	}
	if err := tr.CheckWait(WaitQuery{For: WaitFinished}); !protocol.IsReason(err, protocol.ReasonMissingFlag) {
		t.Fatalf("no participant: %v", err)
	}
}

// TestIdleSeenAfterTheSessionEnded: a wait for idle that looks only after
// the watched session's turn ended and the session closed moments later
// (its client exits right after its last turn) still holds, when it was
// waiting before the session closed and the session closed idle; a
// session closed mid-turn, or before the wait began, does not make it
// hold, and a wait without Since keeps the open-sessions rule alone.
func TestIdleSeenAfterTheSessionEnded(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	look := func(p string, since time.Time) bool {
		t.Helper()
		res, err := tr.CheckCondition(ctx, WaitQuery{For: WaitIdle, Participant: p, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		return res.Satisfied
	}
	idle := tr.attach("idler", "cli")
	busy := tr.attach("busy", "cli")
	early := tr.attach("early", "cli")
	for _, c := range []Caller{idle, busy, early} {
		if _, err := tr.SetActivity(ctx, c, protocol.ActivityWorking); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.SetActivity(ctx, early, protocol.ActivityIdle); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Detach(ctx, early); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	began := clock
	clock = clock.Add(time.Second)
	if _, err := tr.SetActivity(ctx, idle, protocol.ActivityIdle); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Caller{idle, busy} {
		if _, err := tr.Detach(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(time.Second)
	if !look("idler", began) {
		t.Error("a session that closed idle after the wait began does not satisfy it")
	}
	if look("idler", time.Time{}) {
		t.Error("without Since, a participant with no open session is idle")
	}
	if look("busy", began) {
		t.Error("a session closed mid-turn satisfies idle")
	}
	if look("early", began) {
		t.Error("a session closed idle before the wait began satisfies it")
	}
}

// TestActivityWords: the relative wording status and wait print.
func TestActivityWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		a    *protocol.Activity
		want string
	}{
		{nil, ""},
		{&protocol.Activity{State: "working", Since: protocol.FormatTime(now.Add(-3 * time.Minute))}, "working since 3m ago"},
		{&protocol.Activity{State: "idle", Since: protocol.FormatTime(now.Add(-90*time.Second - 400*time.Millisecond))}, "idle since 1m30s ago"},
		{&protocol.Activity{State: "idle", Since: protocol.FormatTime(now.Add(time.Minute))}, "idle since 0s ago"},
		{&protocol.Activity{State: "idle", Since: "yesterday"}, "idle since yesterday"},
	} {
		if got := ActivityWords(c.a, now); got != c.want {
			t.Errorf("%+v: %q, want %q", c.a, got, c.want)
		}
	}
}
