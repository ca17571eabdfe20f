package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	acpfam "github.com/acc-go/acc/pkg/adapters/acp"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// Adapter is the adapter id of relayed sessions: their harness, and the
// namespace of their bindings (binding key over "acp:<ACP session id>").
const Adapter = "acp"

// heartbeatEvery is how often the relay refreshes its sessions' heartbeat
// while the agent runs (their cadence is core.DefaultHookCadenceMs).
var heartbeatEvery = 30 * time.Second

// accSide is everything the relay does with acc. Every method fails open:
// an error is noted once on stderr and the frame it concerned goes on as
// it was.
type accSide struct {
	cfg      Config
	agentPID int

	mu sync.Mutex
	// The agent, from its initialize answer.
	agentName, agentVersion string
	caps                    adapter.Capabilities
	sessions                map[string]*session
	// rooms are opened once per directory a session named.
	rooms  map[string]*core.Room
	noted  map[string]bool
	work   sync.WaitGroup
	stop   chan struct{}
	closed bool
}

// session is one ACP session the agent opened, and the acc session bound
// to it once attach finished (ready is closed then, whatever the outcome).
type session struct {
	id, cwd string
	ready   chan struct{}
	room    *core.Room
	caller  *core.Caller
}

func newAccSide(cfg Config) *accSide {
	a := &accSide{cfg: cfg, sessions: map[string]*session{}, rooms: map[string]*core.Room{},
		noted: map[string]bool{}, stop: make(chan struct{})}
	go a.heartbeats()
	return a
}

// note tells the person once per distinct message that acc could not do
// something; the relay carries on.
func (a *accSide) note(what string, err error) {
	msg := fmt.Sprintf("acc acp: %s: %s; the agent's frames pass unchanged", what, protocol.AsError(err).Message)
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
		var r struct {
			AgentInfo struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"agentInfo"`
		}
		_ = json.Unmarshal(result, &r)
		caps, _ := acpfam.Capabilities(r.AgentInfo.Name, r.AgentInfo.Version)
		a.mu.Lock()
		a.agentName, a.agentVersion, a.caps = r.AgentInfo.Name, r.AgentInfo.Version, caps
		a.mu.Unlock()
	case "session/new":
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(result, &r) == nil && r.SessionID != "" {
			return a.open(r.SessionID, req.cwd)
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
	s := &session{id: id, cwd: cwd, ready: make(chan struct{})}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.sessions[id] = s
	a.work.Add(1)
	a.mu.Unlock()
	return func() { go a.attachSession(s) }
}

// attachSession attaches s's acc session and closes s.ready.
func (a *accSide) attachSession(s *session) {
	defer a.work.Done()
	defer close(s.ready)
	a.guarded("attach", func() {
		ctx, cancel := context.WithTimeout(context.Background(), accWait)
		defer cancel()
		room, err := a.room(ctx, s.cwd)
		if err != nil {
			a.note("cannot open the room of "+s.cwd, err)
			return
		}
		c, err := a.attach(ctx, room, s.id)
		if err != nil {
			a.note("cannot attach session "+s.id, err)
			return
		}
		a.mu.Lock()
		s.room, s.caller = room, c
		a.mu.Unlock()
	})
}

// room opens (once) the room of cwd, creating its store when needed, as a
// hook's session start does.
func (a *accSide) room(ctx context.Context, cwd string) (*core.Room, error) {
	if cwd == "" {
		return nil, protocol.Errorf(protocol.ReasonInvalidInput, "the session names no cwd")
	}
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

// attach opens or resumes the acc session bound to ACP session id: the
// agent process is its presence, it is advisory (the relay cannot see the
// agent's own writes), managed (the relay sees it end), and it records
// the agent and what is proven for it.
func (a *accSide) attach(ctx context.Context, room *core.Room, id string) (*core.Caller, error) {
	a.mu.Lock()
	name, version, caps := a.agentName, a.agentVersion, a.caps
	a.mu.Unlock()
	declared := Declared(caps)
	in := core.HookAttachInput{Adapter: Adapter, ClientSessionID: id, PID: a.agentPID,
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged,
		ClientVersion: AgentVersion(name, version), Capabilities: &declared}
	in.Participant = a.cfg.Participant
	if in.Participant == "" && room.Env != nil {
		in.Participant = room.Env.Participant
	}
	res, err := room.HookAttach(ctx, in)
	if err != nil {
		return nil, err
	}
	return &res.Caller, nil
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

// ready waits, up to ctx, for session id's attach; nil when there is no
// such session, the wait ran out or the attach failed.
func (a *accSide) ready(ctx context.Context, id string) *session {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.caller == nil {
		return nil
	}
	return s
}

// project returns the prompt line to forward — with one text block added
// holding the session's projection, exactly what a hook prints before a
// turn (at least the session's own line, so the agent can act as itself;
// peers, attention and pending messages when there are any) — and, when
// messages were projected, the function that records their offers (to be
// called after the line was written to the agent).
func (a *accSide) project(id string, line []byte) (out []byte, after func()) {
	out = line
	a.guarded("projection", func() {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.Budget)
		defer cancel()
		s := a.ready(ctx, id)
		if s == nil {
			if ctx.Err() != nil {
				a.note("session "+id+" was not attached within "+a.cfg.Budget.String(), ctx.Err())
			}
			return
		}
		// Each prompt resumes the binding: heartbeat, and a new session
		// when the old one was closed meanwhile.
		c, err := a.attach(ctx, s.room, id)
		if err != nil {
			a.note("cannot refresh session "+id, err)
			return
		}
		a.mu.Lock()
		s.caller = c
		version := AgentVersion(a.agentName, a.agentVersion)
		a.mu.Unlock()
		p, err := s.room.Project(ctx, *c, core.ProjectionOptions{})
		if err != nil {
			a.note("cannot project for session "+id, err)
			return
		}
		if p.Text == "" {
			return // the budget holds not even the session line
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
		room, caller, offered := s.room, *c, p.Offered
		after = func() {
			a.guarded("offer", func() {
				ctx, cancel := context.WithTimeout(context.Background(), accWait)
				defer cancel()
				if err := room.MarkOffered(ctx, caller, offered, "next-turn", Adapter, version); err != nil {
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
		var p struct {
			SessionID string `json:"sessionId"`
			Path      string `json:"path"`
		}
		if json.Unmarshal(f.params, &p) != nil || p.Path == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), accWait)
		defer cancel()
		s := a.ready(ctx, p.SessionID)
		if s == nil {
			return
		}
		a.mu.Lock()
		caller := *s.caller
		a.mu.Unlock()
		d, err := s.room.CheckWrite(ctx, core.GuardInput{SessionID: caller.SessionID, Cwd: s.cwd, Targets: []string{p.Path}})
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

// close detaches the acc session bound to ACP session id.
func (a *accSide) close(id string) {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s != nil {
		a.detach(s)
	}
}

func (a *accSide) detach(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), accWait)
	defer cancel()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return
	}
	a.guarded("detach", func() {
		if s.room == nil {
			return
		}
		if err := s.room.HookEnd(ctx, Adapter, s.id); err != nil {
			a.note("cannot detach session "+s.id, err)
		}
	})
}

// heartbeats keeps the live sessions online while the agent runs.
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
			if s.caller != nil {
				live = append(live, s)
			}
		}
		a.mu.Unlock()
		for _, s := range live {
			a.guarded("heartbeat", func() {
				ctx, cancel := context.WithTimeout(context.Background(), accWait)
				defer cancel()
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
	var all []*session
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	for _, s := range all {
		a.detach(s)
	}
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(accWait):
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.rooms {
		r.Close()
	}
	a.rooms = map[string]*core.Room{}
}
