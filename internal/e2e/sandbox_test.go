package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// sandbox is one test's private world: a HOME, a data home and a directory
// for repositories, all under t.TempDir.
type sandbox struct {
	t    testing.TB
	base string // canonical temp directory
	home string
	data string
	// pgURL, when set, is the PostgreSQL test server the sandbox's rooms
	// live on (newSandboxPG); pgPassFile, when set, replaces the
	// PGPASSFILE of the test process (a private cluster's).
	pgURL, pgPassFile string
	// wrap, when set, is the command every acc, acc-hook and acc wait
	// process of the sandbox runs under (nsenter into a PID namespace).
	wrap []string
}

// program is how the sandbox starts bin with args in dir: under wrap when
// set (nsenter into a namespace, then a shell that changes to dir there:
// entering a mount namespace starts at /, and nsenter's own --wd keeps a
// directory of the old one, which getcwd cannot name).
func (sb *sandbox) program(ctx context.Context, dir, bin string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if len(sb.wrap) > 0 {
		full := append(append([]string{}, sb.wrap[1:]...), "--", "sh", "-c", `cd "$0" && exec "$@"`, dir, bin)
		cmd = exec.CommandContext(ctx, sb.wrap[0], append(full, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Dir = dir
	return cmd
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("resolve the temp dir: %v", err)
	}
	sb := &sandbox{t: t, base: base, home: filepath.Join(base, "home"), data: filepath.Join(base, "data")}
	for _, d := range []string{sb.home, sb.data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return sb
}

// environ is the complete environment of every child process. It is built
// from nothing rather than filtered from os.Environ, so ACC_* credentials,
// client session ids (CLAUDE_*, CODEX_*, GEMINI_*, …), XDG_* and GIT_*
// variables of the developer's shell never reach a child.
func (sb *sandbox) environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + sb.home,
		workspace.EnvDataHome + "=" + sb.data,
		"LANG=C",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return append(env, sb.pgEnviron()...)
}

// getenv serves the sandbox environment to in-process pkg/core calls.
func (sb *sandbox) getenv(key string) string {
	for _, kv := range sb.environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// dir creates and returns a directory below the sandbox.
func (sb *sandbox) dir(parts ...string) string {
	sb.t.Helper()
	p := filepath.Join(append([]string{sb.base}, parts...)...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		sb.t.Fatal(err)
	}
	return p
}

// git runs git in dir and returns its trimmed stdout; any failure fails the
// test.
func (sb *sandbox) git(dir string, args ...string) string {
	sb.t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	full := append([]string{"-c", "user.email=e2e@example.invalid", "-c", "user.name=e2e", "-c", "init.defaultBranch=main"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = sb.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		sb.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// newRepo makes a Git repository with one commit on branch main.
func (sb *sandbox) newRepo(name string) string {
	sb.t.Helper()
	dir := sb.dir(name)
	sb.git(dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("e2e\n"), 0o644); err != nil {
		sb.t.Fatal(err)
	}
	sb.git(dir, "add", "README")
	sb.git(dir, "commit", "-q", "-m", "init")
	if sb.pgURL != "" {
		sb.commitRoomConfig(dir, name)
	}
	return dir
}

// result is what one acc process did.
type result struct {
	args   []string
	stdout string
	stderr string
	code   int // -1 when killed by a signal
}

func (r result) String() string {
	return fmt.Sprintf("acc %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code,
		clip(r.stdout, 1200), clip(r.stderr, 1200))
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// command prepares acc with args in dir, in the sandbox environment.
func (sb *sandbox) command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := sb.program(ctx, dir, accBin, args...)
	cmd.Env = sb.environ()
	return cmd
}

// run runs acc in dir and returns what it did; it never fails the test.
func (sb *sandbox) run(dir string, args ...string) result {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := sb.command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := result{args: args, stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
	if err != nil && res.code == 0 {
		res.code = -1
		res.stderr += "\n(start or wait failed: " + err.Error() + ")"
	}
	return res
}

// exitCode reads the exit status of a finished command: its code, or -1
// when a signal ended it.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// ok runs acc and fails the test unless it exits 0.
func (sb *sandbox) ok(dir string, args ...string) result {
	sb.t.Helper()
	res := sb.run(dir, args...)
	if res.code != 0 {
		sb.t.Fatalf("expected exit 0, got:\n%s", res)
	}
	return res
}

// envelope is acc's --json output.
type envelope struct {
	EnvelopeVersion int             `json:"envelope_version"`
	OK              bool            `json:"ok"`
	Data            json.RawMessage `json:"data"`
	Error           *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func (sb *sandbox) parseEnvelope(res result) envelope {
	sb.t.Helper()
	var env envelope
	if err := json.Unmarshal([]byte(res.stdout), &env); err != nil {
		sb.t.Fatalf("expected one JSON envelope on stdout, could not parse it (%v):\n%s", err, res)
	}
	return env
}

// jsonOK runs acc with --json, requires exit 0 and ok:true, and decodes
// .data into out.
func (sb *sandbox) jsonOK(out any, dir string, args ...string) {
	sb.t.Helper()
	res := sb.ok(dir, append(args, "--json")...)
	env := sb.parseEnvelope(res)
	if !env.OK {
		sb.t.Fatalf("expected ok:true, got:\n%s", res)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			sb.t.Fatalf("decode .data of %s: %v", res, err)
		}
	}
}

// session is the result of `acc attach --json`.
type session struct {
	SessionID     string  `json:"sessionId"`
	Generation    string  `json:"generation"`
	ParticipantID string  `json:"participantId"`
	Harness       string  `json:"harness"`
	WorkspaceID   string  `json:"workspaceId"`
	CheckoutRoot  *string `json:"checkoutRoot"`
	Branch        *string `json:"branch"`
	Materialised  bool    `json:"materialised"`
	dir           string  // where it was attached
}

// creds are the owner flags of s.
func (s session) creds() []string {
	return []string{"--session", s.SessionID, "--generation", s.Generation}
}

func (sb *sandbox) attach(dir, participant, harness string) session {
	sb.t.Helper()
	var s session
	sb.jsonOK(&s, dir, "attach", "--participant", participant, "--harness", harness)
	if !protocol.IsGeneratedID(protocol.KindSession, s.SessionID) || !protocol.IsGeneratedID(protocol.KindGeneration, s.Generation) {
		sb.t.Fatalf("attach %s: expected a session id and a generation, got %+v", participant, s)
	}
	s.dir = dir
	return s
}

// as runs acc as session s, from the directory it attached in.
func (sb *sandbox) as(s session, args ...string) result {
	return sb.run(s.dir, append(args, s.creds()...)...)
}

var recordedLine = regexp.MustCompile(`(?m)^recorded (message_[A-Za-z0-9_-]{22})$`)

// recordedID returns the message id of a text-mode send's `recorded …` line,
// or "" when stdout holds none.
func recordedID(stdout string) string {
	if m := recordedLine.FindStringSubmatch(stdout); m != nil {
		return m[1]
	}
	return ""
}

// send sends a note from s to participant to and returns the recorded id.
func (sb *sandbox) send(s session, to, subject string) string {
	sb.t.Helper()
	res := sb.as(s, "message", "--to", to, "--subject", subject, "--body", "body of "+subject)
	if res.code != 0 {
		sb.t.Fatalf("expected the send to exit 0, got:\n%s", res)
	}
	id := recordedID(res.stdout)
	if id == "" {
		sb.t.Fatalf("expected `recorded message_…` on stdout, got:\n%s", res)
	}
	return id
}

// storePath is the database of a workspace in this sandbox's data home.
func (sb *sandbox) storePath(workspaceID string) string {
	return workspace.StorePath(sb.data, workspaceID)
}

// openStore opens a workspace's store through pkg/storage. The tests only
// read it (View); the store must already exist.
func (sb *sandbox) openStore(workspaceID string) *storage.SQLite {
	sb.t.Helper()
	p := sb.storePath(workspaceID)
	if !fileExists(p) {
		sb.t.Fatalf("expected the store of %s at %s, it does not exist", workspaceID, p)
	}
	ctx, cancel := withTimeout()
	defer cancel()
	st, err := storage.OpenSQLite(ctx, p, workspaceID)
	if err != nil {
		sb.t.Fatalf("open the store %s: %v", p, err)
	}
	sb.t.Cleanup(func() { st.Close() })
	return st
}

// storeSnapshot is everything the invariant checks read, from one View.
type storeSnapshot struct {
	messages []protocol.Message
	receipts map[string][]protocol.Receipt // by message id
	events   []protocol.Event
}

func readSnapshot(t testing.TB, st storage.Store) storeSnapshot {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	snap := storeSnapshot{receipts: map[string][]protocol.Receipt{}}
	err := st.View(ctx, func(tx storage.ReadTx) error {
		if err := tx.ScanMessages(storage.MessageQuery{}, func(m protocol.Message) bool {
			snap.messages = append(snap.messages, m)
			return true
		}); err != nil {
			return err
		}
		for _, m := range snap.messages {
			rs, err := tx.ReceiptsByMessage(m.MessageID)
			if err != nil {
				return err
			}
			snap.receipts[m.MessageID] = rs
		}
		for after := int64(0); ; {
			evs, err := tx.Events(after, 1000)
			if err != nil {
				return err
			}
			if len(evs) == 0 {
				return nil
			}
			snap.events = append(snap.events, evs...)
			// Continue from the last sequence actually read, so a gap
			// cannot make the loop skip or repeat events.
			last, err := parseSeq(evs[len(evs)-1].Sequence)
			if err != nil {
				return err
			}
			if last <= after {
				return fmt.Errorf("event log went backwards: asked for events after %d, the page ended at %d", after, last)
			}
			after = last
		}
	})
	if err != nil {
		t.Fatalf("read the store: %v", err)
	}
	return snap
}

func parseSeq(s string) (int64, error) {
	var n int64
	if !protocol.IsSequence(s) {
		return 0, fmt.Errorf("%q is not a 16-digit sequence", s)
	}
	_, err := fmt.Sscanf(s, "%d", &n)
	return n, err
}

// checkEventLog asserts that the events carry sequences 1..N with no gap
// and no duplicate, and unique event ids.
func checkEventLog(t testing.TB, events []protocol.Event) {
	t.Helper()
	ids := map[string]bool{}
	for i, e := range events {
		want := protocol.FormatSequence(int64(i + 1))
		if e.Sequence != want {
			t.Fatalf("event log: expected sequence %s at position %d (gap-free from 1), saw %s (type %s)", want, i+1, e.Sequence, e.Type)
		}
		if ids[e.EventID] {
			t.Fatalf("event log: event id %s appears twice", e.EventID)
		}
		ids[e.EventID] = true
	}
}

// checkMessagesMatchEvents asserts one message.recorded event per stored
// message and no message.recorded event for a message that is not stored.
func checkMessagesMatchEvents(t testing.TB, snap storeSnapshot) {
	t.Helper()
	recorded := map[string]int{}
	for _, e := range snap.events {
		if e.Type != protocol.EventMessageRecorded {
			continue
		}
		id, _ := e.Payload["messageId"].(string)
		recorded[id]++
	}
	stored := map[string]bool{}
	for _, m := range snap.messages {
		stored[m.MessageID] = true
		if n := recorded[m.MessageID]; n != 1 {
			t.Errorf("message %s: expected exactly one message.recorded event, saw %d", m.MessageID, n)
		}
	}
	for id, n := range recorded {
		if !stored[id] {
			t.Errorf("message.recorded event(s) (%d) for %s, which is not in the messages table", n, id)
		}
	}
}

// checkReceiptsComplete asserts that every stored message has exactly one
// receipt per addressed recipient, each in state wantState.
func checkReceiptsComplete(t testing.TB, snap storeSnapshot, wantState string) {
	t.Helper()
	for _, m := range snap.messages {
		rs := snap.receipts[m.MessageID]
		var got []string
		for _, r := range rs {
			got = append(got, r.RecipientParticipantID)
			if r.State != wantState {
				t.Errorf("message %s: expected receipt of %s in state %s, saw %s", m.MessageID, r.RecipientParticipantID, wantState, r.State)
			}
		}
		want := slices.Clone(m.ToParticipantIDs)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("message %s: expected receipts for %v, saw receipts for %v", m.MessageID, want, got)
		}
	}
}

// orphanReceipts counts receipts whose message row is missing, with a plain
// read-only SQL connection (pkg/storage offers no way to see such a row,
// which is the point: its joins would hide it). The sqlite driver is the one
// pkg/storage registers.
func orphanReceipts(t testing.TB, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("open %s read-only: %v", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM receipts r LEFT JOIN messages m ON m.message_id = r.message_id WHERE m.message_id IS NULL`).Scan(&n); err != nil {
		t.Fatalf("count orphan receipts in %s: %v", path, err)
	}
	return n
}

// checkIntegrity asserts SQLite's integrity_check reports "ok".
func checkIntegrity(t testing.TB, st *storage.SQLite) {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	lines, err := st.IntegrityCheck(ctx)
	if err != nil {
		t.Fatalf("integrity_check failed to run: %v", err)
	}
	if len(lines) != 1 || lines[0] != "ok" {
		t.Fatalf("integrity_check: expected [ok], saw %q", lines)
	}
}
