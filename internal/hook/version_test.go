package hook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
)

// npmTree makes <root>/node_modules/@x/tool with a package.json and a bin
// script, linked from node_modules/.bin/<link> as npm does, and puts .bin on
// PATH.
func npmTree(t *testing.T, packageJSON, link string) {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "node_modules", "@x", "tool")
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(packageJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "tool.js"), []byte("#!/bin/sh\necho 9.9.9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "@x", "tool", "bin", "tool.js"), filepath.Join(bin, link)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
}

// TestProbeVersionAsksTheProgram: the version is asked of the program a
// person runs (Binary), not of the name the client's process carries
// (ClientCommand): Kimi Code's npm bin is kimi, its process kimi-code, and
// nothing named kimi-code is on PATH.
func TestProbeVersionAsksTheProgram(t *testing.T) {
	a := clients.Get("kimi")
	npmTree(t, `{"name":"@x/tool","version":"2.1.0","bin":{"kimi":"bin/tool.js"}}`, "kimi")
	if v := probeVersion(context.Background(), a, func(string) string { return "" }); v != "2.1.0" {
		t.Errorf("probeVersion(kimi) = %q, want 2.1.0 from the kimi program's package", v)
	}
}

// TestProbeVersionFromTheClientsVariable: Kilo Code names its version in
// KILOCODE_VERSION, which its plugin passes to acc-hook; that wins over a
// kilo on PATH (here a launcher of another version) when the client
// process KILO_PID names (here this test's parent, an ancestor as Kilo is
// of its hooks) was started without the variable, i.e. set it itself. An
// inherited value, a client process whose start environment cannot be
// read or that is not an ancestor, and a value with no version in it are
// passed over for PATH.
func TestProbeVersionFromTheClientsVariable(t *testing.T) {
	a := clients.Get("kilo")
	npmTree(t, `{"name":"@x/tool","version":"7.7.7","bin":{"kilo":"bin/tool.js"}}`, "kilo")
	env := func(v string, pid int) func(string) string {
		return func(k string) string {
			switch k {
			case "KILOCODE_VERSION":
				return v
			case "KILO_PID":
				return strconv.Itoa(pid)
			}
			return ""
		}
	}
	parent := os.Getppid()
	if start, err := startEnviron(parent); err != nil {
		t.Skipf("the start environment of a process cannot be read here: %v", err)
	} else if slices.ContainsFunc(start, func(kv string) bool { return strings.HasPrefix(kv, "KILOCODE_VERSION=") }) {
		t.Skip("this test's parent was started with KILOCODE_VERSION")
	}
	if v := probeVersion(context.Background(), a, env("7.7.9", parent)); v != "7.7.9" {
		t.Errorf("with KILOCODE_VERSION=7.7.9 set by the client: got %q", v)
	}
	if v := probeVersion(context.Background(), a, env("unknown", parent)); v != "7.7.7" {
		t.Errorf("with KILOCODE_VERSION=unknown: got %q, want 7.7.7 from the kilo on PATH", v)
	}
	if v := probeVersion(context.Background(), a, env("7.7.9", 0)); v != "7.7.7" {
		t.Errorf("with no client process: got %q, want 7.7.7 from the kilo on PATH", v)
	}
	if v := probeVersion(context.Background(), clients.Get("opencode"), env("7.7.9", parent)); v == "7.7.9" {
		t.Error("OpenCode's version was read from Kilo's variable")
	}
	for name, start := range map[string]func(int) ([]string, error){
		"inherited":  func(int) ([]string, error) { return []string{"PATH=/bin", "KILOCODE_VERSION=7.6.0"}, nil },
		"unreadable": func(int) ([]string, error) { return nil, errors.New("not implemented") },
	} {
		t.Run(name, func(t *testing.T) {
			saved := startEnviron
			startEnviron = start
			defer func() { startEnviron = saved }()
			if v := probeVersion(context.Background(), a, env("7.7.9", parent)); v != "7.7.7" {
				t.Errorf("got %q, want 7.7.7 from the kilo on PATH", v)
			}
		})
	}
}

// fakeClaude puts a "claude" running script first on PATH (with /bin for
// sleep and touch).
func fakeClaude(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+"/usr/bin:/bin")
}

// TestProbeVersionRetriesWithinItsBudget: acc-hook asks a client's
// --version again when the first answer has no version; one that never
// answers costs the hook at most ProbeBudget of its Deadline, even when
// ACC_PROBE_TIMEOUT_MS asks for more; the variable bounds each attempt,
// and an unusable value is ignored. No case needs the machine to be
// quick: a client that must answer answers at once, within a generous
// budget, and one that must run out of time never answers.
func TestProbeVersionRetriesWithinItsBudget(t *testing.T) {
	a := clients.Get("claude")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "ACC_PROBE_TIMEOUT_MS" {
				return v
			}
			return ""
		}
	}
	const slack = 30 * time.Second

	// Nothing the first time, the version the second.
	fakeClaude(t, `m="$(dirname "$0")/asked"
if [ -e "$m" ]; then echo '2.1.332 (Claude Code)'; exit 0; fi
touch "$m"; exit 1
`)
	p := versionProbe("claude", env("60000"))
	p.Budget = 2 * time.Minute // generous, so that the answer is never late
	if v := p.Run(context.Background()).Version; v != "2.1.332" {
		t.Errorf("no version at first: got %q, want 2.1.332 from the second attempt", v)
	}

	// An unusable value counts as unset: the default bound.
	if p := versionProbe("claude", env("not a number")); p.Timeout != ProbeTimeout || p.Budget != ProbeBudget {
		t.Errorf("ACC_PROBE_TIMEOUT_MS=not a number: bound %v, budget %v; want %v, %v", p.Timeout, p.Budget, ProbeTimeout, ProbeBudget)
	}

	// Never answers: the budget ends it, though the variable would allow
	// two minutes.
	fakeClaude(t, "exec sleep 3600\n")
	start := time.Now()
	if v := probeVersion(context.Background(), a, env("60000")); v != "" {
		t.Errorf("a client that never answers: got %q", v)
	}
	took := time.Since(start)
	t.Logf("a client that never answers took %v of the hook (budget %v)", took, ProbeBudget)
	if took < ProbeBudget-100*time.Millisecond || took > ProbeBudget+slack {
		t.Errorf("the probe took %v, want its budget %v", took, ProbeBudget)
	}

	// The variable bounds each attempt: at 100 ms a client that takes
	// two seconds is unknown, asked twice.
	fakeClaude(t, "sleep 2; echo '2.1.400 (Claude Code)'\n")
	if res := versionProbe("claude", env("100")).Run(context.Background()); res.Version != "" || !strings.Contains(res.Unknown, "within 100 ms (asked twice)") {
		t.Errorf("with 100 ms: got %+v, want unknown after two attempts of 100 ms", res)
	}
}
