package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/acc-go/acc/internal/wording"
	acpfam "github.com/acc-go/acc/pkg/adapters/acp"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// Adapter is the adapter id of relayed sessions: their harness, and the
// namespace of their bindings.
const Adapter = "acp"

// heartbeatEvery is how often the relay refreshes its sessions' heartbeat
// while the agent runs (their cadence is core.DefaultHookCadenceMs), and
// retries what it could not finish (an attach, a detach).
var heartbeatEvery = 30 * time.Second

// accSide is everything the relay does with acc. Every method fails open:
// an error is noted once on stderr and the frame it concerned goes on as
// it was.
type accSide struct {
	cfg      Config
	agentPID int
	// nonce makes this relay's bindings its own: two relays whose agents
	// name the same ACP session id (the same session loaded in two
	// editors, or an agent with predictable ids) never share an acc
	// session.
	nonce string

	mu sync.Mutex
	// The agent, from its initialize answer.
	agentName, agentVersion string
	caps                    adapter.Capabilities
	sessions                map[string]*session
	// ending are closed sessions whose detach failed, retried later.
	ending []*session
	// rooms are opened once per directory a session named (a room knows
	// its checkout: two worktrees of one repository are two rooms here,
	// one store).
	rooms map[string]*core.Room
	// opened counts the sessions opened, for their binding ids.
	opened int
	noted  map[string]bool
	work   sync.WaitGroup
	stop   chan struct{}
	closed bool
}

// session is one ACP session the agent opened, and the acc session bound
// to it. ready is closed when the first attach finished, whatever the
// outcome; attachMu serialises attaches (a later one retries a failed
// first one).
type session struct {
	id, cwd string
	// bindID is the client session id of the binding: the ACP session id
	// and the relay's nonce.
	bindID   string
	ready    chan struct{}
	attachMu sync.Mutex
	room     *core.Room
	caller   *core.Caller
	// closingSince: when the editor asked to close it (zero: it did not);
	// until the agent answers, or for closeWait when it never does,
	// nothing attaches it again.
	closingSince time.Time
}

func newAccSide(cfg Config) *accSide {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	a := &accSide{cfg: cfg, nonce: hex.EncodeToString(b), sessions: map[string]*session{}, rooms: map[string]*core.Room{},
		noted: map[string]bool{}, stop: make(chan struct{})}
	go a.heartbeats()
	return a
}

// note tells the person once per distinct message that acc could not do
// something; the relay carries on.
func (a *accSide) note(what string, err error) {
	reason := protocol.AsError(wording.CLIError(err)).Message
	if errors.Is(err, context.DeadlineExceeded) {
		reason = "acc's store did not answer in time"
	}
	// The reason may repeat text a peer or the agent wrote: shown by the
	// one display rule (docs/concepts.md#peer-text-on-the-screen).
	msg := fmt.Sprintf("acc acp: %s: %s; the agent's frames pass unchanged", what, protocol.EscapeText(reason, protocol.TextLine))
	a.mu.Lock()
	seen := a.noted[msg]
	a.noted[msg] = true
	a.mu.Unlock()
	if !seen {
		fmt.Fprintln(a.cfg.Stderr, msg)
	}
}

// guarded runs fn, turning a panic into a note: acc's side never takes
// the relay down.
func (a *accSide) guarded(what string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			a.note(what, fmt.Errorf("internal error: %v", p))
		}
	}()
	fn()
}

// answered acts on the agent's successful answer to an editor request the
// relay kept (initialize, session/new, load, resume, close). It is called
// before the answer is forwarded: what it changes in memory is in place
// when the editor reacts; the acc work it returns runs after forwarding.
func (a *accSide) answered(req pendingRequest, result json.RawMessage) (then func()) {
	switch req.method {
	case "initialize":
		var r map[string]json.RawMessage
		var info map[string]json.RawMessage
		var name, version string
		if json.Unmarshal(result, &r) == nil && json.Unmarshal(r["agentInfo"], &info) == nil {
			_ = json.Unmarshal(info["name"], &name)
			_ = json.Unmarshal(info["version"], &version)
		}
		caps, _ := acpfam.Capabilities(name, version)
		a.mu.Lock()
		a.agentName, a.agentVersion, a.caps = name, version, caps
		a.mu.Unlock()
	case "session/new":
		var r map[string]json.RawMessage
		var id string
		if json.Unmarshal(result, &r) == nil && json.Unmarshal(r["sessionId"], &id) == nil && id != "" {
			return a.open(id, req.cwd)
		}
	case "session/load", "session/resume":
		if req.sessionID != "" {
			return a.open(req.sessionID, req.cwd)
		}
	case "session/close":
		id := req.sessionID
		return func() { a.close(id) }
	}
	return nil
}

// open registers an ACP session at once (a prompt may follow the answer
// immediately) and returns what attaches its acc session in the
// background.
func (a *accSide) open(id, cwd string) func() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	// Each open binds anew (a session loaded twice, or closed and opened
	// again, never shares a binding with its predecessor, whose detach may
	// still be under way).
	a.opened++
	s := &session{id: id, cwd: cwd, bindID: fmt.Sprintf("%s#%s#%d", id, a.nonce, a.opened), ready: make(chan struct{})}
	prev := a.sessions[id]
	a.sessions[id] = s
	a.work.Add(1)
	a.mu.Unlock()
	if prev != nil {
		a.retire(prev) // loaded again: the old binding ends
	}
	return func() {
		go func() {
			defer a.work.Done()
			defer close(s.ready)
			ctx, cancel := context.WithTimeout(context.Background(), accWait)
			defer cancel()
			a.ensure(ctx, s)
		}()
	}
}

// ensure attaches s's acc session unless it is attached, and reports
// whether it is. A failed attach is tried again by the next prompt,
// write check or heartbeat.
func (a *accSide) ensure(ctx context.Context, s *session) bool {
	s.attachMu.Lock()
	defer s.attachMu.Unlock()
	a.mu.Lock()
	done, closing := s.caller != nil, s.isClosing() || a.closed
	a.mu.Unlock()
	if done || closing {
		return done
	}
	ok := false
	a.guarded("attach", func() {
		room, err := a.room(ctx, s.cwd)
		if err != nil {
			a.note("cannot open the room of "+s.cwd, err)
			return
		}
		c, _, err := a.attach(ctx, room, s)
		if err != nil {
			a.note("cannot attach session "+s.id, err)
			return
		}
		a.mu.Lock()
		s.room, s.caller = room, c
		a.mu.Unlock()
		ok = true
	})
	return ok
}

// closing marks (or, when the agent refused the close, unmarks) the
// session the editor asked to close: from then on no prompt attaches it
// again.
func (a *accSide) closing(id string, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		s.closingSince = time.Time{}
		if on {
			s.closingSince = time.Now()
		}
	}
}

// closeWait is how long a close the agent has not answered keeps its
// session from being attached again.
const closeWait = 5 * time.Second

// isClosing reports whether s is being closed (a.mu held).
func (s *session) isClosing() bool {
	return !s.closingSince.IsZero() && time.Since(s.closingSince) < closeWait
}

// room opens (once) the room of cwd, creating its store when needed, as a
// hook's session start does.
func (a *accSide) room(ctx context.Context, cwd string) (*core.Room, error) {
	if cwd == "" {
		return nil, protocol.Errorf(protocol.ReasonInvalidInput, "the session names no cwd")
	}
	cwd = filepath.Clean(cwd)
	a.mu.Lock()
	r := a.rooms[cwd]
	a.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := core.Open(ctx, core.OpenOptions{Cwd: cwd, Getenv: a.cfg.Getenv})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if prev := a.rooms[cwd]; prev != nil {
		r.Close()
		return prev, nil
	}
	a.rooms[cwd] = r
	return r, nil
}

// attach opens or resumes the acc session bound to s in room: the agent
// process is its presence, it is advisory (the relay cannot see the
// agent's own writes), managed (the relay sees it end), and it records
// the agent and what is proven for it. The participant is --participant,
// else ACC_PARTICIPANT, else derived from the ACP session id.
func (a *accSide) attach(ctx context.Context, room *core.Room, s *session) (*core.Caller, string, error) {
	a.mu.Lock()
	name, version, caps := a.agentName, a.agentVersion, a.caps
	a.mu.Unlock()
	declared := Declared(caps)
	in := core.HookAttachInput{Adapter: Adapter, ClientSessionID: s.bindID, PID: a.agentPID,
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged,
		ClientVersion: AgentVersion(name, version), Capabilities: &declared}
	in.Participant = a.cfg.Participant
	if in.Participant == "" && room.Env != nil {
		in.Participant = room.Env.Participant
	}
	if in.Participant == "" {
		in.Participant = core.DefaultHookParticipant(Adapter, s.id)
	}
	res, err := room.HookAttach(ctx, in)
	if err != nil {
		return nil, "", err
	}
	return &res.Caller, res.ParticipantID, nil
}

// offerLockWait is how long a prompt's projection waits for the
// participant's offer lock before it names pending messages without
// carrying them.
const offerLockWait = time.Second

// offerLock takes participant's offer lock in room (core.Room.OfferLockPath)
// within offerLockWait. unlock is safe to call more than once, and does
// nothing when the lock was not obtained.
func offerLock(ctx context.Context, room *core.Room, participant string) (unlock func(), locked bool) {
	fl := flock.New(room.OfferLockPath(participant))
	lctx, cancel := context.WithTimeout(ctx, offerLockWait)
	defer cancel()
	if got, err := fl.TryLockContext(lctx, 5*time.Millisecond); err != nil || !got {
		return func() {}, false
	}
	var once sync.Once
	return func() { once.Do(func() { _ = fl.Unlock() }) }, true
}

// AgentVersion is how a relayed session records its client: the agent's
// name and version as its initialize answer gave them ("gemini-cli@0.61.0").
func AgentVersion(name, version string) string {
	switch {
	case name == "":
		return version
	case version == "":
		return name
	}
	return name + "@" + version
}

// Declared maps what is proven for an agent onto the capability record a
// relayed session carries: lifecycle from the frames the relay sees, the
// next turn where it is proven, and no guard (the relay refuses only
// writes made through the editor, which does not make a session guarded).
func Declared(c adapter.Capabilities) protocol.DeclaredCapabilities {
	var d protocol.DeclaredCapabilities
	d.Lifecycle.SessionStart = c.Attach
	d.Lifecycle.SessionResume = c.Attach
	d.Lifecycle.SessionEnd = c.SessionEnd
	d.Context.BeforeTurnInjection = c.NextTurn
	d.Delivery.NextTurn = c.NextTurn
	return d
}

// attached returns session id once its acc session is attached — waiting,
// up to ctx, for the first attach, and trying again when it failed — or
// nil (no such session, no store, out of time).
func (a *accSide) attached(ctx context.Context, id string) *session {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		a.note("session "+id+" was not attached in time", ctx.Err())
		return nil
	}
	if !a.ensure(ctx, s) {
		return nil
	}
	return s
}

// project returns the prompt line to forward — with one text block added
// holding the session's projection, exactly what a hook prints before a
// turn (at least the session's own line, so the agent can act as itself;
// peers, attention and pending messages when there are any) — and, when
// messages were projected, the function to call once the write to the
// agent is over, with whether it succeeded: only then are their offers
// recorded. The room is opened afresh for each prompt, as a hook opens it
// for each turn, so the workspace's policy (its context budget) is the
// current one.
func (a *accSide) project(id string, line []byte) (out []byte, after func(delivered bool)) {
	out = line
	a.guarded("projection", func() {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.Budget)
		defer cancel()
		s := a.attached(ctx, id)
		if s == nil {
			return
		}
		a.mu.Lock()
		closing := s.isClosing() || a.closed
		a.mu.Unlock()
		if closing {
			return // the editor closed it (or the relay is ending): nothing attaches it again
		}
		room, err := core.Open(ctx, core.OpenOptions{Cwd: s.cwd, Getenv: a.cfg.Getenv, NoCreate: true})
		if err != nil {
			a.note("cannot open the room of "+s.cwd, err)
			return
		}
		keep := false
		defer func() {
			if !keep {
				room.Close()
			}
		}()
		// Each prompt resumes the binding: heartbeat, and a new session
		// when the old one was closed meanwhile.
		c, participant, err := a.attach(ctx, room, s)
		if err != nil {
			a.note("cannot refresh session "+id, err)
			return
		}
		a.mu.Lock()
		s.caller = c
		version := AgentVersion(a.agentName, a.agentVersion)
		a.mu.Unlock()
		// The participant's offer lock, as the hooks take it
		// (docs/delivery.md#mid-turn): held from the read of the
		// receipts until the offers are recorded (or for 3*accWait at
		// most), so no other path offers the same message meanwhile. Not
		// obtained within offerLockWait, the block names the pending
		// messages without carrying them.
		unlock, locked := offerLock(ctx, room, participant)
		unlockLater := false
		defer func() {
			if !unlockLater {
				unlock()
			}
		}()
		p, err := room.Project(ctx, *c, core.ProjectionOptions{Withhold: !locked})
		if err != nil {
			a.note("cannot project for session "+id, err)
			return
		}
		if p.Text == "" {
			a.note("cannot project for session "+id, errors.New("policy.contextBudgetBytes is too small for even the session line; raise it in acc.workspace.json"))
			return
		}
		block, err := json.Marshal(map[string]string{"type": "text", "text": p.Text})
		if err != nil {
			return
		}
		spliced, err := appendBlock(line, block)
		if err != nil {
			return // not a prompt array acc can add to: forward as it is
		}
		out = spliced
		if len(p.Offered) == 0 {
			return
		}
		keep, unlockLater = true, true
		caller, offered := *c, p.Offered
		// Recorded or not, the lock goes after 3*accWait (well past the
		// write and its record): a line that never reaches the writer must
		// not keep every other path from offering.
		timer := time.AfterFunc(3*accWait, unlock)
		after = func(delivered bool) {
			defer room.Close()
			defer func() { timer.Stop(); unlock() }()
			if !delivered {
				return // the agent never got the line: nothing was offered
			}
			a.guarded("offer", func() {
				ctx, cancel := context.WithTimeout(context.Background(), accWait)
				defer cancel()
				if err := room.MarkOffered(ctx, caller, offered, router.TransportNextTurn, Adapter, version); err != nil {
					a.note("cannot record the offers", err)
				}
			})
		}
	})
	return out, after
}

// guardWrite decides an agent's fs/write_text_file request: the error
// answer to send the agent instead of forwarding it when the path is in
// another live session's guarded claim, else nil (forward it).
func (a *accSide) guardWrite(f frame) (reply []byte) {
	a.guarded("write check", func() {
		path := f.param("path")
		if path == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), accWait)
		defer cancel()
		var room *core.Room
		var writer, cwd string
		if s := a.attached(ctx, f.param("sessionId")); s != nil {
			a.mu.Lock()
			room, writer, cwd = s.room, s.caller.SessionID, s.cwd
			a.mu.Unlock()
		} else {
			// A session the relay does not know (or could not attach)
			// owns no claim: the room is the path's own.
			dir := filepath.Dir(path)
			for dir != filepath.Dir(dir) {
				if st, err := os.Stat(dir); err == nil && st.IsDir() {
					break
				}
				dir = filepath.Dir(dir)
			}
			r, err := core.Open(ctx, core.OpenOptions{Cwd: dir, Getenv: a.cfg.Getenv, NoCreate: true})
			if err != nil {
				return
			}
			defer r.Close()
			room, cwd = r, dir
		}
		d, err := room.CheckWrite(ctx, core.GuardInput{SessionID: writer, Cwd: cwd, Targets: []string{path}})
		if err != nil {
			a.note("cannot check a write", err)
			return
		}
		if !d.Deny {
			return
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.id, "error": map[string]any{
			"code": WriteRefused, "message": d.Reason,
			"data": map[string]any{"reasonCode": protocol.ReasonClaimConflict, "resource": d.Resource, "claimId": d.ClaimID,
				"holderParticipantId": d.HolderParticipantID, "holderSessionId": d.HolderSessionID},
		}})
		if err == nil {
			reply = append(b, '\n')
		}
	})
	return reply
}

// WriteRefused is the JSON-RPC error code of a write the relay refused
// (in the range JSON-RPC leaves to implementations).
const WriteRefused = -32010

// close detaches the acc session bound to ACP session id, in the
// background: the agent's frames do not wait for it. A detach that fails
// is tried again later.
func (a *accSide) close(id string) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return // end detaches it
	}
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s != nil {
		a.retire(s)
	}
}

// retire detaches s in the background; when that fails it is kept for the
// heartbeat (or the end) to try again.
func (a *accSide) retire(s *session) {
	a.mu.Lock()
	if a.closed {
		a.ending = append(a.ending, s)
		a.mu.Unlock()
		return
	}
	a.work.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.work.Done()
		// A store busy for a moment is tried again soon; a longer outage
		// is left to the heartbeat and the end.
		for _, wait := range []time.Duration{0, time.Second, 3 * time.Second} {
			select {
			case <-a.stop:
			case <-time.After(wait):
			}
			if a.detach(s) {
				return
			}
		}
		a.mu.Lock()
		a.ending = append(a.ending, s)
		a.mu.Unlock()
	}()
}

// detach ends s's acc session, and reports whether nothing is left to do.
func (a *accSide) detach(s *session) bool {
	ctx, cancel := context.WithTimeout(context.Background(), accWait)
	defer cancel()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return false
	}
	ok := true
	a.guarded("detach", func() {
		a.mu.Lock()
		room, caller := s.room, s.caller
		a.mu.Unlock()
		if room == nil || caller == nil {
			return // never attached
		}
		if err := room.HookEnd(ctx, Adapter, s.bindID); err != nil {
			a.note("cannot detach a session", err)
			ok = false
		}
	})
	return ok
}

// heartbeats keeps the live sessions online while the agent runs, and
// retries the attaches and detaches that failed.
func (a *accSide) heartbeats() {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		a.mu.Lock()
		var live []*session
		for _, s := range a.sessions {
			live = append(live, s)
		}
		ending := a.ending
		a.ending = nil
		a.mu.Unlock()
		for _, s := range ending {
			if !a.detach(s) {
				a.mu.Lock()
				a.ending = append(a.ending, s)
				a.mu.Unlock()
			}
		}
		for _, s := range live {
			a.guarded("heartbeat", func() {
				ctx, cancel := context.WithTimeout(context.Background(), accWait)
				defer cancel()
				if !a.ensure(ctx, s) {
					return
				}
				a.mu.Lock()
				c := *s.caller
				a.mu.Unlock()
				_ = s.room.HeartbeatIfDue(ctx, c, heartbeatEvery.Milliseconds()/2)
			})
		}
	}
}

// end detaches every session still bound and closes the rooms: the agent
// has exited.
func (a *accSide) end() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	close(a.stop)
	a.mu.Unlock()
	// Everything here shares one deadline: attaches and detaches under way
	// finish (or give up), then every session left is detached at once.
	deadline := time.Now().Add(2 * accWait)
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(deadline) - accWait):
	}
	a.mu.Lock()
	all := append([]*session(nil), a.ending...)
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions, a.ending = map[string]*session{}, nil
	a.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].bindID < all[j].bindID })
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); a.detach(s) }()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Until(deadline)):
		return // the store did not answer; presence follows the agent's process anyway
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.rooms {
		r.Close()
	}
	a.rooms = map[string]*core.Room{}
}
