package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waiter is a running `acc wait`.
type waiter struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	ended    time.Time
	code     int
}

func (sb *sandbox) startWait(dir string, args ...string) *waiter {
	sb.t.Helper()
	w := &waiter{done: make(chan struct{})}
	w.cmd = sb.program(context.Background(), dir, accBin, append([]string{"wait", "--json"}, args...)...)
	w.cmd.Env = sb.environ()
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	if err := w.cmd.Start(); err != nil {
		sb.t.Fatal(err)
	}
	go func() {
		err := w.cmd.Wait()
		w.ended = time.Now()
		w.code = exitCode(w.cmd, err)
		close(w.done)
	}()
	return w
}

func (w *waiter) finished(t testing.TB, within time.Duration) bool {
	t.Helper()
	select {
	case <-w.done:
		return true
	case <-time.After(within):
		return false
	}
}

func (w *waiter) result(t testing.TB) (items []string) {
	t.Helper()
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			Satisfied bool `json:"satisfied"`
			Messages  []struct {
				MessageID string `json:"messageId"`
			} `json:"messages"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.out.Bytes(), &env); err != nil || !env.OK || !env.Data.Satisfied {
		t.Fatalf("acc wait: exit %d, %s %s", w.code, w.out.String(), w.err.String())
	}
	for _, m := range env.Data.Messages {
		items = append(items, m.MessageID)
	}
	return items
}

// TestWaitWakesOnArrival: acc wait in another process returns when a
// message arrives, with that message; the wake-up latency is logged.
func TestWaitWakesOnArrival(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	waitWakesOnArrival(t, newSandbox(t))
}

// TestWaitWakesOnArrivalPostgres: the same with the room on the
// PostgreSQL test server, where acc wait listens for the room's NOTIFY.
func TestWaitWakesOnArrivalPostgres(t *testing.T) {
	t.Parallel()
	waitWakesOnArrival(t, newSandboxPG(t))
}

func waitWakesOnArrival(t *testing.T, sb *sandbox) {
	repo := sb.newRepo("repo")
	a := sb.attach(repo, "alice", "cli")
	b := sb.attach(repo, "bob", "cli")
	var lat []time.Duration
	for i := 0; i < 5; i++ {
		w := sb.startWait(repo, append([]string{"--timeout", "20"}, b.creds()...)...)
		time.Sleep(300 * time.Millisecond) // the waiter is watching by now
		if w.finished(t, 0) {
			t.Fatalf("acc wait returned with nothing pending: %s %s", w.out.String(), w.err.String())
		}
		id := sb.sendAs(a, "--to", "bob", "--subject", "s", "--body", "b")
		sent := time.Now()
		if !w.finished(t, 10*time.Second) {
			t.Fatal("acc wait did not wake within 10 s of the send")
		}
		lat = append(lat, w.ended.Sub(sent))
		if items := w.result(t); len(items) != 1 || items[0] != id {
			t.Fatalf("acc wait returned %v, want [%s]", items, id)
		}
		sb.ok(repo, append([]string{"inbox", "--message", id}, b.creds()...)...)
		sb.ok(repo, append([]string{"ack", "--message", id}, b.creds()...)...)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("%s: acc wait woke %v after the send command returned (sorted; median %v)", sb.engine(), lat, lat[len(lat)/2])
}

// TestWaitNeverMisses: a message sent while acc wait is starting (before
// its watch is set up) is never missed: the condition is read after the
// watch exists, and holds already.
func TestWaitNeverMisses(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	waitNeverMisses(t, newSandbox(t))
}

// TestWaitNeverMissesPostgres: the same with the room on PostgreSQL (a
// NOTIFY sent before the waiter listens is not replayed; the first read
// after LISTEN sees the message).
func TestWaitNeverMissesPostgres(t *testing.T) {
	t.Parallel()
	waitNeverMisses(t, newSandboxPG(t))
}

func waitNeverMisses(t *testing.T, sb *sandbox) {
	repo := sb.newRepo("repo")
	a := sb.attach(repo, "alice", "cli")
	b := sb.attach(repo, "bob", "cli")
	for i := 0; i < 10; i++ {
		w := sb.startWait(repo, append([]string{"--timeout", "20"}, b.creds()...)...)
		id := sb.sendAs(a, "--to", "bob", "--subject", "race", "--body", "b")
		if !w.finished(t, 15*time.Second) {
			t.Fatalf("round %d: acc wait missed a message sent as it started", i)
		}
		if items := w.result(t); len(items) != 1 || items[0] != id {
			t.Fatalf("round %d: %v, want [%s]", i, items, id)
		}
		sb.ok(repo, append([]string{"ack", "--message", id}, b.creds()...)...)
	}
}

// TestWaitConditions: --answer, --ack and --released return when their
// condition holds, at once when it already does.
func TestWaitConditions(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	a := sb.attach(repo, "alice", "cli")
	b := sb.attach(repo, "bob", "cli")
	q := sb.sendAs(a, "--to", "bob", "--type", "question", "--subject", "q", "--body", "?")

	w := sb.startWait(repo, "--answer", q, "--timeout", "20")
	time.Sleep(200 * time.Millisecond)
	if w.finished(t, 0) {
		t.Fatal("--answer returned before any answer")
	}
	sb.ok(repo, append([]string{"reply", "--message", q, "--body", "yes"}, b.creds()...)...)
	if !w.finished(t, 10*time.Second) || len(w.result(t)) != 1 {
		t.Fatalf("--answer: %s %s", w.out.String(), w.err.String())
	}
	// Already true: returns at once.
	w = sb.startWait(repo, "--answer", q, "--timeout", "20")
	if !w.finished(t, 5*time.Second) {
		t.Fatal("--answer did not return at once for an answered message")
	}
	// --ack: the question was acknowledged by the reply.
	w = sb.startWait(repo, "--ack", q, "--timeout", "20")
	if !w.finished(t, 5*time.Second) || w.code != 0 {
		t.Fatalf("--ack: %s %s", w.out.String(), w.err.String())
	}
	// --released.
	sb.ok(repo, append([]string{"claim", "--resource", "file:a.go"}, b.creds()...)...)
	w = sb.startWait(repo, append([]string{"--released", "file:a.go", "--timeout", "20"}, a.creds()...)...)
	time.Sleep(200 * time.Millisecond)
	if w.finished(t, 0) {
		t.Fatal("--released returned while bob holds the claim")
	}
	sb.ok(repo, append([]string{"release", "--resource", "file:a.go"}, b.creds()...)...)
	if !w.finished(t, 10*time.Second) || w.code != 0 {
		t.Fatalf("--released: %s %s", w.out.String(), w.err.String())
	}
}

// TestWaitTimeoutAndKill: running out exits 3 with wait_timeout; a waiter
// killed mid-wait leaves the data home exactly as it was; bad flags are
// refused with exit 2.
func TestWaitTimeoutAndKill(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	b := sb.attach(repo, "bob", "cli")
	w := sb.startWait(repo, append([]string{"--timeout", "300ms"}, b.creds()...)...)
	if !w.finished(t, 10*time.Second) || w.code != 3 || !strings.Contains(w.out.String(), `"reasonCode": "wait_timeout"`) {
		t.Fatalf("timeout: exit %d %s", w.code, w.out.String())
	}
	before := dirHash(t, sb.data)
	w = sb.startWait(repo, append([]string{"--timeout", "30"}, b.creds()...)...)
	time.Sleep(300 * time.Millisecond)
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.finished(t, 5*time.Second)
	if after := dirHash(t, sb.data); after != before {
		t.Error("a killed acc wait changed the data home")
	}
	for _, args := range [][]string{{"--answer", "x", "--ack", "y"}, {"--timeout", "soon"}, {"--timeout", "-1"}} {
		res := sb.run(repo, append([]string{"wait", "--json"}, args...)...)
		if res.code != 2 {
			t.Errorf("acc wait %v: exit %d, want 2", args, res.code)
		}
	}
	if res := sb.run(repo, "wait", "--json", "--answer", "message_doesnotexist0000000"); res.code != 4 {
		t.Errorf("--answer of an unknown message: exit %d, want 4", res.code)
	}
}

// dirHash hashes every file under dir (path and bytes), except SQLite's
// own -wal and -shm files, which any reader of a store creates and the next
// one reclaims.
func dirHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") {
			return nil
		}
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%s %x\n", p, sha256.Sum256(b))
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}
