package core

import "strings"

// Overlaps reports whether two canonical resources touch the same thing
// (docs/protocol.md#overlap): they are identical, or they share a scheme and
// one is a glob X/** whose prefix X equals the other's path or contains it
// segment-wise (file:a/** covers file:a and file:a/x, never file:ab/x). Two
// globs overlap when either prefix covers the other. Different schemes
// never overlap.
func Overlaps(a, b string) bool {
	if a == b {
		return true
	}
	sa, pa, okA := strings.Cut(a, ":")
	sb, pb, okB := strings.Cut(b, ":")
	if !okA || !okB || sa != sb {
		return false
	}
	return covers(pa, pb) || covers(pb, pa)
}

// covers reports whether glob g (a path ending in "/**", or "**" for the
// whole root) covers path p.
func covers(g, p string) bool {
	if g == "**" {
		return true
	}
	prefix, ok := strings.CutSuffix(g, "/**")
	if !ok {
		return false
	}
	p = strings.TrimSuffix(p, "/**")
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}
