//go:build !linux

package certify

// adoptOrphans and endOrphans do nothing where a process cannot adopt
// orphans.
func adoptOrphans() {}
func endOrphans()   {}
