package core

import (
	"context"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestWaitAnswerClockSkew: an answer recorded while the clock read earlier
// than its question (a clock stepped back), with an older answer to
// another question in between, is still found.
func TestWaitAnswerClockSkew(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return clock }
	old := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "old", Body: "?"}).Message.MessageID
	clock = clock.Add(time.Minute)
	if _, err := tr.Reply(ctx, ReplyInput{Caller: b, MessageID: old, Body: "old answer"}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	q := tr.send(a, SendInput{To: []string{"bob"}, Kind: protocol.KindQuestion, Subject: "new", Body: "?"}).Message.MessageID
	clock = clock.Add(-2 * time.Hour) // the clock steps back before bob answers
	ans, err := tr.Reply(ctx, ReplyInput{Caller: b, MessageID: q, Body: "new answer"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.CheckCondition(ctx, WaitQuery{For: WaitAnswer, MessageID: q})
	if err != nil || !res.Satisfied || len(res.Messages) != 1 || res.Messages[0].MessageID != ans.Message.MessageID {
		t.Fatalf("wait --answer %s: %+v %v", q, res, err)
	}
}
