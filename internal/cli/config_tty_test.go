package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/cli"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// runOnTerminal runs acc with stdin and stdout on a pseudo-terminal, typing
// input first, and returns the exit code, what the terminal showed and
// stderr.
func runOnTerminal(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	// No echo: the terminal's echo of typed input is made by the kernel
	// asynchronously, so it could land before or after acc's question; what
	// the terminal shows is then acc's output alone, in its own order.
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatalf("read the terminal's settings: %v", err)
	}
	tio.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(tty.Fd()), ioctlSetTermios, tio); err != nil {
		t.Fatalf("turn off echo: %v", err)
	}
	shown := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, ptmx) // ends with EIO once the terminal side is closed
		shown <- b.String()
	}()
	if _, err := ptmx.Write([]byte(input)); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	vars := map[string]string{"HOME": base, "ACC_DATA_HOME": filepath.Join(base, "data")}
	var stderr bytes.Buffer
	env := cli.Env{Stdin: tty, Stdout: tty, Stderr: &stderr,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return nil }, Getwd: os.Getwd}
	code := cli.Main(args, env)
	tty.Close()
	return code, strings.ReplaceAll(<-shown, "\r\n", "\n"), stderr.String()
}

func TestConfigInitAsksOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		written     bool
	}{
		{"yes", "y\n", true},
		{"YES", "YES\n", true},
		{"enter means no", "\n", false},
		{"no", "n\n", false},
		{"anything else", "sure\n", false},
		{"closed input", "\x04", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "acc.workspace.json")
			code, shown, stderr := runOnTerminal(t, tc.input, "config", "init", "--cwd", dir)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(shown, "\"schemaVersion\": 1,\n") || !strings.Contains(shown, "Write "+file+"? [y/N] ") {
				t.Fatalf("no preview or question on the terminal:\n%s", shown)
			}
			_, statErr := os.Stat(file)
			if tc.written {
				if statErr != nil || !strings.Contains(shown, "] written: "+file+"\n") {
					t.Fatalf("not written (%v):\n%s", statErr, shown)
				}
				// The preview is shown once, before the question.
				if strings.Count(shown, "\"schemaVersion\"") != 1 {
					t.Fatalf("preview shown twice:\n%s", shown)
				}
				b, _ := os.ReadFile(file)
				if !strings.Contains(shown, string(b)) {
					t.Fatalf("the file differs from the preview:\n%s\n---\n%s", b, shown)
				}
			} else if !os.IsNotExist(statErr) || !strings.Contains(shown, "not written: "+file+"\n") {
				t.Fatalf("written after %q (%v):\n%s", tc.input, statErr, shown)
			}
		})
	}
}

// With --json on a terminal the question goes to stderr, so stdout still
// holds exactly one envelope.
func TestConfigInitJSONOnATerminal(t *testing.T) {
	dir := t.TempDir()
	code, shown, stderr := runOnTerminal(t, "n\n", "config", "init", "--json", "--cwd", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr, "? [y/N] ") || !strings.Contains(stderr, "\"schemaVersion\": 1") {
		t.Fatalf("question not on stderr: %q", stderr)
	}
	start := strings.Index(shown, "{")
	if start < 0 {
		t.Fatalf("no envelope on the terminal:\n%s", shown)
	}
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			Subcommand string `json:"subcommand"`
			Written    bool   `json:"written"`
			File       string `json:"file"`
			Preview    string `json:"preview"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(shown[start:]), &env); err != nil {
		t.Fatalf("not one envelope: %v\n%s", err, shown)
	}
	if !env.OK || env.Data.Subcommand != "init" || env.Data.Written || env.Data.File != filepath.Join(dir, "acc.workspace.json") || env.Data.Preview == "" {
		t.Fatalf("envelope: %+v", env)
	}
	if _, err := os.Stat(env.Data.File); !os.IsNotExist(err) {
		t.Fatal("written after no")
	}
}
