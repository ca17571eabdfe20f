// Claude Code's inbox socket (docs/delivery.md#claude-codes-inbox-socket).

package livepush

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// ClaudeInboxName is the transport name of Claude Code's inbox socket.
const ClaudeInboxName = "claude-inbox"

// ClaudeInbox writes a message to a Claude Code session's inbox Unix
// socket (<runtime dir>/cc-socks/<pid>.sock, from the hook environment's
// CLAUDE_CODE_MESSAGING_SOCKET): one JSON line, {"type":"user",
// "message":{"role":"user","content":…},"msg_id":…}; the socket answers
// nothing, and an idle session starts a turn with it (measured on Claude
// Code 2.1.332, docs/delivery.md#claude-codes-inbox-socket).
type ClaudeInbox struct {
	// Timeout bounds connecting and writing; 0 means 2 s.
	Timeout time.Duration
}

// Name is ClaudeInboxName.
func (ClaudeInbox) Name() string { return ClaudeInboxName }

// Offer writes m, framed (core.LiveFrame), to the socket of binding b. The socket
// must be the recorded process's: named <pid>.sock, still a private
// socket of ours, still named by Claude Code's session record for that
// pid and session, and the process listening on it (its peer
// credentials, SO_PEERCRED) must be b.PID under our own uid. A socket of
// another process, one that refuses the connection (left by a crashed
// session) or a missing one is refused with recipient_unavailable; a
// write that fails or times out is a transport error. It never blocks
// longer than Timeout.
func (t ClaudeInbox) Offer(ctx context.Context, b router.Binding, m *protocol.Message) (bool, string, error) {
	var ep claudeEndpoint
	if err := json.Unmarshal([]byte(b.Endpoint), &ep); err != nil || b.PID <= 0 || filepath.Base(ep.Socket) != fmt.Sprintf("%d.sock", b.PID) {
		return false, router.ErrRecipientUnavailable, nil // not the recorded process's socket
	}
	// What the hook checked when it bound the session is checked again:
	// the binding may be hours old (an idle session is the one to wake).
	if err := ownSocket(ep.Socket); err != nil {
		return false, router.ErrRecipientUnavailable, nil
	}
	if err := checkRecord(ep.Record, b.PID, ep.Session, ep.Socket); err != nil {
		return false, router.ErrRecipientUnavailable, nil
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", ep.Socket)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return false, router.ErrRecipientUnavailable, nil
		}
		return false, "", err
	}
	defer conn.Close()
	if pid, uid, err := peer(conn); err != nil || pid != b.PID || uid != os.Getuid() {
		return false, router.ErrRecipientUnavailable, nil // another process listens there
	}
	line, err := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": core.LiveFrame(m)}, "msg_id": m.MessageID})
	if err != nil {
		return false, "", err
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetWriteDeadline(deadline)
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return false, "", err
	}
	return true, "", nil
}

// ClaudeEndpoint returns the endpoint (JSON: the inbox socket, the
// session record and session id) of the Claude Code session
// clientSessionID whose process is pid, from its hook's environment
// (getenv): CLAUDE_CODE_MESSAGING_SOCKET must be an absolute path to a
// socket (not a symlink) owned by our uid with no group or other
// permission, and the session record Claude Code keeps at
// <CLAUDE_CONFIG_DIR, else $HOME/.claude>/sessions/<pid>.json must name
// the same pid, session and socket
// (docs/delivery.md#claude-codes-inbox-socket). Anything else is an error saying what did not hold,
// and the session gets no live binding.
func ClaudeEndpoint(getenv func(string) string, clientSessionID string, pid int) (string, error) {
	sock := getenv("CLAUDE_CODE_MESSAGING_SOCKET")
	switch {
	case sock == "":
		return "", errors.New("the client exports no inbox socket (CLAUDE_CODE_MESSAGING_SOCKET)")
	case !filepath.IsAbs(sock):
		return "", errors.New("the inbox socket path is not absolute")
	case pid <= 0:
		return "", errors.New("the client's process is unknown")
	}
	if err := ownSocket(sock); err != nil {
		return "", err
	}
	dir := getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no HOME to find the session record in")
		}
		dir = filepath.Join(home, ".claude")
	}
	if !filepath.IsAbs(dir) {
		return "", errors.New("the session records' directory is not absolute")
	}
	record := filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", pid))
	if err := checkRecord(record, pid, clientSessionID, sock); err != nil {
		return "", err
	}
	b, err := json.Marshal(claudeEndpoint{Socket: sock, Record: record, Session: clientSessionID})
	return string(b), err
}

// claudeEndpoint is a Claude Code session's endpoint, stored as JSON: its
// inbox socket, and the session record and session id that vouch for it.
type claudeEndpoint struct {
	Socket  string `json:"socket"`
	Record  string `json:"record"`
	Session string `json:"session"`
}

// checkRecord checks the session record Claude Code keeps for process pid
// names that pid, session and socket, and an interactive session.
func checkRecord(path string, pid int, session, sock string) error {
	var rec struct {
		PID                 int    `json:"pid"`
		SessionID           string `json:"sessionId"`
		MessagingSocketPath string `json:"messagingSocketPath"`
		Kind                string `json:"kind"`
	}
	if err := readSmallJSON(path, &rec); err != nil {
		return fmt.Errorf("the session record %s: %w", path, err)
	}
	if rec.PID != pid || rec.SessionID != session || rec.MessagingSocketPath != sock {
		return fmt.Errorf("the session record %s names another session or socket", path)
	}
	// A print-mode run (claude -p) binds a socket too, but nobody would
	// see the turn a push started there.
	if rec.Kind != "interactive" {
		return fmt.Errorf("the session is not interactive (%q)", rec.Kind)
	}
	return nil
}

// ownSocket checks path is a Unix socket, not a symlink, owned by our uid,
// with no group or other permission bits.
func ownSocket(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("the inbox socket: %w", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFSOCK:
		return errors.New("the inbox socket path is not a socket")
	case int(st.Uid) != os.Getuid():
		return errors.New("the inbox socket belongs to another user")
	case st.Mode&0o077 != 0:
		return errors.New("the inbox socket is open to other users")
	}
	return nil
}

// readSmallJSON decodes a regular file of at most 64 KiB, not followed
// through a symlink, owned by our uid.
func readSmallJSON(path string, v any) error {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Getuid() {
		return errors.New("not a regular file of ours")
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if err != nil {
		return err
	}
	if len(b) > 64<<10 {
		return errors.New("too large")
	}
	return json.Unmarshal(b, v)
}
