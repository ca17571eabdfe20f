package realclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/fakemodel"
)

// mixedRoom are the clients of TestMixedRoom: three hook systems (Claude
// Code's settings hooks, Copilot CLI's hook files, acc's OpenCode plugin)
// and three model APIs.
var mixedRoom = []Client{Claude, Copilot, OpenCode}

// TestMixedRoom runs a Claude Code, a GitHub Copilot CLI and an OpenCode
// session in one room at once, and each asks each of the other two one
// question, so every question crosses between two different clients in
// each direction:
//
//  1. All three start together; each model waits until acc status lists
//     the three sessions live at once.
//  2. All three resume together; each sends its two questions with
//     `acc message --type question`.
//  3. All three resume together: each model's first request shows the two
//     questions sent to it, framed, with the sender named and its
//     receipt offered; once all three have seen theirs, each answers
//     both with `acc reply`.
//  4. All three resume together: each first request shows the two
//     answers, framed, in reply to its own questions; the model
//     acknowledges both with `acc ack`.
//
// Every question and answer ends acknowledged, and every session the
// hooks opened is closed once its client exits. The owners switched
// mid-turn and end-of-turn delivery off (acc install --mid-turn off
// --end-of-turn off), so what arrives during a turn waits for the next
// one and each round sees exactly the messages of the one before.
func TestMixedRoom(t *testing.T) {
	w := newWorld(t)
	acc := ShellQuote(w.accPath())
	n := len(mixedRoom)
	runs := make([]*run, n)
	turns := make([]*steps, n)
	for i, c := range mixedRoom {
		dir := w.repo
		if i == 1 {
			dir = w.wt
		}
		runs[i] = w.hooked(t, c, dir, nil)
		runs[i].installArgs = []string{"--mid-turn", "off", "--end-of-turn", "off"}
		runs[i].setup.Install.DataHome = w.dataHome
		turns[i] = &steps{}
	}
	// One data home has one hook shim, which runs one program: a
	// dispatcher to each run's recording wrapper, by client.
	dispatch := filepath.Join(w.base, "acc-hook-by-client")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncase $1 in\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "%s) exec %s \"$@\" ;;\n", r.client.Name, ShellQuote(r.setup.Install.HookBinary))
	}
	b.WriteString("esac\n")
	if err := os.WriteFile(dispatch, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		r.setup.Install.HookBinary = dispatch
	}
	var (
		mu          sync.Mutex
		participant = make([]string, n)   // each run's participant
		asked       = map[[2]int]string{} // question id by (asker, answerer)
		answered    = map[[2]int]string{} // answer id by (asker, answerer)
		together    = make(chan struct{}) // all three live at once
		asking      = newBarrier(n)       // every run has begun the turn it asks in
		answering   = newBarrier(n)       // every run has seen its questions
		others      = func(i int) []int { return slices.DeleteFunc([]int{0, 1, 2}, func(j int) bool { return j == i }) }
		questionFor = func(i, j int) string {
			return fmt.Sprintf("%s asks %s: which port does the dev server use? MIXED_Q_%d_%d", mixedRoom[i].Name, mixedRoom[j].Name, i, j)
		}
		answerFor = func(i, j int) string {
			return fmt.Sprintf("%s answers %s: port 8080. MIXED_A_%d_%d", mixedRoom[j].Name, mixedRoom[i].Name, i, j)
		}
	)
	var liveOnce sync.Once
	waitTogether := func() error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			st, err := w.status()
			if err != nil {
				return err
			}
			live := 0
			for _, c := range mixedRoom {
				live += min(len(st.liveOf(c.Name)), 1)
			}
			if live == n {
				liveOnce.Do(func() { close(together) })
				return nil
			}
			select {
			case <-together:
				return nil
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("acc status never listed %d live sessions of %v at once", n, mixedRoom)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// 1. All three start; each learns who it is once all three are live.
	for i, r := range runs {
		i, r := i, r
		r.model.Append(turns[i].reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, r.client.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if check(t, waitTogether()) != nil {
				return fakemodel.Reply{}, errors.New("not together")
			}
			st, err := w.status()
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			mu.Lock()
			participant[i], _, _, _ = st.session(c.Session)
			mu.Unlock()
			return fakemodel.Say("Ready."), nil
		}))
	}
	round1 := make([]*pending, n)
	for i, r := range runs {
		round1[i] = r.start("Get ready to work with the other sessions.")
	}
	for i, r := range runs {
		r.wait(round1[i])
	}
	if slices.Contains(participant, "") {
		t.Fatalf("not every session learned its participant: %v", participant)
	}
	t.Logf("together in one room: %v as %v", mixedRoom, participant)

	// 2. Each asks the other two, in its next turn.
	for i, r := range runs {
		i, r, s := i, r, turns[i]
		var sent []int
		for range others(i) {
			r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
				if len(sent) == 0 {
					// No question goes out before every turn has begun:
					// one asked earlier would be in its recipient's
					// projection of this round, not the next.
					if check(t, asking.wait(2*time.Minute)) != nil {
						return fakemodel.Reply{}, errors.New("not all runs began their turn")
					}
				} else {
					id, err := sentBy(prev, req)
					if check(t, err) != nil {
						return fakemodel.Reply{}, err
					}
					mu.Lock()
					asked[[2]int{i, sent[len(sent)-1]}] = id
					mu.Unlock()
				}
				c, err := w.shownCaller(req, r.client.Name)
				if check(t, err) != nil {
					return fakemodel.Reply{}, err
				}
				j := others(i)[len(sent)]
				sent = append(sent, j)
				return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s message %s --to %s --type question --subject %s --body %s --json",
					acc, c.flags(), participant[j], ShellQuote("dev server port"), ShellQuote(questionFor(i, j))))), nil
			}))
		}
		r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			id, err := sentBy(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			mu.Lock()
			asked[[2]int{i, sent[len(sent)-1]}] = id
			mu.Unlock()
			return fakemodel.Say("Asked both."), nil
		}))
	}
	rounds(t, runs, "Ask the other two sessions which port the dev server uses.")
	if len(asked) != n*(n-1) {
		t.Fatalf("%d questions were sent, want %d: %v", len(asked), n*(n-1), asked)
	}
	for pair, id := range asked {
		wantReceipt(t, w, id, participant[pair[1]], "queued")
	}

	// 3. Each answers the two questions it was asked.
	for i, r := range runs {
		i, r, s := i, r, turns[i]
		var replied []int
		for range others(i) {
			r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
				if len(replied) == 0 {
					// The first request of the turn shows both questions.
					for _, j := range others(i) {
						q := asked[[2]int{j, i}]
						if err := check(t, framed(req, r.client, q, participant[j], questionFor(j, i))); err != nil {
							return fakemodel.Reply{}, err
						}
						if state, err := w.receipt(q, participant[i]); check(t, err) != nil || state != "offered" {
							return fakemodel.Reply{}, check(t, fmt.Errorf("%s's receipt of %s is %q while its model is asked, want offered", r.client.Name, q, state))
						}
					}
					if check(t, answering.wait(2*time.Minute)) != nil {
						return fakemodel.Reply{}, errors.New("not all runs saw their questions")
					}
				} else {
					id, err := sentBy(prev, req)
					if check(t, err) != nil {
						return fakemodel.Reply{}, err
					}
					mu.Lock()
					answered[[2]int{replied[len(replied)-1], i}] = id
					mu.Unlock()
				}
				c, err := w.shownCaller(req, r.client.Name)
				if check(t, err) != nil {
					return fakemodel.Reply{}, err
				}
				j := others(i)[len(replied)]
				replied = append(replied, j)
				return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s reply %s --message %s --body %s --json",
					acc, c.flags(), asked[[2]int{j, i}], ShellQuote(answerFor(j, i))))), nil
			}))
		}
		r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			id, err := sentBy(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			mu.Lock()
			answered[[2]int{replied[len(replied)-1], i}] = id
			mu.Unlock()
			return fakemodel.Say("Answered both."), nil
		}))
	}
	rounds(t, runs, "Carry on; see whether anyone needs something from you.")
	if len(answered) != n*(n-1) {
		t.Fatalf("%d answers were sent, want %d: %v", len(answered), n*(n-1), answered)
	}
	for pair, q := range asked {
		wantReceipt(t, w, q, participant[pair[1]], "acknowledged")
		wantReceipt(t, w, answered[pair], participant[pair[0]], "queued")
	}

	// 4. Each reads its two answers, in its questions' threads, and
	// acknowledges them.
	for i, r := range runs {
		i, r, s := i, r, turns[i]
		var acked []int
		for range others(i) {
			r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
				if len(acked) == 0 {
					for _, j := range others(i) {
						pair := [2]int{i, j}
						if err := check(t, framed(req, r.client, answered[pair], participant[j], answerFor(i, j), "inReplyTo: "+asked[pair])); err != nil {
							return fakemodel.Reply{}, err
						}
					}
				} else {
					res, err := lastResult(prev, req)
					if check(t, err) != nil {
						return fakemodel.Reply{}, err
					}
					if a := answered[[2]int{i, acked[len(acked)-1]}]; !strings.Contains(res.Output, "acknowledged "+a) {
						return fakemodel.Reply{}, check(t, fmt.Errorf("acc ack printed %q", res.Output))
					}
				}
				c, err := w.shownCaller(req, r.client.Name)
				if check(t, err) != nil {
					return fakemodel.Reply{}, err
				}
				j := others(i)[len(acked)]
				acked = append(acked, j)
				return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s ack %s --message %s", acc, c.flags(), answered[[2]int{i, j}]))), nil
			}))
		}
		r.model.Append(s.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if a := answered[[2]int{i, acked[len(acked)-1]}]; !strings.Contains(res.Output, "acknowledged "+a) {
				return fakemodel.Reply{}, check(t, fmt.Errorf("acc ack printed %q", res.Output))
			}
			return fakemodel.Say("Both answers read: port 8080."), nil
		}))
	}
	rounds(t, runs, "Any news from the others?")
	for pair, a := range answered {
		wantReceipt(t, w, a, participant[pair[0]], "acknowledged")
	}
	for _, r := range runs {
		// Every scripted step was played: ready; two questions and a
		// last word; two answers and one; two acks and one.
		r.wantModelCalls(10)
	}

	all, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all.Participants {
		if p.State == "open" && p.Presence != "offline" {
			t.Errorf("session %s (%s) is still live after its client exited", p.SessionID, p.Harness)
		}
	}
}

// rounds runs every client once more, resuming its session, all at once,
// with prompt, and waits for all of them.
func rounds(t *testing.T, runs []*run, prompt string) {
	t.Helper()
	ps := make([]*pending, len(runs))
	for i, r := range runs {
		r.setup.Resume = true
		ps[i] = r.start(prompt)
	}
	for i, r := range runs {
		r.wait(ps[i])
	}
}

// A barrier lets n goroutines wait until all n have arrived.
type barrier struct {
	mu   sync.Mutex
	left int
	all  chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{left: n, all: make(chan struct{})} }

// wait counts the caller in and waits for the others, for at most d.
func (b *barrier) wait(d time.Duration) error {
	b.mu.Lock()
	b.left--
	if b.left == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-time.After(d):
		return errors.New("the others never arrived")
	}
}

// sentBy is the id of the message the previous scripted call sent, read
// from its tool result in req (`acc message|reply --json`).
func sentBy(prev, req *fakemodel.Request) (string, error) {
	res, err := lastResult(prev, req)
	if err != nil {
		return "", err
	}
	return sentMessageID(res.Output)
}
