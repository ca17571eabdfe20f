package e2e

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// screen is what a program shows in its pseudo-terminal, kept by a
// terminal emulator (charmbracelet/x/vt) that also answers the program's
// queries, as a real terminal does: the renderer only sends the cells that
// change, so the bytes alone are not the screen.
type screen struct {
	mu  sync.Mutex
	emu *vt.Emulator
	raw []byte // every byte the program wrote
}

// newScreen emulates a w×h terminal on f, the pseudo-terminal's side the
// program's output arrives on and its input leaves by.
func newScreen(f *os.File, w, h int) *screen {
	s := &screen{emu: vt.NewEmulator(w, h)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			s.mu.Lock()
			s.emu.Write(b[:n])
			s.raw = append(s.raw, b[:n]...)
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go io.Copy(f, s.emu) // the emulator's replies to queries
	return s
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

// written is every byte the program wrote to the terminal so far.
func (s *screen) written() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.raw)
}

func (s *screen) waitFor(t *testing.T, what string, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !re.MatchString(s.text()) {
		if time.Now().After(deadline) {
			t.Fatalf("acc top never showed %s; the screen holds:\n%s", what, s.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTopLive drives acc top in a pseudo-terminal: it shows a second
// session joining, a claim appearing and a reply changing a receipt,
// without a key pressed, and quits cleanly on q.
func TestTopLive(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	cmd, f := startTop(t, sb, repo)
	defer f.Close()
	scr := newScreen(f, 160, 40)
	scr.waitFor(t, "alice", regexp.MustCompile(`alice\s+cli\s+online`))

	bob := sb.attach(repo, "bob", "cli")
	scr.waitFor(t, "bob joining", regexp.MustCompile(`bob\s+cli\s+online`))

	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go"}, bob.creds()...)...)
	scr.waitFor(t, "the claim", regexp.MustCompile(`file:src/a\.go\s+exclusive\s+advisory\s+held by bob`))

	q := sb.sendAs(alice, "--to", "bob", "--type", "question", "--subject", "which port", "--body", "8080?")
	scr.waitFor(t, "the open question", regexp.MustCompile(`question\s+reply\s+alice → bob:queued`))
	// Opening the thread shows it and moves no receipt.
	f.Write([]byte("\r"))
	scr.waitFor(t, "the opened thread", regexp.MustCompile(`(?s)subject: which port.*bob: queued.*8080\?`))
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
	sb.ok(repo, append([]string{"reply", "--message", q, "--body", "9090"}, bob.creds()...)...)
	scr.waitFor(t, "the reply closing the thread", regexp.MustCompile(`nothing is owed`))

	quit(t, cmd, f)
}

// TestTopSearch: / searches the room from acc top: a refused query shows
// why and stays in the prompt; the corrected one shows its hit, whose
// thread opens without moving its receipt; esc walks back to the hits and
// to the room.
func TestTopSearch(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	sb.attach(repo, "bob", "cli")
	q := sb.sendAs(alice, "--to", "bob", "--type", "question", "--subject", "which port", "--body", "is 8080 taken?")
	sb.sendAs(alice, "--to", "bob", "--type", "note", "--subject", "lunch", "--body", "at noon")
	cmd, f := startTop(t, sb, repo)
	defer f.Close()
	scr := newScreen(f, 160, 40)
	scr.waitFor(t, "the open question", regexp.MustCompile(`question\s+reply\s+alice → bob:queued`))

	f.Write([]byte(`/"port`))
	scr.waitFor(t, "the prompt", regexp.MustCompile(`/"port█`))
	f.Write([]byte("\r"))
	scr.waitFor(t, "the refusal above the prompt", regexp.MustCompile(`(?s)refused: a quote is not closed.*/"port█`))
	f.Write([]byte("\"\r"))
	scr.waitFor(t, "the hit", regexp.MustCompile(`(?s)search "port": 1 hit.*> question\s+alice\s+"which port"\s+subject: which port`))
	f.Write([]byte("\r"))
	scr.waitFor(t, "the hit's thread", regexp.MustCompile(`(?s)subject: which port.*bob: queued.*is 8080 taken\?`))
	var hist struct {
		Receipts []struct {
			State string `json:"state"`
		} `json:"receipts"`
	}
	sb.jsonOK(&hist, repo, "sync", "--scope", "history", "--message", q)
	if len(hist.Receipts) != 1 || hist.Receipts[0].State != "queued" {
		t.Fatalf("searching and opening the hit changed a receipt: %+v", hist)
	}
	f.Write([]byte("\x1b"))
	scr.waitFor(t, "the hits again", regexp.MustCompile(`search "port": 1 hit`))
	f.Write([]byte("\x1b"))
	scr.waitFor(t, "the room again", regexp.MustCompile(`OPEN THREADS`))
	quit(t, cmd, f)
}

// TestTopWaitsForTheRoom: in a room nobody has attached to, acc top says
// it waits, creates no store, shows the room once someone attaches, and
// q quits it at any point.
func TestTopWaitsForTheRoom(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	before := dirHash(t, sb.data)
	cmd, f := startTop(t, sb, repo)
	defer f.Close()
	scr := newScreen(f, 160, 40)
	s0 := time.Now()
	scr.waitFor(t, "that it waits", regexp.MustCompile(`nobody has attached in this room yet`))
	t.Logf("waiting shown after %v", time.Since(s0))
	if after := dirHash(t, sb.data); after != before {
		t.Error("acc top changed the data home while waiting")
	}
	sb.attach(repo, "alice", "cli")
	t0 := time.Now()
	scr.waitFor(t, "alice once she attached", regexp.MustCompile(`alice\s+cli\s+online`))
	t.Logf("shown %v after attach", time.Since(t0))
	q0 := time.Now()
	quit(t, cmd, f)
	t.Logf("quit in %v", time.Since(q0))

	// q while still waiting.
	other := sb.newRepo("other")
	cmd, f = startTop(t, sb, other)
	defer f.Close()
	scr = newScreen(f, 160, 40)
	scr.waitFor(t, "that it waits", regexp.MustCompile(`nobody has attached in this room yet`))
	q1 := time.Now()
	quit(t, cmd, f)
	t.Logf("quit in %v", time.Since(q1))
}

// quit presses q and expects acc top to exit 0 within 10 s.
func quit(t *testing.T, cmd *exec.Cmd, f *os.File) {
	t.Helper()
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

// TestNoTerminalQueries: commands other than acc top never query the
// terminal (a library that asks for the background colour at start-up
// would make every command in a terminal that does not answer wait for
// its timeout, and could swallow typed-ahead keys).
func TestNoTerminalQueries(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	cmd := exec.Command(accBin, "status")
	cmd.Dir = repo
	cmd.Env = append(sb.environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, _ := io.ReadAll(f) // ends with EIO once acc exits
	cmd.Wait()
	if bytes.Contains(out, []byte("\x1b]")) || bytes.Contains(out, []byte("\x1b[6n")) {
		t.Errorf("acc status queried the terminal: %q", out)
	}
	if !bytes.Contains(out, []byte("0 live")) {
		t.Errorf("acc status in a terminal printed %q", out)
	}
}
