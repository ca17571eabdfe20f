package clients

import (
	"slices"
	"testing"
)

// TestRegistry: the five client ids of docs/decisions.md#14-client-ids,
// each mapped to the adapter of that id; an unknown or differently cased
// id has none; every installer is one of them, and each of them can
// be installed but none other.
func TestRegistry(t *testing.T) {
	want := []string{"claude", "codex", "copilot", "droid", "gemini", "grok", "kilo", "kimi", "opencode", "pi", "qwen"}
	if got := IDs(); !slices.Equal(got, want) {
		t.Fatalf("IDs() = %v, want %v", got, want)
	}
	for id, a := range All() {
		if a.ID() != id || Get(id) == nil || Get(id).ID() != id {
			t.Errorf("%s maps to the adapter of %q", id, a.ID())
		}
		if a.DisplayName() == "" {
			t.Errorf("%s has no display name", id)
		}
	}
	for _, id := range []string{"Claude", "acp", "mcp", "cli", ""} {
		if Get(id) != nil {
			t.Errorf("Get(%q) found an adapter", id)
		}
	}
	ins := Installers()
	for id, in := range ins {
		if in.ID() != id || Get(id) == nil {
			t.Errorf("installer %s is the adapter of %q", id, in.ID())
		}
	}
	if len(ins) != len(want) {
		t.Errorf("%d installers, want %d", len(ins), len(want))
	}
}
