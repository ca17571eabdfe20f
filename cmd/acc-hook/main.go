// Command acc-hook is the hook runner native clients call as
// `acc-hook <adapter> <event>` with the event payload on stdin
// (docs/hooks.md). On any error it fails open: the client's action
// proceeds and acc-hook exits 0.
package main

import (
	"os"

	"github.com/acc-go/acc/internal/hook"
	"github.com/acc-go/acc/internal/install"
)

func main() {
	os.Exit(hook.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, install.ReadPolicies))
}
