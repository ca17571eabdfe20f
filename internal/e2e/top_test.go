package e2e

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]`)

// screen collects what a program writes to its pseudo-terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.ReplaceAllString(s.buf.String(), "")
}

func (s *screen) waitFor(t *testing.T, what string, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !re.MatchString(s.text()) {
		if time.Now().After(deadline) {
			t.Fatalf("acc top never showed %s; the screen holds:\n%s", what, tail(s.text(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestTopLive drives acc top in a pseudo-terminal: it shows a second
// session joining, a claim appearing and a reply changing a receipt,
// without a key pressed, and quits cleanly on q.
func TestTopLive(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	cmd, f := startTop(t, sb, repo)
	defer f.Close()
	scr := &screen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			scr.mu.Lock()
			scr.buf.Write(b[:n])
			scr.mu.Unlock()
			if err != nil {
				if err != io.EOF {
					return
				}
				return
			}
		}
	}()
	scr.waitFor(t, "alice", regexp.MustCompile(`alice\s+cli\s+online`))

	bob := sb.attach(repo, "bob", "cli")
	scr.waitFor(t, "bob joining", regexp.MustCompile(`bob\s+cli\s+online`))

	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go"}, bob.creds()...)...)
	scr.waitFor(t, "the claim", regexp.MustCompile(`file:src/a\.go\s+exclusive\s+advisory\s+held by bob`))

	q := sb.sendAs(alice, "--to", "bob", "--type", "question", "--subject", "which port", "--body", "8080?")
	scr.waitFor(t, "the open question", regexp.MustCompile(`question\s+reply\s+alice → bob:queued`))
	// Opening the thread shows it and moves no receipt.
	f.Write([]byte("\r"))
	scr.waitFor(t, "the opened thread", regexp.MustCompile(`(?s)subject: which port.*8080\?.*bob: queued`))
	var hist struct {
		Receipts []struct {
			State string `json:"state"`
		} `json:"receipts"`
	}
	sb.jsonOK(&hist, repo, "sync", "--scope", "history", "--message", q)
	if len(hist.Receipts) != 1 || hist.Receipts[0].State != "queued" {
		t.Fatalf("viewing the thread changed a receipt: %+v", hist)
	}
	f.Write([]byte("\x1b"))
	sb.ok(repo, append([]string{"inbox", "--message", q}, bob.creds()...)...)
	scr.waitFor(t, "the receipt retrieved", regexp.MustCompile(`alice → bob:retrieved`))
	mark := len(scr.text())
	sb.ok(repo, append([]string{"reply", "--message", q, "--body", "9090"}, bob.creds()...)...)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(scr.text()[mark:], "nothing is owed") {
		if time.Now().After(deadline) {
			t.Fatalf("the reply did not close the thread on screen:\n%s", tail(scr.text(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}

	if _, err := f.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("acc top did not quit cleanly: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("acc top did not quit on q")
	}
}

// startTop runs acc top in dir in a 160×40 pseudo-terminal.
func startTop(t testing.TB, sb *sandbox, dir string) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := exec.Command(accBin, "top")
	cmd.Dir = dir
	cmd.Env = append(sb.environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	return cmd, f
}
