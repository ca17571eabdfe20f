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
	"strconv"
	"strings"
	"time"

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
// Codex 0.171.0: 0–10 s, median ≈5 s; reference/live-push.md §2).
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
}

// threadPattern: Codex thread ids are UUIDs.
var threadPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// CodexEndpoint returns the endpoint of the Codex session whose thread is
// clientSessionID (the hook payload's session_id) and whose process is
// pid: the thread must be a UUID, CODEX_HOME (else $HOME/.codex) an
// existing directory, and pid must hold the thread's writer lock
// ($CODEX_HOME/thread-writer-locks/<thread>.lock open among its files),
// which only the process running the thread does. An error says what did
// not hold.
func CodexEndpoint(getenv func(string) string, clientSessionID string, pid int) (string, error) {
	if !threadPattern.MatchString(clientSessionID) {
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
	if err := holdsThread(pid, home, clientSessionID); err != nil {
		return "", err
	}
	b, err := json.Marshal(codexEndpoint{Thread: clientSessionID, CodexHome: home})
	return string(b), err
}

// holdsThread checks process pid is an interactive Codex (not `codex
// exec`, whose queue nobody would look at) with the thread's writer lock
// open.
func holdsThread(pid int, codexHome, thread string) error {
	argv, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return fmt.Errorf("the client's command line: %w", err)
	}
	if args := strings.Split(string(argv), "\x00"); len(args) > 1 && (args[1] == "exec" || args[1] == "e") {
		return errors.New("the client runs headless (codex exec)")
	}
	lock := filepath.Join(codexHome, "thread-writer-locks", thread+".lock")
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("the client's open files: %w", err)
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == lock {
			return nil
		}
	}
	return errors.New("the client's process does not hold the thread")
}

// Offer queues m, framed (Frame), for the thread of binding b. The
// recorded process must still hold the thread (a process that exited, or
// a pid reused by another, does not) and be a codex program: else
// recipient_unavailable, without running anything. The command's
// non-zero exit is transport_rejected; not finishing within Timeout is a
// transport error. The receipt may become offered only on exit 0 ("Queued
// message … for thread …").
func (t CodexQueue) Offer(ctx context.Context, b router.Binding, m *protocol.Message) (bool, string, error) {
	var ep codexEndpoint
	if err := json.Unmarshal([]byte(b.Endpoint), &ep); err != nil || !threadPattern.MatchString(ep.Thread) || !filepath.IsAbs(ep.CodexHome) || b.PID <= 0 {
		return false, router.ErrRecipientUnavailable, nil
	}
	if err := holdsThread(b.PID, ep.CodexHome, ep.Thread); err != nil {
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
	cmd := exec.CommandContext(ctx, exe, "queue", "--thread", ep.Thread, "--message="+Frame(m))
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
