package adapter

import (
	"slices"
	"strings"
	"testing"
)

func TestPatchTargets(t *testing.T) {
	cases := []struct {
		name  string
		patch string
		want  []string
	}{
		{"add (upstream Codex 0.147.0 PreToolUse)", "*** Begin Patch\n*** Add File: guarded.txt\n+hello\n*** End Patch", []string{"guarded.txt"}},
		{"every header", "*** Begin Patch\n" +
			"*** Add File: a/new.go\n+package a\n" +
			"*** Update File: b.go\n@@ func x\n-old\n+new\n" +
			"*** Delete File: c.go\n" +
			"*** Update File: d.go\n*** Move to: e/d.go\n@@\n ctx\n" +
			"*** End Patch\n", []string{"a/new.go", "b.go", "c.go", "d.go", "e/d.go"}},
		{"duplicates once, first order", "*** Update File: x\n*** Update File: y\n*** Update File: x\n", []string{"x", "y"}},
		{"CRLF and blanks", "*** Begin Patch\r\n  *** Add File:   spaced name.txt  \r\n+x\r\n*** End Patch\r\n", []string{"spaced name.txt"}},
		{"absolute", "*** Begin Patch\n*** Delete File: /tmp/abs\n*** End Patch", []string{"/tmp/abs"}},
		{"heredoc wrapped", "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: w.go\n@@\n-a\n+b\n*** End Patch\nEOF\n", []string{"w.go"}},
		{"added content is not a header", "*** Begin Patch\n*** Add File: real\n+*** Add File: fake\n+*** Delete File: fake2\n-*** Move to: fake3\n*** End Patch", []string{"real"}},
		{"empty path", "*** Add File:\n*** Add File:   \n", nil},
		{"not a patch", "echo hi > out.txt", nil},
		{"empty", "", nil},
		{"near misses", "*** Added File: a\n***Add File: b\n** Add File: c\n*** add file: d\n", nil},
	}
	for _, c := range cases {
		if got := PatchTargets(c.patch); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestIsPatchEnvelope(t *testing.T) {
	for s, want := range map[string]bool{
		"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch": true,
		"\n  *** Begin Patch  \r\n*** End Patch":              true,
		"apply_patch <<'EOF'\n*** Begin Patch\n":              false,
		"echo '*** Begin Patch'":                              false,
		"":                                                    false,
	} {
		if got := IsPatchEnvelope(s); got != want {
			t.Errorf("IsPatchEnvelope(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestShellPatch(t *testing.T) {
	body := "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** End Patch\n"
	for _, c := range []struct {
		command string
		ok      bool
	}{
		// The form Codex 0.171 gives its shell tool (internal/realclient).
		{"apply_patch <<'EOF'\n" + body + "EOF\n", true},
		{"apply_patch <<EOF\n" + body + "EOF", true},
		{"applypatch <<-'PATCH'\n" + body + "PATCH\n", true},
		{"apply_patch '" + body + "'", true},
		{"apply_patch <<< '" + body + "'", true},
		// Anything more is a shell command for ShellWriteTargets.
		{"apply_patch <<'EOF'\n" + body + "EOF\necho x > other.go", false},
		{"cd src && apply_patch <<'EOF'\n" + body + "EOF", false},
		{"apply_patch <<'EOF' > out.txt\n" + body + "EOF", false},
		{"X=1 apply_patch <<'EOF'\n" + body + "EOF", false},
		{"apply_patch <<'EOF'\nnot a patch\nEOF", false},
		{"apply_patch", false},
		{"cat <<'EOF'\n" + body + "EOF", false},
		{"apply_patch <<'EOF'\n" + body, false}, // unterminated: does not parse
		{"apply_patch 'unterminated", false},
		{"", false},
	} {
		patch, ok := ShellPatch(c.command)
		if ok != c.ok {
			t.Errorf("ShellPatch(%q) = %v, want %v", c.command, ok, c.ok)
		}
		if ok && !slices.Equal(PatchTargets(patch), []string{"src/a.go"}) {
			t.Errorf("ShellPatch(%q) patch %q has targets %q", c.command, patch, PatchTargets(patch))
		}
	}
}

func FuzzPatchTargets(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: guarded.txt\n+hello\n*** End Patch")
	f.Add("*** Update File: a\n*** Move to: b\n")
	f.Add("\r\n*** Delete File: \x00\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, patch string) {
		got := PatchTargets(patch)
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || seen[p] || strings.ContainsAny(p, "\n") || p != strings.TrimSpace(p) {
				t.Fatalf("bad target %q in %q", p, got)
			}
			seen[p] = true
			if !strings.Contains(patch, p) {
				t.Fatalf("target %q is not in the patch", p)
			}
		}
		_ = IsPatchEnvelope(patch)
	})
}
