package fakemodel

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// An Agenda is one long turn of the model that can be interrupted: the model
// works through Steps, one tool call per model call, then says Final, which
// ends the turn. Before each step it shows React the request it answers;
// when React returns calls, the model makes those instead and the step waits
// for the next model call. This is how a test has a busy agent notice a
// peer's message that arrived in a tool result and answer it without losing
// its place (docs/delivery.md#mid-turn).
type Agenda struct {
	// Steps are the tool calls of the turn, in order.
	Steps []Call
	// Final is what the model says after the last step.
	Final string
	// React, when set, sees every request the agenda answers. The calls it
	// returns are made before the pending step; nil or empty means carry on.
	// It runs on the server's goroutine for that request.
	React func(req *Request) []Call
	// After is what the model says when asked again after Final (a client
	// whose stop hook kept it working) and React has nothing to do; Final
	// when empty.
	After string
	// OpenEnd makes the agenda answer every model call that finds the
	// script used up (as Play.Again would), so a test need not know in
	// advance how often a client is kept working after Final. Such calls
	// are not reported by Server.Verify. Playing another agenda ends this
	// open end.
	OpenEnd bool
}

// A Play is an Agenda being played by a server.
type Play struct {
	s *Server
	a Agenda

	mu        sync.Mutex
	next      int // index of the pending step; len(Steps) is Final
	reactions int
}

// Play appends the agenda to the script: one reply per step and one for
// Final, and one more for every reaction, added when the reaction is made
// (so the script is used up exactly when the turn ends). A client asked to
// go on after Final (a held stop) needs a reply of its own: Play.Again.
func (s *Server) Play(a Agenda) *Play {
	p := &Play{s: s, a: a}
	for range len(a.Steps) + 1 {
		s.Append(p.reply())
	}
	s.mu.Lock()
	s.fallback = nil
	if a.OpenEnd {
		s.fallback = p.reply
	}
	s.mu.Unlock()
	return p
}

// Again appends one more reply of the agenda, for a model call after Final:
// React's calls if it has any (and then a further reply of its own), else
// After.
func (p *Play) Again() { p.s.Append(p.reply()) }

// Reactions is the number of times React interrupted the agenda so far.
func (p *Play) Reactions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reactions
}

// Done reports whether the agenda reached Final.
func (p *Play) Done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next > len(p.a.Steps)
}

func (p *Play) reply() Reply {
	return Reply{Build: func(req *Request) (Reply, error) {
		if p.a.React != nil {
			if calls := p.a.React(req); len(calls) > 0 {
				p.mu.Lock()
				p.reactions++
				p.mu.Unlock()
				p.s.Append(p.reply()) // the step it displaced
				return Run(calls...), nil
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		i := p.next
		p.next++
		switch {
		case i < len(p.a.Steps):
			return Run(p.a.Steps[i]), nil
		case i == len(p.a.Steps):
			return Say(p.a.Final), nil
		case p.a.After != "":
			return Say(p.a.After), nil
		}
		return Say(p.a.Final), nil
	}}
}

// PacedSteps is n shell steps that each wait pause and then print
// "step <i>" (from 1), as a busy agent's tool calls spaced in time. The
// pause is written in whole milliseconds as sleep(1)'s seconds; it must be
// at least 0.
func PacedSteps(n int, pause time.Duration) []Call {
	if pause < 0 {
		panic(fmt.Sprintf("fakemodel.PacedSteps: negative pause %v", pause))
	}
	secs := strconv.FormatFloat(float64(pause.Milliseconds())/1000, 'f', -1, 64)
	out := make([]Call, n)
	for i := range out {
		out[i] = Shell(fmt.Sprintf("sleep %s; echo step %d", secs, i+1))
	}
	return out
}
