package core

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestDecisionGroupView checks the read model of docs/protocol.md#decisions on link sets alone.
func TestDecisionGroupView(t *testing.T) {
	t.Parallel()
	rep := func(from string, to ...string) []storage.DecisionLink {
		var out []storage.DecisionLink
		for _, x := range to {
			out = append(out, storage.DecisionLink{From: from, To: x, Action: protocol.DecisionReplace})
		}
		return out
	}
	wd := func(from string, to ...string) []storage.DecisionLink {
		var out []storage.DecisionLink
		for _, x := range to {
			out = append(out, storage.DecisionLink{From: from, To: x, Action: protocol.DecisionWithdraw})
		}
		return out
	}
	join := func(ls ...[]storage.DecisionLink) []storage.DecisionLink { return slices.Concat(ls...) }
	type want struct {
		state   string
		head    bool
		heads   int
		current string // "" = null
	}
	cases := []struct {
		name  string
		links []storage.DecisionLink
		group string
		want  map[string]want
	}{
		{"a lone decision is current", nil, "m_a", map[string]want{
			"m_a": {DecisionCurrent, true, 1, "m_a"}}},
		{"a supersede chain", join(rep("m_b", "m_a"), rep("m_c", "m_b")), "m_a", map[string]want{
			"m_a": {DecisionSuperseded, false, 1, "m_c"},
			"m_b": {DecisionSuperseded, false, 1, "m_c"},
			"m_c": {DecisionCurrent, true, 1, "m_c"}}},
		{"a withdrawal head withdraws the whole group", join(rep("m_b", "m_a"), wd("m_w", "m_b")), "m_a", map[string]want{
			"m_a": {DecisionWithdrawn, false, 1, "m_w"},
			"m_b": {DecisionWithdrawn, false, 1, "m_w"},
			"m_w": {DecisionWithdrawn, true, 1, "m_w"}}},
		{"two competing heads conflict", join(rep("m_b", "m_a"), rep("m_c", "m_a")), "m_a", map[string]want{
			"m_a": {DecisionSuperseded, false, 2, ""},
			"m_b": {DecisionCurrent, true, 2, ""},
			"m_c": {DecisionCurrent, true, 2, ""}}},
		{"a change linking every head collapses them", join(rep("m_b", "m_a"), rep("m_c", "m_a"), rep("m_d", "m_b", "m_c")), "m_a", map[string]want{
			"m_a": {DecisionSuperseded, false, 1, "m_d"},
			"m_b": {DecisionSuperseded, false, 1, "m_d"},
			"m_c": {DecisionSuperseded, false, 1, "m_d"},
			"m_d": {DecisionCurrent, true, 1, "m_d"}}},
		{"a withdrawal competing with a successor leaves the group decided", join(rep("m_b", "m_a"), wd("m_w", "m_a")), "m_a", map[string]want{
			"m_a": {DecisionSuperseded, false, 2, ""},
			"m_b": {DecisionCurrent, true, 2, ""},
			"m_w": {DecisionWithdrawn, true, 2, ""}}},
		{"two roots joined: the group is the smaller root", rep("m_c", "m_z", "m_b"), "m_b", map[string]want{
			"m_b": {DecisionSuperseded, false, 1, "m_c"},
			"m_z": {DecisionSuperseded, false, 1, "m_c"},
			"m_c": {DecisionCurrent, true, 1, "m_c"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for member := range c.want {
				got := DecisionGroupView(member, c.links)
				if len(got) != len(c.want) {
					t.Fatalf("from %s: %d members, want %d", member, len(got), len(c.want))
				}
				for id, w := range c.want {
					st := got[id]
					cur := ""
					if st.CurrentMessageID != nil {
						cur = *st.CurrentMessageID
					}
					if st.State != w.state || st.IsHead != w.head || st.HeadCount != w.heads || cur != w.current ||
						st.Conflicted != (w.heads != 1) || st.GroupID != c.group {
						t.Errorf("from %s, %s = %+v (current %q), want %+v in group %s", member, id, *st, cur, w, c.group)
					}
				}
			}
		})
	}
}

func (tr *testRoom) history(q SyncQuery) *HistoryPage {
	tr.t.Helper()
	q.Scope = SyncScopeHistory
	res, err := tr.Sync(context.Background(), q)
	if err != nil {
		tr.t.Fatalf("history %+v: %v", q, err)
	}
	return res.History
}

func (tr *testRoom) historyMessage(id string) *HistoryMessage {
	tr.t.Helper()
	res, err := tr.Sync(context.Background(), SyncQuery{Scope: SyncScopeHistory, MessageID: id})
	if err != nil {
		tr.t.Fatalf("history --message %s: %v", id, err)
	}
	return res.Message
}

func (tr *testRoom) heads() []string {
	tr.t.Helper()
	var ids []string
	for _, s := range tr.history(SyncQuery{Kind: protocol.KindDecision, Current: true}).Items {
		ids = append(ids, s.MessageID)
	}
	slices.Sort(ids)
	return ids
}

func decide(to []string, subject string) SendInput {
	return SendInput{To: to, Kind: protocol.KindDecision, Subject: subject, Body: subject}
}

func TestDecisionChainsCompeteAndCollapse(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, b, c := tr.attach("alice", "cli"), tr.attach("bob", "cli"), tr.attach("carol", "cli")
	d1 := tr.send(a, decide([]string{"bob"}, "use offered")).Message.MessageID
	if got := tr.heads(); !reflect.DeepEqual(got, []string{d1}) {
		t.Fatalf("heads %v, want [%s]", got, d1)
	}
	// Two changes of the same decision compete.
	in := decide(nil, "use delivered")
	in.Supersedes = []string{d1}
	d2 := tr.send(b, in).Message
	in = decide(nil, "use accepted")
	in.Supersedes = []string{d1}
	d3 := tr.send(c, in).Message.MessageID
	if d2.DecisionChange == nil || d2.DecisionChange.Action != protocol.DecisionReplace || !reflect.DeepEqual(d2.DecisionChange.MessageIDs, []string{d1}) {
		t.Fatalf("stored decision change %+v", d2.DecisionChange)
	}
	want := []string{d2.MessageID, d3}
	slices.Sort(want)
	if got := tr.heads(); !reflect.DeepEqual(got, want) {
		t.Fatalf("--current lists %v, want both heads %v", got, want)
	}
	for _, s := range tr.history(SyncQuery{Kind: protocol.KindDecision, Current: true}).Items {
		st := s.DecisionStatus
		if st == nil || !st.IsHead || !st.Conflicted || st.HeadCount != 2 || st.CurrentMessageID != nil || st.State != DecisionCurrent || st.GroupID != d1 {
			t.Fatalf("a competing head's status %+v", st)
		}
	}
	if st := tr.historyMessage(d1).Items[0].DecisionStatus; st.State != DecisionSuperseded || st.IsHead || st.HeadCount != 2 {
		t.Fatalf("the superseded root's status %+v", st)
	}
	// A change naming every head collapses the conflict.
	in = decide(nil, "settled: offered")
	in.Supersedes = []string{d3, d2.MessageID} // unsorted on purpose
	d4 := tr.send(a, in).Message
	if !reflect.DeepEqual(d4.DecisionChange.MessageIDs, want) {
		t.Fatalf("targets stored %v, want sorted %v", d4.DecisionChange.MessageIDs, want)
	}
	if got := tr.heads(); !reflect.DeepEqual(got, []string{d4.MessageID}) {
		t.Fatalf("after the collapse --current lists %v", got)
	}
	for _, id := range []string{d1, d2.MessageID, d3, d4.MessageID} {
		st := tr.historyMessage(id).Items[0].DecisionStatus
		if st.Conflicted || st.HeadCount != 1 || st.CurrentMessageID == nil || *st.CurrentMessageID != d4.MessageID || st.GroupID != d1 {
			t.Fatalf("%s after the collapse: %+v", id, st)
		}
	}
	// Withdrawing the only head withdraws the whole group.
	in = decide(nil, "never mind")
	in.Withdraws = []string{d4.MessageID}
	w := tr.send(b, in).Message
	if w.DecisionChange.Action != protocol.DecisionWithdraw {
		t.Fatalf("withdrawal stored as %+v", w.DecisionChange)
	}
	for _, id := range []string{d1, d2.MessageID, d3, d4.MessageID, w.MessageID} {
		if st := tr.historyMessage(id).Items[0].DecisionStatus; st.State != DecisionWithdrawn {
			t.Fatalf("%s after the withdrawal: %+v", id, st)
		}
	}
	cur := tr.history(SyncQuery{Kind: protocol.KindDecision, Current: true}).Items
	if len(cur) != 1 || cur[0].MessageID != w.MessageID || cur[0].DecisionStatus.State != DecisionWithdrawn {
		t.Fatalf("--current after the withdrawal: %+v", cur)
	}
	// Without --current every decision is listed, each with its status.
	all := tr.history(SyncQuery{Kind: protocol.KindDecision}).Items
	if len(all) != 5 {
		t.Fatalf("history --type decision lists %d, want 5", len(all))
	}
	// A separate decision is its own group.
	lone := tr.send(c, decide(nil, "tabs")).Message.MessageID
	if st := tr.historyMessage(lone).Items[0].DecisionStatus; st.GroupID != lone || st.State != DecisionCurrent || st.HeadCount != 1 {
		t.Fatalf("a lone decision's status %+v", st)
	}
	if got := tr.heads(); len(got) != 2 {
		t.Fatalf("two groups have two heads, got %v", got)
	}
}

func TestDecisionChangeInheritsRecipients(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a, _, _ := tr.attach("alice", "cli"), tr.attach("bob", "cli"), tr.attach("carol", "cli")
	d := tr.attach("dave", "cli")
	tr.attach("erin", "cli")
	d1 := tr.send(a, decide([]string{"bob", "carol"}, "v1")).Message.MessageID
	in := decide(nil, "v2")
	in.Supersedes = []string{d1}
	res := tr.send(d, in)
	if want := []string{"alice", "bob", "carol"}; !reflect.DeepEqual(res.Message.ToParticipantIDs, want) || !reflect.DeepEqual(res.Recipients, want) {
		t.Fatalf("inherited recipients %v / %v, want %v", res.Message.ToParticipantIDs, res.Recipients, want)
	}
	// Explicit recipients join the inherited ones; the author never
	// addresses itself by inheritance.
	in = decide([]string{"erin"}, "v3")
	in.Supersedes = []string{res.Message.MessageID}
	in.Obligation = protocol.ObligationAcknowledge
	res = tr.send(a, in)
	if want := []string{"bob", "carol", "dave", "erin"}; !reflect.DeepEqual(res.Message.ToParticipantIDs, want) {
		t.Fatalf("recipients %v, want %v", res.Message.ToParticipantIDs, want)
	}
	// Idempotency compares after inheritance: the same key and input
	// return the first change.
	in = decide(nil, "v4")
	in.Withdraws = []string{res.Message.MessageID}
	in.ClientMessageID = "client_change"
	first := tr.send(d, in)
	before := tr.fingerprint()
	again := tr.send(d, in)
	if again.Created || again.Message.MessageID != first.Message.MessageID {
		t.Fatalf("retry of a change created %v id %s, want %s", again.Created, again.Message.MessageID, first.Message.MessageID)
	}
	in.Withdraws = []string{d1}
	_, err := tr.Send(context.Background(), withCaller(in, d))
	wantReason(t, err, protocol.ReasonClientMessageIDConflict, protocol.ExitConflict)
	if tr.fingerprint() != before {
		t.Fatal("a retry or a refused change changed the store")
	}
}

func withCaller(in SendInput, c Caller) SendInput { in.Caller = c; return in }

func TestDecisionChangeWithNothingInheritedIsARoomDecision(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	a := tr.attach("alice", "cli")
	// Alone: a room decision reaches nobody, so a change inherits nobody.
	d1 := tr.send(a, decide(nil, "v1")).Message.MessageID
	in := decide(nil, "v2")
	in.Supersedes = []string{d1}
	in.Obligation = protocol.ObligationAcknowledge
	before := tr.fingerprint()
	_, err := tr.Send(context.Background(), withCaller(in, a))
	wantReason(t, err, protocol.ReasonInvalidInput, protocol.ExitData)
	if tr.fingerprint() != before {
		t.Fatal("a refused room change changed the store")
	}
	tr.attach("bob", "cli")
	in.Obligation = ""
	res := tr.send(a, in)
	if !res.Message.IsRoom() || !reflect.DeepEqual(res.Recipients, []string{"bob"}) || res.Message.Obligation != protocol.ObligationNone {
		t.Fatalf("a change inheriting nobody must be a room decision for the open sessions: %+v %v", res.Message, res.Recipients)
	}
}

func TestReplacedDecisionsLeaveInboxAndAttentionButStayReadable(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	in := decide([]string{"bob"}, "v1")
	in.Obligation = protocol.ObligationAcknowledge
	d1 := tr.send(a, in).Message.MessageID
	page, err := tr.Inbox(ctx, InboxQuery{Caller: b})
	if err != nil || len(page.Items) != 1 || page.Items[0].Message.DecisionStatus == nil || page.Items[0].Message.DecisionStatus.State != DecisionCurrent {
		t.Fatalf("bob's inbox before the change: %+v %v", page, err)
	}
	attention := func(c Caller) []string {
		var out []string
		err := tr.Store.View(ctx, func(tx storage.ReadTx) error {
			me, _, err := findSession(tx, c.SessionID)
			if err != nil {
				return err
			}
			items, err := tr.Attention(tx, me)
			for _, it := range items {
				out = append(out, it.Kind+":"+it.SourceID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Later, nobody is online any more: alice's unacknowledged decision
	// makes bob "unavailable" to her.
	base := time.Now()
	tr.Now = func() time.Time { return base.Add(5 * time.Minute) }
	if got := attention(b); !slices.Contains(got, AttentionAcknowledgementRequired+":"+d1) {
		t.Fatalf("bob's attention before the change: %v", got)
	}
	if got := attention(a); !slices.Contains(got, AttentionRecipientUnavailable+":"+d1) {
		t.Fatalf("alice's attention before the change: %v", got)
	}
	in = decide(nil, "v2")
	in.Supersedes = []string{d1}
	d2 := tr.send(a, in).Message.MessageID
	page, err = tr.Inbox(ctx, InboxQuery{Caller: b})
	if err != nil || len(page.Items) != 1 || page.Items[0].Message.MessageID != d2 {
		t.Fatalf("bob's inbox after the change must hold only the head %s: %+v %v", d2, page, err)
	}
	for _, c := range []Caller{a, b} {
		for _, item := range attention(c) {
			if strings.HasSuffix(item, d1) {
				t.Fatalf("a replaced decision is still in attention: %s", item)
			}
		}
	}
	// The exact read still returns it, with its status.
	items, err := tr.ReadMessage(ctx, b, d1)
	if err != nil {
		t.Fatalf("exact read of a replaced decision: %v", err)
	}
	st := items[0].Message.DecisionStatus
	if st == nil || st.State != DecisionSuperseded || st.IsHead || st.CurrentMessageID == nil || *st.CurrentMessageID != d2 {
		t.Fatalf("exact read status %+v", st)
	}
	raw, _ := protocol.MarshalIndent(items)
	if !strings.Contains(string(raw), `"decisionStatus": {`) || !strings.Contains(string(raw), `"body": "v1"`) {
		t.Fatalf("the exact read must carry the complete message with its decisionStatus:\n%s", raw)
	}
	// A note's exact read carries no decisionStatus.
	n := tr.send(a, SendInput{To: []string{"bob"}, Subject: "n", Body: "b"}).Message.MessageID
	items, err = tr.ReadMessage(ctx, b, n)
	if err != nil || items[0].Message.DecisionStatus != nil {
		t.Fatalf("a note's exact read: %+v %v", items, err)
	}
	raw, _ = protocol.MarshalIndent(items)
	if strings.Contains(string(raw), "decisionStatus") {
		t.Fatal("a note carries decisionStatus")
	}
}

func TestDecisionChangeRefusals(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a := tr.attach("alice", "cli")
	tr.attach("bob", "cli")
	d1 := tr.send(a, decide([]string{"bob"}, "v1")).Message.MessageID
	note := tr.send(a, SendInput{To: []string{"bob"}, Subject: "n", Body: "b"}).Message.MessageID
	many := make([]string, 17)
	for i := range many {
		many[i] = fmt.Sprintf("message_%02d", i)
	}
	before := tr.fingerprint()
	for _, c := range []struct {
		name   string
		in     SendInput
		reason string
		code   protocol.ExitCode
		text   string
	}{
		{"both lists", SendInput{Kind: protocol.KindDecision, Supersedes: []string{d1}, Withdraws: []string{d1}},
			protocol.ReasonDecisionChangeUsage, protocol.ExitUsage, "never both"},
		{"not a decision", SendInput{Kind: protocol.KindNote, Supersedes: []string{d1}},
			protocol.ReasonDecisionChangeUsage, protocol.ExitUsage, "add {field kind=decision}"},
		{"a question", SendInput{Kind: protocol.KindQuestion, To: []string{"bob"}, Withdraws: []string{d1}},
			protocol.ReasonDecisionChangeUsage, protocol.ExitUsage, "only decisions"},
		{"17 targets", SendInput{Kind: protocol.KindDecision, Supersedes: many},
			protocol.ReasonDecisionTargets, protocol.ExitData, "at most 16"},
		{"a target twice", SendInput{Kind: protocol.KindDecision, Supersedes: []string{d1, d1}},
			protocol.ReasonDecisionTargets, protocol.ExitData, "twice"},
		{"a malformed id", SendInput{Kind: protocol.KindDecision, Withdraws: []string{"not an id"}},
			protocol.ReasonDecisionTargets, protocol.ExitData, "is not a message id"},
		{"an unknown decision", SendInput{Kind: protocol.KindDecision, Supersedes: []string{d1, "message_unknown"}},
			protocol.ReasonDecisionTargets, protocol.ExitData, "a decision change must reference existing decisions in this workspace"},
		{"a note as target", SendInput{Kind: protocol.KindDecision, Withdraws: []string{note}},
			protocol.ReasonDecisionTargets, protocol.ExitData, "is a note"},
	} {
		c.in.Caller, c.in.Subject, c.in.Body = a, "s", "b"
		_, err := tr.Send(ctx, c.in)
		wantReason(t, err, c.reason, c.code)
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: message %q does not say %q", c.name, err, c.text)
		}
	}
	// Exactly 16 distinct targets are the limit, not a refusal of shape:
	// these do not exist, so the refusal is about existence.
	_, err := tr.Send(ctx, SendInput{Caller: a, Kind: protocol.KindDecision, Subject: "s", Body: "b", Supersedes: many[:16]})
	wantReason(t, err, protocol.ReasonDecisionTargets, protocol.ExitData)
	if !strings.Contains(err.Error(), "must reference existing decisions") {
		t.Fatalf("16 unknown targets: %v", err)
	}
	if tr.fingerprint() != before {
		t.Fatal("a refused decision change changed the store")
	}
}
