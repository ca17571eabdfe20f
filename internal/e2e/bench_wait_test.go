package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWaitWake: acc wait in another process, woken by a send; the
// metric is the time from the send command returning to acc wait exiting
// (p50-ms, p90-ms), with the room in SQLite (woken through fsnotify) and on
// the PostgreSQL test server (woken through LISTEN/NOTIFY).
// `go test -run '^$' -bench WaitWake -benchtime 100x ./internal/e2e/` gives
// the median of 100 sends (through scripts/with-pg.sh for the second).
func BenchmarkWaitWake(b *testing.B) {
	b.Run("engine=sqlite", func(b *testing.B) { benchWaitWake(b, newSandbox(b)) })
	b.Run("engine=postgresql", func(b *testing.B) { benchWaitWake(b, newSandboxPG(b)) })
}

func benchWaitWake(b *testing.B, sb *sandbox) {
	repo := sb.newRepo("repo")
	a := sb.attach(repo, "alice", "cli")
	bob := sb.attach(repo, "bob", "cli")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := sb.startWaitB(repo, append([]string{"--timeout", "30"}, bob.creds()...)...)
		time.Sleep(150 * time.Millisecond) // watching by now
		id := sb.sendAs(a, "--to", "bob", "--subject", "s", "--body", "b")
		sent := time.Now()
		<-w.done
		lat = append(lat, w.ended.Sub(sent))
		sb.ok(repo, append([]string{"ack", "--message", id}, bob.creds()...)...)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "p90-ms")
}

// BenchmarkIdle: the CPU an idle acc wait and an idle acc top use over
// ACC_IDLE_SECONDS (default 60) while nothing happens, and the resident
// memory of 50 waiters watching one room. Run with -benchtime 1x.
func BenchmarkIdle(b *testing.B) {
	secs := 60
	if v := os.Getenv("ACC_IDLE_SECONDS"); v != "" {
		secs, _ = strconv.Atoi(v)
	}
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	bob := sb.attach(repo, "bob", "cli")
	var waiters []*waiter
	for i := 0; i < 50; i++ {
		waiters = append(waiters, sb.startWaitB(repo, append([]string{"--timeout", "1h"}, bob.creds()...)...))
	}
	topCmd, topPty := startTop(b, sb, repo)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(2 * time.Second) // started up
		w0, t0 := cpuTicks(waiters[0].cmd.Process.Pid), cpuTicks(topCmd.Process.Pid)
		time.Sleep(time.Duration(secs) * time.Second)
		w1, t1 := cpuTicks(waiters[0].cmd.Process.Pid), cpuTicks(topCmd.Process.Pid)
		tick := 10.0 // ms per clock tick (USER_HZ 100)
		b.ReportMetric(float64(w1-w0)*tick, "wait-cpu-ms")
		b.ReportMetric(float64(t1-t0)*tick, "top-cpu-ms")
		var rss int64
		for _, w := range waiters {
			rss += rssKB(w.cmd.Process.Pid)
		}
		b.ReportMetric(float64(rss)/50, "waiter-rss-KB")
		b.ReportMetric(float64(secs), "idle-s")
	}
	b.StopTimer()
	for _, w := range waiters {
		w.cmd.Process.Signal(syscall.SIGTERM)
		<-w.done
	}
	topPty.Write([]byte("q"))
	topCmd.Wait()
}

func (sb *sandbox) startWaitB(dir string, args ...string) *waiter {
	return sb.startWait(dir, args...)
}

// cpuTicks is a process's user+system time in clock ticks (/proc/PID/stat).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
