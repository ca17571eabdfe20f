package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// hookBench is a room for the acc-hook benchmarks: a repository, ten live
// CLI peers with intents and guarded claims, and one hooked Claude Code
// session ("bench") the events are measured for.
type hookBench struct {
	sb    *sandbox
	c     hookClient
	repo  string
	sid   string
	room  *core.Room
	peers []core.Caller
	sent  int
}

const benchPeers = 10

func newHookBench(b *testing.B) *hookBench { return newHookBenchIn(b, newSandbox(b)) }

// newHookBenchIn is newHookBench in sb (a sandbox on either engine).
func newHookBenchIn(b *testing.B, sb *sandbox) *hookBench {
	b.Helper()
	hb := &hookBench{sb: sb, c: clientByID(b, "claude"), repo: sb.newRepo("repo"), sid: "bench-session"}
	sb.dir("repo", "src")
	sb.hookSession(hb.c, hb.sid, hb.repo, "ACC_PARTICIPANT=bench")
	r, err := core.Open(context.Background(), core.OpenOptions{Cwd: hb.repo, Getenv: sb.getenv})
	if err != nil {
		b.Fatalf("open the room: %v", err)
	}
	b.Cleanup(func() { r.Close() })
	hb.room = r
	ctx := context.Background()
	for i := range benchPeers {
		a, err := r.Attach(ctx, core.AttachInput{ParticipantID: fmt.Sprintf("peer%02d", i), Harness: "cli"})
		if err != nil {
			b.Fatal(err)
		}
		c := core.Caller{SessionID: a.SessionID, Generation: a.Generation}
		hb.peers = append(hb.peers, c)
		if _, err := r.Work(ctx, core.IntentInput{Caller: c, Summary: fmt.Sprintf("refactor module %d", i), Cwd: hb.repo,
			Hints: []string{fmt.Sprintf("file:src/m%d/**", i)}}); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Claim(ctx, core.ClaimInput{Caller: c, Resource: fmt.Sprintf("file:src/m%d/**", i), Cwd: hb.repo,
			Enforcement: protocol.EnforcementGuarded}); err != nil {
			b.Fatal(err)
		}
	}
	return hb
}

// send records n messages to the hooked session, round-robin from the
// peers, in-process.
func (hb *hookBench) send(b *testing.B, n int) {
	b.Helper()
	ctx := context.Background()
	for range n {
		hb.sent++
		kind := protocol.KindNote
		if hb.sent%4 == 0 {
			kind = protocol.KindQuestion
		}
		if _, err := hb.room.Send(ctx, core.SendInput{Caller: hb.peers[hb.sent%len(hb.peers)], To: []string{"bench"}, Kind: kind,
			Subject: fmt.Sprintf("update %d", hb.sent),
			Body:    fmt.Sprintf("message %d: %s", hb.sent, strings.Repeat("a body of ordinary length, ", 8))}); err != nil {
			b.Fatal(err)
		}
	}
}

// timeHook runs acc-hook once with payload, fails unless it exits 0, and
// records its wall time and Maxrss; it returns the stdout.
func (s *samples) timeHook(b *testing.B, sb *sandbox, payload []byte, args ...string) string {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, hookBin, args...)
	cmd.Dir = sb.base
	cmd.Env = sb.environ()
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	s.spawnerHWM = selfHWM()
	began := time.Now()
	err := cmd.Run()
	s.d = append(s.d, time.Since(began))
	if err != nil || errb.Len() > 0 {
		b.Fatalf("acc-hook %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, clip(out.String(), 600), clip(errb.String(), 600))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rss = append(s.rss, ru.Maxrss)
	}
	return out.String()
}

// measureHookRSS runs acc-hook once under GNU time and keeps its peak RSS.
func (s *samples) measureHookRSS(b *testing.B, sb *sandbox, payload []byte, args ...string) {
	const gnuTime = "/usr/bin/time"
	if !fileExists(gnuTime) {
		b.Logf("%s is not installed: child-rss-KB not measured (maxrss-KB is floored by the spawner's %d KB)", gnuTime, s.spawnerHWM)
		return
	}
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "rss-KB=%M", hookBin}, args...)...)
	cmd.Dir = sb.base
	cmd.Env = sb.environ()
	cmd.Stdin = bytes.NewReader(payload)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s acc-hook %s: %v\n%s", gnuTime, strings.Join(args, " "), err, clip(errb.String(), 600))
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rss-KB="); ok {
			s.childRSS, _ = strconv.ParseInt(v, 10, 64)
		}
	}
}

// BenchmarkHookProcess measures whole acc-hook processes as Claude Code
// runs them (process start, payload, workspace discovery, store open, the
// handler, output), per event, with the median and p90 wall time and the
// peak RSS. Targets (for information, never asserted): ≤ 10 ms median for
// pre-tool and before-turn, ≤ 30 MB RSS. The client's version probe finds
// no client on PATH here, so session start does not include the client's
// own start-up time.
func BenchmarkHookProcess(b *testing.B) {
	b.Run("event=session-start", func(b *testing.B) {
		hb := newHookBench(b)
		var s samples
		b.ResetTimer()
		for i := range b.N {
			s.timeHook(b, hb.sb, hb.c.startPayload(b, fmt.Sprintf("start-%d", i), hb.repo), hb.c.id, hb.c.start)
		}
		b.StopTimer()
		s.measureHookRSS(b, hb.sb, hb.c.startPayload(b, "start-rss", hb.repo), hb.c.id, hb.c.start)
		s.report(b)
	})
	b.Run("event=session-resume", func(b *testing.B) {
		hb := newHookBench(b)
		payload := hb.c.startPayload(b, hb.sid, hb.repo)
		var s samples
		b.ResetTimer()
		for range b.N {
			s.timeHook(b, hb.sb, payload, hb.c.id, hb.c.start)
		}
		b.StopTimer()
		s.measureHookRSS(b, hb.sb, payload, hb.c.id, hb.c.start)
		s.report(b)
	})
	b.Run("event=before-turn/peers=10/pending=200", func(b *testing.B) {
		benchTurn(b, 0)
	})
	// Offered messages nobody has read yet stay listable; the projection
	// walks them to find the queued ones.
	b.Run("event=before-turn/peers=10/pending=200/offered-unread=1000", func(b *testing.B) {
		benchTurn(b, 1000)
	})
	b.Run("event=pre-tool/shell", func(b *testing.B) {
		hb := newHookBench(b)
		payload := hb.c.shellPayload(b, hb.sid, hb.repo, `cd src && sed -i 's/a/b/' main.go && go test ./... 2>&1 | tee ../test.log > /dev/null`)
		var s samples
		b.ResetTimer()
		for range b.N {
			if out := s.timeHook(b, hb.sb, payload, hb.c.id, hb.c.tool); out != hb.c.allow {
				b.Fatalf("the pre-tool call was not allowed: %s", out)
			}
		}
		b.StopTimer()
		s.measureHookRSS(b, hb.sb, payload, hb.c.id, hb.c.tool)
		s.report(b)
	})
	b.Run("event=pre-tool/shell-denied", func(b *testing.B) {
		hb := newHookBench(b)
		payload := hb.c.shellPayload(b, hb.sid, hb.repo, `cd src/m3 && echo x > gen.go`)
		var s samples
		b.ResetTimer()
		for range b.N {
			if out := s.timeHook(b, hb.sb, payload, hb.c.id, hb.c.tool); !strings.Contains(out, `"deny"`) {
				b.Fatalf("the pre-tool call was not denied: %s", out)
			}
		}
		b.StopTimer()
		s.report(b)
	})
}

// benchTurn measures the before-turn hook with 10 peers and 200 queued
// messages (a quarter of them questions). After each turn the messages it
// offered are read (and the questions answered) in-process, and as many new
// ones sent, so every turn sees the same room; unread messages are first
// offered and left unread, as a session that never opens its inbox leaves
// them.
func benchTurn(b *testing.B, unread int) {
	hb := newHookBench(b)
	ctx := context.Background()
	me, err := hb.room.HookCaller(ctx, hb.c.id, hb.sid)
	if err != nil || me == nil {
		b.Fatalf("the hooked session is not bound: %v", err)
	}
	if unread > 0 {
		hb.send(b, unread)
		var ids []string
		err := hb.room.Store.View(ctx, func(tx storage.ReadTx) error {
			return tx.ScanInbox(storage.InboxQuery{Recipient: "bench", ListableOnly: true}, func(row storage.InboxRow) bool {
				ids = append(ids, row.Message.MessageID)
				return true
			})
		})
		if err != nil || len(ids) != unread {
			b.Fatalf("list the unread messages: %v (%d of %d)", err, len(ids), unread)
		}
		if err := hb.room.MarkOffered(ctx, *me, ids, "next-turn", hb.c.id, ""); err != nil {
			b.Fatal(err)
		}
	}
	const pending = 200
	hb.send(b, pending)
	payload := hb.c.turnPayload(b, hb.sid, hb.repo)
	var s samples
	offered := 0
	b.ResetTimer()
	for range b.N {
		out := s.timeHook(b, hb.sb, payload, hb.c.id, hb.c.turn)
		b.StopTimer()
		ids := messageIDLine.FindAllStringSubmatch(out, -1)
		if len(ids) == 0 {
			b.Fatalf("the turn offered nothing:\n%s", clip(out, 1500))
		}
		offered += len(ids)
		for _, m := range ids {
			items, err := hb.room.ReadMessage(ctx, *me, m[1])
			if err != nil {
				b.Fatal(err)
			}
			if items[0].Message.Obligation == protocol.ObligationReply {
				if _, err := hb.room.Reply(ctx, core.ReplyInput{Caller: *me, MessageID: m[1], Body: "done"}); err != nil {
					b.Fatal(err)
				}
			}
		}
		hb.send(b, len(ids))
		b.StartTimer()
	}
	b.StopTimer()
	s.measureHookRSS(b, hb.sb, payload, hb.c.id, hb.c.turn)
	s.report(b)
	b.ReportMetric(float64(offered)/float64(b.N), "offered/turn")
}

// messageIDLine finds the messageId lines of a projected context (inside
// the JSON envelope, so a line ends at a literal \n).
var messageIDLine = regexp.MustCompile(`messageId: (message_[A-Za-z0-9_-]{22})`)
