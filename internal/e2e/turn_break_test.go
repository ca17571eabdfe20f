package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestRouterEndOfTurnIsTrue: `acc message` reports end-of-turn only when
// the recipient's stop hook would hold for the message. With
// policy.endOfTurnMaxHolds 0 no stop is ever held, and once a turn has
// had its policy.endOfTurnMaxHolds holds no further stop of it is: in
// both cases the message waits for the next turn, and the send says
// next-turn.
func TestRouterEndOfTurnIsTrue(t *testing.T) {
	t.Run("maxHolds=0", func(t *testing.T) {
		tr := newTurnRoom(t, true, map[string]any{"midTurn": "off", "endOfTurnMaxHolds": 0})
		tr.prompt()
		d, q := tr.sb.deliver(tr.alice, "--to", "bob", "--type", "question", "--subject", "s", "--body", "b")
		if reason := hold(t, tr.stop(false)); reason != "" {
			t.Fatalf("endOfTurnMaxHolds 0 held a stop: %s", reason)
		}
		wantDelivery(t, "endOfTurnMaxHolds 0", d, "bob", "queued", "next-turn", "")
		if !strings.Contains(tr.c.injected(t, tr.prompt(), "UserPromptSubmit"), q) {
			t.Fatal("the next turn must carry it")
		}
	})
	t.Run("holds spent", func(t *testing.T) {
		tr := newTurnRoom(t, true, map[string]any{"midTurn": "off", "endOfTurnMaxHolds": 1})
		tr.prompt()
		tr.send("question", "first", "b")
		if reason := hold(t, tr.stop(false)); reason == "" {
			t.Fatal("the first question must hold the stop")
		}
		d, _ := tr.sb.deliver(tr.alice, "--to", "bob", "--type", "question", "--subject", "second", "--body", "b")
		if reason := hold(t, tr.stop(false)); reason != "" {
			t.Fatalf("a turn was held more than endOfTurnMaxHolds times: %s", reason)
		}
		wantDelivery(t, "holds spent", d, "bob", "queued", "next-turn", "")
	})
}

// fullPipe is a pipe whose buffer is already full: a writer blocks until
// drain reads it.
func fullPipe(t *testing.T) (rd, wr *os.File) {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close(); wr.Close() })
	fd := int(wr.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := syscall.Write(fd, chunk); err != nil {
			break
		}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	return rd, wr
}

// waitLocked waits until another process holds the flock at path.
func waitLocked(t *testing.T, path string) {
	t.Helper()
	for range 2000 {
		fl := flock.New(path)
		if got, err := fl.TryLock(); err == nil && !got {
			return
		} else if got {
			fl.Unlock()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("nobody took %s", path)
}

// TestOfferLockHeldLongIsNotBypassed: a post-tool hook that holds bob's
// offer lock while its client is slow to read (a full stdout pipe) has
// printed a question; a before-turn hook of bob meanwhile must not print
// it too after giving up on the lock. Only the post-tool hook's delivery
// is recorded, once, and the next turn carries the message only if it
// is still queued.
func TestOfferLockHeldLongIsNotBypassed(t *testing.T) {
	tr := newTurnRoom(t, true, nil)
	tr.prompt()
	q := tr.send("question", "who prints me?", "b")
	rd, wr := fullPipe(t)
	a := exec.Command(hookBin, "claude", "PostToolUse")
	a.Dir, a.Env = tr.sb.base, tr.sb.environ()
	a.Stdin = strings.NewReader(string(tr.payload("PostToolUse", nil)))
	a.Stdout = wr
	var aerr strings.Builder
	a.Stderr = &aerr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	waitLocked(t, filepath.Join(filepath.Dir(tr.sb.storePath(tr.wsID)), "live.bob.lock"))
	b := tr.prompt()
	drained := make(chan []byte)
	go func() { all, _ := io.ReadAll(rd); drained <- all }()
	if err := a.Wait(); err != nil {
		t.Fatalf("post-tool hook: %v\n%s", err, aerr.String())
	}
	wr.Close()
	aout := string(<-drained)
	printed := 0
	if strings.Contains(aout, "messageId: "+q) {
		printed++
	}
	if strings.Contains(b.stdout, "messageId: "+q) {
		printed++
	}
	if printed != 1 {
		t.Fatalf("the question was printed %d times (post-tool: %v; before-turn:\n%s)", printed, strings.Contains(aout, q), b.stdout)
	}
	if !strings.Contains(b.stdout, "acc inbox --message "+q) {
		t.Fatalf("the before-turn hook must still name it:\n%s", b.stdout)
	}
	if st, tp := tr.receipt(q); st != protocol.ReceiptOffered || len(tp) != 1 || tp[0] != "mid-turn" {
		t.Fatalf("receipt %s offers %v", st, tp)
	}
}
