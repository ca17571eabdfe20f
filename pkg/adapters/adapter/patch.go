package adapter

import "strings"

// Header lines of a Codex apply_patch body that name a file the patch
// writes (docs/adapters.md#codex). A move writes both sides: the
// Update File line names the source, Move to the destination.
var patchHeaders = []string{
	"*** Add File:",
	"*** Update File:",
	"*** Delete File:",
	"*** Move to:",
}

// PatchTargets returns the paths a Codex apply_patch body writes, as the
// patch spells them (relative to the session's cwd, or absolute), without
// duplicates, in the order they first appear. It reads only header lines;
// hunk lines (prefixed "+", "-" or a space) are content and never targets.
// Surrounding blanks are ignored as Codex's own lenient reader does, so the
// body may come wrapped in a heredoc or with CRLF line ends. Anything that
// is not a patch yields no targets.
func PatchTargets(patch string) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "*** ") {
			continue
		}
		for _, h := range patchHeaders {
			p, ok := strings.CutPrefix(line, h)
			if !ok {
				continue
			}
			p = strings.TrimSpace(p)
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			break
		}
	}
	return out
}

// IsPatchEnvelope reports whether text is itself an apply_patch body (its
// first non-blank line is "*** Begin Patch"), the form in which Codex may
// hand a patch to its shell tool (docs/adapters.md#codex).
func IsPatchEnvelope(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n")
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(first) == "*** Begin Patch"
}
