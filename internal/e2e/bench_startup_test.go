package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// baselineEnv names a directory holding acc and acc-hook built from another
// commit (for example `make build` in a checkout of main). When it is set,
// BenchmarkStartupFaults measures that build beside this one, and
// BenchmarkPairedProcess alternates the two builds in one loop, so a
// before → after comparison sees the same machine and the same load.
const baselineEnv = "ACC_BENCH_BASELINE"

// benchBuild is one set of binaries a benchmark runs.
type benchBuild struct{ name, acc, hook string }

// benchBuilds are this tree's binaries, then the baseline's when
// ACC_BENCH_BASELINE names a directory holding both.
func benchBuilds(b *testing.B) []benchBuild {
	out := []benchBuild{{"this", accBin, hookBin}}
	dir := os.Getenv(baselineEnv)
	if dir == "" {
		return out
	}
	base := benchBuild{"baseline", filepath.Join(dir, "acc"), filepath.Join(dir, "acc-hook")}
	for _, p := range []string{base.acc, base.hook} {
		if !fileExists(p) {
			b.Fatalf("%s=%s: %s does not exist", baselineEnv, dir, p)
		}
	}
	return append(out, base)
}

// procSamples are the wall time and the minor page faults (ru_minflt: pages
// the process touched for the first time, which on a small machine is most
// of a short process's cost) of each run of one binary.
type procSamples struct {
	d      []time.Duration
	minflt []int64
}

// run starts bin with args, payload on stdin and the sandbox's environment,
// in dir, and records it; it returns stdout and stderr. A run that ends
// with a signal or a non-zero exit other than okCode fails the benchmark.
func (p *procSamples) run(b *testing.B, sb *sandbox, dir string, payload []byte, bin string, args ...string) (string, string) {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = sb.environ()
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	p.d = append(p.d, time.Since(began))
	if err != nil {
		b.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", bin, strings.Join(args, " "), err, clip(out.String(), 600), clip(errb.String(), 600))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.minflt = append(p.minflt, ru.Minflt)
	}
	return out.String(), errb.String()
}

// report adds the median and p90 wall time and the median minor faults,
// each metric's unit prefixed with prefix ("" or "baseline-").
func (p *procSamples) report(b *testing.B, prefix string) {
	if len(p.d) == 0 {
		return
	}
	slices.Sort(p.d)
	at := func(q float64) int { return min(int(q*float64(len(p.d))), len(p.d)-1) }
	b.ReportMetric(float64(p.d[at(0.5)].Microseconds())/1000, prefix+"p50-ms")
	b.ReportMetric(float64(p.d[at(0.9)].Microseconds())/1000, prefix+"p90-ms")
	if len(p.minflt) > 0 {
		slices.Sort(p.minflt)
		b.ReportMetric(float64(p.minflt[len(p.minflt)/2]), prefix+"minflt")
	}
}

// emptyGoProgram builds a Go program that reads its stdin and exits 0: the
// floor every Go binary's start-up stands on.
func emptyGoProgram(b *testing.B) string {
	dir := b.TempDir()
	src := "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { io.Copy(io.Discard, os.Stdin) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module empty\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "empty")
	build := exec.Command(goTool(), "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the empty program: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkStartupFaults measures what starting acc-hook costs: an empty Go
// program (the floor), acc-hook with no arguments (start-up and its
// one-line refusal, no store), and a pre-tool call of a read-only shell
// command in a room (start-up, payload, workspace, store, guard). Each
// reports the median wall time, the median minor page faults of the child
// (ru_minflt) and the binary's size in bytes; with ACC_BENCH_BASELINE the
// baseline build's acc-hook is measured the same way.
func BenchmarkStartupFaults(b *testing.B) {
	b.Run("binary=empty-go", func(b *testing.B) {
		bin := emptyGoProgram(b)
		sb := newSandbox(b)
		var p procSamples
		b.ResetTimer()
		for range b.N {
			p.run(b, sb, sb.base, nil, bin)
		}
		b.StopTimer()
		p.report(b, "")
		reportSize(b, bin)
	})
	for _, bl := range benchBuilds(b) {
		b.Run("build="+bl.name+"/binary=acc-hook/args=none", func(b *testing.B) {
			sb := newSandbox(b)
			var p procSamples
			b.ResetTimer()
			for range b.N {
				if _, stderr := p.run(b, sb, sb.base, nil, bl.hook); !strings.HasPrefix(stderr, "acc: ") {
					b.Fatalf("acc-hook without arguments said %q", stderr)
				}
			}
			b.StopTimer()
			p.report(b, "")
			reportSize(b, bl.hook)
		})
		b.Run("build="+bl.name+"/binary=acc-hook/event=pre-tool-read", func(b *testing.B) {
			c := clientByID(b, "claude")
			sb := newSandbox(b)
			repo := sb.newRepo("repo")
			sb.hookSession(c, "bench", repo)
			payload := c.shellPayload(b, "bench", repo, "ls -la && git status")
			var p procSamples
			b.ResetTimer()
			for range b.N {
				if out, _ := p.run(b, sb, sb.base, payload, bl.hook, c.id, c.tool); out != c.allow {
					b.Fatalf("the read was not allowed: %q", out)
				}
			}
			b.StopTimer()
			p.report(b, "")
			reportSize(b, bl.hook)
		})
	}
}

func reportSize(b *testing.B, bin string) {
	if fi, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(fi.Size()), "binary-bytes")
	}
}

// BenchmarkPairedProcess runs whole processes of this build and, with
// ACC_BENCH_BASELINE, of the baseline build alternately in one loop, and
// reports each one's median and p90 wall time and median minor faults
// (the baseline's prefixed "baseline-"): `acc message` to a peer, and
// acc-hook's pre-tool call of a shell command in a room where ten peers
// hold guarded claims.
func BenchmarkPairedProcess(b *testing.B) {
	b.Run("op=message", func(b *testing.B) {
		builds := benchBuilds(b)
		sb := newSandbox(b)
		repo := sb.newRepo("repo")
		recv := sb.attach(repo, "recv", "cli")
		sender := sb.attach(repo, "sender", "cli")
		ps := make([]procSamples, len(builds))
		b.ResetTimer()
		for i := range b.N {
			for j, bl := range builds {
				ps[j].run(b, sb, repo, nil, bl.acc, append([]string{"message", "--to", recv.ParticipantID,
					"--subject", fmt.Sprintf("bench %d %s", i, bl.name), "--body", "a benchmark message"}, sender.creds()...)...)
			}
		}
		b.StopTimer()
		reportPaired(b, builds, ps)
	})
	b.Run("op=hook-pre-tool", func(b *testing.B) {
		builds := benchBuilds(b)
		hb := newHookBench(b)
		payload := hb.c.shellPayload(b, hb.sid, hb.repo, `cd src && sed -i 's/a/b/' main.go && go test ./... 2>&1 | tee ../test.log > /dev/null`)
		ps := make([]procSamples, len(builds))
		b.ResetTimer()
		for range b.N {
			for j, bl := range builds {
				if out, _ := ps[j].run(b, hb.sb, hb.sb.base, payload, bl.hook, hb.c.id, hb.c.tool); out != hb.c.allow {
					b.Fatalf("%s: the pre-tool call was not allowed: %s", bl.name, out)
				}
			}
		}
		b.StopTimer()
		reportPaired(b, builds, ps)
	})
}

func reportPaired(b *testing.B, builds []benchBuild, ps []procSamples) {
	for j, bl := range builds {
		prefix := ""
		if bl.name != "this" {
			prefix = bl.name + "-"
		}
		ps[j].report(b, prefix)
	}
}
