package adapter

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShellWriteTargetsNestedSubstitutionsStayLinear: MaxShellCommand's
// promise is that parsing and walking are linear in the text, so a command
// well under 1 MiB is read well inside the hook's 5-second budget. Nested
// command substitutions break it: each level's word is printed again in
// full (wordOf → source), so the walk is quadratic. A 17 KiB command of
// 6,000 nested $( took acc-hook 6 s and then failed open
// (hook_budget_exceeded) — a write into a peer's guarded claim let through —
// and 35 KiB took over 40 s. Found in the review of issue 16.
func TestShellWriteTargetsNestedSubstitutionsStayLinear(t *testing.T) {
	const n = 6000
	cmd := "echo " + strings.Repeat("$(", n) + "x" + strings.Repeat(")", n) + " > x.go"
	start := time.Now()
	got, err := ShellWriteTargets(cmd)
	took := time.Since(start)
	if took > time.Second {
		t.Errorf("a %d-byte command of %d nested substitutions took %v to read (want well under a second; the hook's whole budget is 5 s)", len(cmd), n, took)
	}
	if err == nil && !slices.Contains(got, "x.go") {
		t.Errorf("targets %q: the redirection to x.go is missing", got)
	}
}
