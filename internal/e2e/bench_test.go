package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// benchCacheVersion names the cached seeded rooms under os.TempDir; bump it
// whenever the seeding or the store layout changes, so a stale cache is
// never measured.
const benchCacheVersion = "v7"

// benchSeedBatch is how many messages one seeding transaction writes.
const benchSeedBatch = 10000

// samples collects per-operation measurements and reports them as metrics.
type samples struct {
	d   []time.Duration
	rss []int64 // Maxrss of each process, KB
	// spawnerHWM is this test process's own peak RSS (VmHWM) when it last
	// started a child, KB. On Linux a child's Maxrss is never below it:
	// os/exec starts children with vfork semantics, and at exec the kernel
	// folds the high-water mark of the spawner's address space into the
	// child's (exec_mmap → setmax_mm_hiwater_rss). So maxrss-KB is an upper
	// bound, exact only when it exceeds spawner-hwm-KB; child-rss-KB below
	// is the child's own figure.
	spawnerHWM int64
	// childRSS is the peak RSS of one run measured by GNU time, whose own
	// address space is small, so the figure is the child's; 0 when
	// /usr/bin/time is not installed.
	childRSS int64
}

func (s *samples) report(b *testing.B) {
	if len(s.d) == 0 {
		return
	}
	slices.Sort(s.d)
	pct := func(p float64) float64 {
		i := min(int(p*float64(len(s.d))), len(s.d)-1)
		return float64(s.d[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.9), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	if len(s.rss) > 0 {
		slices.Sort(s.rss)
		b.ReportMetric(float64(s.rss[len(s.rss)-1]), "maxrss-KB")
		b.ReportMetric(float64(s.spawnerHWM), "spawner-hwm-KB")
	}
	if s.childRSS > 0 {
		b.ReportMetric(float64(s.childRSS), "child-rss-KB")
	}
}

// timeProcess runs acc once, fails the benchmark unless it exits 0, and
// records its wall time and Maxrss.
func (s *samples) timeProcess(b *testing.B, sb *sandbox, dir string, args ...string) {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := sb.command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	s.spawnerHWM = selfHWM()
	began := time.Now()
	err := cmd.Run()
	s.d = append(s.d, time.Since(began))
	if err != nil {
		b.Fatalf("acc %s: expected exit 0, saw %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, clip(out.String(), 600), clip(errb.String(), 600))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rss = append(s.rss, ru.Maxrss) // kilobytes on Linux
	}
}

// measureChildRSS runs acc once under /usr/bin/time and keeps the peak RSS
// it reports. Without GNU time it logs why the figure is missing.
func (s *samples) measureChildRSS(b *testing.B, sb *sandbox, dir string, args ...string) {
	const gnuTime = "/usr/bin/time"
	if !fileExists(gnuTime) {
		b.Logf("%s is not installed: child-rss-KB not measured (maxrss-KB is floored by the spawner's %d KB)", gnuTime, s.spawnerHWM)
		return
	}
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "rss-KB=%M", accBin}, args...)...)
	cmd.Dir = dir
	cmd.Env = sb.environ()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s acc %s: %v\n%s", gnuTime, strings.Join(args, " "), err, clip(errb.String(), 600))
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rss-KB="); ok {
			s.childRSS, _ = strconv.ParseInt(v, 10, 64)
		}
	}
}

// selfHWM is this process's peak resident set size (VmHWM), KB, or 0.
func selfHWM() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkSendProcess measures one whole `acc message` process (start, Git
// probe, store open, one transaction, output) against a two-session room.
func BenchmarkSendProcess(b *testing.B) {
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	recv := sb.attach(repo, "recv", "cli")
	sender := sb.attach(repo, "sender", "cli")
	var s samples
	b.ResetTimer()
	for i := range b.N {
		s.timeProcess(b, sb, repo, append([]string{"message", "--to", recv.ParticipantID,
			"--subject", fmt.Sprintf("bench %d", i), "--body", "a benchmark message"}, sender.creds()...)...)
	}
	b.StopTimer()
	s.measureChildRSS(b, sb, repo, append([]string{"message", "--to", recv.ParticipantID,
		"--subject", "bench rss", "--body", "a benchmark message"}, sender.creds()...)...)
	s.report(b)
}

// BenchmarkInboxProcess measures one whole `acc inbox` process (the first
// summary page) and its peak RSS, in a small room (50 pending messages) and
// in a room with 100,000 messages.
func BenchmarkInboxProcess(b *testing.B) {
	b.Run("messages=50", func(b *testing.B) {
		sb := newSandbox(b)
		repo := sb.newRepo("repo")
		recv := sb.attach(repo, "recv", "cli")
		sender := sb.attach(repo, "sender", "cli")
		seedMessages(b, sb, repo, recv, sender, 50)
		benchInboxProcess(b, sb, recv)
	})
	b.Run("messages=100000", func(b *testing.B) {
		room := cachedRoom(b, 100000)
		benchInboxProcess(b, room.sb, room.recv)
	})
	b.Run("engine=postgresql/messages=100000", func(b *testing.B) {
		room := roomOnPostgres(b, cachedRoom(b, 100000), 100000)
		benchInboxProcess(b, room.sb, room.recv)
	})
}

// roomOnPostgres copies a cached room (n messages) onto the PostgreSQL
// test server with storage.CopyRoom (what `acc store copy` does) and
// returns it as a room whose sandbox opens it there. Like the cached SQLite
// room, the copy is kept (under the same workspace id) for the benchmarks
// after it, and copied again only when it does not hold n messages.
func roomOnPostgres(b *testing.B, room benchRoom, n int) benchRoom {
	b.Helper()
	url := pgURL(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	id := benchWorkspaceID(n)
	if pg, err := storage.OpenPostgres(ctx, url, id, storage.PostgresOptions{NoCreate: true}); err == nil {
		var c storage.Counts
		err := pg.View(ctx, func(tx storage.ReadTx) error { c, err = tx.Counts(); return err })
		pg.Close()
		if err != nil || c.Messages != int64(n) {
			dropRoom(b, url, id)
		}
	}
	src, err := storage.OpenSQLite(ctx, room.sb.storePath(id), id)
	if err != nil {
		b.Fatalf("open the cached room: %v", err)
	}
	defer src.Close()
	dst, err := storage.OpenPostgres(ctx, url, id, storage.PostgresOptions{})
	if err != nil {
		b.Fatalf("open the room on the server: %v", err)
	}
	defer dst.Close()
	began := time.Now()
	if _, err := storage.CopyRoom(ctx, src, dst); protocol.IsReason(err, protocol.ReasonStoreNotEmpty) {
		b.Logf("the server holds the room's copy already")
	} else if err != nil {
		b.Fatalf("copy the room onto the server: %v", err)
	} else {
		b.Logf("copied %d messages onto the server in %v", n, time.Since(began).Round(time.Millisecond))
	}
	sb := *room.sb
	sb.pgURL = url
	return benchRoom{sb: &sb, recv: room.recv, sender: room.sender}
}

func benchInboxProcess(b *testing.B, sb *sandbox, recv session) {
	var s samples
	b.ResetTimer()
	for range b.N {
		s.timeProcess(b, sb, recv.dir, append([]string{"inbox"}, recv.creds()...)...)
	}
	b.StopTimer()
	s.measureChildRSS(b, sb, recv.dir, append([]string{"inbox"}, recv.creds()...)...)
	s.report(b)
}

// BenchmarkInboxPage measures core's Room.Inbox in-process (one View, the
// first page: at most 20 summaries within 12,000 bytes) with 10,000 and
// 100,000 pending messages, and a page from a cursor in the middle of the
// 100,000.
func BenchmarkInboxPage(b *testing.B) {
	for _, tc := range []struct {
		name   string
		n      int
		middle bool
	}{
		{"messages=10000", 10000, false},
		{"messages=100000", 100000, false},
		{"messages=100000/cursor=middle", 100000, true},
		{"engine=postgresql/messages=100000", 100000, false},
		{"engine=postgresql/messages=100000/cursor=middle", 100000, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			room := cachedRoom(b, tc.n)
			if strings.HasPrefix(tc.name, "engine=postgresql/") {
				room = roomOnPostgres(b, room, tc.n)
			}
			ctx := context.Background()
			r, err := core.Open(ctx, core.OpenOptions{Cwd: room.recv.dir, Getenv: room.sb.getenv})
			if err != nil {
				b.Fatalf("open the room: %v", err)
			}
			defer r.Close()
			q := core.InboxQuery{Caller: core.Caller{SessionID: room.recv.SessionID, Generation: room.recv.Generation}}
			if tc.middle {
				q.Cursor = middleMessage(b, r.Store, room.recv.ParticipantID, tc.n/2)
			}
			var s samples
			items := 0
			b.ResetTimer()
			for range b.N {
				began := time.Now()
				page, err := r.Inbox(ctx, q)
				s.d = append(s.d, time.Since(began))
				if err != nil {
					b.Fatalf("inbox: %v", err)
				}
				// The page is bounded by 20 items and by 12,000 bytes; with
				// these summaries the byte budget binds first.
				if len(page.Items) == 0 || page.NextCursor == nil {
					b.Fatalf("expected a page with a next cursor, saw %d items, nextCursor %v", len(page.Items), page.NextCursor)
				}
				items = len(page.Items)
			}
			b.StopTimer()
			s.report(b)
			b.ReportMetric(float64(items), "items/page")
		})
	}
}

// middleMessage returns the id of the k-th pending message of recipient,
// newest first.
func middleMessage(b *testing.B, st storage.Store, recipient string, k int) string {
	var id string
	i := 0
	// A full minute: without a deadline View allows only the 5-second store
	// wait, and this walk decodes half of the room.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := st.View(ctx, func(tx storage.ReadTx) error {
		return tx.ScanInbox(storage.InboxQuery{Recipient: recipient, ListableOnly: true}, func(row storage.InboxRow) bool {
			i++
			if i == k {
				id = row.Message.MessageID
				return false
			}
			return true
		})
	})
	if err != nil || id == "" {
		b.Fatalf("find pending message %d of %s: %v (saw %d)", k, recipient, err, i)
	}
	return id
}

// benchRoom is a seeded room: a sandbox whose workspace directory holds an
// acc.workspace.json, with a recipient and a sender session.
type benchRoom struct {
	sb           *sandbox
	recv, sender session
}

// roomFile is what a cached room remembers about its sessions.
type roomFile struct {
	Recv, Sender session
	Messages     int
}

// cachedRoom returns a room whose recipient has n pending notes, built once
// and kept under os.TempDir (keyed by benchCacheVersion and n), so repeated
// benchmark runs do not pay for seeding. A cache that no longer opens, or
// holds another count, is rebuilt.
func cachedRoom(b *testing.B, n int) benchRoom {
	b.Helper()
	final := filepath.Join(os.TempDir(), fmt.Sprintf("acc-e2e-bench-%s-%d", benchCacheVersion, n))
	if room, err := loadRoom(b, final, n); err == nil {
		return room
	} else if !errors.Is(err, os.ErrNotExist) {
		b.Logf("cached room %s is unusable (%v); rebuilding it", final, err)
		os.RemoveAll(final)
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "acc-e2e-bench-seed-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	began := time.Now()
	buildRoom(b, tmp, n)
	b.Logf("seeded %d messages in %v (cached at %s)", n, time.Since(began).Round(time.Millisecond), final)
	if err := os.Rename(tmp, final); err != nil {
		b.Logf("another process cached %s first (%v); using it", final, err)
	}
	room, err := loadRoom(b, final, n)
	if err != nil {
		b.Fatalf("load the room just built at %s: %v", final, err)
	}
	return room
}

func roomSandbox(b *testing.B, base string) *sandbox {
	return &sandbox{t: b, base: base, home: filepath.Join(base, "home"), data: filepath.Join(base, "data")}
}

func benchWorkspaceID(n int) string { return fmt.Sprintf("bench-%s-%d", benchCacheVersion, n) }

// loadRoom opens a cached room and checks it holds n messages.
func loadRoom(b *testing.B, base string, n int) (benchRoom, error) {
	raw, err := os.ReadFile(filepath.Join(base, "room.json"))
	if err != nil {
		return benchRoom{}, err
	}
	var rf roomFile
	if err := json.Unmarshal(raw, &rf); err != nil {
		return benchRoom{}, err
	}
	sb := roomSandbox(b, base)
	ws := filepath.Join(base, "ws")
	rf.Recv.dir, rf.Sender.dir = ws, ws
	st, err := storage.OpenSQLite(context.Background(), sb.storePath(benchWorkspaceID(n)), benchWorkspaceID(n))
	if err != nil {
		return benchRoom{}, err
	}
	defer st.Close()
	// Count the messages and decode one inbox row, so a cache written by an
	// acc whose records no longer decode is rebuilt rather than measured.
	var c storage.Counts
	if err := st.View(context.Background(), func(tx storage.ReadTx) error {
		if c, err = tx.Counts(); err != nil {
			return err
		}
		return tx.ScanInbox(storage.InboxQuery{Recipient: rf.Recv.ParticipantID, ListableOnly: true}, func(storage.InboxRow) bool { return false })
	}); err != nil {
		return benchRoom{}, err
	}
	if c.Messages != int64(n) || rf.Messages != n {
		return benchRoom{}, fmt.Errorf("holds %d messages, expected %d", c.Messages, n)
	}
	return benchRoom{sb: sb, recv: rf.Recv, sender: rf.Sender}, nil
}

// buildRoom creates the workspace (a config workspace, so its id does not
// depend on the directory it is later renamed to), attaches two sessions
// through pkg/core and seeds n notes straight through pkg/storage in large
// transactions.
func buildRoom(b *testing.B, base string, n int) {
	sb := roomSandbox(b, base)
	ws := filepath.Join(base, "ws")
	for _, d := range []string{sb.home, sb.data, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`{"schemaVersion": 1, "workspaceId": %q}`, benchWorkspaceID(n))
	if err := os.WriteFile(filepath.Join(ws, workspace.ConfigFileName), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r, err := core.Open(ctx, core.OpenOptions{Cwd: ws, Getenv: sb.getenv})
	if err != nil {
		b.Fatalf("open the bench room: %v", err)
	}
	defer r.Close()
	attach := func(p string) session {
		res, err := r.Attach(ctx, core.AttachInput{ParticipantID: p})
		if err != nil {
			b.Fatalf("attach %s: %v", p, err)
		}
		return session{SessionID: res.SessionID, Generation: res.Generation, ParticipantID: p, WorkspaceID: res.WorkspaceID, dir: ws}
	}
	recv, sender := attach("recv"), attach("sender")
	seedStore(b, r, recv, sender, n)
	raw, _ := json.Marshal(roomFile{Recv: recv, Sender: sender, Messages: n})
	if err := os.WriteFile(filepath.Join(base, "room.json"), raw, 0o600); err != nil {
		b.Fatal(err)
	}
}

// seedMessages adds n notes from sender to recv in the room at dir.
func seedMessages(b *testing.B, sb *sandbox, dir string, recv, sender session, n int) {
	r, err := core.Open(context.Background(), core.OpenOptions{Cwd: dir, Getenv: sb.getenv})
	if err != nil {
		b.Fatalf("open the room: %v", err)
	}
	defer r.Close()
	seedStore(b, r, recv, sender, n)
}

// seedStore writes n notes from sender to recv, each with its queued receipt
// and message.recorded event, as core records a send, with sentAt one
// millisecond apart ending now.
//
// Message and event ids are generated up front and written in ascending
// order, so the primary-key B-trees grow at their right edge. Written in
// random order (as real sends are, one per transaction) a large seeding
// transaction dirties far more pages than SQLite's 2 MB page cache holds and
// spills them to the WAL again and again: 100,000 messages took 45 s instead
// of 8 s. The send times are shuffled against the ids, so the newest
// messages still lie scattered across the messages and receipts tables, as
// in a room built by real sends.
func seedStore(b *testing.B, r *core.Room, recv, sender session, n int) {
	// A generous deadline: without one, Update would allow each batch only
	// the 5-second store wait.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	body := strings.Repeat("seeded benchmark body text. ", 8)
	start := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Duration(n) * time.Millisecond)
	ids := make([]string, n)
	eventIDs := make([]string, n)
	for i := range ids {
		ids[i] = protocol.NewID(protocol.KindMessage)
		eventIDs[i] = protocol.NewID(protocol.KindEvent)
	}
	slices.Sort(ids)
	slices.Sort(eventIDs)
	order := rand.Perm(n) // order[i]: the position in time of the i-th message written
	for done := 0; done < n; {
		batch := min(benchSeedBatch, n-done)
		err := r.Store.Update(ctx, func(tx storage.Tx) error {
			for i := done; i < done+batch; i++ {
				at := protocol.FormatTime(start.Add(time.Duration(order[i]) * time.Millisecond))
				id := ids[i]
				m := &protocol.Message{SchemaVersion: protocol.SchemaVersion, MessageID: id, ThreadID: id,
					ClientMessageID: protocol.NewID(protocol.KindClient), WorkspaceID: r.WS.ID,
					FromParticipantID: sender.ParticipantID, FromSessionID: sender.SessionID,
					ToParticipantIDs: []string{recv.ParticipantID}, Kind: protocol.KindNote,
					Obligation: protocol.ObligationNone, Subject: fmt.Sprintf("seeded note %d topic%d", i, i%100), Body: body,
					Artifacts: []protocol.ArtifactRef{}, SentAt: at}
				if err := tx.InsertMessage(m); err != nil {
					return err
				}
				if err := tx.PutReceipt(&protocol.Receipt{SchemaVersion: protocol.SchemaVersion, MessageID: id,
					WorkspaceID: r.WS.ID, RecipientParticipantID: recv.ParticipantID, State: protocol.ReceiptQueued, UpdatedAt: at}); err != nil {
					return err
				}
				if err := tx.AppendEvent(&protocol.Event{EventID: eventIDs[i], ActorSessionID: sender.SessionID, Type: protocol.EventMessageRecorded, OccurredAt: at,
					Payload: map[string]any{"messageId": id, "threadId": id, "recipientParticipantIds": []string{recv.ParticipantID}}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("seed messages %d..%d: %v", done, done+batch, err)
		}
		done += batch
	}
}
