package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// TestStatusBoundsAttention: a participant owing 1,000 replies gets from
// acc status the 20 most pressing attention items and one line counting
// the other 980 with the commands that show them, not 1,000 lines; --json
// still lists every item.
func TestStatusBoundsAttention(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	me := sb.attach(repo, "me", "cli")
	asker := sb.attach(repo, "asker", "cli")
	r, err := core.Open(context.Background(), core.OpenOptions{Cwd: repo, Getenv: sb.getenv})
	if err != nil {
		t.Fatal(err)
	}
	const owed = 1000
	for i := range owed {
		ctx, cancel := withTimeout()
		_, err := r.Send(ctx, core.SendInput{Caller: core.Caller{SessionID: asker.SessionID, Generation: asker.Generation},
			To: []string{"me"}, Kind: protocol.KindQuestion, Subject: fmt.Sprintf("question %d", i), Body: "?"})
		cancel()
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	r.Close()

	out := sb.as(me, "status").stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	attention := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  attention: message ") && strings.HasSuffix(l, " is a question requiring a reply") {
			attention++
		}
	}
	want := "  attention: 980 more not shown (980 reply_required); `acc inbox` pages the messages you owe, `acc status --json` lists all 1000 items"
	if attention != 20 || lines[len(lines)-1] != want {
		t.Fatalf("want 20 attention lines and then %q; got %d:\n%s", want, attention, clip(out, 4000))
	}
	if len(out) > 8000 {
		t.Errorf("status printed %d bytes for 1,000 owed replies", len(out))
	}
	t.Logf("acc status printed %d bytes for %d owed replies", len(out), owed)

	var st struct {
		Attention []struct {
			Kind string `json:"kind"`
		} `json:"attention"`
	}
	sb.jsonOK(&st, me.dir, append([]string{"status"}, me.creds()...)...)
	if len(st.Attention) != owed {
		t.Fatalf("status --json lists %d attention items, want %d", len(st.Attention), owed)
	}
}
