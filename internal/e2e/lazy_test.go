package e2e

import (
	"context"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// durableRows is DurableRowCount of a workspace's store.
func durableRows(t *testing.T, sb *sandbox, workspaceID string) int64 {
	t.Helper()
	st := sb.openStore(workspaceID)
	ctx, cancel := withTimeout()
	defer cancel()
	n, err := st.DurableRowCount(ctx)
	if err != nil {
		t.Fatalf("count durable rows: %v", err)
	}
	return n
}

// ephemeralSessions lists the sessions of a store's ephemeral area.
func ephemeralSessions(t *testing.T, st storage.Store) []protocol.Session {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	var out []protocol.Session
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		var err error
		out, err = tx.Sessions(storage.Ephemeral, false)
		return err
	}); err != nil {
		t.Fatalf("list ephemeral sessions: %v", err)
	}
	return out
}

func eventTypes(events []protocol.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// checkMaterialisation asserts the event log starts with workspace.materialised
// (reason) and is then exactly the types in rest, all at one timestamp (they
// were written by one transaction), with sequences 1..N.
func checkMaterialisation(t *testing.T, events []protocol.Event, reason string, rest ...string) {
	t.Helper()
	want := append([]string{protocol.EventWorkspaceMaterialised}, rest...)
	got := eventTypes(events)
	if len(got) != len(want) {
		t.Fatalf("expected events %v, saw %v", want, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("expected events %v, saw %v", want, got)
		}
	}
	checkEventLog(t, events)
	if r, _ := events[0].Payload["reason"].(string); r != reason {
		t.Errorf("workspace.materialised: expected reason %q, saw %v", reason, events[0].Payload["reason"])
	}
	for _, e := range events[1:] {
		if e.OccurredAt != events[0].OccurredAt {
			t.Errorf("expected every event of the materialising transaction at %s, saw %s at %s", events[0].OccurredAt, e.Type, e.OccurredAt)
		}
	}
}

// TestLazyMaterialisationLoneSessionLeavesNothing: one session alone leaves
// no durable rows while attached (status says materialised=false) and none
// after it detaches; its ephemeral record is gone too.
func TestLazyMaterialisationLoneSessionLeavesNothing(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	solo := sb.attach(repo, "solo", "cli")
	if solo.Materialised {
		t.Errorf("attach of a lone session: expected materialised=false, saw true")
	}
	if st := sb.status(solo); st.Materialised {
		t.Errorf("status while a lone session is attached: expected materialised=false, saw true")
	}
	if n := durableRows(t, sb, solo.WorkspaceID); n != 0 {
		t.Errorf("while a lone session is attached: expected 0 durable rows, saw %d", n)
	}
	sb.ok(solo.dir, append([]string{"heartbeat"}, solo.creds()...)...)
	sb.ok(solo.dir, append([]string{"detach"}, solo.creds()...)...)
	if n := durableRows(t, sb, solo.WorkspaceID); n != 0 {
		t.Errorf("after the lone session detached: expected 0 durable rows, saw %d", n)
	}
	if eph := ephemeralSessions(t, sb.openStore(solo.WorkspaceID)); len(eph) != 0 {
		t.Errorf("after the lone session detached: expected no ephemeral session left, saw %d", len(eph))
	}
}

// TestLazyMaterialisationSecondSession: the second attached session
// materialises the room in one transaction — before it, no durable rows;
// after it, the log is workspace.materialised (second_live_session) then
// session.opened for both sessions, sequences 1..3 at one timestamp.
func TestLazyMaterialisationSecondSession(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	first := sb.attach(repo, "first", "cli")
	if n := durableRows(t, sb, first.WorkspaceID); n != 0 {
		t.Fatalf("before the second session: expected 0 durable rows, saw %d", n)
	}
	if st := sb.status(first); st.Materialised {
		t.Errorf("status before the second session: expected materialised=false, saw true")
	}
	second := sb.attach(repo, "second", "cli")
	if !second.Materialised {
		t.Errorf("attach of the second session: expected materialised=true, saw false")
	}
	st := sb.openStore(first.WorkspaceID)
	snap := readSnapshot(t, st)
	checkMaterialisation(t, snap.events, "second_live_session", protocol.EventSessionOpened, protocol.EventSessionOpened)
	opened := map[string]bool{}
	for _, e := range snap.events[1:] {
		opened[e.ActorSessionID] = true
	}
	if !opened[first.SessionID] || !opened[second.SessionID] {
		t.Errorf("expected session.opened for %s and %s, saw actors %v", first.SessionID, second.SessionID, opened)
	}
	if eph := ephemeralSessions(t, st); len(eph) != 0 {
		t.Errorf("after materialisation: expected the ephemeral area empty, saw %d sessions", len(eph))
	}
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		ws, err := tx.Workspace()
		if err != nil {
			return err
		}
		if ws == nil || ws.WorkspaceID != first.WorkspaceID {
			t.Errorf("expected the workspace record %s, saw %+v", first.WorkspaceID, ws)
		}
		ss, err := tx.Sessions(storage.Durable, true)
		if err != nil {
			return err
		}
		if len(ss) != 2 {
			t.Errorf("expected 2 open durable sessions, saw %d", len(ss))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s := sb.status(first); !s.Materialised {
		t.Errorf("status after the second session: expected materialised=true, saw false")
	}
}

// TestLazyMaterialisationFirstMessage: a lone session's first message
// materialises the room (reason durable_object) in the same transaction as
// the message: workspace.materialised, session.opened, message.recorded.
func TestLazyMaterialisationFirstMessage(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	solo := sb.attach(repo, "solo", "cli")
	if n := durableRows(t, sb, solo.WorkspaceID); n != 0 {
		t.Fatalf("before the first message: expected 0 durable rows, saw %d", n)
	}
	res := sb.as(solo, "message", "--subject", "to the room", "--body", "anyone?")
	id := recordedID(res.stdout)
	if res.code != 0 || id == "" {
		t.Fatalf("room message from a lone session: expected exit 0 and `recorded message_…`, saw:\n%s", res)
	}
	snap := readSnapshot(t, sb.openStore(solo.WorkspaceID))
	checkMaterialisation(t, snap.events, "durable_object", protocol.EventSessionOpened, protocol.EventMessageRecorded)
	if got, _ := snap.events[2].Payload["messageId"].(string); got != id {
		t.Errorf("message.recorded: expected messageId %s, saw %v", id, snap.events[2].Payload["messageId"])
	}
	if len(snap.messages) != 1 || snap.messages[0].MessageID != id || len(snap.receipts[id]) != 0 {
		t.Errorf("expected one room message %s with no receipts (nobody else is here), saw %d messages, receipts %+v", id, len(snap.messages), snap.receipts[id])
	}
	if st := sb.status(solo); !st.Materialised {
		t.Errorf("status after the first message: expected materialised=true, saw false")
	}
}
