package livepush

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// liveRoom is a room in a plain directory with alice (CLI) and bob, a
// Claude Code session of this process with live push declared proven,
// bound to an inbox socket this test serves.
func liveRoom(t *testing.T) (*core.Room, core.Caller, core.Caller, <-chan string) {
	t.Helper()
	dir, data := t.TempDir(), t.TempDir()
	env := map[string]string{"ACC_DATA_HOME": data, "HOME": t.TempDir()}
	room, err := core.Open(context.Background(), core.OpenOptions{Cwd: dir, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { room.Close() })
	ctx := context.Background()
	a, err := room.Attach(ctx, core.AttachInput{ParticipantID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	declared := protocol.DeclaredCapabilities{}
	declared.Delivery.NextTurn, declared.Delivery.LivePush = true, true
	b, err := room.HookAttach(ctx, core.HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", PID: os.Getpid(),
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged, Capabilities: &declared})
	if err != nil {
		t.Fatal(err)
	}
	sock, got := listen(t, os.Getpid())
	if err := room.RecordLiveBinding(ctx, b.Caller, ClaudeInboxName, endpointFor(t, sock, os.Getpid(), "cc-1")); err != nil {
		t.Fatal(err)
	}
	return room, core.Caller{SessionID: a.SessionID, Generation: a.Generation}, b.Caller, got
}

func actionable(string) string { return router.PolicyActionable }

// TestDeliverOncePerMessage: the same recorded message delivered by
// several sends at once (a retry racing the first) is written to the
// session's channel once; every send reports it offered; the receipt is
// offered.
func TestDeliverOncePerMessage(t *testing.T) {
	room, alice, _, got := liveRoom(t)
	ctx := context.Background()
	res, err := room.Send(ctx, core.SendInput{Caller: alice, To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "port?", Body: "8080 or 9090?"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outcomes := make([][]router.Delivery, 4)
	for i := range outcomes {
		wg.Go(func() { outcomes[i] = deliver(ctx, room, &res.Message, actionable, nil) })
	}
	wg.Wait()
	for i, d := range outcomes {
		if len(d) != 1 || d[0].Outcome != router.OutcomeOffered {
			t.Errorf("send %d: %+v", i, d)
		}
	}
	lines := 0
	for done := false; !done; {
		select {
		case <-got:
			lines++
		case <-time.After(500 * time.Millisecond):
			done = true
		}
	}
	if lines != 1 {
		t.Errorf("the message was written %d times, want once", lines)
	}
	if st, _ := room.ReceiptState(ctx, res.Message.MessageID, "bob"); st != protocol.ReceiptOffered {
		t.Errorf("receipt %s", st)
	}
}

// TestDeliverPolicy: nothing is written for a kind the policy does not
// admit, for a room message, or with the policy off; the receipt stays
// queued and the reason is given.
func TestDeliverPolicy(t *testing.T) {
	room, alice, _, got := liveRoom(t)
	ctx := context.Background()
	send := func(kind string, to []string) *protocol.Message {
		res, err := room.Send(ctx, core.SendInput{Caller: alice, To: to, Kind: kind, Subject: "s", Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Message
	}
	note := send(protocol.KindNote, []string{"bob"})
	if d := deliver(ctx, room, note, actionable, nil); len(d) != 1 || d[0].Outcome != router.OutcomeQueued || d[0].ErrorCode == nil || *d[0].ErrorCode != router.ErrDeliveryDisabled {
		t.Errorf("a note under actionable: %+v", d)
	}
	q := send(protocol.KindQuestion, []string{"bob"})
	if d := deliver(ctx, room, q, func(string) string { return router.PolicyOff }, nil); len(d) != 1 || d[0].ErrorCode == nil || *d[0].ErrorCode != router.ErrDeliveryDisabled {
		t.Errorf("a question with the policy off: %+v", d)
	}
	if d := deliver(ctx, room, send(protocol.KindNote, nil), func(string) string { return router.PolicyAll }, nil); len(d) != 0 {
		t.Errorf("a room message: %+v", d)
	}
	select {
	case line := <-got:
		t.Errorf("something was pushed: %q", line)
	case <-time.After(300 * time.Millisecond):
	}
	for _, m := range []*protocol.Message{note, q} {
		if st, _ := room.ReceiptState(ctx, m.MessageID, "bob"); st != protocol.ReceiptQueued {
			t.Errorf("receipt of %s: %s", m.Kind, st)
		}
	}
}

// elsewhere is the system probe of a machine that is not this one: the
// same process table, but another boot id, so no session attached here
// runs where it looks.
type elsewhere struct{ core.ProcessProbe }

func (elsewhere) Host() protocol.SessionHost {
	h := core.LocalHost()
	h.BootID += "-elsewhere"
	return h
}

// TestDeliverNeverAcrossHosts: bob's session, bound to a socket this test
// serves, seen from a router whose host is not the session's, is never
// pushed to: the send reports queued for its next turn with
// recipient_remote, nothing reaches the socket, the receipt stays queued,
// and status does not call it reachable live. The same send seen from the
// session's own host is pushed, so only the host decided.
func TestDeliverNeverAcrossHosts(t *testing.T) {
	if core.LocalHost().BootID == "" {
		t.Skip("this system has no boot id, so no session's host can be told apart")
	}
	room, alice, bob, got := liveRoom(t)
	ctx := context.Background()
	res, err := room.Send(ctx, core.SendInput{Caller: alice, To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "port?", Body: "8080?"})
	if err != nil {
		t.Fatal(err)
	}
	room.Probe = elsewhere{core.SystemProbe()}
	d := deliver(ctx, room, &res.Message, actionable, nil)
	if len(d) != 1 || d[0].Outcome != router.OutcomeQueued || d[0].Transport != router.TransportNextTurn || d[0].ErrorCode == nil || *d[0].ErrorCode != router.ErrRecipientRemote {
		t.Fatalf("from another host: %+v", d)
	}
	select {
	case line := <-got:
		t.Fatalf("something was pushed across hosts: %q", line)
	case <-time.After(300 * time.Millisecond):
	}
	if st, _ := room.ReceiptState(ctx, res.Message.MessageID, "bob"); st != protocol.ReceiptQueued {
		t.Fatalf("receipt %s, want queued", st)
	}
	reachable := func() (row, binding bool) {
		st, err := room.Status(ctx, core.StatusQuery{LivePolicy: actionable, Sender: &alice})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Participants {
			if p.SessionID == bob.SessionID {
				row = p.Reachable
			}
		}
		for _, b := range st.DeliveryBindings {
			if b.SessionID == bob.SessionID {
				binding = b.Reachable
			}
		}
		return row, binding
	}
	if row, binding := reachable(); row || binding {
		t.Fatalf("status calls a session on another host reachable live: %v, %v", row, binding)
	}

	room.Probe = core.SystemProbe()
	if row, binding := reachable(); !row || !binding {
		t.Fatalf("status on the session's own host: reachable %v, %v", row, binding)
	}
	d = deliver(ctx, room, &res.Message, actionable, nil)
	if len(d) != 1 || d[0].Outcome != router.OutcomeOffered {
		t.Fatalf("on the session's own host: %+v", d)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing reached the socket on the session's own host")
	}
}
