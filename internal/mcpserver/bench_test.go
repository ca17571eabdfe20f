package mcpserver

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestMeasureToolCalls measures, never asserts (issue 5 "Measure"): tool-call
// latency over one warm stdio connection to the built acc-mcp — acc_message,
// then the acc_inbox summary page with 10,000 messages pending — and the
// server's resident memory across 10,000 calls. It runs only with
// ACC_MCP_BENCH=1 (about a minute); ACC_MCP_BENCH_N changes the 10,000.
func TestMeasureToolCalls(t *testing.T) {
	if os.Getenv("ACC_MCP_BENCH") != "1" {
		t.Skip("a measurement; run with ACC_MCP_BENCH=1")
	}
	n := 10000
	if v := os.Getenv("ACC_MCP_BENCH_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	r := newRoom(t)
	recv := startBinary(t, r, "research")
	recv.initialize("2025-11-25")
	recv.ok("acc_status", map[string]any{})
	send, sp := spawnBinary(t, r, "alice")
	t.Cleanup(func() { sp.in.Close(); sp.cmd.Wait() })
	send.initialize("2025-11-25")
	send.ok("acc_status", map[string]any{})

	rss := map[int]string{0: vmRSS(sp.cmd.Process.Pid)}
	lat := make([]time.Duration, 0, n)
	for i := 1; i <= n; i++ {
		start := time.Now()
		send.ok("acc_message", map[string]any{"to": []any{"research"}, "subject": fmt.Sprintf("note %d", i), "body": "measure"})
		lat = append(lat, time.Since(start))
		if i == n/10 || i == n/2 || i == n {
			rss[i] = vmRSS(sp.cmd.Process.Pid)
		}
	}
	t.Logf("acc_message x%d: %s", n, summarise(lat))
	t.Logf("acc-mcp RSS: before %s, after %d calls %s, after %d %s, after %d %s", rss[0], n/10, rss[n/10], n/2, rss[n/2], n, rss[n])

	calls := 200
	lat = lat[:0]
	var items int
	for i := 0; i < calls; i++ {
		start := time.Now()
		page := recv.ok("acc_inbox", map[string]any{})
		lat = append(lat, time.Since(start))
		items = len(page["items"].([]any))
	}
	t.Logf("acc_inbox summary page (%d items shown, %d pending) x%d: %s", items, n, calls, summarise(lat))
}

func summarise(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	pct := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))] }
	return fmt.Sprintf("median %v, p90 %v, p99 %v, max %v", pct(0.5).Round(10*time.Microsecond),
		pct(0.9).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), s[len(s)-1].Round(10*time.Microsecond))
}

// vmRSS is a process's resident set size from /proc ("?" elsewhere).
func vmRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.Join(strings.Fields(strings.TrimPrefix(line, "VmRSS:")), " ")
		}
	}
	return "?"
}
