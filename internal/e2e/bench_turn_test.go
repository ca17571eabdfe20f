package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// BenchmarkPostToolHook measures the post-tool hook as a whole process
// with nothing to deliver, for a Claude Code session whose version has
// mid-turn delivery proven, paired in one run with the pre-tool hook of
// the same session (a read-only shell call): each iteration runs one of
// each, so both see the same machine load. It reports the p50 of each
// (post-tool-p50-ms, pre-tool-p50-ms). The post-tool hook runs after every
// tool call of every agent, so it must cost no more than the pre-tool one
// (docs/delivery.md#mid-turn). notes=200 leaves 200 queued notes in
// the inbox, which policy.midTurn actionable does not deliver; offered=2000
// leaves 2000 questions offered and never read with acc inbox (what a
// hooked agent's inbox becomes over a long session).
func BenchmarkPostToolHook(b *testing.B) {
	for _, tc := range []struct{ notes, offered int }{{0, 0}, {200, 0}, {0, 2000}} {
		notes, offered := tc.notes, tc.offered
		b.Run(fmt.Sprintf("notes=%d/offered=%d", notes, offered), func(b *testing.B) {
			sb := newSandbox(b)
			repo := sb.newRepo("repo")
			if _, err := evidence.Write(sb.data, "claude", evidence.Record{Evidence: adapter.Evidence{Version: "9.8.7", Test: "bench stand-in",
				Recorded: "2026-12-02T00:00:00Z", Proven: adapter.Capabilities{Attach: true, NextTurn: true, MidTurn: true, EndOfTurn: true}},
				Why: map[string]string{}}); err != nil {
				b.Fatal(err)
			}
			bin := b.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '9.8.7 (Claude Code)'\n"), 0o755); err != nil {
				b.Fatal(err)
			}
			c := clientByID(b, "claude")
			sb.hookSession(c, "bench", repo, "ACC_PARTICIPANT=bench", "PATH="+bin+":"+os.Getenv("PATH"))
			r, err := core.Open(context.Background(), core.OpenOptions{Cwd: repo, Getenv: sb.getenv})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			peer, err := r.Attach(context.Background(), core.AttachInput{ParticipantID: "peer", Harness: "cli"})
			if err != nil {
				b.Fatal(err)
			}
			for i := range notes {
				if _, err := r.Send(context.Background(), core.SendInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
					To: []string{"bench"}, Kind: protocol.KindNote, Subject: fmt.Sprintf("n%d", i), Body: "a note"}); err != nil {
					b.Fatal(err)
				}
			}
			if offered > 0 {
				me, err := r.HookCaller(context.Background(), "claude", "bench")
				if err != nil || me == nil {
					b.Fatal("the bench session is not bound", err)
				}
				ids := make([]string, 0, offered)
				for i := range offered {
					sent, err := r.Send(context.Background(), core.SendInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
						To: []string{"bench"}, Kind: protocol.KindQuestion, Subject: fmt.Sprintf("q%d", i), Body: "a question"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, sent.Message.MessageID)
				}
				if err := r.MarkOffered(context.Background(), *me, ids, "next-turn", "claude", "9.8.7"); err != nil {
					b.Fatal(err)
				}
			}
			post := encode(b, c.rewrite(c.mustFixture(b, "PostToolUse"), "bench", repo))
			pre := c.shellPayload(b, "bench", repo, "ls -la && git status")
			var ps, qs samples
			b.ResetTimer()
			for range b.N {
				if out := qs.timeHook(b, sb, pre, "claude", c.tool); out != c.allow {
					b.Fatalf("pre-tool: %s", out)
				}
				if out := ps.timeHook(b, sb, post, "claude", "PostToolUse"); out != c.allow {
					b.Fatalf("post-tool delivered: %s", out)
				}
			}
			b.StopTimer()
			b.ReportMetric(p50ms(ps.d), "post-tool-p50-ms")
			b.ReportMetric(p50ms(qs.d), "pre-tool-p50-ms")
		})
	}
}

func p50ms(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}
