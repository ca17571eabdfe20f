package adapter

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// nestedSubst is "echo $($(…x…)) > x.go" with n nested substitutions,
// each level's command being pad then the next level.
func nestedSubst(n int, pad string) string {
	return "echo " + strings.Repeat(pad+"$(", n) + "x" + strings.Repeat(")", n) + " > x.go"
}

// TestShellWriteTargetsNestedSubstitutionsStayLinear: nested command
// substitutions used to make the walk quadratic (each level's word printed
// its whole subtree again), so a 17 KiB command of 6,000 levels kept
// acc-hook past its budget and a write into a peer's guarded claim went
// through. The walk's work is a counter,
// not a clock: it must grow linearly with the nesting, and a command
// nested past MaxShellDepth is not read at all (ErrShellTooComplex, which
// the guard treats as a command that could write anywhere).
func TestShellWriteTargetsNestedSubstitutionsStayLinear(t *testing.T) {
	work := map[int]int{}
	for _, n := range []int{100, 200, 400, 800} {
		cmd := nestedSubst(n, "")
		w, err := readShell(cmd)
		if err != nil {
			t.Fatalf("%d levels: %v", n, err)
		}
		if !slices.Contains(w.targets, "x.go") {
			t.Errorf("%d levels: targets %q lack x.go", n, w.targets)
		}
		work[n] = w.work
	}
	// Linear: doubling the nesting at most doubles the work (plus a
	// constant), where the old walk took four times as much.
	for _, n := range []int{200, 400, 800} {
		if work[n] > 2*work[n/2]+16 {
			t.Errorf("work for %d levels is %d, for %d levels %d: more than linear (all: %v)", n, work[n], n/2, work[n/2], work)
		}
	}
	for _, n := range []int{MaxShellDepth + 1, 6000, 12000, 50000} {
		got, err := ShellWriteTargets(nestedSubst(n, ""))
		if !errors.Is(err, ErrShellTooComplex) || got != nil {
			t.Errorf("%d levels: %q, %v; want no targets and ErrShellTooComplex", n, got, err)
			continue
		}
		if want := fmt.Sprintf("shell command too complex to read: it nests more than %d levels deep", MaxShellDepth); err.Error() != want {
			t.Errorf("%d levels: error %q, want %q", n, err, want)
		}
	}
	if got, err := ShellWriteTargets(nestedSubst(MaxShellDepth, "")); err != nil || !slices.Equal(got, []string{"x.go"}) {
		t.Errorf("%d levels (the most read): %q, %v", MaxShellDepth, got, err)
	}
}

// TestShellWalkWorkIsBounded: a command within MaxShellCommand and
// MaxShellDepth whose words still make the walk copy text over and over
// (each level's word holds a long literal beside the next substitution, so
// it is copied again at every level above) stops once its work passes
// maxShellWork, and so does statement nesting that uses no brackets.
func TestShellWalkWorkIsBounded(t *testing.T) {
	cmd := nestedSubst(900, "echo "+strings.Repeat("a", 1000))
	if len(cmd) > MaxShellCommand {
		t.Fatalf("the command is %d bytes, over MaxShellCommand", len(cmd))
	}
	got, err := ShellWriteTargets(cmd)
	if !errors.Is(err, ErrShellTooComplex) || got != nil {
		t.Fatalf("a %d-byte command copied %d levels deep: %q, %v; want ErrShellTooComplex", len(cmd), 900, got, err)
	}
	if want := fmt.Sprintf("shell command too complex to read: reading it takes more than %d steps", maxShellWork); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// The same text at a tenth of the depth is read.
	if got, err := ShellWriteTargets(nestedSubst(90, "echo "+strings.Repeat("a", 1000))); err != nil || !slices.Equal(got, []string{"x.go"}) {
		t.Errorf("90 levels: %q, %v", got, err)
	}
	deepIf := strings.Repeat("if true; then ", MaxShellDepth+1) + "rm a" + strings.Repeat("; fi", MaxShellDepth+1)
	if got, err := ShellWriteTargets(deepIf); !errors.Is(err, ErrShellTooComplex) || got != nil {
		t.Errorf("%d nested ifs: %q, %v; want ErrShellTooComplex", MaxShellDepth+1, got, err)
	}
	shallowIf := strings.Repeat("if true; then ", 100) + "rm a" + strings.Repeat("; fi", 100)
	if got, err := ShellWriteTargets(shallowIf); err != nil || !slices.Equal(got, []string{"a"}) {
		t.Errorf("100 nested ifs: %q, %v", got, err)
	}
	if _, ok := ShellPatch("apply_patch " + nestedSubst(MaxShellDepth+1, "")); ok {
		t.Error("a command nested past MaxShellDepth was taken for a patch")
	}
}
