// Command codex is a stand-in for the Codex program in internal/livepush's
// tests. `codex serve <thread>` holds the thread's writer lock in
// $CODEX_HOME as the TUI does, until killed (`codex exec <thread>` the
// same, as a headless run would); `codex queue --thread T
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
	switch {
	case len(os.Args) == 3 && (os.Args[1] == "serve" || os.Args[1] == "exec"):
		dir := filepath.Join(home, "thread-writer-locks")
		os.MkdirAll(dir, 0o755)
		f, err := os.Create(filepath.Join(dir, os.Args[2]+".lock"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
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
