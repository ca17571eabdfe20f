package core

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// TestProjectionNamesADamagedMessage: the next-turn context leaves a queued
// message that does not decode out, still carries the good one whole, and
// says so in one damaged: line pointing at acc doctor
// (docs/design.md#damaged-records); Damaged names it by table and key.
func TestProjectionNamesADamagedMessage(t *testing.T) {
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
	var ids []string
	for _, subject := range []string{"good", "bad"} {
		res, err := w.main.Send(ctx, SendInput{Caller: alice, To: []string{"bob"}, Kind: protocol.KindNote, Subject: subject, Body: "body of " + subject})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Message.MessageID)
	}
	db, err := sql.Open("acc-sqlite", "file:"+w.main.Store.(*storage.SQLite).Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE messages SET record = '{"schemaVersion": 3, damaged' WHERE message_id = ?`, ids[1]); err != nil {
		t.Fatal(err)
	}
	p, err := w.main.Project(ctx, bob, ProjectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Offered) != 1 || p.Offered[0] != ids[0] || !strings.Contains(p.Text, "body of good") {
		t.Errorf("the good message should be offered whole: %+v", p)
	}
	if len(p.Damaged) != 1 || p.Damaged[0].Table != "messages" || p.Damaged[0].Key != ids[1] ||
		!strings.Contains(p.Text, "- damaged: 1 stored record(s) could not be read and are not listed (messages "+ids[1]+"); run `acc doctor`") {
		t.Errorf("the damaged message should be named: %+v\n%s", p.Damaged, p.Text)
	}
}
