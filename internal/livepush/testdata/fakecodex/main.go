// Command codex is a stand-in for the Codex program in internal/livepush's
// tests. `codex [-c k=v] serve <thread>…` holds the threads' writer locks
// in $CODEX_HOME as the TUI does, until killed (`codex [-c k=v] exec
// <thread>` the same, as a headless run would); `codex queue --thread T
// --message=TEXT` appends "T\tTEXT" (TEXT JSON-quoted) to
// $CODEX_HOME/queued and answers as Codex 0.171.0 does, or fails when
// $CODEX_HOME/refuse exists.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	home := os.Getenv("CODEX_HOME")
	args := os.Args
	for len(args) > 2 && args[1] == "-c" { // global options, as codex takes them
		args = append(args[:1:1], args[3:]...)
	}
	switch {
	case len(args) >= 3 && (args[1] == "serve" || args[1] == "exec"):
		// serve <thread> [<other thread>…]: hold each thread's lock, as the
		// TUI does (after /new it holds two).
		dir := filepath.Join(home, "thread-writer-locks")
		os.MkdirAll(dir, 0o755)
		for _, th := range args[2:] {
			f, err := os.Create(filepath.Join(dir, th+".lock"))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer f.Close()
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case len(os.Args) == 5 && os.Args[1] == "queue" && os.Args[2] == "--thread" && strings.HasPrefix(os.Args[4], "--message="):
		if _, err := os.Stat(filepath.Join(home, "refuse")); err == nil {
			fmt.Fprintln(os.Stderr, "Error: failed to queue session message: no rollout found")
			os.Exit(1)
		}
		if _, err := os.Stat(filepath.Join(home, "hang")); err == nil {
			time.Sleep(time.Hour)
		}
		text, _ := json.Marshal(strings.TrimPrefix(os.Args[4], "--message="))
		f, _ := os.OpenFile(filepath.Join(home, "queued"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		fmt.Fprintf(f, "%s\t%s\n", os.Args[3], text)
		f.Close()
		fmt.Printf("Queued message 0000 for thread %s.\n", os.Args[3])
	default:
		fmt.Fprintln(os.Stderr, "usage")
		os.Exit(2)
	}
}
