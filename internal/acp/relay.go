package acp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of a relay (Config).
const (
	// DefaultGrace is how long the agent has to exit after its input ended
	// before it is sent SIGTERM (and, 2 s later, SIGKILL).
	DefaultGrace = 3 * time.Second
	// DefaultBudget bounds the acc work done before a session/prompt is
	// forwarded (projection); when it runs out the prompt goes unchanged.
	DefaultBudget = 1500 * time.Millisecond
	// accWait bounds every other piece of acc work (attach, guard, detach,
	// offers), none of which holds a frame back for longer.
	accWait = 2 * time.Second
	// killWait is the time between SIGTERM and SIGKILL.
	killWait = 2 * time.Second
)

// Config configures one relay.
type Config struct {
	// Participant is --participant; "" leaves ACC_PARTICIPANT, then the
	// default per ACP session (core.DefaultHookParticipant).
	Participant string
	// Getenv reads the environment acc uses (ACC_DATA_HOME, …).
	Getenv func(string) string
	// Stderr receives the agent's stderr and the relay's own notes.
	Stderr io.Writer
	// Grace and Budget default to DefaultGrace and DefaultBudget.
	Grace, Budget time.Duration
	// Signals, when non-nil, are forwarded to the agent (the CLI passes
	// SIGINT, SIGTERM and SIGHUP).
	Signals []os.Signal
}

// Run relays between the editor (stdin, stdout) and the agent started
// from argv, until the agent exits, and returns the exit status to report:
// the agent's own (128+n when a signal ended it), 127 when it could not be
// started. Frames pass both ways byte for byte, concurrently; the few the
// relay understands (docs/acp.md#what-the-relay-does) drive acc on the side:
// session/new, load and resume attach, a session/prompt gains one text
// block with the session's projection, fs/write_text_file into another
// session's guarded claim is answered with an error instead of being
// forwarded, and session/close, end of input and the agent's exit detach.
// acc work never blocks a frame for more than Budget (a prompt) or 2 s
// (a write request), and any acc failure leaves the frame as it was.
func Run(ctx context.Context, cfg Config, argv []string, stdin io.Reader, stdout io.Writer) int {
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	r := &relay{cfg: cfg, out: stdout, acc: newAccSide(cfg)}
	return r.run(ctx, argv, stdin)
}

// relay is one editor↔agent connection.
type relay struct {
	cfg Config
	out io.Writer
	acc *accSide

	cmd     *exec.Cmd
	agentIn io.WriteCloser
	// toAgent carries the editor's lines, in order, to the one goroutine
	// that writes the agent's input; refusals (answers the relay gives the
	// agent itself) wait in their own queue, so the agent→editor direction
	// never waits on the agent reading.
	toAgent   chan agentLine
	refMu     sync.Mutex
	refusals  [][]byte
	refNotify chan struct{}
	// inClosed is set once the agent's input is closed (or a write to it
	// failed): later lines are dropped.
	inClosed  atomic.Bool
	closeOnce sync.Once

	mu sync.Mutex
	// pending are the editor's requests the agent has not answered yet,
	// by id key; only the methods the relay acts on are kept.
	pending map[string]pendingRequest
}

// agentLine is one line for the agent's input, and what to do once its
// write is over (offers of a prompt's projection), told whether it was
// written.
type agentLine struct {
	line  []byte
	after func(written bool)
}

// pendingRequest is an editor request whose answer the relay needs.
type pendingRequest struct {
	method    string
	sessionID string
	cwd       string
}

// drainWait is how long the relay keeps reading the agent's output after
// the agent exited: a process the agent started may still hold it, and is
// then ended with the agent's process group.
const drainWait = 2 * time.Second

func (r *relay) run(ctx context.Context, argv []string, stdin io.Reader) int {
	// Writing to an editor that went away must be an error to handle, not
	// the end of the relay (Go's default for a broken stdout or stderr).
	signal.Ignore(syscall.SIGPIPE)
	r.pending = map[string]pendingRequest{}
	r.toAgent = make(chan agentLine, 64)
	r.refNotify = make(chan struct{}, 1)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = r.cfg.Stderr
	setProcAttr(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(r.cfg.Stderr, "acc acp: %v\n", err)
		return 127
	}
	// The agent's stdout is a plain pipe (not StdoutPipe), so reaping the
	// agent never waits for, nor cuts short, the reading of its output.
	outR, outW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(r.cfg.Stderr, "acc acp: %v\n", err)
		return 127
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		fmt.Fprintf(r.cfg.Stderr, "acc acp: cannot start the agent %q: %v\n", argv[0], err)
		return 127
	}
	outW.Close()
	defer outR.Close()
	r.cmd, r.agentIn = cmd, in
	r.acc.agentPID = cmd.Process.Pid

	// Signals for the relay go to the agent's process group (a wrapper
	// and the agent behind it alike), which decides.
	sigs := make(chan os.Signal, 4)
	if len(r.cfg.Signals) > 0 {
		signal.Notify(sigs, r.cfg.Signals...)
		defer signal.Stop(sigs)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Agent → editor, until the agent's output closes.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		r.pumpFromAgent(outR)
	}()
	// Editor → agent: a reader, a processor (what the relay does to a
	// line) and the writer, apart, so the end of the editor's input is
	// seen even while the agent does not read; from then on the agent has
	// Grace to exit.
	lines := make(chan []byte, 64)
	editorEOF := make(chan struct{})
	go func() {
		readLines(stdin, func(line []byte) bool { lines <- line; return true })
		close(editorEOF)
		close(lines)
	}()
	go func() {
		for line := range lines {
			r.toAgent <- r.fromEditor(line)
		}
		close(r.toAgent)
	}()
	go r.writeAgentLoop()

	terminate := func() error {
		r.closeAgentInput()
		signalGroup(cmd, syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(killWait):
			signalGroup(cmd, syscall.SIGKILL)
			return <-exited
		}
	}
	var waitErr error
	var grace <-chan time.Time
	for done := false; !done; {
		select {
		case waitErr = <-exited:
			done = true
		case <-editorEOF:
			editorEOF, grace = nil, time.After(r.cfg.Grace)
		case <-grace:
			waitErr, done = terminate(), true
		case s := <-sigs:
			signalGroup(cmd, s.(syscall.Signal))
		case <-ctx.Done():
			waitErr, done = terminate(), true
		}
	}
	drainUntil := time.After(drainWait)
	for waiting := true; waiting; {
		select {
		case <-drained:
			waiting = false
		case s := <-sigs:
			signalGroup(cmd, s.(syscall.Signal))
		case <-drainUntil:
			signalGroup(cmd, syscall.SIGKILL) // what the agent left running holds its output
			outR.Close()
			// An editor that stopped reading can hold the last write
			// forever: the relay ends without it.
			select {
			case <-drained:
			case <-time.After(time.Second):
			}
			waiting = false
		}
	}
	r.closeAgentInput()
	// Signals meant for the agent, which is gone, do not cut the ending
	// short; a new one does. Detaching is bounded (accSide.end).
	for pending := true; pending; {
		select {
		case <-sigs:
		default:
			pending = false
		}
	}
	ended := make(chan struct{})
	go func() { r.acc.end(); close(ended) }()
	select {
	case <-ended:
	case <-sigs:
	}
	return exitStatus(cmd, waitErr)
}

// exitStatus is the agent's exit code, 128+signal when a signal ended it.
func exitStatus(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		if err != nil {
			return 127
		}
		return 0
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// readLines calls fn with each line of rd, newline included (the last one
// may lack it), however long; it returns at end of input or a read error.
func readLines(rd io.Reader, fn func(line []byte) bool) {
	br := bufio.NewReaderSize(rd, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !fn(line) {
			return
		}
		if err != nil {
			return
		}
	}
}

// writeAgentLoop is the only writer of the agent's input: refusals first,
// then the editor's lines in order, until the editor's input ended; then
// it closes the agent's input. After a failed write (the agent stopped
// reading for good) it keeps taking lines and drops them, so the editor
// side never stalls.
func (r *relay) writeAgentLoop() {
	write := func(line []byte) bool {
		if r.inClosed.Load() {
			return false
		}
		if _, err := r.agentIn.Write(line); err != nil {
			r.inClosed.Store(true)
			return false
		}
		return true
	}
	for {
		if ref := r.nextRefusal(); ref != nil {
			write(ref)
			continue
		}
		select {
		case l, ok := <-r.toAgent:
			if !ok {
				r.closeAgentInput()
				return
			}
			written := write(l.line)
			if l.after != nil {
				go l.after(written) // recording offers never holds the next line back
			}
		case <-r.refNotify:
		}
	}
}

// refuse queues an answer the relay gives the agent itself.
func (r *relay) refuse(line []byte) {
	r.refMu.Lock()
	r.refusals = append(r.refusals, line)
	r.refMu.Unlock()
	select {
	case r.refNotify <- struct{}{}:
	default:
	}
}

func (r *relay) nextRefusal() []byte {
	r.refMu.Lock()
	defer r.refMu.Unlock()
	if len(r.refusals) == 0 {
		return nil
	}
	ref := r.refusals[0]
	r.refusals = r.refusals[1:]
	return ref
}

// closeAgentInput ends the agent's input. It does not wait for a write in
// progress: closing the pipe makes a write stuck on an agent that stopped
// reading fail.
func (r *relay) closeAgentInput() {
	r.closeOnce.Do(func() {
		r.inClosed.Store(true)
		_ = r.agentIn.Close()
	})
}

// fromEditor decides what becomes of one of the editor's lines: it
// remembers the requests whose answers drive acc, marks a session the
// editor closes, and gives a session/prompt its projection block.
func (r *relay) fromEditor(line []byte) agentLine {
	f := peek(line)
	if f.kind != frameRequest {
		return agentLine{line: line}
	}
	switch f.method {
	case "initialize", "session/new", "session/load", "session/resume", "session/close":
		req := pendingRequest{method: f.method, sessionID: f.param("sessionId"), cwd: f.param("cwd")}
		r.mu.Lock()
		r.pending[f.key] = req
		r.mu.Unlock()
		if f.method == "session/close" {
			r.acc.closing(req.sessionID, true)
		}
	case "session/prompt":
		out, after := r.acc.project(f.param("sessionId"), line)
		return agentLine{line: out, after: after}
	}
	return agentLine{line: line}
}

// pumpFromAgent forwards the agent's lines to the editor, answering a
// write into another session's guarded claim itself, and acting on the
// answers to initialize and session/new, load, resume and close.
func (r *relay) pumpFromAgent(stdout io.Reader) {
	editorGone := false
	readLines(stdout, func(line []byte) bool {
		f := peek(line)
		if f.kind == frameRequest && f.method == "fs/write_text_file" {
			if reply := r.acc.guardWrite(f); reply != nil {
				// Refused: the editor never sees it, even when the agent
				// can no longer be told.
				r.refuse(reply)
				return true
			}
		}
		// An answer the relay acts on registers its session before it is
		// forwarded (the editor's next frame may name it at once); the acc
		// work itself starts after.
		var then func()
		if f.kind == frameResponse {
			r.mu.Lock()
			req, ok := r.pending[f.key]
			delete(r.pending, f.key)
			r.mu.Unlock()
			switch {
			case ok && !f.isErr:
				then = r.acc.answered(req, f.result)
			case ok && req.method == "session/close":
				r.acc.closing(req.sessionID, false) // the agent kept it open
			}
		}
		if !editorGone {
			if _, err := r.out.Write(line); err != nil {
				// The editor is gone: keep draining the agent so it is
				// never blocked on a full pipe, and let it end.
				editorGone = true
				r.closeAgentInput()
			}
		}
		if then != nil {
			then()
		}
		return true
	})
}
