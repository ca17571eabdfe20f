package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// Crash-injection sizes: 200 trials in the default test command (500 with
// the room on PostgreSQL), 1,000 as a soak under ACC_STRESS=1. The kill lands at a random moment from half the
// fastest to twice the slowest measured run time of an uninterrupted send
// (calibrationSends of them; before half the fastest is process start and
// workspace discovery, which touch no store), so kills hit a process that
// is opening the store, writing, committing or printing, and some trials
// finish first; the window ends at most at maxKillDelay.
const (
	crashTrialsStress    = 1000
	crashTrialsByDefault = 200
	crashTrialsPostgres  = 500
	crashWorkers         = 2
	calibrationSends     = 5
	minKillWindow        = 2 * time.Millisecond
	maxKillDelay         = 200 * time.Millisecond
)

// crashTrial is one `acc message` process that received SIGKILL at a random
// moment.
type crashTrial struct {
	n         int
	delay     time.Duration
	subject   string
	messageID string // printed `recorded …` id, "" when nothing was printed
	killed    bool   // the signal ended it (it had not exited yet)
	res       result
}

// TestCrashKilledSendsLeaveNoPartialMessage kills `acc message` processes
// with SIGKILL at a random moment from half the fastest to twice the slowest
// uninterrupted send, so before, during and after the COMMIT and after the
// printing (the delays come from a logged seed;
// set ACC_CRASH_SEED to replay one). Two workers run trials side by side, so
// a process is sometimes killed while it holds the write lock and the other
// is waiting for it. Afterwards: every send that printed `recorded ID` is in
// the store with its receipt; no message exists without its receipts and no
// receipt without its message; integrity_check is ok; the event log is
// gap-free with one message.recorded per message; and the store still opens
// and records a new send. Every trial carries its own --client-message-id:
// a killed one is sent again with it (a killed process prints nothing to go
// by), and a send that reported outcome_unknown runs the retry it printed;
// after that every trial's message is stored exactly once, a send that
// exited 0 stored the message it printed, and acc doctor finds the store
// healthy.
func TestCrashKilledSendsLeaveNoPartialMessage(t *testing.T) {
	crashKilledSends(t, newSandbox(t), crashTrialsByDefault)
}

// TestCrashKilledSendsLeaveNoPartialMessagePostgres is the same with the
// room on the PostgreSQL test server, 500 trials: a client killed inside
// its transaction leaves the server to roll it back when the connection
// drops; one killed after its COMMIT reached the server leaves it whole.
func TestCrashKilledSendsLeaveNoPartialMessagePostgres(t *testing.T) {
	crashKilledSends(t, newSandboxPG(t), crashTrialsPostgres)
}

func crashKilledSends(t *testing.T, sb *sandbox, trials int) {
	if stress() {
		trials = crashTrialsStress
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ACC_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("ACC_CRASH_SEED=%q is not an unsigned integer", v)
		}
		seed = s
	}
	repo := sb.newRepo("repo")
	recv := sb.attach(repo, "recv", "cli")
	recv2 := sb.attach(repo, "recv2", "cli")
	sender := sb.attach(repo, "sender", "cli")
	// Two recipients, so "present with all its receipts" can fail.
	to := []string{recv.ParticipantID, recv2.ParticipantID}

	// Calibrate the kill window on uninterrupted sends of the same shape.
	var runs []time.Duration
	for i := range calibrationSends {
		c := &crashTrial{n: -1, delay: time.Hour, subject: fmt.Sprintf("calibrate-%d", i)}
		began := time.Now()
		runCrashTrial(sb, sender, to, c)
		runs = append(runs, time.Since(began))
		if c.res.code != 0 || c.messageID == "" {
			t.Fatalf("calibration send %d: expected exit 0 and `recorded message_…`:\n%s", i, c.res)
		}
	}
	slices.Sort(runs)
	// Up to twice the slowest uninterrupted send: two workers side by side
	// slow each other, so a shorter window would kill almost every send
	// before its COMMIT; this one reaches past the commit, the printing and
	// the exit too (the log counts each phase).
	window := min(max(runs[len(runs)-1]*2, minKillWindow), maxKillDelay)
	earliest := runs[0] / 2

	t.Logf("%s: crash trials: %d (ACC_STRESS=%q), %d workers, to %d recipients; uninterrupted sends took %v, kill delay uniform in [%v, %v]; seed %d (replay with ACC_CRASH_SEED=%d)",
		sb.engine(), trials, os.Getenv("ACC_STRESS"), crashWorkers, len(to), runs, earliest, window, seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	all := make([]*crashTrial, trials)
	for i := range all {
		all[i] = &crashTrial{n: i, delay: earliest + time.Duration(rng.Int64N(int64(window-earliest)+1)), subject: fmt.Sprintf("crash-%04d", i)}
	}

	began := time.Now()
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < trials; i += crashWorkers {
				runCrashTrial(sb, sender, to, all[i])
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)

	// Tally. A process that was not killed must have succeeded: an exit 3
	// (store_busy) or any other failure while a peer was being killed is a
	// bug to report.
	printed := map[string]*crashTrial{}
	killedSilent, killedAfterPrint, finished := 0, 0, 0
	var unknown []*crashTrial
	for _, c := range all {
		switch {
		case !c.killed && c.res.code == 4 && retryLine.MatchString(c.res.stderr):
			unknown = append(unknown, c) // outcome_unknown: its retry runs below
		case !c.killed && (c.res.code != 0 || c.messageID == ""):
			t.Errorf("trial %d (kill delay %v) exited on its own without success; expected exit 0 and `recorded message_…`:\n%s", c.n, c.delay, c.res)
		case !c.killed:
			finished++
		case c.messageID != "":
			killedAfterPrint++
		default:
			killedSilent++
		}
		if c.messageID != "" {
			if prev, dup := printed[c.messageID]; dup {
				t.Errorf("trials %d and %d both printed %s", prev.n, c.n, c.messageID)
			}
			printed[c.messageID] = c
		}
	}
	t.Logf("elapsed %v: %d finished before the kill, %d killed after printing, %d killed before printing",
		elapsed.Round(time.Millisecond), finished, killedAfterPrint, killedSilent)

	st := sb.openRoom(recv.WorkspaceID)
	sb.checkStoreConsistent(t, recv.WorkspaceID, st)
	before := readSnapshot(t, st)
	committedUnprinted := len(before.messages) - len(printed) - calibrationSends
	killedBeforeCommit := killedSilent - committedUnprinted
	t.Logf("killed before their COMMIT: %d; killed after it, before printing: %d; killed after printing: %d; outcome_unknown: %d",
		killedBeforeCommit, committedUnprinted, killedAfterPrint, len(unknown))

	// Send every killed trial again with its key, and run the retry an
	// outcome_unknown printed: each must end recorded, the first message
	// when there was one.
	firstID := map[string]string{}
	for _, m := range before.messages {
		firstID[m.Subject] = m.MessageID
	}
	for _, c := range unknown {
		retry := retryLine.FindStringSubmatch(c.res.stderr)[1]
		if r := sb.runShell(sender.dir, retry); r.code != 0 || recordedID(r.stdout) == "" {
			t.Errorf("trial %d: the printed retry failed:\n%s", c.n, r)
		}
	}
	for _, c := range all {
		if !c.killed {
			continue
		}
		again := &crashTrial{n: c.n, delay: time.Hour, subject: c.subject}
		runCrashTrial(sb, sender, to, again)
		switch id, had := firstID[c.subject]; {
		case again.res.code != 0 || again.messageID == "":
			t.Errorf("trial %d sent again with its key: expected `recorded message_…`:\n%s", c.n, again.res)
		case had && again.messageID != id:
			t.Errorf("trial %d sent again with its key recorded %s, but %s holds that key", c.n, again.messageID, id)
		case had && !strings.Contains(again.res.stdout, "already recorded earlier"):
			t.Errorf("trial %d sent again with its key: expected it to say the message was already recorded:\n%s", c.n, again.res)
		}
	}
	snap := readSnapshot(t, st)

	// Every printed send is present, with its receipt.
	stored := map[string]protocol.Message{}
	bySubject := map[string]int{}
	for _, m := range snap.messages {
		stored[m.MessageID] = m
		bySubject[m.Subject]++
	}
	for id, c := range printed {
		m, ok := stored[id]
		if !ok {
			t.Errorf("trial %d printed `recorded %s` (kill delay %v, killed=%v) but the store does not hold it", c.n, id, c.delay, c.killed)
			continue
		}
		if m.Subject != c.subject {
			t.Errorf("trial %d: printed %s, whose stored subject is %q, expected %q", c.n, id, m.Subject, c.subject)
		}
	}
	for _, c := range all {
		if n := bySubject[c.subject]; n != 1 {
			t.Errorf("trial %d (%s): expected exactly one stored message after the resends, saw %d", c.n, c.subject, n)
		}
	}
	t.Logf("store: %d messages (%d printed, %d committed but killed before printing, %d resent after a kill before the COMMIT); %d events",
		len(snap.messages), len(printed), committedUnprinted, killedBeforeCommit, len(snap.events))

	// Globally: no message without its receipts, no receipt without its
	// message, gap-free events matching the messages.
	checkReceiptsComplete(t, snap, protocol.ReceiptQueued)
	sb.checkStoreConsistent(t, recv.WorkspaceID, st)
	checkEventLog(t, snap.events)
	checkMessagesMatchEvents(t, snap)

	// The store still opens for acc and accepts a new send.
	after := sb.send(sender, recv.ParticipantID, "after the crashes")
	snap2 := readSnapshot(t, st)
	if len(snap2.messages) != len(snap.messages)+1 {
		t.Errorf("after one more send: expected %d messages, saw %d", len(snap.messages)+1, len(snap2.messages))
	}
	if rs := snap2.receipts[after]; len(rs) != 1 || rs[0].RecipientParticipantID != recv.ParticipantID {
		t.Errorf("the send after the crashes (%s): expected one receipt for %s, saw %+v", after, recv.ParticipantID, rs)
	}
	checkEventLog(t, snap2.events)
	sb.ok(recv.dir, append([]string{"status"}, recv.creds()...)...)
	if doc := sb.run(recv.dir, "doctor"); doc.code != 0 {
		t.Errorf("expected acc doctor to find the store healthy after the crashes:\n%s", doc)
	}
}

// retryLine finds the retry an outcome_unknown send printed.
var retryLine = regexp.MustCompile("cannot tell whether it was recorded; it used clientMessageId [^:]*: run `([^`]*)`")

// runCrashTrial starts one send, kills it after c.delay and records what it
// printed and how it ended.
func runCrashTrial(sb *sandbox, sender session, to []string, c *crashTrial) {
	ctx, cancel := withTimeout()
	defer cancel()
	args := []string{"message", "--subject", c.subject, "--body", "crash trial " + c.subject,
		"--session", sender.SessionID, "--generation", sender.Generation, "--client-message-id", "key-" + c.subject}
	for _, p := range to {
		args = append(args, "--to", p)
	}
	cmd := sb.command(ctx, sender.dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		c.res = result{args: cmd.Args[1:], code: -1, stderr: "start: " + err.Error()}
		return
	}
	var err error
	if c.delay >= time.Hour { // calibration: let it finish
		err = cmd.Wait()
	} else {
		time.Sleep(c.delay)
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails harmlessly when it already exited
		err = cmd.Wait()
	}
	c.res = result{args: cmd.Args[1:], stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		c.killed = true
	}
	c.messageID = recordedID(c.res.stdout)
}
