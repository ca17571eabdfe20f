package e2e

import (
	"fmt"
	"testing"
)

// BenchmarkClaimProcess measures one whole `acc claim` process (start, Git
// probe, canonical name, store open, the overlap check and one transaction)
// in a room that already holds 100 claims.
func BenchmarkClaimProcess(b *testing.B) {
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	other := sb.attach(repo, "other", "cli")
	me := sb.attach(repo, "me", "cli")
	for i := range 100 {
		sb.ok(repo, append([]string{"claim", "--resource", fmt.Sprintf("file:held/%d.go", i)}, other.creds()...)...)
	}
	var s samples
	b.ResetTimer()
	for i := range b.N {
		s.timeProcess(b, sb, repo, append([]string{"claim", "--resource", fmt.Sprintf("file:mine/%d.go", i)}, me.creds()...)...)
	}
	b.StopTimer()
	s.measureChildRSS(b, sb, repo, append([]string{"claim", "--resource", "file:mine/rss.go"}, me.creds()...)...)
	s.report(b)
}

// BenchmarkStatusProcess measures one whole `acc status` process, with its
// caller's attention, in a room of 50 live sessions holding 500 claims.
func BenchmarkStatusProcess(b *testing.B) {
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	var sessions []session
	for i := range 50 {
		sessions = append(sessions, sb.attach(repo, fmt.Sprintf("p%02d", i), "cli"))
	}
	for i := range 500 {
		s := sessions[i%len(sessions)]
		sb.ok(repo, append([]string{"claim", "--resource", fmt.Sprintf("file:src/%d/a.go", i)}, s.creds()...)...)
	}
	me := sessions[0]
	var s samples
	b.ResetTimer()
	for range b.N {
		s.timeProcess(b, sb, repo, append([]string{"status"}, me.creds()...)...)
	}
	b.StopTimer()
	s.measureChildRSS(b, sb, repo, append([]string{"status"}, me.creds()...)...)
	s.report(b)
}

// BenchmarkSyncHistoryProcess measures one whole `acc sync --scope history`
// process (the first summary page, public) with 100,000 messages.
func BenchmarkSyncHistoryProcess(b *testing.B) {
	room := cachedRoom(b, 100000)
	var s samples
	b.ResetTimer()
	for range b.N {
		s.timeProcess(b, room.sb, room.recv.dir, "sync", "--scope", "history")
	}
	b.StopTimer()
	s.measureChildRSS(b, room.sb, room.recv.dir, "sync", "--scope", "history")
	s.report(b)
}
