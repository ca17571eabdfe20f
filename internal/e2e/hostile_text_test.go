package e2e

import (
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// The five classes of characters a peer could use to steer a terminal
// (docs/concepts.md#peer-text-on-the-screen), each in a one-line field;
// a body adds a CR, which returns the cursor to overwrite "evil".
const (
	steeringLine = "csi\u009b2J rlo\u202egnp.exe iso\u2066x\u2069 ls\u2028ps\u2029end"
	steeringBody = "evil\rsafe text\n" + steeringLine
)

// steeringEscapes is how steeringLine shows on a terminal.
var steeringEscapes = []string{`csi\u009b2J`, `rlo\u202egnp.exe`, `iso\u2066x\u2069`, `ls\u2028ps\u2029end`}

// rawHostile finds a character of the five classes in what a program
// wrote to its terminal; with plain, a lone CR or an ESC too (a program
// that paints the screen, acc top, writes both itself). The terminal's own
// line discipline turns each newline into CR LF, so CR LF is not one.
func rawHostile(out string, plain bool) (rune, bool) {
	out = strings.ReplaceAll(out, "\r\n", "\n")
	for _, r := range out {
		switch {
		case plain && (r == '\r' || r == 0x1b), r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return r, true
		}
	}
	return 0, false
}

// inPty runs acc with args in dir in a 200×60 pseudo-terminal and returns
// the bytes it wrote there (stdout and stderr alike) and its exit code.
// env is added to the sandbox's environment.
func inPty(t *testing.T, sb *sandbox, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(accBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(sb.environ(), "TERM=xterm-256color"), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, _ := io.ReadAll(f) // ends with EIO once acc exits
	err = cmd.Wait()
	return string(out), exitCode(cmd, err)
}

// onScreen is what a terminal shows after out.
func onScreen(out string) string {
	emu := vt.NewEmulator(200, 60)
	emu.Write([]byte(out))
	return emu.String()
}

// TestHostileTextOnTheTerminal stores peer text holding C1 controls, a
// CR, bidirectional overrides and isolates, and line and paragraph
// separators in a subject, a body, an intent, a claimed path and a
// handoff, then runs every text command in a pseudo-terminal: none writes
// any of those characters, each shows them as visible escapes, and the
// body "evil\rsafe text" shows "evil" still. --json keeps the exact text.
func TestHostileTextOnTheTerminal(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	bob := sb.attach(repo, "bob", "cli")
	carol := sb.attach(repo, "carol", "cli")
	q := sb.sendAs(alice, "--to", "bob", "--type", "question", "--subject", steeringLine, "--body", steeringBody)
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/rlo\u202egnp.go", "--reason", steeringLine}, alice.creds()...)...)
	sb.ok(repo, append([]string{"work", "--summary", steeringLine}, alice.creds()...)...)
	sb.ok(repo, append([]string{"finish", "--to", "bob", "--goal", steeringLine, "--completed", steeringLine, "--remaining", steeringLine}, carol.creds()...)...)

	lineShown := steeringEscapes
	bodyShown := append([]string{`evil\u000dsafe text`}, steeringEscapes...)
	for _, c := range []struct {
		name  string
		args  []string
		shown []string
		code  int
		env   []string
	}{
		{"inbox", append([]string{"inbox"}, bob.creds()...), lineShown, 0, nil},
		{"exact read", append([]string{"inbox", "--message", q}, bob.creds()...), bodyShown, 0, nil},
		{"work", append([]string{"work", "--summary", steeringLine}, alice.creds()...), lineShown, 0, nil},
		{"status", []string{"status"}, append([]string{`file:src/rlo\u202egnp.go`}, lineShown...), 0, nil},
		{"claim", append([]string{"claim", "--resource", "file:src/rlo\u202egnp.go", "--reason", steeringLine}, alice.creds()...), []string{`file:src/rlo\u202egnp.go`}, 0, nil},
		{"history", append([]string{"sync", "--scope", "history"}, bob.creds()...), lineShown, 0, nil},
		{"history read", append([]string{"sync", "--scope", "history", "--message", q}, bob.creds()...), bodyShown, 0, nil},
		{"wait", append([]string{"wait", "--timeout", "5s"}, bob.creds()...), lineShown, 0, nil},
		// A data home whose name holds a C1 control and an override.
		{"doctor", []string{"doctor"}, []string{`data\u009b\u202ehome`}, 0, []string{"ACC_DATA_HOME=" + sb.dir("data\u009b\u202ehome")}},
		// A refusal quoting what was typed.
		{"refusal", append([]string{"message", "--to", "x\u202ey\u009bz", "--subject", "s", "--body", "b"}, alice.creds()...), []string{`x\u202ey\u009bz`}, 4, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := inPty(t, sb, repo, c.env, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", code, c.code, out)
			}
			if r, found := rawHostile(out, true); found {
				t.Errorf("wrote U+%04X raw to the terminal:\n%q", r, out)
			}
			screen := onScreen(out)
			for _, s := range c.shown {
				if !strings.Contains(screen, s) {
					t.Errorf("the screen does not show %s:\n%s", s, screen)
				}
			}
		})
	}

	// --json keeps the exact text.
	var exact []struct {
		Message struct {
			Subject string `json:"subject"`
			Body    string `json:"body"`
		} `json:"message"`
	}
	sb.jsonOK(&exact, repo, append([]string{"inbox", "--message", q}, bob.creds()...)...)
	if len(exact) != 1 || exact[0].Message.Subject != steeringLine || exact[0].Message.Body != steeringBody {
		t.Errorf("--json changed the text: %+v", exact)
	}

	// acc top, the thread opened.
	t.Run("top", func(t *testing.T) {
		cmd, f := startTop(t, sb, repo)
		defer f.Close()
		scr := newScreen(f, 160, 40)
		scr.waitFor(t, "the open question", regexp.MustCompile(`question\s+reply\s+alice → bob`))
		scr.waitFor(t, "the escaped subject and path", regexp.MustCompile(`(?s)rlo\\u202egnp\.go.*csi\\u009b2J rlo\\u202egnp\.exe iso\\u2066x\\u2069 ls\\u2028ps\\u2029end`))
		// The handoff is the newest thread; the question is the next.
		scr.waitFor(t, "the question below the handoff", regexp.MustCompile(`(?s)> handoff.*question`))
		f.Write([]byte("\x1b[B"))
		scr.waitFor(t, "the question selected", regexp.MustCompile(`> question`))
		f.Write([]byte("\r"))
		scr.waitFor(t, "the opened thread", regexp.MustCompile(`(?s)subject: csi\\u009b2J.*evil\\u000dsafe text`))
		// A search finds the question: its subject and its snippet are
		// escaped in the hits too, and the hit opens the same thread.
		f.Write([]byte("\x1b"))
		scr.waitFor(t, "the room again", regexp.MustCompile(`OPEN THREADS`))
		f.Write([]byte("/evil\r"))
		scr.waitFor(t, "the hit, escaped", regexp.MustCompile(`(?s)search evil: 1 hit.*> question\s+alice\s+"csi\\u009b2J rlo\\u202egnp\.exe iso\\u2066x\\u2069 ls\\u2028ps\\u2029end"\s+body: evil\\u000dsafe text\\ncsi\\u009b2J rlo\\u202egnp\.exe`))
		f.Write([]byte("\r"))
		scr.waitFor(t, "the hit's thread", regexp.MustCompile(`(?s)subject: csi\\u009b2J.*evil\\u000dsafe text`))
		quit(t, cmd, f)
		// acc top paints with escape sequences of its own; none of the
		// other characters reaches the terminal.
		if r, found := rawHostile(scr.written(), false); found {
			t.Errorf("acc top wrote U+%04X raw to the terminal", r)
		}
	})
}
