package core

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestSameMillisecondMessagesPageByID: with a clock that stands still, every
// message has the same sentAt; pages must still be newest first by the
// documented tie-break (messageId descending), visit every message once, and
// a cursor on a tied message must not skip or repeat its equals.
func TestSameMillisecondMessagesPageByID(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	frozen := time.Date(2026, 9, 4, 9, 0, 0, 123_456_789, time.UTC)
	tr.Now = func() time.Time { return frozen }
	a, b := tr.attach("alice", "cli"), tr.attach("bob", "cli")
	sent := map[string]bool{}
	for i := 0; i < 11; i++ {
		sent[tr.send(a, SendInput{To: []string{"bob"}, Subject: fmt.Sprintf("n%d", i), Body: "b"}).Message.MessageID] = true
	}
	seen := map[string]bool{}
	cursor, prev := "", "~"
	for pages := 0; ; pages++ {
		if pages > 11 {
			t.Fatal("paging does not end")
		}
		page, err := tr.Inbox(context.Background(), InboxQuery{Caller: b, Cursor: cursor, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			id := it.Message.MessageID
			if it.Message.SentAt != "2026-09-04T09:00:00.123Z" {
				t.Fatalf("sentAt %s, want the frozen millisecond", it.Message.SentAt)
			}
			if seen[id] || id >= prev {
				t.Fatalf("message %s out of order or repeated after %s", id, prev)
			}
			seen[id], prev = true, id
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if len(seen) != len(sent) {
		t.Fatalf("paged %d of %d same-millisecond messages", len(seen), len(sent))
	}
}
