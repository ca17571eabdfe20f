package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceIsCurrent keeps docs/cli.md equal to what the command tree
// renders; ACC_UPDATE=1 rewrites it.
func TestReferenceIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cli.md")
	want := RenderReference()
	if os.Getenv("ACC_UPDATE") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; create it with `ACC_UPDATE=1 go test ./internal/cli/ -run TestReferenceIsCurrent`", err)
	}
	if string(got) != want {
		t.Fatal("docs/cli.md is out of date with the command tree; run `ACC_UPDATE=1 go test ./internal/cli/ -run TestReferenceIsCurrent`")
	}
}
