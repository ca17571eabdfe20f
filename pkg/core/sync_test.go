package core

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

func (tr *testRoom) sync(q SyncQuery) *SyncDelta {
	tr.t.Helper()
	res, err := tr.Sync(context.Background(), q)
	if err != nil {
		tr.t.Fatalf("sync %+v: %v", q, err)
	}
	return res.Delta
}

func TestSyncDeltaCursorSemantics(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a := tr.attach("alice", "cli")
	tr.attach("bob", "cli")
	for i := 0; i < 5; i++ {
		tr.send(a, SendInput{To: []string{"bob"}, Subject: fmt.Sprintf("n%d", i), Body: "b"})
	}
	all := tr.events()
	d := tr.sync(SyncQuery{})
	if d.Scope != SyncScopeDelta || len(d.Events) != len(all) || d.Cursor != all[len(all)-1].Sequence {
		t.Fatalf("delta from the start: %d events, cursor %s; want %d, %s", len(d.Events), d.Cursor, len(all), all[len(all)-1].Sequence)
	}
	// Strictly after the cursor, at most limit, cursor = the last returned.
	d = tr.sync(SyncQuery{Cursor: all[2].Sequence, Limit: 2})
	if len(d.Events) != 2 || d.Events[0].Sequence != all[3].Sequence || d.Events[1].Sequence != all[4].Sequence || d.Cursor != all[4].Sequence {
		t.Fatalf("after %s limit 2: %v cursor %s", all[2].Sequence, seqs(d.Events), d.Cursor)
	}
	// Nothing new: the cursor comes back unchanged.
	last := all[len(all)-1].Sequence
	d = tr.sync(SyncQuery{Cursor: last})
	if len(d.Events) != 0 || d.Cursor != last {
		t.Fatalf("caught up: %v cursor %s, want none and %s", seqs(d.Events), d.Cursor, last)
	}
	// A cursor past the end was never returned by this room (a store moved
	// aside and recreated, another room's cursor): refused, not "nothing new".
	far := protocol.FormatSequence(9999)
	_, farErr := tr.Sync(context.Background(), SyncQuery{Cursor: far})
	wantReason(t, farErr, protocol.ReasonInvalidCursor, protocol.ExitUsage)
	// An empty room: the cursor is the start.
	if d := newTestRoom(t).sync(SyncQuery{}); d.Cursor != "0000000000000000" || len(d.Events) != 0 || !d.Solo {
		t.Fatalf("an empty room's delta: %+v", d)
	}
	before := tr.fingerprint()
	ctx := context.Background()
	for _, c := range []struct {
		q      SyncQuery
		reason string
	}{
		{SyncQuery{Cursor: "12"}, protocol.ReasonInvalidCursor},
		{SyncQuery{Cursor: "message_x"}, protocol.ReasonInvalidCursor},
		{SyncQuery{Scope: SyncScopeFull, Cursor: "000000000000000a"}, protocol.ReasonInvalidCursor},
		{SyncQuery{Limit: 501}, protocol.ReasonInvalidLimit},
		{SyncQuery{Limit: -1}, protocol.ReasonInvalidLimit},
		{SyncQuery{Kind: protocol.KindDecision}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeFull, Current: true}, protocol.ReasonSyncUsage},
		{SyncQuery{MessageID: "message_x"}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: "everything"}, protocol.ReasonSyncUsage},
	} {
		_, err := tr.Sync(ctx, c.q)
		wantReason(t, err, c.reason, protocol.ExitUsage)
	}
	_, err := tr.Sync(ctx, SyncQuery{Cursor: "12"})
	if !strings.Contains(err.Error(), "a cursor is the 16-digit sequence a previous sync returned") {
		t.Fatalf("cursor refusal: %v", err)
	}
	stale := Caller{SessionID: a.SessionID, Generation: "generation_stale"}
	_, err = tr.Sync(ctx, SyncQuery{Caller: &stale})
	wantReason(t, err, protocol.ReasonStaleGeneration, protocol.ExitConflict)
	if tr.fingerprint() != before {
		t.Fatal("sync changed the store")
	}
}

func seqs(evs []protocol.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Sequence)
	}
	return out
}

func TestSyncSoloRosterAndAttention(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a := tr.attach("alice", "cli")
	if d := tr.sync(SyncQuery{Caller: &a}); !d.Solo || len(d.Roster) != 1 || d.Roster[0].SessionID != a.SessionID || d.Roster[0].Presence != PresenceOnline {
		t.Fatalf("a lone session must see itself and be solo: %+v", d)
	}
	if d := tr.sync(SyncQuery{}); !d.Solo {
		t.Fatal("a public reader of a one-session room must see it solo")
	}
	b := tr.attach("bob", "claude")
	q := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "b"}).Message.MessageID
	d := tr.sync(SyncQuery{Caller: &b})
	if d.Solo || len(d.Roster) != 2 {
		t.Fatalf("two sessions are not solo: %+v", d)
	}
	if len(d.Attention) != 1 || d.Attention[0].Kind != AttentionReplyRequired || d.Attention[0].SourceID != q {
		t.Fatalf("bob's attention %+v", d.Attention)
	}
	if d := tr.sync(SyncQuery{}); len(d.Attention) != 0 || d.Solo {
		t.Fatalf("a public sync has no personal attention and is not solo with two sessions: %+v", d)
	}
	// Sessions attached in the same millisecond have no fixed order: find bob.
	var row *RosterRow
	for _, r := range tr.sync(SyncQuery{}).Roster {
		if r.SessionID == b.SessionID {
			row = &r
		}
	}
	if row == nil || row.ParticipantID != "bob" || row.Harness != "claude" || row.Presence != PresenceOnline {
		t.Fatalf("roster row %+v", row)
	}
	// An offline session leaves the roster.
	base := time.Now()
	tr.Now = func() time.Time { return base.Add(2 * time.Hour) }
	if d := tr.sync(SyncQuery{}); len(d.Roster) != 0 {
		t.Fatalf("offline sessions in the roster: %+v", d.Roster)
	}
}

// TestSyncNeverShowsAGeneration fills a room with every kind of record and
// event that knows a generation, and checks that no sync output carries one.
func TestSyncNeverShowsAGeneration(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	q := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "b"}).Message.MessageID
	if _, err := tr.Reply(ctx, ReplyInput{Caller: b, MessageID: q, Body: "a"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claim := &protocol.Claim{SchemaVersion: protocol.SchemaVersion, ClaimID: protocol.NewID(protocol.KindClaim), WorkspaceID: tr.WS.ID,
		OwnerSessionID: a.SessionID, Resource: "file:src/a.go", Mode: protocol.ClaimExclusive, Enforcement: protocol.EnforcementAdvisory,
		Reason: "unspecified", AcquiredAt: protocol.FormatTime(now), ExpiresAt: protocol.FormatTime(now.Add(time.Hour)), Generation: a.Generation}
	err := tr.Store.Update(ctx, func(tx storage.Tx) error {
		if err := tx.PutClaim(claim); err != nil {
			return err
		}
		// Events whose payloads name live generations, as a forced release
		// and a live offer record them.
		if err := tx.AppendEvent(newEvent(protocol.FormatTime(now), b.SessionID, protocol.EventClaimForceReleased,
			map[string]any{"claimId": claim.ClaimID, "authority": "human", "reason": "r", "replacedGeneration": a.Generation})); err != nil {
			return err
		}
		return tx.AppendEvent(newEvent(protocol.FormatTime(now), a.SessionID, protocol.EventMessageOfferSucceeded,
			map[string]any{"messageId": q, "recipientParticipantId": "bob", "targetSessionId": b.SessionID, "targetGeneration": b.Generation}))
	})
	if err != nil {
		t.Fatal(err)
	}
	// A reattached session: session.opened names the replaced generation.
	tr.Probe = mapProbe{}
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "carol", PID: 777})
	if err != nil {
		t.Fatal(err)
	}
	old := res.Generation
	tr.Probe = mapProbe{777: {Exists: false}}
	res, err = tr.Attach(ctx, AttachInput{ParticipantID: "carol", SessionID: res.SessionID, Generation: old})
	if err != nil || res.Replaced == nil {
		t.Fatalf("reattach: %+v %v", res, err)
	}
	secrets := []string{a.Generation, b.Generation, old, res.Generation}
	var outputs []any
	for _, q := range []SyncQuery{{}, {Scope: SyncScopeFull}, {Caller: &a}, {Caller: &b, Scope: SyncScopeFull},
		{Scope: SyncScopeHistory}, {Scope: SyncScopeHistory, MessageID: q}} {
		r, err := tr.Sync(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, r.Data())
	}
	for i, o := range outputs {
		raw, err := protocol.MarshalIndent(o)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if generationKey.MatchString(text) {
			t.Errorf("output %d has a generation field:\n%s", i, text)
		}
		for _, g := range secrets {
			if strings.Contains(text, g) {
				t.Errorf("output %d carries the generation %s", i, g)
			}
		}
	}
	full := outputs[1].(*SyncDelta).Snapshot
	if full == nil || len(full.Sessions) != 3 || len(full.Claims) != 1 || len(full.Messages) != 2 || len(full.Receipts) != 2 || full.Workspace == nil || len(full.Participants) != 3 {
		t.Fatalf("the snapshot is incomplete: %+v", full)
	}
	if m0, m1 := full.Messages[0], full.Messages[1]; m0.SentAt+m0.MessageID > m1.SentAt+m1.MessageID {
		t.Fatal("snapshot messages are not oldest first")
	}
}

// generationKey matches any JSON key that names a generation.
var generationKey = regexp.MustCompile(`(?i)"[a-z]*generation"\s*:`)

func TestHistoryPagesVisitEveryMessageOnceWithinTheBudget(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	long := strings.Repeat("é", 490)
	sent := map[string]string{}
	for i := 0; i < 60; i++ {
		in := SendInput{To: []string{"bob"}, Subject: fmt.Sprintf("%d %s", i, long), Body: "b"}
		switch i % 3 {
		case 1:
			in.Kind = protocol.KindQuestion
		case 2:
			in.To = nil // a room note
		}
		res := tr.send(a, in)
		sent[res.Message.MessageID] = res.Message.Kind
	}
	// A reply from bob, and a session that joins afterwards: history still
	// shows it everything.
	for id, kind := range sent {
		if kind == protocol.KindQuestion {
			r, err := tr.Reply(context.Background(), ReplyInput{Caller: b, MessageID: id, Body: "answer"})
			if err != nil {
				t.Fatal(err)
			}
			sent[r.Message.MessageID] = r.Message.Kind
			break
		}
	}
	tr.attach("late", "cli")
	before := tr.fingerprint()
	walk := func(kind string, limit int) map[string]bool {
		seen := map[string]bool{}
		cursor, prev := "", "~"
		pages := 0
		for {
			page := tr.history(SyncQuery{Kind: kind, Cursor: cursor, Limit: limit})
			pages++
			raw, _ := protocol.MarshalIndent(page)
			if len(raw) > PageBudgetBytes {
				t.Fatalf("history page %d is %d bytes, budget %d", pages, len(raw), PageBudgetBytes)
			}
			if page.Scope != SyncScopeHistory || page.View != HistoryViewSummary {
				t.Fatalf("page metadata %s/%s", page.Scope, page.View)
			}
			for _, s := range page.Items {
				if seen[s.MessageID] {
					t.Fatalf("%s listed twice", s.MessageID)
				}
				if kind != "" && s.Kind != kind {
					t.Fatalf("--type %s listed a %s", kind, s.Kind)
				}
				key := s.SentAt + s.MessageID
				if key > prev {
					t.Fatalf("not newest first at %s", s.MessageID)
				}
				prev = key
				seen[s.MessageID] = true
			}
			if page.NextCursor == nil {
				return seen
			}
			if *page.NextCursor != page.Items[len(page.Items)-1].MessageID {
				t.Fatal("nextCursor is not the last item")
			}
			cursor = *page.NextCursor
		}
	}
	seen := walk("", MaxPageLimit)
	if len(seen) != len(sent) {
		t.Fatalf("history visited %d of %d messages", len(seen), len(sent))
	}
	if first := tr.history(SyncQuery{Limit: MaxPageLimit}); len(first.Items) >= len(sent) || first.NextCursor == nil {
		t.Fatal("61 long summaries fit one page: the byte budget was not applied")
	}
	if got := walk("", 7); len(got) != len(sent) {
		t.Fatalf("pages of 7 visited %d of %d", len(got), len(sent))
	}
	questions := 0
	for _, k := range sent {
		if k == protocol.KindQuestion {
			questions++
		}
	}
	if got := walk(protocol.KindQuestion, 3); len(got) != questions {
		t.Fatalf("--type question visited %d of %d", len(got), questions)
	}
	// A cursor must be a message of the filtered list.
	var note string
	for id, k := range sent {
		if k == protocol.KindNote {
			note = id
			break
		}
	}
	ctx := context.Background()
	for _, q := range []SyncQuery{
		{Scope: SyncScopeHistory, Kind: protocol.KindQuestion, Cursor: note},
		{Scope: SyncScopeHistory, Cursor: "message_AAAAAAAAAAAAAAAAAAAAAA"},
		{Scope: SyncScopeHistory, Cursor: "0000000000000001x"},
		{Scope: SyncScopeHistory, Kind: protocol.KindDecision, Current: true, Cursor: note},
	} {
		_, err := tr.Sync(ctx, q)
		wantReason(t, err, protocol.ReasonInvalidCursor, protocol.ExitUsage)
	}
	for _, c := range []struct {
		q      SyncQuery
		reason string
	}{
		{SyncQuery{Scope: SyncScopeHistory, Limit: 501}, protocol.ReasonInvalidLimit},
		{SyncQuery{Scope: SyncScopeHistory, Limit: -1}, protocol.ReasonInvalidLimit},
		{SyncQuery{Scope: SyncScopeHistory, Kind: "memo"}, protocol.ReasonInvalidFlagValue},
		{SyncQuery{Scope: SyncScopeHistory, Current: true}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeHistory, Kind: protocol.KindNote, Current: true}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeHistory, MessageID: note, Kind: protocol.KindNote}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeHistory, MessageID: note, Cursor: note}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeHistory, MessageID: note, Limit: 3}, protocol.ReasonSyncUsage},
		{SyncQuery{Scope: SyncScopeHistory, MessageID: note, Current: true}, protocol.ReasonSyncUsage},
	} {
		_, err := tr.Sync(ctx, c.q)
		wantReason(t, err, c.reason, protocol.ExitUsage)
	}
	_, err := tr.Sync(ctx, SyncQuery{Scope: SyncScopeHistory, MessageID: "message_AAAAAAAAAAAAAAAAAAAAAA"})
	wantReason(t, err, protocol.ReasonUnknownMessage, protocol.ExitData)
	if tr.fingerprint() != before {
		t.Fatal("reading history changed the store: history must never move a receipt")
	}
}

func TestHistoryExactReadShowsEveryReceipt(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b, c := tr.attach("alice", "cli"), tr.attach("bob", "cli"), tr.attach("carol", "cli")
	q := tr.send(a, SendInput{To: []string{"carol", "bob"}, Kind: protocol.KindQuestion, Subject: "q", Body: "which?"}).Message.MessageID
	if _, err := tr.ReadMessage(ctx, b, q); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reply(ctx, ReplyInput{Caller: c, MessageID: q, Body: "this"}); err != nil {
		t.Fatal(err)
	}
	before := tr.fingerprint()
	h := tr.historyMessage(q)
	if h.Scope != SyncScopeHistory || h.View != HistoryViewMessage || len(h.Items) != 1 || h.Items[0].Body != "which?" || h.Items[0].DecisionStatus != nil {
		t.Fatalf("exact history %+v", h)
	}
	if len(h.Receipts) != 2 || h.Receipts[0].RecipientParticipantID != "bob" || h.Receipts[0].State != protocol.ReceiptRetrieved ||
		h.Receipts[1].RecipientParticipantID != "carol" || h.Receipts[1].State != protocol.ReceiptAcknowledged || h.Receipts[1].UpdatedAt == "" {
		t.Fatalf("receipts %+v", h.Receipts)
	}
	// The same for a room note read by someone who was not there.
	tr.attach("late", "cli")
	n := tr.send(a, SendInput{Subject: "room", Body: "all"}).Message.MessageID
	if h := tr.historyMessage(n); len(h.Receipts) != 3 {
		t.Fatalf("room note receipts %+v", h.Receipts)
	}
	raw, _ := protocol.MarshalIndent(tr.historyMessage(q))
	var shape struct {
		Receipts []map[string]any `json:"receipts"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil || len(shape.Receipts) != 2 || len(shape.Receipts[0]) != 3 {
		t.Fatalf("receipts must be {recipientParticipantId, state, updatedAt}: %s", raw)
	}
	before = tr.fingerprint()
	tr.historyMessage(q)
	tr.historyMessage(n)
	if tr.fingerprint() != before {
		t.Fatal("an exact history read changed the store")
	}
}
