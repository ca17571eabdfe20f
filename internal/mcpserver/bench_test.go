package mcpserver

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// The speed of acc-mcp (docs/mcp.md#speed), as benchmarks (reported, never
// asserted): tool-call latency over one warm stdio connection to the built
// acc-mcp, and its resident memory across the run.
//
//	go test -run '^$' -bench MCP -benchtime 10000x ./internal/mcpserver/
//
// gives acc_message over 10,000 calls with the server's RSS before and
// after, and the acc_inbox summary page with 10,000 messages pending.

// BenchmarkMCPMessage sends b.N notes through one acc-mcp connection.
// Metrics: p50-ms and p99-ms per call; the sending server's RSS before the
// first call (rss-start-KB), after a tenth of the calls (rss-10pct-KB, warm)
// and after the last (rss-end-KB): growth means a leak.
func BenchmarkMCPMessage(b *testing.B) {
	r := newRoom(b)
	recv := startBinary(b, r, "research")
	recv.initialize("2025-11-25")
	recv.ok("acc_status", map[string]any{})
	send, sp := spawnBinary(b, r, "alice")
	send.initialize("2025-11-25")
	send.ok("acc_status", map[string]any{})
	startRSS, warmRSS := vmRSSKB(sp.cmd.Process.Pid), 0.0
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		send.ok("acc_message", map[string]any{"to": []any{"research"}, "subject": fmt.Sprintf("note %d", i), "body": "measure"})
		lat = append(lat, time.Since(start))
		if i == b.N/10 {
			warmRSS = vmRSSKB(sp.cmd.Process.Pid)
		}
	}
	b.StopTimer()
	report(b, lat)
	b.ReportMetric(startRSS, "rss-start-KB")
	b.ReportMetric(warmRSS, "rss-10pct-KB")
	b.ReportMetric(vmRSSKB(sp.cmd.Process.Pid), "rss-end-KB")
}

// BenchmarkMCPInboxPage reads the acc_inbox summary page b.N times with
// ACC_MCP_BENCH_PENDING (default 10,000) messages pending.
func BenchmarkMCPInboxPage(b *testing.B) {
	n := 10000
	if v := os.Getenv("ACC_MCP_BENCH_PENDING"); v != "" {
		fmt.Sscan(v, &n)
	}
	r := newRoom(b)
	recv := startBinary(b, r, "research")
	recv.initialize("2025-11-25")
	recv.ok("acc_status", map[string]any{})
	send, _ := spawnBinary(b, r, "alice")
	send.initialize("2025-11-25")
	send.ok("acc_status", map[string]any{})
	for i := 0; i < n; i++ {
		send.ok("acc_message", map[string]any{"to": []any{"research"}, "subject": fmt.Sprintf("note %d", i), "body": "measure"})
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		page := recv.ok("acc_inbox", map[string]any{})
		lat = append(lat, time.Since(start))
		if len(page["items"].([]any)) == 0 {
			b.Fatal("an empty page")
		}
	}
	b.StopTimer()
	report(b, lat)
	b.ReportMetric(float64(n), "pending")
}

func report(b *testing.B, lat []time.Duration) {
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	pct := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// vmRSSKB is a process's resident set size in KiB from /proc (0 elsewhere).
func vmRSSKB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb float64
			fmt.Sscan(f[1], &kb)
			return kb
		}
	}
	return 0
}

// BenchmarkMCPEnginePaired sends notes through two warm acc-mcp
// connections, one to a room in SQLite and one to a room on the
// PostgreSQL test server (newRoomPG, over loopback), alternately in
// one loop: sqlite-p50-ms and postgresql-p50-ms (and p99) per acc_message
// call, never asserted.
//
//	scripts/with-pg.sh go test -run '^$' -bench MCPEnginePaired -benchtime 500x ./internal/mcpserver/
func BenchmarkMCPEnginePaired(b *testing.B) {
	rooms := []*room{newRoom(b), newRoomPG(b)}
	senders := make([]*client, len(rooms))
	for i, r := range rooms {
		recv := startBinary(b, r, "research")
		recv.initialize("2025-11-25")
		recv.ok("acc_status", map[string]any{})
		senders[i] = startBinary(b, r, "alice")
		senders[i].initialize("2025-11-25")
		senders[i].ok("acc_status", map[string]any{})
	}
	lat := make([][]time.Duration, len(rooms))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, send := range senders {
			start := time.Now()
			send.ok("acc_message", map[string]any{"to": []any{"research"}, "subject": fmt.Sprintf("note %d", i), "body": "measure"})
			lat[j] = append(lat[j], time.Since(start))
		}
	}
	b.StopTimer()
	for j, name := range []string{"sqlite", "postgresql"} {
		s := append([]time.Duration(nil), lat[j]...)
		sort.Slice(s, func(a, c int) bool { return s[a] < s[c] })
		b.ReportMetric(float64(s[len(s)/2])/1e6, name+"-p50-ms")
		b.ReportMetric(float64(s[int(0.99*float64(len(s)-1))])/1e6, name+"-p99-ms")
	}
}
