// Package hook is the acc-hook runner. This first version only fails open:
// it reads and discards the payload and exits 0, so an installed hook never
// blocks a client. Normalisation, projection and the guard come with the
// native-client work (reference/adapters.md §1.2–1.6).
package hook

import (
	"fmt"
	"io"
)

// Main runs acc-hook with args (adapter, event) and returns the exit code,
// always 0: every failure fails open with one diagnostic line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	_, _ = io.Copy(io.Discard, io.LimitReader(stdin, 16<<20))
	if len(args) != 2 {
		fmt.Fprintln(stderr, "acc-hook: usage: acc-hook <adapter> <event> (payload on stdin); failing open")
		return 0
	}
	return 0
}
