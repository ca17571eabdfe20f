// Command acc is the command line for humans and agents; see `acc help`.
package main

import (
	"os"

	"github.com/acc-go/acc/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.DefaultEnv())) }
