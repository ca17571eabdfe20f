package e2e

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Sizes of the concurrent-send load: half the size (8 x 100) in the
// default test command, which runs beside every other package on two shared
// cores (8 x 200 took ten seconds alone and fifty inside the suite), and
// 8 x 800 as a soak under ACC_STRESS=1 (`make stress`).
const (
	concurrentWriters       = 8
	sendsPerWriterStress    = 800
	sendsPerWriterByDefault = 100
)

// stress reports whether the heavy loads run as a soak (`make stress`).
func stress() bool { return os.Getenv("ACC_STRESS") == "1" }

// sendOutcome is one `acc message` process of the load.
type sendOutcome struct {
	writer, seq int
	subject     string
	messageID   string // from `recorded …`; "" when absent
	res         result
}

// TestConcurrentSendsAllLand starts 8 writer processes at once — each a
// goroutine running `acc message` processes back to back as its own
// session — all addressing one recipient. Afterwards every send exited 0
// (a store_busy exit 3 is a failure, not something to retry), and the store
// holds each message exactly once with one queued receipt for the recipient,
// a gap-free event log and one message.recorded event per message.
func TestConcurrentSendsAllLand(t *testing.T) {
	perWriter := sendsPerWriterByDefault
	if stress() {
		perWriter = sendsPerWriterStress
	}
	total := concurrentWriters * perWriter
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	recv := sb.attach(repo, "recv", "cli")
	senders := make([]session, concurrentWriters)
	for w := range senders {
		senders[w] = sb.attach(repo, fmt.Sprintf("sender%d", w+1), "cli")
	}

	outcomes := make([][]sendOutcome, concurrentWriters)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range concurrentWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s := senders[w]
			for i := range perWriter {
				subject := fmt.Sprintf("w%d-%04d", w+1, i)
				ctx, cancel := withTimeout()
				cmd := sb.command(ctx, s.dir, "message", "--to", recv.ParticipantID, "--subject", subject,
					"--body", "concurrent send "+subject, "--session", s.SessionID, "--generation", s.Generation)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				cancel()
				res := result{args: cmd.Args[1:], stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
				outcomes[w] = append(outcomes[w], sendOutcome{writer: w + 1, seq: i, subject: subject, messageID: recordedID(res.stdout), res: res})
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	t.Logf("size: %d writer processes x %d sends = %d messages (ACC_STRESS=%q); elapsed %v, %.1f sends/s, %.2f ms per send per writer",
		concurrentWriters, perWriter, total, os.Getenv("ACC_STRESS"), elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds(), float64(elapsed.Milliseconds())/float64(perWriter))

	// Every process exited 0 and printed its message id.
	bySubject := map[string]string{}
	failures, busy := 0, 0
	for _, list := range outcomes {
		for _, o := range list {
			if o.res.code != 0 || o.messageID == "" {
				failures++
				if o.res.code == int(protocol.ExitTimeout) {
					busy++
				}
				if failures <= 5 {
					t.Errorf("writer %d send %d: expected exit 0 and `recorded message_…`, saw:\n%s", o.writer, o.seq, o.res)
				}
				continue
			}
			bySubject[o.subject] = o.messageID
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d concurrent sends failed (%d of them exit 3, store_busy); expected none", failures, total, busy)
	}

	st := sb.openStore(recv.WorkspaceID)
	checkIntegrity(t, st)
	snap := readSnapshot(t, st)

	// All messages present exactly once, and exactly the ones printed.
	if len(snap.messages) != total {
		t.Errorf("expected %d messages in the store, saw %d", total, len(snap.messages))
	}
	seenID := map[string]int{}
	seenSubject := map[string]int{}
	for _, m := range snap.messages {
		seenID[m.MessageID]++
		seenSubject[m.Subject]++
		if want, ok := bySubject[m.Subject]; !ok {
			t.Errorf("stored message %s has subject %q, which no sender sent", m.MessageID, m.Subject)
		} else if want != m.MessageID {
			t.Errorf("subject %q: the sender printed %s, the store holds %s", m.Subject, want, m.MessageID)
		}
		if len(m.ToParticipantIDs) != 1 || m.ToParticipantIDs[0] != recv.ParticipantID {
			t.Errorf("message %s: expected to be addressed to [%s], saw %v", m.MessageID, recv.ParticipantID, m.ToParticipantIDs)
		}
	}
	for subject, id := range bySubject {
		if seenSubject[subject] != 1 {
			t.Errorf("subject %q (printed as %s): expected once in the store, saw %d times", subject, id, seenSubject[subject])
		}
	}
	for id, n := range seenID {
		if n != 1 {
			t.Errorf("message id %s: expected once, saw %d times", id, n)
		}
	}

	// One queued receipt per message, for the recipient; none orphaned.
	checkReceiptsComplete(t, snap, protocol.ReceiptQueued)
	if n := orphanReceipts(t, sb.storePath(recv.WorkspaceID)); n != 0 {
		t.Errorf("expected no receipt without its message, saw %d", n)
	}

	// Gap-free events; one message.recorded per message; and the attach
	// events before them (materialisation + 9 sessions).
	checkEventLog(t, snap.events)
	checkMessagesMatchEvents(t, snap)
	recordedEvents := 0
	for _, e := range snap.events {
		if e.Type == protocol.EventMessageRecorded {
			recordedEvents++
		}
	}
	if recordedEvents != total {
		t.Errorf("expected %d message.recorded events, saw %d", total, recordedEvents)
	}

	// The recipient's pending list holds all of them.
	listable := 0
	ctx, cancel := withTimeout()
	defer cancel()
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		return tx.ScanInbox(storage.InboxQuery{Recipient: recv.ParticipantID, ListableOnly: true}, func(storage.InboxRow) bool {
			listable++
			return true
		})
	}); err != nil {
		t.Fatalf("scan the recipient's inbox: %v", err)
	}
	if listable != total {
		t.Errorf("expected %d pending messages in %s's inbox, saw %d", total, recv.ParticipantID, listable)
	}
}
