package livepush

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// CodexQueueName is the transport name of Codex's thread queue.
const CodexQueueName = "codex-queue"

// CodexQueue queues a message for a Codex thread with the client's own
// command, `codex queue --thread <id> --message <text>`, run as the native
// codex program the session's process is (/proc/<pid>/exe) with the
// session's CODEX_HOME. The item lands in the thread's queue
// ($CODEX_HOME/queue_1.sqlite); the running TUI looks at the queue every
// 10 s and, idle, starts a turn with the text as its prompt (measured on
// Codex 0.171.0: 0–10 s, median ≈5 s; docs/delivery.md#codexs-queue).
type CodexQueue struct {
	// Timeout bounds the command, its output included; 0 means 5 s.
	Timeout time.Duration
}

// Name is CodexQueueName.
func (CodexQueue) Name() string { return CodexQueueName }

// codexEndpoint is a Codex session's endpoint, stored as JSON.
type codexEndpoint struct {
	Thread    string `json:"thread"`
	CodexHome string `json:"codexHome"`
	// Threads are the threads the process held when the hook bound it.
	Threads []string `json:"threads"`
}

// threadPattern: Codex thread ids are UUIDs.
// It is compiled when first used: most processes never need it.
var threadPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// CodexEndpoint returns the endpoint of the Codex session whose thread is
// clientSessionID (the hook payload's session_id) and whose process is
// pid: the thread must be a UUID, CODEX_HOME (else $HOME/.codex) an
// existing directory, and pid must hold the thread's writer lock
// ($CODEX_HOME/thread-writer-locks/<thread>.lock open among its files),
// which only the process running the thread does, and be an interactive
// Codex of ours (heldThreads). The endpoint records the threads the
// process holds now (checkThreads). An error says what did not hold.
func CodexEndpoint(getenv func(string) string, clientSessionID string, pid int) (string, error) {
	if !threadPattern().MatchString(clientSessionID) {
		return "", errors.New("the session id is not a Codex thread id")
	}
	if pid <= 0 {
		return "", errors.New("the client's process is unknown")
	}
	home := getenv("CODEX_HOME")
	if home == "" {
		if h := getenv("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	if !filepath.IsAbs(home) {
		return "", errors.New("no absolute CODEX_HOME")
	}
	home, err := filepath.EvalSymlinks(home)
	if err != nil {
		return "", fmt.Errorf("CODEX_HOME: %w", err)
	}
	// The hook fires for the thread on screen: what the process holds now
	// is what it may hold when a message comes.
	held, err := heldThreads(pid, home)
	if err != nil {
		return "", err
	}
	if err := checkThreads(held, clientSessionID, held); err != nil {
		return "", err
	}
	b, err := json.Marshal(codexEndpoint{Thread: clientSessionID, CodexHome: home, Threads: held})
	return string(b), err
}

// heldThreads returns the threads process pid holds the writer lock of
// ($CODEX_HOME/thread-writer-locks/<thread>.lock among its open files),
// after checking it is an interactive Codex of ours (not `codex exec` or
// another subcommand, whose queue nobody would look at).
func heldThreads(pid int, codexHome string) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join("/proc", strconv.Itoa(pid)), &st); err != nil || int(st.Uid) != os.Getuid() {
		return nil, errors.New("the client's process is not ours")
	}
	argv, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, fmt.Errorf("the client's command line: %w", err)
	}
	if sub := codexSubcommand(strings.Split(strings.TrimRight(string(argv), "\x00"), "\x00")); sub != "" {
		return nil, fmt.Errorf("the client runs codex %s, not the interactive session", sub)
	}
	locks := filepath.Join(codexHome, "thread-writer-locks")
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the client's open files: %w", err)
	}
	var held []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || filepath.Dir(target) != locks {
			continue
		}
		if th, ok := strings.CutSuffix(filepath.Base(target), ".lock"); ok && !slices.Contains(held, th) {
			held = append(held, th)
		}
	}
	slices.Sort(held)
	return held, nil
}

// checkThreads checks the held threads include thread and nothing beyond
// known: after /new the TUI keeps the old thread open in the background
// and opens a new one, so a thread bound before that is no longer the one
// on screen (a queued message would run unseen); the new thread binds at
// its first turn, when its hook fires.
func checkThreads(held []string, thread string, known []string) error {
	if !slices.Contains(held, thread) {
		return errors.New("the client's process does not hold the thread")
	}
	for _, h := range held {
		if !slices.Contains(known, h) {
			return errors.New("the client opened another thread since (/new): the bound one may not be on screen")
		}
	}
	return nil
}

// codexValueOptions are Codex 0.171.0's global options that take a value
// as the next argument (codex --help).
var codexValueOptions = map[string]bool{"-c": true, "--config": true, "--enable": true, "--disable": true, "--remote": true,
	"--remote-auth-token-env": true, "-i": true, "--image": true, "-m": true, "--model": true, "--local-provider": true,
	"-p": true, "--profile": true, "-s": true, "--sandbox": true, "-C": true, "--cd": true, "--add-dir": true,
	"-a": true, "--ask-for-approval": true}

// codexInteractive are the subcommands that run the interactive session.
var codexInteractive = map[string]bool{"resume": true, "fork": true}

// codexSubcommands are Codex 0.171.0's subcommands (codex --help, and the
// hidden server ones).
var codexSubcommands = map[string]bool{"agents": true, "exec": true, "e": true, "review": true, "login": true, "logout": true,
	"mcp": true, "plugin": true, "app-server": true, "remote-control": true, "completion": true, "update": true, "doctor": true,
	"sandbox": true, "debug": true, "apply": true, "a": true, "resume": true, "queue": true, "archive": true, "delete": true,
	"migrate-rollouts": true, "migrate-nfs-db": true, "unarchive": true, "fork": true, "cloud": true, "exec-server": true,
	"features": true, "help": true,
	// Hidden from codex --help, but servers all the same.
	"mcp-server": true, "responses-api-proxy": true}

// codexSubcommand returns the subcommand a codex command line (argv, the
// program first) runs when it is not the interactive session, "" when it
// is: no subcommand (perhaps a prompt), resume or fork. Global options
// and their values are skipped.
func codexSubcommand(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "-"):
			if codexValueOptions[a] {
				i++ // its value
			}
			continue
		case codexSubcommands[a] && !codexInteractive[a]:
			return a
		default:
			return "" // the interactive session, or its prompt
		}
	}
	return ""
}

// Offer queues m, framed (core.LiveFrame), for the thread of binding b. The
// recorded process must still hold the thread (a process that exited, or
// a pid reused by another, does not) and be a codex program: else
// recipient_unavailable, without running anything. The command's
// non-zero exit is transport_rejected; not finishing within Timeout is a
// transport error. The receipt may become offered only on exit 0 ("Queued
// message … for thread …").
func (t CodexQueue) Offer(ctx context.Context, b router.Binding, m *protocol.Message) (bool, string, error) {
	var ep codexEndpoint
	if err := json.Unmarshal([]byte(b.Endpoint), &ep); err != nil || !threadPattern().MatchString(ep.Thread) || !filepath.IsAbs(ep.CodexHome) || b.PID <= 0 {
		return false, router.ErrRecipientUnavailable, nil
	}
	held, err := heldThreads(b.PID, ep.CodexHome)
	if err != nil || checkThreads(held, ep.Thread, ep.Threads) != nil {
		return false, router.ErrRecipientUnavailable, nil
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(b.PID), "exe"))
	if err != nil || filepath.Base(exe) != "codex" {
		return false, router.ErrRecipientUnavailable, nil
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	// The command is killed a little before the bound, so that reading
	// what it left (WaitDelay) still ends within it.
	const drain = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(ctx, max(timeout-drain, timeout/2))
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "queue", "--thread", ep.Thread, "--message="+core.LiveFrame(m))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "CODEX_HOME=" + ep.CodexHome, "LANG=C.UTF-8"}
	cmd.Dir = ep.CodexHome
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = min(drain, timeout/2)
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return false, "", fmt.Errorf("codex queue did not finish within %v", timeout)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, router.ErrTransportRejected, nil
		}
		return false, "", err
	case !bytes.Contains(out.Bytes(), []byte("Queued message")):
		return false, router.ErrTransportRejected, nil
	}
	return true, "", nil
}
