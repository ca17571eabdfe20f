package hook

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// lateWriter takes every byte, but only after delay: a client that drains
// the hook's stdout late, so the write returns after the hook's deadline.
type lateWriter struct {
	delay time.Duration
	bytes.Buffer
}

func (l *lateWriter) Write(p []byte) (int, error) {
	time.Sleep(l.delay)
	return l.Buffer.Write(p)
}

// TestTakenAfterTheDeadlineIsOffered: a mid-turn delivery whose write the
// client takes only after the hook's deadline ran out was still taken, so
// it is recorded offered (transport mid-turn) and the next post-tool hook
// does not print it a second time.
func TestTakenAfterTheDeadlineIsOffered(t *testing.T) {
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
	id := q.Message.MessageID
	w.r.Deadline = 2 * time.Second
	lw := &lateWriter{delay: w.r.Deadline + 500*time.Millisecond}
	res := w.run(lw, []string{"claude", "PostToolUse"}, w.payload("claude", "PostToolUse", "c1"))
	if res.code != 0 || !strings.Contains(lw.String(), "messageId: "+id) {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, lw.String(), res.stderr)
	}
	w.r.Deadline = Deadline
	if st, err := r.ReceiptState(ctx, id, "bob"); err != nil || st != protocol.ReceiptOffered {
		t.Fatalf("receipt %s (%v) after the client took the delivery, want offered; stderr %q", st, err, res.stderr)
	}
	if again := w.hook("claude", "PostToolUse", "c1"); again.stdout != "{}\n" {
		t.Fatalf("printed a second time:\n%s", again.stdout)
	}
}
