package slotcheck

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the reports instead of failing.
type recorder struct {
	testing.TB
	reports []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.reports = append(r.reports, fmt.Sprintf(f, a...)) }

// TestCheckReportsEachBreach: on a source holding one breach of each kind
// (marked "want"), Check reports each once and nothing else: not a git
// flag, not a text in an allowed function — except a refusal there — and
// it reports an allowance naming nothing declared.
func TestCheckReportsEachBreach(t *testing.T) {
	src, err := os.ReadFile("testdata/bad/bad.go")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(string(src), "// want:")
	allowedLine := fmt.Sprintf("bad.go:%d:", 1+strings.Count(string(src[:strings.Index(string(src), "func allowed()")]), "\n"))
	r := &recorder{TB: t}
	allow := map[string]string{"allowed": "test", "allowedRefusal": "test", "gone": "test"}
	n := Check(r, "testdata/bad", allow)
	if n != want+1 || len(r.reports) != n {
		t.Errorf("%d reports (returned %d), want %d breaches and the stale allowance:\n%s", len(r.reports), n, want+1, strings.Join(r.reports, "\n"))
	}
	if !strings.Contains(strings.Join(r.reports, "\n"), "names gone") {
		t.Errorf("the stale allowance is not reported:\n%s", strings.Join(r.reports, "\n"))
	}
	for _, rep := range r.reports {
		if strings.Contains(rep, "name-only") || strings.Contains(rep, allowedLine) {
			t.Errorf("reported a text that passes: %s", rep)
		}
	}
}
