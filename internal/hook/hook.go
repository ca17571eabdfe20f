// Package hook is acc-hook, the runner native clients' hooks call as
// `acc-hook <adapter> <event>` with the event payload on stdin
// (docs/hooks.md#what-each-event-does; the binding it keeps is
// docs/protocol.md#session-binding).
//
// # Contract
//
//   - The adapter normalises the payload; unknown events and payloads without
//     a session id or cwd are refused (and the client proceeds).
//   - `acc-hook claude <event>` started by Grok's hook runner (Grok runs
//     Claude Code's hooks by default) is handled by the Grok adapter, or
//     does nothing when acc's Grok hook file runs that event too
//     (docs/hooks.md#grok-running-claude-codes-hooks).
//   - Everything runs under one 5-second deadline.
//   - Its work is bounded whatever the payload
//     (docs/hooks.md#commands-too-large-to-read): a payload over MaxPayload is
//     read only for its top-level scalar fields (oversize); a shell command
//     over adapter.MaxShellCommand or nested deeper than adapter.MaxShellDepth
//     is not parsed, and its reading is bounded by a step count and by the
//     deadline less shellReadReserve; at most maxGuardTargets paths are
//     checked. A write whose targets are therefore unknown is denied when
//     another session holds a guarded claim in the room; so is a pre-tool
//     call whose oversized payload was not read in time, judged from argv
//     (docs/hooks.md#payloads-not-read-in-time).
//   - It fails open: on any error, deadline or panic the client's action
//     proceeds, stdout stays empty, exit 0, and one line on stderr says so
//     (naming only a reason code, never payload text).
//   - Context printed before a turn, a message delivered after a tool call and
//     a hold at the end of a turn are recorded (offered, summarised, held)
//     only after the client took the output, under the participant's offer
//     lock (core.Room.OfferLockPath), so a message is offered once.
//
// # Handlers
//
// Session start attaches (or resumes) the acc session bound to the client's
// own session id and prints the owner line and the projection; before a
// turn it records the session working and projects; before a tool it reads the write targets
// (file tools, the shell with mvdan.cc/sh, patches) and denies a write into
// another session's guarded claim, each target judged in the room that
// holds it, even from a directory in no room
// (docs/hooks.md#targets-in-other-rooms); after a tool it heartbeats when due
// and, where the client's mid-turn delivery is proven, delivers one waiting
// message (docs/delivery.md#mid-turn); at a turn's end it records the session
// idle or keeps a stopping agent working once
// (docs/delivery.md#end-of-turn); at session end it closes the session and
// removes the binding.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/internal/livepush"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/claude"
	"github.com/acc-go/acc/pkg/adapters/grok"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
	"github.com/shirou/gopsutil/v4/process"
)

// Deadline is the whole budget of one hook call.
const Deadline = 5 * time.Second

// recordGrace bounds recording what the client took (the offers, a hold)
// after the write, however little of Deadline was left.
const recordGrace = 2 * time.Second

// MaxPayload bounds what is read from stdin, in bytes (reading and decoding
// 16 MiB stays well inside Deadline): a longer payload is not decoded, only
// its leading fields are read (Runner.oversize, docs/hooks.md).
const MaxPayload = 16 << 20

// maxGuardTargets is the most write targets the guard names for one call;
// a call writing more counts as writing somewhere unknown
// (docs/hooks.md#commands-too-large-to-read), so the answer never depends on
// how fast the machine is.
const maxGuardTargets = 10_000

// toolHeartbeatMs: tool hooks refresh presence when the last heartbeat is
// older than this, in milliseconds (docs/hooks.md#what-each-event-does).
const toolHeartbeatMs = 30_000

// Runner holds what a hook call depends on; tests replace parts of it.
type Runner struct {
	Adapters map[string]adapter.Adapter
	Getenv   func(string) string
	// ClientVersion returns the client's version ("" when unknown).
	ClientVersion func(ctx context.Context, a adapter.Adapter) string
	// ClientPID returns the client's pid (0 when unknown).
	ClientPID func(a adapter.Adapter) int
	Deadline  time.Duration
	// ReadInstall reads the client installations' delivery policies of a
	// data home into each room the hook opens (core.OpenOptions.ReadInstall):
	// a client's own turn-delivery policy narrows the workspace's
	// (core.NarrowerTurnPolicy; docs/delivery.md#mid-turn). nil: the
	// workspace's policy alone.
	ReadInstall func(dataHome string) core.InstallPolicies
	// Getwd returns the hook process's working directory, the directory
	// of a pre-tool call whose payload could not be read in time
	// (Runner.unreadPreTool). nil: os.Getwd.
	Getwd func() (string, error)
}

// Main runs acc-hook with the registered adapters and returns its exit
// code. readInstall is Runner.ReadInstall, the reader of what each client
// installation records of delivery (internal/install.ReadPolicies,
// passed in by cmd/acc-hook; docs/delivery.md#where-delivery-is-decided).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, readInstall func(dataHome string) core.InstallPolicies) int {
	// A client that stopped reading must not kill the hook with SIGPIPE:
	// ignored, a write to the dead pipe fails (EPIPE), nothing is marked
	// offered and the hook still exits as the client expects.
	signal.Ignore(syscall.SIGPIPE)
	// Go reopens a closed stdout on /dev/null before main runs; context
	// written there reaches no one, so it must not count as delivered.
	if f, ok := stdout.(*os.File); ok && isNullDevice(f) {
		stdout = unreadOutput{}
	}
	r := &Runner{Adapters: clients.All(), Getenv: os.Getenv, ClientVersion: func(ctx context.Context, a adapter.Adapter) string { return probeVersion(ctx, a, os.Getenv) },
		ClientPID: func(a adapter.Adapter) int { return clientPID(a, os.Getenv) }, Deadline: Deadline,
		ReadInstall: readInstall}
	return r.Run(args, stdin, stdout, stderr)
}

// result is a handler's answer plus what to record once stdout was written.
type result struct {
	out      adapter.Output
	afterOut func(ctx context.Context) error
	// unwritten runs instead of afterOut when the client did not take the
	// answer.
	unwritten func(ctx context.Context)
	// answerOnStderr: the answer itself is out.Stderr (an exit-2 hold),
	// written before afterOut runs.
	answerOnStderr bool
	notes          []string
	// release runs after afterOut (the offer lock), before close.
	release func()
	close   func()
}

// Run handles one hook call and returns the exit code the client expects.
func (r *Runner) Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "acc: coordination unavailable (internal error); hook continued without context\n")
			if r.Getenv != nil && r.Getenv("ACC_HOOK_DEBUG") == "1" {
				fmt.Fprintf(stderr, "%v\n%s", p, debug.Stack())
			}
			code = 0
		}
	}()
	if len(args) != 2 {
		fmt.Fprintln(stderr, "acc: acc-hook takes <adapter> <event> with the payload on stdin; hook continued without context")
		return 0
	}
	a := r.Adapters[args[0]]
	if a == nil {
		fmt.Fprintf(stderr, "acc: no adapter %q (known: %s); hook continued without context\n", sanitise(args[0]), strings.Join(slices.Sorted(maps.Keys(r.Adapters)), ", "))
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Deadline)
	defer cancel()
	payload, err := readPayload(ctx, stdin)
	if err == nil && a.ID() == claude.ID && grok.FromHookRunner(r.Getenv, payload) {
		// Grok running acc's Claude Code hooks
		// (docs/hooks.md#grok-running-claude-codes-hooks): handled as Grok, or
		// left to acc's own Grok hook when that runs this event too.
		g := r.Adapters[grok.ID]
		if g == nil || !slices.Contains(g.Events(), args[1]) || r.grokHookRuns(args[1]) {
			return 0
		}
		a = g
	}
	// Whatever goes wrong below, the client gets the adapter's "proceed"
	// answer and exit 0.
	failOpen := func() {
		out := a.Allow(&adapter.Event{Adapter: a.ID(), Name: args[1], Kind: adapter.Other})
		stdout.Write(out.Stdout)
		code = 0
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "acc: coordination unavailable (internal error); hook continued without context\n")
			if r.Getenv != nil && r.Getenv("ACC_HOOK_DEBUG") == "1" {
				fmt.Fprintf(stderr, "%v\n%s", p, debug.Stack())
			}
			failOpen()
		}
	}()
	var res *result
	switch {
	case err != nil:
	case len(payload) > MaxPayload:
		res, err = r.oversize(ctx, a, args[1], payload, stdin)
	default:
		res, err = r.handle(ctx, a, args[1], payload)
	}
	if err != nil {
		reason := "error"
		var pe *protocol.Error
		if errors.As(err, &pe) {
			reason = pe.Reason
		} else if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			// Waiting for the store's lock is store_busy (the storage
			// layer says so); any other run past the budget is this.
			reason = protocol.ReasonHookBudgetExceeded
		}
		fmt.Fprintf(stderr, "acc: coordination unavailable (%s); hook continued without context\n", reason)
		if r.Getenv("ACC_HOOK_DEBUG") == "1" {
			fmt.Fprintf(stderr, "acc: %v\n", wording.CLIError(err))
		}
		failOpen()
		return 0
	}
	if res.close != nil {
		defer res.close()
	}
	if res.release != nil {
		defer res.release()
	}
	taken := true
	if len(res.out.Stdout) > 0 {
		if _, err := stdout.Write(res.out.Stdout); err != nil {
			taken = false
		}
	}
	if res.answerOnStderr && taken {
		if _, err := stderr.Write(res.out.Stderr); err != nil {
			taken = false
		}
		res.out.Stderr = nil
	}
	if !taken {
		fmt.Fprintln(stderr, "acc: the client did not take the context; nothing was marked offered")
		if res.answerOnStderr {
			// An exit-2 hold whose reason did not get through would still
			// keep the agent working, with no reason, while the session is
			// recorded idle: answer "proceed" instead.
			res.out = a.Allow(&adapter.Event{Adapter: a.ID(), Name: args[1], Kind: adapter.TurnEnd})
		}
		res.afterOut = nil
		if res.unwritten != nil {
			res.unwritten(ctx)
		}
	}
	if res.afterOut != nil {
		// The client has the bytes: record that even when the write took
		// the rest of the budget (a client draining the pipe late), within
		// recordGrace, or the next hook would print it a second time.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), recordGrace)
		defer rcancel()
		if err := res.afterOut(rctx); err != nil {
			fmt.Fprintln(stderr, "acc: context delivered, but recording the offer failed; the messages stay queued")
		}
	}
	for _, n := range res.notes {
		fmt.Fprintln(stderr, n)
	}
	if len(res.out.Stderr) > 0 {
		stderr.Write(res.out.Stderr)
	}
	return res.out.ExitCode
}

// grokHookRuns reports whether acc's Grok hook file (grok.HookFile, under
// HOME and GROK_HOME as the hook sees them) registers event: Grok then runs
// that entry before the Claude Code one, which has nothing left to do.
func (r *Runner) grokHookRuns(event string) bool {
	home := r.Getenv("HOME")
	if home == "" {
		return false
	}
	b, err := os.ReadFile(grok.HookFile(adapter.InstallEnv{Home: home, Getenv: r.Getenv}))
	return err == nil && grok.HookFileRuns(b, event)
}

func (r *Runner) handle(ctx context.Context, a adapter.Adapter, event string, payload []byte) (*result, error) {
	ev, err := a.Normalize(event, payload)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonInvalidInput, "payload refused: %v", err)
	}
	if err := ctx.Err(); err != nil {
		// The store would call a deadline that passed before it was
		// asked store_busy; it was not.
		return nil, err
	}
	creates := ev.Kind == adapter.SessionStart || ev.Kind == adapter.BeforeTurn
	room, err := core.Open(ctx, core.OpenOptions{Cwd: ev.Cwd, Getenv: r.Getenv, NoCreate: !creates, ReadInstall: r.ReadInstall})
	if err != nil && (ev.Kind != adapter.BeforeTool || !noRoomHere(err)) {
		return nil, err
	}
	// A pre-tool call from a directory in no room still has its targets
	// judged in their own rooms (docs/hooks.md#targets-in-other-rooms):
	// room is nil then.
	res, err := r.dispatch(ctx, a, ev, room)
	if err != nil {
		if room != nil {
			room.Close()
		}
		return nil, err
	}
	// The room stays open until the offers are recorded after the write.
	if room != nil {
		res.close = func() { room.Close() }
	}
	return res, nil
}

// noRoomHere reports whether opening the room of the client's directory
// failed because there is none there (no_room: the directory holds acc's
// data, as a home directory does; workspace_unresolvable: the directory
// cannot be resolved), rather than because a room could not be read.
func noRoomHere(err error) bool {
	return protocol.IsReason(err, protocol.ReasonNoRoom) || protocol.IsReason(err, protocol.ReasonWorkspaceUnresolvable)
}

// readPayload reads stdin to its end, at most MaxPayload+1 bytes (a read
// error ends it like the end: the adapter then refuses what it got), within
// ctx: a client that never closes the hook's stdin costs the budget, not
// the client's turn. The error is ctx's when it ran out first.
func readPayload(ctx context.Context, stdin io.Reader) ([]byte, error) {
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(stdin, MaxPayload+1))
		got <- b
	}()
	select {
	case b := <-got:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// oversize answers a call whose payload is over MaxPayload without decoding
// it: its top-level scalar fields are read (readFields, whatever their
// order; the tool's input is skipped). A pre-tool call of a file-writing or
// shell tool is guarded as one whose write targets are unknown, so a
// peer's guarded claim denies it (docs/hooks.md#commands-too-large-to-read);
// so is a pre-tool call whose tool's name could not be read, since only a
// call known to be a read may go unchecked. A call of a tool known not to
// write, another event, or a payload read to its end whose session id or
// directory is missing or unusable fails open as payload_too_large.
//
// A payload whose reading ran out of time before its session id or
// directory was reached is still known, from argv, to be the pre-tool
// event: it is judged by unreadPreTool
// (docs/hooks.md#payloads-not-read-in-time).
func (r *Runner) oversize(ctx context.Context, a adapter.Adapter, event string, payload []byte, rest io.Reader) (*result, error) {
	tooLarge := protocol.Errorf(protocol.ReasonPayloadTooLarge, "the payload is over %d bytes; it was not read", MaxPayload)
	fields, finished := readFields(ctx, io.MultiReader(bytes.NewReader(payload), rest))
	lead, err := json.Marshal(fields)
	if err != nil {
		return nil, tooLarge
	}
	ev, err := a.Normalize(event, lead)
	if err != nil && !finished {
		return r.unreadPreTool(ctx, a, event, fields, tooLarge)
	}
	if err != nil || ev.Kind != adapter.BeforeTool {
		return nil, tooLarge
	}
	unknown := fmt.Sprintf("the payload is over %d bytes and acc reads at most that", MaxPayload)
	switch {
	case ev.Tool == "":
		unknown = fmt.Sprintf("the payload is over %d bytes and the name of its tool could not be read", MaxPayload)
	case !ev.Write && !ev.ShellTool:
		// A tool known not to write: reads are never denied.
		return nil, tooLarge
	}
	room, err := core.Open(ctx, core.OpenOptions{Cwd: ev.Cwd, Getenv: r.Getenv, NoCreate: true, ReadInstall: r.ReadInstall})
	if err != nil {
		return nil, err
	}
	res, err := r.guard(ctx, a, ev, room, unknown)
	if err != nil {
		room.Close()
		return nil, err
	}
	res.close = func() { room.Close() }
	return res, nil
}

// unknownSession stands in for a client session id acc-hook could not read
// while the adapter normalises the fields that were (unreadPreTool); the
// call is then judged with an empty session id, which no binding has (the
// adapters refuse an empty one).
const unknownSession = "acc: unread session id"

// unreadPreTool judges an oversized payload whose reading ran out of time
// before its session id or directory was reached
// (docs/hooks.md#payloads-not-read-in-time). When event is the client's
// pre-tool event, the call is a tool call whose tool, targets and perhaps
// session are unknown: its directory is the one the payload states when it
// was read, else the hook process's working directory (Runner.Getwd; the
// doc says what that rests on); its session, when not read, is nobody's,
// so every guarded claim in the room counts, the caller's own included,
// since acc cannot tell which are the caller's. The call is denied when
// such a claim is live; it proceeds as payload_too_large (tooLarge) when
// none is, when the directory is in no room, when the tool's name was read
// and it writes nothing, or when event is not the pre-tool event.
func (r *Runner) unreadPreTool(ctx context.Context, a adapter.Adapter, event string, fields map[string]any, tooLarge error) (*result, error) {
	getwd := r.Getwd
	if getwd == nil {
		getwd = os.Getwd
	}
	wd, err := getwd()
	if err != nil || !filepath.IsAbs(wd) {
		return nil, tooLarge
	}
	// The adapter is asked with the fields read plus stand-ins for what
	// was not: the session id or the directory alone first, so that one
	// read under another of the client's spellings still counts.
	var ev *adapter.Event
	cwdUnread := false
	for _, fill := range []map[string]any{
		{"cwd": wd},
		{"session_id": unknownSession, "sessionId": unknownSession},
		{"session_id": unknownSession, "sessionId": unknownSession, "cwd": wd},
	} {
		m := maps.Clone(fields)
		_, cwdRead := m["cwd"]
		for k, v := range fill {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, tooLarge
		}
		if ev, err = a.Normalize(event, b); err == nil {
			cwdUnread = !cwdRead && fill["cwd"] != nil && ev.Cwd == wd
			break
		}
	}
	if ev == nil || ev.Kind != adapter.BeforeTool || (ev.Tool != "" && !ev.Write && !ev.ShellTool) {
		return nil, tooLarge
	}
	sessionUnread := ev.SessionID == unknownSession
	var missing string
	switch {
	case sessionUnread && cwdUnread:
		missing = "its session id and directory"
	case sessionUnread:
		missing = "its session id"
	case cwdUnread:
		missing = "its directory"
	default:
		missing = "its fields"
	}
	unknown := fmt.Sprintf("the payload is over %d bytes and %s could not be read within the hook's budget", MaxPayload, missing)
	if sessionUnread {
		unknown += ", so every guarded claim counts, yours too: if it is yours, release it; else write smaller pieces"
		ev.SessionID = ""
	}
	room, err := core.Open(ctx, core.OpenOptions{Cwd: ev.Cwd, Getenv: r.Getenv, NoCreate: true, ReadInstall: r.ReadInstall})
	if noRoomHere(err) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, err
	}
	res, err := r.guard(ctx, a, ev, room, unknown)
	if err != nil {
		room.Close()
		return nil, err
	}
	if reflect.DeepEqual(res.out, a.Allow(ev)) {
		// Nothing here for it to write into: it proceeds as any payload
		// too large to read does.
		room.Close()
		return nil, tooLarge
	}
	res.close = func() { room.Close() }
	return res, nil
}

// fieldsReserve is the part of the hook's deadline left, after reading an
// oversized payload's fields, for checking the call and answering.
const fieldsReserve = 2 * time.Second

// readFields returns the top-level scalar fields of the JSON object in
// payload (scanFields), found until the object ends or ctx's deadline less
// fieldsReserve, whichever is first; finished is false when the time ran
// out first. The rest of payload is read on in the background, so that a
// client still writing does not fail on a closed pipe while the call is
// answered.
func readFields(ctx context.Context, payload io.Reader) (fields map[string]any, finished bool) {
	var mu sync.Mutex
	found := map[string]any{}
	done := make(chan struct{})
	go func() {
		scanFields(payload, func(k string, v any) {
			mu.Lock()
			found[k] = v
			mu.Unlock()
		})
		close(done)
		_, _ = io.Copy(io.Discard, payload)
	}()
	var stop <-chan time.Time
	if dl, ok := ctx.Deadline(); ok {
		timer := time.NewTimer(time.Until(dl) - fieldsReserve)
		defer timer.Stop()
		stop = timer.C
	}
	select {
	case <-done:
		finished = true
	case <-stop:
		select {
		case <-done: // finished as the time ran out
			finished = true
		default:
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return maps.Clone(found), finished
}

// beforeHandler, when a test sets it, runs as each handler starts (the
// seam for the fail-open tests); nil in the product.
var beforeHandler func(adapter.Kind)

func (r *Runner) dispatch(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room) (*result, error) {
	if beforeHandler != nil {
		beforeHandler(ev.Kind)
	}
	switch ev.Kind {
	case adapter.SessionStart, adapter.BeforeTurn:
		return r.turn(ctx, a, ev, room)
	case adapter.BeforeTool:
		unknown := ""
		if ev.Write && len(ev.Targets) == 0 {
			// A file tool whose input names no file acc can read (Grok
			// sends an input over 128 KiB as a truncated string, yet runs
			// the tool with all of it): it could write anywhere
			// (docs/hooks.md#unknown-writes-and-their-hints).
			unknown = fmt.Sprintf("acc cannot read which file %s writes: its input names none acc can read", ev.Tool)
		}
		if ev.ShellUnreadable {
			// The same for a shell command acc cannot read
			// (docs/hooks.md#commands-too-large-to-read).
			unknown = fmt.Sprintf("acc cannot read the command %s runs: its input is not one acc can read", ev.Tool)
		}
		return r.guard(ctx, a, ev, room, unknown)
	case adapter.AfterTool:
		return r.afterTool(ctx, a, ev, room)
	case adapter.TurnEnd:
		return r.turnEnd(ctx, a, ev, room)
	case adapter.Heartbeat:
		if c, err := room.HookCaller(ctx, a.ID(), ev.SessionID); err == nil && c != nil {
			limit := int64(toolHeartbeatMs)
			if ev.Kind == adapter.Heartbeat {
				limit = 0
			}
			_ = room.HeartbeatIfDue(ctx, *c, limit)
		}
		return &result{out: a.Allow(ev)}, nil
	case adapter.SessionEnd:
		if err := room.HookEnd(ctx, a.ID(), ev.SessionID); err != nil {
			return nil, err
		}
		return &result{out: a.Allow(ev)}, nil
	default:
		return &result{out: a.Allow(ev)}, nil
	}
}

// turn attaches or resumes, heartbeats, and projects context.
func (r *Runner) turn(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room) (*result, error) {
	version := ""
	hs, err := room.HookSession(ctx, a.ID(), ev.SessionID, 0)
	if err != nil {
		return nil, err
	}
	var c *core.Caller
	participant := ""
	if hs != nil {
		c, participant = &hs.Caller, hs.ParticipantID
	}
	// The client's pid is found at most once (a walk up the process
	// tree): for attaching, and for checking its live channel.
	pid, found := 0, false
	clientPID := func() int {
		if !found {
			pid, found = r.ClientPID(a), true
		}
		return pid
	}
	// The version is asked at session start, and again before a turn of a
	// session that has none recorded: `<client> --version` has at most
	// ProbeBudget, which a machine busy enough can exhaust, and a session
	// without a version is advisory with nothing proven; the next turn
	// gives it another chance (docs/hooks.md#guarded-or-advisory).
	if c == nil || ev.Kind == adapter.SessionStart || (ev.Kind == adapter.BeforeTurn && hs.ClientVersion == "") {
		version = r.ClientVersion(ctx, a)
		// What acc certify proved on this machine for this exact version
		// wins over the built-in evidence.
		caps, _, _ := evidence.For(a, version, room.DataHome)
		declared := declaredCapabilities(caps)
		in := core.HookAttachInput{Adapter: a.ID(), ClientSessionID: ev.SessionID, PID: clientPID(),
			Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManual,
			ClientVersion: version, Capabilities: &declared}
		if room.Env != nil {
			in.Participant = room.Env.Participant
		}
		if caps.Guarded() {
			in.Enforcement = protocol.EnforcementGuarded
		}
		if caps.SessionEnd {
			in.Lifecycle = protocol.LifecycleManaged
		}
		res, err := room.HookAttach(ctx, in)
		if err != nil {
			return nil, err
		}
		c, participant = &res.Caller, res.ParticipantID
		if ev.Kind == adapter.BeforeTurn {
			if _, err := room.SetActivity(ctx, *c, protocol.ActivityWorking); err != nil {
				return nil, err
			}
		}
	} else if strings.Contains(ev.Prompt, core.HoldReasonLead) {
		// A client carrying on after a hold with its reason as a new
		// prompt (Gemini CLI): the same turn goes on, and the stop that
		// follows is not held again, whatever the client says of it
		// (docs/delivery.md#end-of-turn).
		if _, err := room.SetActivity(ctx, *c, protocol.ActivityWorking); err != nil {
			return nil, err
		}
		_, _ = room.RecordHoldContinuation(ctx, *c, ev.Prompt)
	} else if _, err := room.BeginTurn(ctx, *c); err != nil {
		// A turn starts: the session is working since now, even after a
		// turn that ended with no turn-end hook
		// (docs/delivery.md#knowing-when-a-peer-is-free); this is its heartbeat
		// too.
		return nil, err
	}
	r.recordLive(ctx, a, ev, room, *c, clientPID)
	// The offer lock is held from reading the receipts to recording the
	// offer, so a live push racing this turn's start cannot offer the same
	// message again. Not obtained within turnLockWait (another hook of
	// the participant may be printing a message this moment), the
	// projection names the pending messages without printing any, so none
	// is shown twice; they stay queued for the next hook.
	release, locked := offerLock(ctx, room, participant, turnLockWait)
	p, err := room.Project(ctx, *c, core.ProjectionOptions{Prompt: ev.Prompt, Withhold: !locked})
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	res := &result{out: a.Inject(ev, p.Text), release: release}
	// An adapter that renders nothing here (Kimi Code's session start,
	// Grok's session start and prompt, whose output reaches no model)
	// delivered nothing: its messages stay queued for the next turn.
	shown := !reflect.DeepEqual(res.out, a.Allow(ev))
	if len(p.InPrompt) > 0 {
		// A live push started this turn: the client has put the whole frame
		// before its model, so the message is offered (the sender records
		// it too; whichever is first, the receipt moves once).
		if err := room.MarkOffered(ctx, *c, p.InPrompt, liveTransport(a.ID()), a.ID(), version); err != nil {
			res.notes = append(res.notes, "acc: a live message reached this turn, but recording its offer failed; it stays queued")
		}
	}
	if p.HeaderDidNotFit {
		res.notes = append(res.notes, "acc: policy.contextBudgetBytes is too small for even the session line; raise it in acc.workspace.json")
	}
	if len(p.Offered) > 0 && shown {
		caller := *c
		res.afterOut = func(ctx context.Context) error {
			return room.MarkOffered(ctx, caller, p.Offered, router.TransportNextTurn, a.ID(), version)
		}
	}
	return res, nil
}

// guard reads the call's write targets and denies a write into another
// session's guarded claim, each target judged in the room that holds it
// (core.CheckWriteRooms). room is the room of the client's directory, nil
// when it is in none.
//
// unknown, when not empty, says why the call may write somewhere its
// targets do not name (see oversize); a shell command too large to read
// sets it too. It is judged in room only.
func (r *Runner) guard(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room, unknown string) (*result, error) {
	var c *core.Caller
	if room != nil {
		var err error
		if c, err = room.HookCaller(ctx, a.ID(), ev.SessionID); err != nil {
			return nil, err
		}
	}
	targets := append([]string{}, ev.Targets...)
	var notes []string
	var hidden []core.HiddenWrite
	var gits []core.GitWrite
	if ev.Shell != "" {
		reading, err := readShellTargets(ctx, ev.Shell, r.shellEnv(ctx, ev.Cwd))
		switch {
		case errors.Is(err, adapter.ErrShellTooLarge):
			// Too large to read within the budget: it could write
			// anywhere, so any guarded claim of a peer denies it.
			unknown = fmt.Sprintf("the command is %d bytes and acc reads at most %d", len(ev.Shell), adapter.MaxShellCommand)
		case errors.Is(err, adapter.ErrShellTooComplex):
			// Nested too deep, or more work to read than the bound: the
			// same. The error's detail holds numbers only.
			unknown = "the command is too complex to read: " + strings.TrimPrefix(err.Error(), adapter.ErrShellTooComplex.Error()+": ")
		case errors.Is(err, errShellOutOfTime):
			unknown = "the command took longer to read than the hook's budget allows"
		case err != nil:
			// The parser itself failed: bash may still run it.
			unknown = "acc could not read the command"
		}
		if reading.Partial != nil {
			// The statements before the error run; they were judged.
			notes = append(notes, "acc: the command has a syntax error; acc judged the statements bash runs before it")
		}
		targets = append(targets, reading.Targets...)
		for _, u := range reading.Unknown {
			hidden = append(hidden, core.HiddenWrite{Why: u.Why, Hints: u.Hints})
		}
		var more []string
		gits, more, unknown = gitEffects(ctx, room, ev.Cwd, reading.Git, unknown)
		targets = append(targets, more...)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sessionID := ""
	if c != nil {
		sessionID = c.SessionID
		_ = room.HeartbeatIfDue(ctx, *c, toolHeartbeatMs)
	}
	if len(targets) > maxGuardTargets {
		unknown = fmt.Sprintf("the call writes %d paths and acc checks at most %d", len(targets), maxGuardTargets)
		targets = nil
	}
	if len(targets) == 0 && unknown == "" && len(hidden) == 0 && len(gits) == 0 {
		return &result{out: a.Allow(ev), notes: notes}, nil
	}
	d, err := core.CheckWriteRooms(ctx, room, core.RoomsInput{
		GuardInput: core.GuardInput{SessionID: sessionID, Cwd: ev.Cwd, Targets: targets, Unknown: unknown,
			Hidden: hidden, HintReaches: adapter.HintReaches, Git: gits},
		Adapter: a.ID(), ClientSessionID: ev.SessionID, Getenv: r.Getenv})
	if err != nil {
		return nil, err
	}
	if d.Unknown != "" && !d.Deny {
		notes = append(notes, "acc: this call was not fully checked ("+d.Unknown+"); no peer holds a guarded claim here, so it proceeds")
	}
	if d.Deny {
		return &result{out: a.Deny(ev, d.Reason), notes: notes}, nil
	}
	return &result{out: a.Allow(ev), notes: notes}, nil
}

// shellTargets reads a shell command; tests replace it.
var shellTargets = adapter.ReadShell

// shellReadReserve is the part of the hook's deadline left for what
// follows reading a shell command (the git commands it runs, checking the
// targets against the claims, answering): reading still unfinished this
// long before the deadline counts as not read
// (docs/hooks.md#commands-too-large-to-read). The bounds in the adapter keep it
// from mattering on an ordinary machine.
const shellReadReserve = 2 * time.Second

// errShellOutOfTime: reading the shell command did not finish before
// shellReadReserve.
var errShellOutOfTime = errors.New("reading the shell command ran out of time")

// readShellTargets is shellTargets bounded by ctx's deadline less
// shellReadReserve: past it the reading is left running (the process ends
// once it answered) and errShellOutOfTime is returned.
func readShellTargets(ctx context.Context, command string, env adapter.ShellEnv) (adapter.ShellReading, error) {
	if len(command) > adapter.MaxShellCommand {
		// Known at once, however little of the budget is left: never
		// reported as a reading that ran out of time.
		return shellTargets(command, env)
	}
	type answer struct {
		reading adapter.ShellReading
		err     error
	}
	got := make(chan answer, 1)
	go func() {
		rd, err := shellTargets(command, env)
		got <- answer{rd, err}
	}()
	var stop <-chan time.Time
	if dl, ok := ctx.Deadline(); ok {
		timer := time.NewTimer(time.Until(dl) - shellReadReserve)
		defer timer.Stop()
		stop = timer.C
	}
	select {
	case a := <-got:
		return a.reading, a.err
	case <-stop:
		select {
		case a := <-got: // finished as the time ran out: the answer stands
			return a.reading, a.err
		default:
			return adapter.ShellReading{}, errShellOutOfTime
		}
	}
}

// shellEnv is what reading a shell command may consult: the payload's cwd
// (never the hook process's), the client's $HOME, and the top of the git
// worktree holding a directory for `$(git rev-parse --show-toplevel)`,
// asked of git within ctx.
func (r *Runner) shellEnv(ctx context.Context, cwd string) adapter.ShellEnv {
	env := adapter.ShellEnv{Home: r.Getenv("HOME")}
	if filepath.IsAbs(cwd) {
		env.Cwd = cwd
	}
	env.Toplevel = func(dir string) (string, bool) { return core.GitToplevel(ctx, dir) }
	return env
}

// gitCheckReserve is the part of the hook's deadline that the git commands
// a shell call runs leave for checking the claims and answering.
const gitCheckReserve = 1500 * time.Millisecond

// gitEffects asks, with read-only git, what each git command of a shell
// call would do (core.GitTouched), within ctx. An effect in the worktree
// of room (the client's room) is returned for CheckWrite to judge with its
// own reason; the paths of one elsewhere are returned as plain targets,
// judged in their own rooms, with its whole worktree when git cannot tell
// what it would touch (GitEffect.Unknown). Running out of time makes the
// call's writes unknown (unknown is returned updated).
func gitEffects(ctx context.Context, room *core.Room, cwd string, ops []adapter.GitOp, unknown string) ([]core.GitWrite, []string, string) {
	if len(ops) == 0 {
		return nil, nil, unknown
	}
	// Git may take only what leaves checking the claims its reserve: a git
	// still running then is cut off and the call's writes count as
	// unknown, never as a hook that ran out of budget and failed open.
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-gitCheckReserve))
		defer cancel()
	}
	var gits []core.GitWrite
	var targets []string
	for _, op := range ops {
		if len(op.Args) == 0 {
			continue
		}
		dir := op.Dir
		if !filepath.IsAbs(dir) {
			if !filepath.IsAbs(cwd) {
				continue
			}
			dir = filepath.Join(cwd, dir)
		}
		if p, err := filepath.EvalSymlinks(dir); err == nil {
			dir = p
		}
		e, err := core.GitTouched(ctx, dir, op.Args)
		if err != nil && unknown == "" {
			unknown = "the git commands in it took longer to look into than the hook's budget allows"
		}
		if e == nil {
			continue
		}
		if room != nil && room.Holds(e.Worktree) {
			gits = append(gits, core.GitWrite{Command: "git " + op.Args[0], Dir: dir, Effect: e})
			continue
		}
		targets = append(targets, e.Paths...)
		if e.Unknown != "" {
			// What it would touch there is not known: its whole worktree
			// stands for it, judged in that room like any directory.
			targets = append(targets, e.Worktree)
		}
	}
	return gits, targets, unknown
}

// clientPID is the pid of a's client among the hook's ancestors: the one
// its variable names (adapter.ClientPIDNamer), else the nearest process
// named a.ClientCommand(), else 0.
func clientPID(a adapter.Adapter, getenv func(string) string) int {
	if n, ok := a.(adapter.ClientPIDNamer); ok && n.ClientPIDEnv() != "" {
		return core.ClientPIDNamed(a.ClientCommand(), getenv(n.ClientPIDEnv()))
	}
	return core.ClientPID(a.ClientCommand())
}

// versionPattern is compiled when first used: only session start asks.
var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(?:\.\d+)*`) })

// ProbeTimeout bounds one `<client> --version` of acc-hook when
// ACC_PROBE_TIMEOUT_MS is unset (or unusable: the hook refuses nothing);
// ProbeBudget bounds its attempts together, whatever the variable says, so
// that the version never takes more than 2 s of the hook's 5 s Deadline.
const (
	ProbeTimeout = time.Second
	ProbeBudget  = 2 * time.Second
)

// probeVersion returns the client's version: the one the client put in its
// hooks' environment, for a client that does (adapter.ClientVersionNamer);
// else the npm package's, when the
// client on PATH is an npm package's bin (clients.NPMVersion), else the first dotted
// version `<client> --version` prints, asked twice within ProbeBudget. The
// client is the program a person runs (adapter.Installer's Binary), which
// is not always the name its process carries (ClientCommand: Kimi Code's
// program kimi runs as a process titled kimi-code), else ClientCommand,
// else the adapter id.
func probeVersion(ctx context.Context, a adapter.Adapter, getenv func(string) string) string {
	if n, ok := a.(adapter.ClientVersionNamer); ok && n.ClientVersionEnv() != "" {
		if v := versionPattern().FindString(getenv(n.ClientVersionEnv())); v != "" && setByClient(a, getenv, n.ClientVersionEnv()) {
			return v
		}
	}
	name := a.ClientCommand()
	if in, ok := a.(adapter.Installer); ok && in.Binary() != "" {
		name = in.Binary()
	}
	if name == "" {
		name = a.ID()
	}
	if v := clients.NPMVersion(name); v != "" {
		return v
	}
	return versionProbe(name, getenv).Run(ctx).Version
}

// startEnviron returns the environment the process pid was started with
// (on Linux /proc/<pid>/environ, which a later change of its own
// variables does not alter); an error where it cannot be read (another
// system, another user's process).
var startEnviron = func(pid int) ([]string, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, err
	}
	return p.Environ()
}

// setByClient reports whether the variable name in the hook's environment
// was set by a's client itself: the client process (clientPID) was started
// without it. Kilo Code 7.7.9 sets KILOCODE_VERSION only when its own
// environment lacks it, so an inherited value (a kilo started from inside
// another Kilo session, or a variable a person exported) names another
// version than the one running; such a value, or one whose origin cannot
// be checked, is not taken (docs/adapters.md#kilo-code).
func setByClient(a adapter.Adapter, getenv func(string) string, name string) bool {
	pid := clientPID(a, getenv)
	if pid == 0 {
		return false
	}
	env, err := startEnviron(pid)
	if err != nil {
		return false
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return false
		}
	}
	return true
}

// versionProbe is the question `<name> --version` as acc-hook asks it:
// each attempt within ACC_PROBE_TIMEOUT_MS (ProbeTimeout when unset or
// unusable), both within ProbeBudget.
func versionProbe(name string, getenv func(string) string) probe.Probe {
	return probe.Probe{Name: name, Timeout: probe.TimeoutOr(getenv, ProbeTimeout), Budget: ProbeBudget,
		Stderr: true, Pattern: versionPattern(),
		Command: func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, name, "--version") }}
}

// isNullDevice reports whether f is the null device.
func isNullDevice(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// unreadOutput stands in for a stdout nobody reads: every write fails.
type unreadOutput struct{}

func (unreadOutput) Write([]byte) (int, error) {
	return 0, errors.New("stdout is the null device: nobody reads it")
}

// sanitise shows an argument the client passed in a one-line diagnostic:
// its first 40 bytes, by the one display rule (protocol.EscapeText in
// TextLine mode, docs/concepts.md).
func sanitise(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return protocol.EscapeText(s, protocol.TextLine)
}

// declaredCapabilities maps what evidence proves for a client version onto
// the capability record a session carries
// (docs/adapters.md#capabilities-and-their-evidence).
func declaredCapabilities(c adapter.Capabilities) protocol.DeclaredCapabilities {
	var d protocol.DeclaredCapabilities
	d.Lifecycle.SessionStart = c.Attach
	d.Lifecycle.SessionEnd = c.SessionEnd
	d.Context.BeforeTurnInjection = c.NextTurn
	d.Guards.BeforeWrite = c.GuardFiles
	d.Guards.BeforeShell = c.GuardShell
	d.Delivery.NextTurn = c.NextTurn
	d.Delivery.LivePush = c.LivePush
	d.Delivery.MidTurn = c.MidTurn
	d.Delivery.EndOfTurn = c.EndOfTurn
	d.Context.SafePointInjection = c.MidTurn
	return d
}

// liveTransport names adapter id's live transport ("live" when it has
// none of its own).
func liveTransport(id string) string {
	if t := livepush.TransportOf(id); t != "" {
		return t
	}
	return "live"
}

// recordLive records, or renews, the session's live binding when its
// client offers a channel that checks out (livepush.Endpoint), and retires
// it when the channel no longer does. A failure changes nothing the
// client sees.
func (r *Runner) recordLive(ctx context.Context, a adapter.Adapter, ev *adapter.Event, room *core.Room, c core.Caller, pid func() int) {
	if r.Getenv == nil || !livepush.Has(a.ID()) {
		return
	}
	transport, endpoint, err := livepush.Endpoint(a.ID(), r.Getenv, ev.SessionID, pid)
	switch {
	case errors.Is(err, livepush.ErrNoChannel) && ev.Kind != adapter.SessionStart:
		// The process offered no channel when its session started either:
		// nothing to retire, and no read of the store at every turn.
		return
	case err != nil:
		_ = room.RetireLiveBinding(ctx, c)
		return
	}
	_ = room.RecordLiveBinding(ctx, c, transport, endpoint)
}
