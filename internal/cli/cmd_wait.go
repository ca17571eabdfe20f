package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/acc-go/acc/internal/watch"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/urfave/cli/v3"
)

// waitCommand is `acc wait` (docs/decisions.md#22-waiting): block, without a polling
// loop in the caller, until this session's inbox holds a pending item, a
// message is answered or acknowledged, or a resource is released.
func (a *app) waitCommand() *cli.Command {
	return &cli.Command{
		Name:     "wait",
		Category: "coordination",
		Usage:    "block until your inbox holds something, a message is answered or acknowledged, a resource is free, or a peer is idle or finished",
		Description: "wait returns as soon as its condition holds, at once when it already does (so it never misses what\n" +
			"arrived just before it), and prints what it found; it changes nothing and moves no receipt. By default\n" +
			"it waits until this session's inbox holds a pending message. --answer ID waits for an answer to that\n" +
			"message, --ack ID until every recipient acknowledged it, --released RESOURCE until no live claim\n" +
			"overlaps the resource: every session's claims count, yours too, unless you name your session\n" +
			"(--session, or ACC_SESSION), whose own claims are then set aside. It watches the store (no polling\n" +
			"loop of yours); --timeout takes seconds (30) or a duration (10m, 500ms), default 10m, and running\n" +
			"out exits 3.\n\n" +
			"--idle PARTICIPANT waits until that participant has an open session and none of its sessions is in a\n" +
			"turn: its agent stopped working and waits for a prompt. A session that is offline, or whose hooks\n" +
			"never recorded a turn (acc attach, acc-mcp), does not count as working; the output names each session\n" +
			"with its activity and since when. --finished PARTICIPANT waits until none of its sessions is open:\n" +
			"each finished (acc finish), detached, or ended by its client. A session whose process is gone but that\n" +
			"nobody closed (offline) is still open, so it is not finished. Neither needs a session of yours, and\n" +
			"you may watch your own participant.\n\n" +
			"  acc message --to bob --type question --subject … --body … --json   # note the message id\n" +
			"  acc wait --answer message_… --timeout 10m\n" +
			"  acc wait --idle reviewer --timeout 30m     # tell me when the reviewer is done with its turn\n" +
			"  acc wait --finished reviewer --timeout 2h  # tell me when the reviewer has left",
		Flags: append(ownerFlags(),
			&cli.StringFlag{Name: "answer", Usage: "wait for an answer to this message `ID`"},
			&cli.StringFlag{Name: "ack", Usage: "wait until every recipient acknowledged this message `ID`"},
			&cli.StringFlag{Name: "released", Usage: "wait until no live claim overlaps this `RESOURCE` (a named session's own aside)"},
			&cli.StringFlag{Name: "idle", Usage: "wait until this `PARTICIPANT` has an open session and none in a turn"},
			&cli.StringFlag{Name: "finished", Usage: "wait until this `PARTICIPANT` has no open session (an offline one is still open)"},
			&cli.StringFlag{Name: "timeout", Value: "10m", DefaultText: "10m", Usage: "give up after this `DURATION` (exit 3): seconds (30) or a duration (10m, 500ms)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			timeout, err := parseTimeout(cmd.String("timeout"))
			if err != nil {
				return err
			}
			q := core.WaitQuery{For: core.WaitInbox}
			n := 0
			for _, f := range []struct{ flag, kind string }{{"answer", core.WaitAnswer}, {"ack", core.WaitAck}, {"released", core.WaitRelease}, {"idle", core.WaitIdle}, {"finished", core.WaitFinished}} {
				if cmd.IsSet(f.flag) {
					n++
					q.For = f.kind
				}
			}
			if n > 1 {
				return protocol.Errorf(protocol.ReasonUsage, "acc wait takes one of --answer, --ack, --released, --idle and --finished; see `acc wait --help`")
			}
			q.MessageID = cmd.String("answer") + cmd.String("ack")
			q.Resource = cmd.String("released")
			q.Participant = cmd.String("idle") + cmd.String("finished")
			// On the room's clock, which judges when its sessions closed.
			since := time.Now()
			dir, err := a.cwd(cmd)
			if err != nil {
				return err
			}
			q.Cwd = dir
			openCtx, cancel := context.WithTimeout(ctx, StoreWait)
			r, err := core.Open(openCtx, core.OpenOptions{Cwd: dir, ConfigPath: cmd.String("workspace"), Getenv: a.env.Getenv, NoCreate: true})
			cancel()
			if err != nil {
				return err
			}
			defer r.Close()
			q.Since = since.Add(r.Now().Sub(time.Now()))
			if err := r.CheckWait(q); err != nil {
				return err
			}
			res, err := a.wait(ctx, cmd, r, &q, timeout)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) { printWait(w, res, q) })
		},
	}
}

// maxTimeout bounds --timeout: a wait longer than a year is a mistake,
// and larger numbers would overflow a duration.
const maxTimeout = 366 * 24 * time.Hour

// parseTimeout reads seconds ("10", "0.5") or a Go duration ("10s",
// "500ms"), more than zero and at most maxTimeout; anything else is exit
// 2 (invalid_flag_value).
func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n > 0 && n <= maxTimeout.Seconds() { // false for NaN
			return time.Duration(n * float64(time.Second)), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 && d <= maxTimeout {
		return d, nil
	}
	return 0, protocol.Errorf(protocol.ReasonInvalidFlagValue, "--timeout takes seconds (30) or a duration (10m, 500ms), more than zero and at most a year (8784h), not %q", s)
}

// wait resolves the caller (into q), sets the watch up and only then looks, so
// nothing recorded before the watch is missed. The caller and the first
// look are bounded by StoreWait alone, so even the shortest --timeout
// answers whether the condition already holds (and a bad id or session
// is reported as itself, not as a timeout); later looks end with the
// deadline, and a look cut short by it is the timeout (exit 3).
func (a *app) wait(ctx context.Context, cmd *cli.Command, r *core.Room, q *core.WaitQuery, timeout time.Duration) (*core.WaitResult, error) {
	began := time.Now()
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bounded := func(parent context.Context, fn func(ctx context.Context) error) error {
		c, cancel := context.WithTimeout(parent, StoreWait)
		defer cancel()
		return fn(c)
	}
	// --released sets aside the caller's own claims only when a session is
	// named (--session, ACC_SESSION…); naming none means every session's
	// claims count (docs/delivery.md), so no automatic pick of a session
	// decides what is waited for.
	if q.For == core.WaitInbox || q.For == core.WaitRelease && a.callerNamed(cmd) {
		if err := bounded(ctx, func(ctx context.Context) error {
			in := a.identity(cmd)
			// --released only sets the named session's claims aside: a
			// session named alone there acts as no one, so it needs no
			// generation (the claim refusal's `acc wait` line names it
			// so, docs/concepts.md#acting-as-a-session).
			in.SetAside = q.For == core.WaitRelease
			c, err := r.ResolveCaller(ctx, in)
			if err == nil {
				q.Caller = &c
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	w := watch.Room(deadline, r.Store, workspace.StorePath(r.DataHome, r.WS.ID), watch.Backstop)
	for first := true; ; first = false {
		var res *core.WaitResult
		parent := deadline
		if first {
			parent = ctx
		}
		if err := bounded(parent, func(ctx context.Context) (err error) { res, err = r.CheckCondition(ctx, *q); return err }); err != nil {
			if !first && (deadline.Err() != nil || time.Until(began.Add(timeout)) < 100*time.Millisecond) {
				break // cut short by the deadline: that is the timeout
			}
			return nil, err
		}
		if res.Satisfied {
			return res, nil
		}
		select {
		case <-w.C:
		case <-deadline.Done():
		}
		if deadline.Err() != nil {
			break
		}
	}
	return nil, protocol.Errorf(protocol.ReasonWaitTimeout, "nothing after %s: %s; run it again or raise --timeout",
		time.Since(began).Round(time.Millisecond), waitingFor(*q))
}

func waitingFor(q core.WaitQuery) string {
	switch q.For {
	case core.WaitAnswer:
		return "no answer to " + q.MessageID + " yet"
	case core.WaitAck:
		return q.MessageID + " is not acknowledged by every recipient yet"
	case core.WaitRelease:
		if q.Caller == nil {
			return q.Resource + " is still claimed (no session was named, so every session's claims count; --session sets your own aside)"
		}
		return q.Resource + " is still claimed by another session"
	case core.WaitIdle:
		return q.Participant + " is still working (or has no open session)"
	case core.WaitFinished:
		return q.Participant + " still has an open session"
	}
	return "your inbox holds nothing pending"
}

func printWait(w io.Writer, res *core.WaitResult, q core.WaitQuery) {
	switch res.For {
	case core.WaitInbox, core.WaitAnswer:
		for _, m := range res.Messages {
			fmt.Fprintf(w, "%s  %s from %s: %s\n", m.MessageID, m.Kind, m.FromParticipantID, m.Subject)
		}
		fmt.Fprintln(w, "read one with: acc inbox --message ID")
	case core.WaitAck:
		for _, rc := range res.Receipts {
			fmt.Fprintf(w, "%s acknowledged at %s\n", rc.RecipientParticipantID, rc.UpdatedAt)
		}
	case core.WaitRelease:
		if q.Caller == nil {
			fmt.Fprintf(w, "%s is free: no live claim overlaps it\n", res.Resource)
		} else {
			fmt.Fprintf(w, "%s is free: no live claim of a session other than %s overlaps it\n", res.Resource, q.Caller.SessionID)
		}
	case core.WaitIdle:
		fmt.Fprintf(w, "%s is idle: none of its sessions is in a turn\n", res.Participant)
		printPeerSessions(w, res.Sessions)
	case core.WaitFinished:
		fmt.Fprintf(w, "%s has finished: none of its sessions is open\n", res.Participant)
	}
}

// printPeerSessions names each open session of a watched participant
// with its activity, and says so when its hooks never recorded one.
func printPeerSessions(w io.Writer, sessions []core.PeerSession) {
	now := time.Now()
	for _, s := range sessions {
		a := core.ActivityWords(s.Activity, now)
		if a == "" {
			a = "activity unknown (its hooks never recorded a turn)"
		}
		fmt.Fprintf(w, "  %s (%s, %s) %s\n", s.SessionID, s.Harness, s.Presence, a)
	}
}
