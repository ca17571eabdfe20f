// Command demo is acc's main job, played for real: two sessions in two
// worktrees of a throwaway Git repository ask, answer, acknowledge and hand
// off through the built `acc` binary, and every step prints the command it
// ran and the receipt states it observed. It never touches the user's
// repositories or data home: everything lives in a temporary directory that
// is removed at the end (keep it with -keep).
//
//	go run ./internal/demo -bin ./bin     (what `make demo` runs)
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	bin := flag.String("bin", "", "directory holding the built acc binary (default: build it into the temporary directory)")
	keep := flag.Bool("keep", false, "keep the temporary repository and data home, and print where they are")
	flag.Parse()
	if err := Run(Options{BinDir: *bin, Keep: *keep, Out: os.Stdout}); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}
