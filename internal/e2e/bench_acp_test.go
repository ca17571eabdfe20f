package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkACPRelay measures what acc acp adds (docs/acp.md#what-the-relay-does):
// the round trip of a request the stand-in agent
// answers at once, through the relay and straight to the agent, median and
// p99 over b.N requests; the same for a session/prompt, which through the
// relay gains its projection block (a peer and a pending message in the
// room); and the relay's resident memory after b.N requests (10,000 with
// -benchtime 10000x). Reported, never asserted:
//
//	go test -run '^$' -bench ACPRelay -benchtime 10000x ./internal/e2e/
func BenchmarkACPRelay(b *testing.B) {
	sb := newSandbox(b)
	repo := sb.newRepo("repo")
	peer := sb.attach(repo, "peer", "cli")
	e := sb.startRelay(repo, []string{"--participant", "bench"})
	e.initSession(repo)

	direct := startDirectAgent(b)
	ping := func(send func(string), wait func(string), id int) time.Duration {
		start := time.Now()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_bench/ping","params":{}}`, id))
		wait(fmt.Sprintf(`"id":%d,`, id))
		return time.Since(start)
	}
	prompt := func(send func(string), wait func(string), id int, sid string) time.Duration {
		start := time.Now()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id, sid))
		wait(fmt.Sprintf(`"id":%d,"jsonrpc":"2.0","result"`, id))
		return time.Since(start)
	}
	b.ResetTimer()
	var viaRelay, straight []time.Duration
	for i := range b.N {
		viaRelay = append(viaRelay, ping(e.send, e.awaitLast, 100+i))
		straight = append(straight, ping(direct.send, direct.await, 100+i))
	}
	b.StopTimer()
	rss := rssKB(e.cmd.Process.Pid)
	n := min(b.N, 200)
	var promptRelay, promptDirect []time.Duration
	for i := range n {
		sb.sendAs(peer, "--to", "bench", "--subject", "note "+strconv.Itoa(i), "--body", "pending for the next prompt")
		promptRelay = append(promptRelay, prompt(e.send, e.awaitLast, 1_000_000+i, "fake-session-1"))
		promptDirect = append(promptDirect, prompt(direct.send, direct.await, 1_000_000+i, "fake-session-1"))
	}
	e.finish(10 * time.Second)
	direct.close()
	p := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(viaRelay, 0.5)-p(straight, 0.5), "added-p50-ms")
	b.ReportMetric(p(viaRelay, 0.99)-p(straight, 0.99), "added-p99-ms")
	b.ReportMetric(p(viaRelay, 0.5), "relay-p50-ms")
	b.ReportMetric(p(straight, 0.5), "direct-p50-ms")
	b.ReportMetric(p(promptRelay, 0.5)-p(promptDirect, 0.5), "prompt-added-p50-ms")
	b.ReportMetric(p(promptRelay, 0.99)-p(promptDirect, 0.99), "prompt-added-p99-ms")
	b.ReportMetric(float64(rss)/1024, "relay-rss-MB")
}

// awaitLast waits for a line matching re among the lines received after
// the last one it matched before (a benchmark sends thousands).
func (e *editor) awaitLast(re string) {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for i := e.seen; i < len(e.lines); i++ {
			if strings.Contains(string(e.lines[i]), re) {
				e.seen = i + 1
				return
			}
		}
		if e.eof {
			e.t.Fatalf("no line with %s", re)
		}
		e.cond.Wait()
	}
}

// directAgent is the stand-in agent with no relay in front.
type directAgent struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	t   testing.TB
}

func startDirectAgent(t testing.TB) *directAgent {
	self, _ := os.Executable()
	d := &directAgent{cmd: exec.Command(self), t: t}
	d.cmd.Env = append(os.Environ(), fakeACPEnv+"=1", "FAKE_ACP_DIR="+t.TempDir())
	d.in, _ = d.cmd.StdinPipe()
	out, _ := d.cmd.StdoutPipe()
	d.out = bufio.NewReaderSize(out, 1<<16)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	d.await(`"id":0,`)
	d.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	d.await(`"id":1,`)
	return d
}

func (d *directAgent) send(line string) { io.WriteString(d.in, line+"\n") }

func (d *directAgent) await(s string) {
	for {
		line, err := d.out.ReadString('\n')
		if strings.Contains(line, s) {
			return
		}
		if err != nil {
			d.t.Fatalf("the agent ended before %s", s)
		}
	}
}

func (d *directAgent) close() { d.in.Close(); d.cmd.Wait() }
