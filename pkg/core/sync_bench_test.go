package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// BenchmarkHistoryPage measures Room.Sync with scope history in-process (one
// View: a page of at most 20 summaries within 12,000 bytes) in a room of
// 100,000 messages: the first page, a page from a cursor in the middle, and
// the decision heads (--type decision --current). The target is
// 30 ms per page.
func BenchmarkHistoryPage(b *testing.B) {
	const n = 100000
	r, middle := seededHistoryRoom(b, n)
	for _, tc := range []struct {
		name string
		q    SyncQuery
	}{
		{"messages=100000", SyncQuery{Scope: SyncScopeHistory}},
		{"messages=100000/cursor=middle", SyncQuery{Scope: SyncScopeHistory, Cursor: middle}},
		{"messages=100000/type=decision/current", SyncQuery{Scope: SyncScopeHistory, Kind: protocol.KindDecision, Current: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			items := 0
			for b.Loop() {
				res, err := r.Sync(ctx, tc.q)
				if err != nil {
					b.Fatalf("history: %v", err)
				}
				if len(res.History.Items) == 0 || res.History.NextCursor == nil {
					b.Fatalf("expected a full page with a next cursor, saw %d items", len(res.History.Items))
				}
				items = len(res.History.Items)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64(items), "items/page")
		})
	}
}

// seededHistoryRoom opens a room in a temporary Git repository and writes n
// messages straight through pkg/storage in transactions of 10,000: notes,
// questions, room notes and decisions (every other decision supersedes the
// one before it), each addressed one with its receipt. Ids are written in
// ascending order and send times shuffled against them, as in
// internal/e2e's seeding, so the newest messages lie scattered across the
// tables. It returns the room and the id of the message in the middle of the
// history.
func seededHistoryRoom(b *testing.B, n int) (*Room, string) {
	b.Helper()
	base := b.TempDir()
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", "-b", "main", repo)
	git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := git.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	env := map[string]string{"ACC_DATA_HOME": filepath.Join(base, "data"), "HOME": base}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := Open(ctx, OpenOptions{Cwd: repo, Getenv: func(k string) string { return env[k] }, GOOS: "linux"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	r.Probe = mapProbe{}
	var callers []Caller
	for _, p := range []string{"alice", "bob"} {
		res, err := r.Attach(ctx, AttachInput{ParticipantID: p})
		if err != nil {
			b.Fatal(err)
		}
		callers = append(callers, Caller{SessionID: res.SessionID, Generation: res.Generation})
	}
	began := time.Now()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = protocol.NewID(protocol.KindMessage)
	}
	slices.Sort(ids)
	order := rand.Perm(n)
	start := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Duration(n) * time.Millisecond)
	body := strings.Repeat("seeded history body text. ", 8)
	lastDecision, decisions := "", 0
	const batch = 10000
	for done := 0; done < n; done += batch {
		err := r.Store.Update(ctx, func(tx storage.Tx) error {
			for i := done; i < min(done+batch, n); i++ {
				at := protocol.FormatTime(start.Add(time.Duration(order[i]) * time.Millisecond))
				m := &protocol.Message{SchemaVersion: protocol.SchemaVersion, MessageID: ids[i], ThreadID: ids[i],
					ClientMessageID: protocol.NewID(protocol.KindClient), WorkspaceID: r.WS.ID,
					FromParticipantID: "alice", FromSessionID: callers[0].SessionID, ToParticipantIDs: []string{"bob"},
					Kind: protocol.KindNote, Obligation: protocol.ObligationNone, Subject: fmt.Sprintf("seeded message %d", i),
					Body: body, Artifacts: []protocol.ArtifactRef{}, SentAt: at}
				switch i % 10 {
				case 1, 4:
					m.Kind, m.Obligation = protocol.KindQuestion, protocol.ObligationReply
				case 7:
					m.ToParticipantIDs = []string{}
				case 9:
					m.Kind = protocol.KindDecision
					if decisions%2 == 1 {
						m.DecisionChange = &protocol.DecisionChange{Action: protocol.DecisionReplace, MessageIDs: []string{lastDecision}}
					}
					lastDecision = m.MessageID
					decisions++
				}
				if err := tx.InsertMessage(m); err != nil {
					return err
				}
				if err := tx.PutReceipt(&protocol.Receipt{SchemaVersion: protocol.SchemaVersion, MessageID: m.MessageID,
					WorkspaceID: r.WS.ID, RecipientParticipantID: "bob", State: protocol.ReceiptQueued, UpdatedAt: at}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("seed %d..: %v", done, err)
		}
	}
	b.Logf("seeded %d messages in %v", n, time.Since(began).Round(time.Millisecond))
	var middle string
	k := 0
	err = r.Store.View(ctx, func(tx storage.ReadTx) error {
		return tx.ScanMessages(storage.MessageQuery{}, func(m protocol.Message) bool {
			k++
			if k == n/2 {
				middle = m.MessageID
				return false
			}
			return true
		})
	})
	if err != nil || middle == "" {
		b.Fatalf("find the middle message: %v", err)
	}
	return r, middle
}
