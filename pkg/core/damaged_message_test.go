package core

import (
	"context"
	"database/sql"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestOneDamagedMessageDoesNotTakeTheHookContextOrStatusDown:
// docs/design.md#damaged-records says one stored record that does not
// decode does not take an inbox down, "acc inbox (and the hook's inbox digest) leave that row out".
// The next-turn context acc-hook gives a client (Project) and acc status
// with a caller still decode every pending or owed row and fail whole with
// store_corrupt: one damaged queued note, or one damaged request the
// caller owes or sent, leaves the recipient's (and the sender's) client
// with no context at all, and `acc status` for them exits 4.
func TestOneDamagedMessageDoesNotTakeTheHookContextOrStatusDown(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	attach := func(p string) Caller {
		res, err := w.main.Attach(ctx, AttachInput{ParticipantID: p})
		if err != nil {
			t.Fatal(err)
		}
		return Caller{SessionID: res.SessionID, Generation: res.Generation}
	}
	alice, bob := attach("alice"), attach("bob")
	send := func(kind, subject string) string {
		res, err := w.main.Send(ctx, SendInput{Caller: alice, To: []string{"bob"}, Kind: kind, Subject: subject, Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Message.MessageID
	}
	send(protocol.KindNote, "good")
	bad := send(protocol.KindRequest, "damaged")
	if _, err := w.main.ReadMessage(ctx, bob, bad); err != nil { // retrieved: bob owes a reply
		t.Fatal(err)
	}
	send(protocol.KindNote, "damaged too")
	db, err := sql.Open("acc-sqlite", "file:"+w.main.Store.(*storage.SQLite).Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE messages SET record = '{"schemaVersion": 3, damaged' WHERE json_valid(record) AND json_extract(record, '$.subject') LIKE 'damaged%'`); err != nil {
		t.Fatal(err)
	}
	if page, err := w.main.Inbox(ctx, InboxQuery{Caller: bob}); err != nil || len(page.Items) != 1 || len(page.Damaged) != 2 {
		t.Fatalf("the inbox (the documented behaviour): %+v %v", page, err)
	}
	for _, c := range []struct {
		who string
		me  Caller
	}{{"bob (recipient)", bob}, {"alice (sender)", alice}} {
		if _, err := w.main.Project(ctx, c.me, ProjectionOptions{}); err != nil {
			t.Errorf("the hook's next-turn context for %s: %v", c.who, err)
		}
		if _, err := w.main.Status(ctx, StatusQuery{Caller: &c.me}); err != nil {
			t.Errorf("acc status for %s: %v", c.who, err)
		}
	}
}
