package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// guardBenchClaims is how many guarded claims the peers hold in
// BenchmarkGuardPaired's room.
const guardBenchClaims = 500

// BenchmarkGuardPaired measures whole acc-hook pre-tool processes of three
// kinds of shell command in a room where peers hold 500 guarded claims, and
// with ACC_BENCH_BASELINE the baseline build's in the same loop (reported
// with the "baseline-" prefix): a plain command (`go test ./...`), a glob
// command (it writes every file a glob matches in a directory nobody
// holds) and a git operation (`git add -A` in a worktree with 40 changed
// files nobody holds). Every call must be allowed. Each reports the median
// and p90 wall time and the median minor faults. The git operation's cost
// is what acc's read-only git adds to a pre-tool call (docs/hooks.md).
func BenchmarkGuardPaired(b *testing.B) {
	for _, bc := range []struct{ name, command string }{
		{"plain", "go test ./... 2>&1 | tail -n 20"},
		{"glob", "rm -f build/*.o && touch build/{x,y}.stamp"},
		{"git", "git add -A && git status --short"},
	} {
		b.Run("command="+bc.name, func(b *testing.B) {
			builds := benchBuilds(b)
			gb := newGuardBench(b)
			payload := gb.c.shellPayload(b, gb.sid, gb.repo, bc.command)
			ps := make([]procSamples, len(builds))
			b.ResetTimer()
			for range b.N {
				for j, bl := range builds {
					if out, _ := ps[j].run(b, gb.sb, gb.sb.base, payload, bl.hook, gb.c.id, gb.c.tool); out != gb.c.allow {
						b.Fatalf("%s: %s was not allowed: %s", bl.name, bc.command, out)
					}
				}
			}
			b.StopTimer()
			reportPaired(b, builds, ps)
		})
	}
}

type guardBench struct {
	sb   *sandbox
	c    hookClient
	repo string
	sid  string
}

// newGuardBench makes a committed repository with 500 files under src/
// claimed guarded by 50 peers (10 each), 40 build outputs and 40 changed
// files under own/, and one hooked Claude Code session.
func newGuardBench(b *testing.B) *guardBench {
	b.Helper()
	sb := newSandbox(b)
	gb := &guardBench{sb: sb, c: clientByID(b, "claude"), repo: sb.newRepo("repo"), sid: "guard-bench"}
	write := func(rel, text string) {
		p := filepath.Join(gb.repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range guardBenchClaims {
		write(fmt.Sprintf("src/p%02d/f%03d.go", i/10, i), "package p\n")
	}
	for i := range 40 {
		write(fmt.Sprintf("own/o%02d.txt", i), "own\n")
	}
	sb.git(gb.repo, "add", "-A")
	sb.git(gb.repo, "commit", "-q", "-m", "files")
	for i := range 40 {
		write(fmt.Sprintf("own/o%02d.txt", i), "changed\n")
		write(fmt.Sprintf("build/b%02d.o", i), "object\n")
	}
	sb.hookSession(gb.c, gb.sid, gb.repo, "ACC_PARTICIPANT=bench")
	r, err := core.Open(context.Background(), core.OpenOptions{Cwd: gb.repo, Getenv: sb.getenv})
	if err != nil {
		b.Fatalf("open the room: %v", err)
	}
	defer r.Close()
	ctx := context.Background()
	var c core.Caller
	for i := range guardBenchClaims {
		if i%10 == 0 {
			a, err := r.Attach(ctx, core.AttachInput{ParticipantID: fmt.Sprintf("peer%02d", i/10), Harness: "cli"})
			if err != nil {
				b.Fatal(err)
			}
			c = core.Caller{SessionID: a.SessionID, Generation: a.Generation}
		}
		if _, err := r.Claim(ctx, core.ClaimInput{Caller: c, Resource: fmt.Sprintf("file:src/p%02d/f%03d.go", i/10, i), Cwd: gb.repo,
			Enforcement: protocol.EnforcementGuarded}); err != nil {
			b.Fatal(err)
		}
	}
	return gb
}
