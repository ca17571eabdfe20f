// Command acc-hook is the hook runner native clients call as
// `acc-hook <adapter> <event>` with the event payload on stdin. Until the
// adapters are wired it fails open: it prints nothing, lets the client's
// action proceed, and exits 0.
package main

import (
	"os"

	"github.com/acc-go/acc/internal/hook"
)

func main() { os.Exit(hook.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
