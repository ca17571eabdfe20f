package protocol

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// exitCodesDoc is docs/exit-codes.md at the repository root.
var exitCodesDoc = filepath.Join("..", "..", "docs", "exit-codes.md")

// TestExitCodesDocIsCurrent keeps docs/exit-codes.md equal to what the table
// renders. ACC_UPDATE=1 rewrites the file; otherwise a missing or stale file
// fails.
func TestExitCodesDocIsCurrent(t *testing.T) {
	want := RenderExitCodesMarkdown()
	if os.Getenv("ACC_UPDATE") == "1" {
		if err := os.WriteFile(exitCodesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", exitCodesDoc)
		return
	}
	got, err := os.ReadFile(exitCodesDoc)
	if err != nil {
		t.Fatalf("%v; generate it with `ACC_UPDATE=1 go test ./pkg/protocol/`", err)
	}
	if string(got) != want {
		t.Fatalf("docs/exit-codes.md is out of date with pkg/protocol/errors.go; run `ACC_UPDATE=1 go test ./pkg/protocol/` and commit the result\n%s", firstDiff(string(got), want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n  file:     " + gl + "\n  rendered: " + wl
		}
	}
	return ""
}

func TestRenderExitCodesMarkdownCoversTheTables(t *testing.T) {
	md := RenderExitCodesMarkdown()
	for _, e := range ExitCodes {
		if !strings.Contains(md, "| "+strconv.Itoa(int(e.Code))+" | `"+e.Name+"` |") {
			t.Errorf("exit code %d is not rendered", e.Code)
		}
	}
	for _, r := range Reasons {
		if strings.Count(md, "| `"+r.Reason+"` | "+strconv.Itoa(int(r.Code))+" ") != 1 {
			t.Errorf("reason %s is not rendered exactly once", r.Reason)
		}
	}
	if mdCell("a|b\nc") != `a\|b c` {
		t.Errorf("mdCell = %q", mdCell("a|b\nc"))
	}
}
