package realclient

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// steps builds a script whose replies see the request they answer and the
// one the previous reply answered (whose calls the new request reports on).
type steps struct {
	mu   sync.Mutex
	last *fakemodel.Request
}

func (s *steps) reply(f func(req, prev *fakemodel.Request) (fakemodel.Reply, error)) fakemodel.Reply {
	return fakemodel.Reply{Build: func(req *fakemodel.Request) (fakemodel.Reply, error) {
		s.mu.Lock()
		prev := s.last
		s.last = req
		s.mu.Unlock()
		return f(req, prev)
	}}
}

// check collects failures found while a client is mid-turn (inside a
// scripted reply, on the fake model's goroutine): t.Errorf is safe there,
// and the reply reports the error back to the model so the run ends early.
func check(t *testing.T, err error) error {
	if err != nil {
		t.Errorf("mid-turn: %v", err)
	}
	return err
}

const (
	questionBody = "Which port does the dev server listen on? QUESTION_MARK_5150"
	answerBody   = "Port 8080, from config/dev.toml. ANSWER_MARK_7371"
)

// TestConversation proves the basic exchange on real clients: one
// client in worktree A asks a client in worktree B a question through acc;
// B sees it on its next turn, framed as an untrusted peer message, reads and
// answers it; A sees the answer on its next turn and acknowledges it.
//
//  1. B starts (session start attaches it) and is held mid-turn; A starts.
//     While A's model is asked, `acc status` lists both live, with their
//     client names as harness. A's model reads its owner line from the
//     request it was shown and runs `acc message --session S --generation G
//     --to <B> --type question …` through its shell tool. B's receipt is
//     queued.
//  2. B's next turn (a resumed session): the request B's model receives holds
//     the question inside an `untrusted peer message` frame, and B's receipt
//     is offered by then. B's model runs `acc inbox --message ID` (the tool
//     result shows the body, receipt retrieved) and `acc reply --message ID`.
//     B's receipt is acknowledged.
//  3. A's next turn: the answer is in A's request, framed, in reply to the
//     question; A's receipt is offered; A's model runs `acc ack`. Both final
//     receipts are acknowledged, and each client's session end closed its
//     acc session.
//
// B's owner switched mid-turn and end-of-turn delivery off for its client
// (acc install --mid-turn off --end-of-turn off): a question that arrives
// during B's turn still waits for the next one (docs/delivery.md#mid-turn).
//
// It runs as Claude Code asking Codex, Gemini CLI asking Claude Code, Kimi
// Code asking Claude Code, GitHub Copilot CLI asking Gemini CLI, Qwen
// Code asking Codex, OpenCode asking Copilot CLI, Pi asking Claude Code,
// Factory Droid asking Codex and Kilo Code asking Claude Code. (Qwen Code fires no SessionEnd headless; its session
// goes offline when the process its hooks name in QWEN_CODE_LAUNCHER_PID
// exits.)
// The runs also measure attach, next-turn injection and session end for
// the capability evidence (evidence_test.go).
func TestConversation(t *testing.T) {
	for _, pair := range []struct{ asker, answerer Client }{{Claude, Codex}, {Gemini, Claude}, {Kimi, Claude}, {Copilot, Gemini}, {Qwen, Codex}, {OpenCode, Copilot}, {Pi, Claude}, {Droid, Codex}, {Kilo, Claude}} {
		t.Run(pair.asker.Name+"-asks-"+pair.answerer.Name, func(t *testing.T) {
			t.Parallel()
			conversation(t, pair.asker, pair.answerer)
		})
	}
}

func conversation(t *testing.T, askerClient, answererClient Client) {
	w := newWorld(t)
	acc := ShellQuote(w.accPath())

	// 1. B attaches and waits mid-turn. B's owner narrowed mid-turn and
	// end-of-turn delivery to off for its client (acc install --mid-turn
	// off --end-of-turn off), so the question that arrives during this
	// turn waits for B's next one: the path this test is about
	// (TestMidTurn has the others).
	gateB := newGate()
	var bSteps steps
	b := w.hooked(t, answererClient, w.wt, fakemodel.Script{gateB.hold(bSteps.reply(
		func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			return fakemodel.Say("Nothing for me yet."), nil
		}))})
	b.installArgs = []string{"--mid-turn", "off", "--end-of-turn", "off"}
	// As on a person's machine, that installation's record is in the data
	// home the room lives in: B's hooks and A's `acc message` (the router)
	// both read the narrowing from there.
	b.setup.Install.DataHome = w.dataHome
	bFirst := b.start("Start on the side branch.")
	defer gateB.release()
	gateB.waitAsked(t, bFirst)
	st, err := w.status()
	if err != nil {
		t.Fatal(err)
	}
	bLive := st.liveOf(b.client.Name)
	if len(bLive) != 1 {
		t.Fatalf("after B's session start, acc status lists %d live %s sessions: %+v", len(bLive), b.client.Name, st.Participants)
	}
	bParticipant, _, _, _ := st.session(bLive[0])

	// A asks.
	var (
		aSteps     steps
		aFirst     caller
		questionID string
		during     *statusView
	)
	a := w.hooked(t, askerClient, w.repo, nil)
	a.model.Append(
		aSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, a.client.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			aFirst = c
			if during, err = w.status(); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s message %s --to %s --type question --subject %s --body %s --json",
				acc, c.flags(), bParticipant, ShellQuote("dev server port"), ShellQuote(questionBody)))), nil
		}),
		aSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if questionID, err = sentMessageID(res.Output); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Say("I asked the session on the side branch."), nil
		}),
	)
	a.exec("Find out which port the dev server uses: ask the session working on the side branch.")
	a.wantModelCalls(2)
	if during == nil || questionID == "" {
		t.Fatal("A's model never sent the question")
	}
	aLive := during.liveOf(a.client.Name)
	if len(aLive) != 1 || aLive[0] != aFirst.Session || len(during.liveOf(b.client.Name)) != 1 {
		t.Fatalf("while A's model was asked, acc status listed %s sessions %v (A is %s) and %s sessions %v",
			a.client.Name, aLive, aFirst.Session, b.client.Name, during.liveOf(b.client.Name))
	}
	aParticipant, _, _, _ := during.session(aFirst.Session)
	t.Logf("acc status during A's turn: %s (%s) and %s (%s) both live", aParticipant, a.client.Name, bParticipant, b.client.Name)
	wantReceipt(t, w, questionID, bParticipant, "queued")
	gateB.release()
	b.wait(bFirst)

	// 2. B's next turn.
	b.setup.Resume = true
	var answerID string
	b.model.Append(
		bSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, b.client.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if err := check(t, framed(req, b.client, questionID, aParticipant, questionBody)); err != nil {
				return fakemodel.Reply{}, err
			}
			if state, err := w.receipt(questionID, bParticipant); check(t, err) != nil || state != "offered" {
				return fakemodel.Reply{}, check(t, fmt.Errorf("B's receipt of the question is %q while B's model is asked, want offered", state))
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s inbox %s --message %s", acc, c.flags(), questionID))), nil
		}),
		bSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if !strings.Contains(res.Output, questionBody) || !strings.Contains(res.Output, "receipt: retrieved") {
				return fakemodel.Reply{}, check(t, fmt.Errorf("acc inbox --message printed %q", res.Output))
			}
			c, err := w.shownCaller(req, b.client.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s reply %s --message %s --body %s --json",
				acc, c.flags(), questionID, ShellQuote(answerBody)))), nil
		}),
		bSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if answerID, err = sentMessageID(res.Output); check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			return fakemodel.Say("Answered the question about the port."), nil
		}),
	)
	b.exec("Carry on; see whether anyone needs something from you.")
	b.wantModelCalls(4)
	if answerID == "" {
		t.Fatal("B's model never sent the answer")
	}
	wantReceipt(t, w, questionID, bParticipant, "acknowledged")
	wantReceipt(t, w, answerID, aParticipant, "queued")

	// 3. A's next turn.
	a.setup.Resume = true
	a.model.Append(
		aSteps.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			c, err := w.shownCaller(req, a.client.Name)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if err := check(t, framed(req, a.client, answerID, bParticipant, answerBody, "inReplyTo: "+questionID)); err != nil {
				return fakemodel.Reply{}, err
			}
			if state, err := w.receipt(answerID, aParticipant); check(t, err) != nil || state != "offered" {
				return fakemodel.Reply{}, check(t, fmt.Errorf("A's receipt of the answer is %q while A's model is asked, want offered", state))
			}
			return fakemodel.Run(fakemodel.Shell(fmt.Sprintf("%s ack %s --message %s", acc, c.flags(), answerID))), nil
		}),
		aSteps.reply(func(req, prev *fakemodel.Request) (fakemodel.Reply, error) {
			res, err := lastResult(prev, req)
			if check(t, err) != nil {
				return fakemodel.Reply{}, err
			}
			if !strings.Contains(res.Output, "acknowledged "+answerID) {
				return fakemodel.Reply{}, check(t, fmt.Errorf("acc ack printed %q", res.Output))
			}
			return fakemodel.Say("The dev server listens on port 8080."), nil
		}),
	)
	a.exec("Any news about the port?")
	a.wantModelCalls(4)
	wantReceipt(t, w, questionID, bParticipant, "acknowledged")
	wantReceipt(t, w, answerID, aParticipant, "acknowledged")

	// Every acc session the hooks opened is closed again.
	all, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	closed := map[string]int{}
	for _, p := range all.Participants {
		if p.State == "open" && p.Presence != "offline" {
			t.Errorf("session %s (%s) is still live after its client exited", p.SessionID, p.Harness)
		}
		if p.State == "closed" {
			closed[p.Harness]++
		}
	}
	t.Logf("closed sessions by client after the four runs: %v", closed)

	// The capability evidence: attach, next-turn context, session end.
	for _, r := range []*run{a, b} {
		observeConversation(t, w, r, all)
	}
}

// framed checks that req shows message id from sender with body inside an
// untrusted peer message frame, together with the extra lines given.
func framed(req *fakemodel.Request, c Client, id, sender, body string, extra ...string) error {
	for _, s := range req.Strings() {
		for _, block := range peerBlocks(s) {
			if !strings.Contains(block, "messageId: "+id) {
				continue
			}
			for _, want := range append([]string{"sender: " + sender + " ", "body:\n" + shownAs(c, body)}, extra...) {
				if !strings.Contains(block, want) {
					return fmt.Errorf("the frame of %s lacks %q:\n%s", id, want, block)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("request %d shows no untrusted peer message frame holding %s (owner lines %v)", req.Seq, id, ownerLines(req))
}

func wantReceipt(t *testing.T, w *world, id, recipient, want string) {
	t.Helper()
	got, err := w.receipt(id, recipient)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("receipt of %s for %s is %q, want %q", id, recipient, got, want)
	} else {
		t.Logf("receipt of %s for %s: %s", id, recipient, got)
	}
}
