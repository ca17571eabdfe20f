// Package certify is `acc certify` (docs/certify.md): it proves acc's
// capabilities on the user's own installed clients, on the user's own machine,
// the way acc's tests prove them on the pinned clients — and touches nothing of
// the user's: each client runs in a temporary HOME, a temporary Git
// repository with a second worktree and a temporary data home, with acc's
// hooks installed there as acc install would, headless against the
// loopback fake model (internal/fakemodel), so no network and no token.
//
// Two runs per client prove the seven capabilities of docs/certify.md:
//
//   - run 1: the session start attaches a session (attach); a session in
//     the other worktree holds a guarded claim on src/a.go, and the model
//     asks the client's file tool, then its shell, to write it — both must
//     be denied, the model told why, and the file unchanged (guardFiles,
//     guardShell); when the client exits its session is closed
//     (sessionEnd);
//   - run 2: the other session has sent the client's participant a
//     question; the model's first request must show it inside the
//     untrusted peer frame, with its receipt offered (nextTurn). The model
//     answers it (acc reply) and goes on with a shell step; a question sent
//     between the two calls must
//     come with the post-tool hook into the model request after the next
//     tool result, framed, offered (midTurn); one sent while the model
//     writes its final answer must make the stop hook keep the agent
//     working, its frame in the request after the stop (endOfTurn)
//     (docs/delivery.md#mid-turn, docs/delivery.md#end-of-turn).
//
// What a run proved is written, for that exact client version, into the
// user's data home (internal/evidence), which acc-hook and acc doctor read
// beside the built-in evidence. A client that never asks the model (it
// cannot run headless here, or wants a login) is reported, and nothing is
// recorded.
package certify

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientlist "github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/internal/fakemodel"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/internal/realclient"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// DefaultTimeout bounds the certification of one client (everything:
// preparing, its --version and both runs). A
// client's cold starts dominate: Claude Code took 78 s for both runs on a
// loaded two-core machine, so the default leaves more than twice that.
const DefaultTimeout = 3 * time.Minute

// Capabilities are the names certify proves, in table order.
var Capabilities = []string{"attach", "nextTurn", "guardFiles", "guardShell", "sessionEnd", "midTurn", "endOfTurn"}

// Options configure a certification.
type Options struct {
	// Adapters are the clients to certify (Supported); none
	// means every one whose program is on PATH.
	Adapters []string
	// Client is the program to run instead of the one on PATH (one
	// adapter only).
	Client string
	// Timeout bounds each client, everything included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// ProbeTimeout bounds one `<client> --version` (asked twice, within
	// what is left of Timeout); 0 means VersionTimeout.
	ProbeTimeout time.Duration
	// Acc and Hook are the acc and acc-hook binaries to install and run.
	Acc, Hook string
	// DataHome is the user's data home: only the evidence record goes
	// there.
	DataHome string
	// Adapter returns the adapter of an id (clients.Get).
	Adapter func(id string) adapter.Adapter
	// Progress receives one line per step; may be nil.
	Progress io.Writer
	// Command is the command line, recorded as the evidence's test.
	Command string
}

// Proof is one capability's outcome.
type Proof struct {
	Capability string `json:"capability"`
	Proven     bool   `json:"proven"`
	Why        string `json:"why"`
}

// Result is one client's certification.
type Result struct {
	Adapter string  `json:"adapter"`
	Binary  string  `json:"binary"`
	Version string  `json:"version"`
	Proofs  []Proof `json:"proofs"`
	// Ran is false when the client never asked the model (nothing is
	// recorded then).
	Ran bool `json:"ran"`
	// Problem says why the client could not be certified at all.
	Problem string `json:"problem,omitempty"`
	// Evidence is the record written, "" when none was.
	Evidence  string `json:"evidence,omitempty"`
	ElapsedMs int64  `json:"elapsedMs"`
}

// AllProven reports whether every capability was proven.
func (r Result) AllProven() bool {
	if !r.Ran || r.Problem != "" || len(r.Proofs) != len(Capabilities) {
		return false
	}
	for _, p := range r.Proofs {
		if !p.Proven {
			return false
		}
	}
	return true
}

// clients are the adapters certify knows how to drive: the pinned clients
// of acc's own real-client tests (realclient.Pinned), by id.
var clients = func() map[string]realclient.Client {
	out := map[string]realclient.Client{}
	for _, c := range realclient.Pinned {
		out[c.Name] = c
	}
	return out
}()

// Supported lists them, sorted.
func Supported() []string { return slices.Sorted(maps.Keys(clients)) }

// supportedWords is Supported as words: "a, b and c".
func supportedWords(or string) string {
	ids := Supported()
	return strings.Join(ids[:len(ids)-1], ", ") + " " + or + " " + ids[len(ids)-1]
}

// Check refuses options certify cannot act on (exit 2): an unknown
// adapter, or --client with other than exactly one adapter (a repeated
// one counts once).
func Check(o Options) error {
	var distinct []string
	for _, id := range o.Adapters {
		if !slices.Contains(distinct, id) {
			distinct = append(distinct, id)
		}
	}
	o.Adapters = distinct
	for _, id := range o.Adapters {
		if _, ok := clients[id]; !ok {
			return protocol.Errorf(protocol.ReasonInvalidFlagValue, "acc certify drives %s headless; %q is not one of them", supportedWords("and"), id)
		}
	}
	if o.Client != "" && len(o.Adapters) != 1 {
		return protocol.Errorf(protocol.ReasonUsage, "--client names one program: give exactly one --adapter with it")
	}
	return nil
}

// Run certifies each client in turn.
func Run(ctx context.Context, o Options) []Result {
	adoptOrphans()
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	var ids []string
	for _, id := range o.Adapters {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		for _, id := range Supported() {
			if _, err := exec.LookPath(clients[id].Name); err == nil {
				ids = append(ids, id)
			} else {
				o.say("%s: no %s on PATH, skipped", id, clients[id].Name)
			}
		}
	}
	out := []Result{}
	for _, id := range ids {
		if ctx.Err() != nil {
			break // interrupted: the rest is not started
		}
		out = append(out, certifyOne(ctx, o, id))
	}
	return out
}

func (o Options) say(format string, a ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", a...)
	}
}

var versionPattern = regexp.MustCompile(`\d+\.\d+(?:\.\d+)*`)

// VersionTimeout bounds one `<client> --version` of certify when
// ACC_PROBE_TIMEOUT_MS is unset: the client starts cold in a fresh HOME.
const VersionTimeout = 10 * time.Second

// version asks the client for its version (`<client> --version`, each
// attempt bounded by timeout, asked twice), in the temporary HOME and the
// environment of its runs (no relaunch, no telemetry). It returns the
// version, or "" and why it is unknown.
func version(ctx context.Context, c realclient.Client, bin, home string, timeout time.Duration) (string, string) {
	// The npm package's version first, as acc-hook reads it, so the record
	// is found by the hook for the same program.
	if v := clientlist.NPMVersionAt(bin); v != "" {
		return v, ""
	}
	res := probe.Probe{Name: bin, Timeout: timeout, Stderr: true, Pattern: versionPattern,
		Command: func(ctx context.Context) *exec.Cmd {
			cmd := exec.CommandContext(ctx, bin, "--version")
			cmd.Env = realclient.Setup{Client: c, Home: home}.Environ()
			cmd.Dir = home
			// Its own process group, ended whole: a client's helper
			// processes must not outlive the question (or write into the
			// temporary HOME after it is gone).
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 2 * time.Second
			return cmd
		},
		Done: func(cmd *exec.Cmd) {
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}}.Run(ctx)
	endOrphans()
	return res.Version, res.Unknown
}

// world is one client's temporary everything.
type world struct {
	base, home, repo, wt, data string
	env                        func(string) string
}

func newWorld(ctx context.Context) (*world, error) {
	base, err := os.MkdirTemp("", "acc-certify-")
	if err != nil {
		return nil, err
	}
	if base, err = filepath.EvalSymlinks(base); err != nil {
		return nil, err
	}
	w := &world{base: base, home: filepath.Join(base, "home"), repo: filepath.Join(base, "repo"), wt: filepath.Join(base, "side"), data: filepath.Join(base, "acc-data")}
	w.env = func(k string) string {
		switch k {
		case workspace.EnvDataHome:
			return w.data
		case "HOME":
			return w.home
		}
		return ""
	}
	if err := os.MkdirAll(w.home, 0o755); err != nil {
		return w, err
	}
	if err := os.MkdirAll(filepath.Join(w.repo, "src"), 0o755); err != nil {
		return w, err
	}
	if err := os.WriteFile(filepath.Join(w.repo, "src", "a.go"), []byte(original), 0o644); err != nil {
		return w, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "src"}, {"commit", "-q", "-m", "sources"}, {"worktree", "add", "-q", "-b", "side", w.wt}} {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=acc certify", "-c", "user.email=certify@acc.invalid"}, args...)...)
		cmd.Dir = w.repo
		cmd.Env = gitEnv(w.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			return w, fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return w, nil
}

const original = "package a\n"

// state is what the scripted model saw, filled in from its goroutine.
type state struct {
	mu     sync.Mutex
	proofs map[string]Proof
	calls  int
	// output is what the client printed on its first run (shown when it
	// never asked the model: a login prompt, say).
	output string
	// envFault: something of acc's own failed (the temporary room, the
	// install), so the run is no evidence.
	envFault bool
	// endProvenElsewhere: the client fires no session end in a headless
	// run (realclient.Client.SessionEnd is empty), and the evidence built
	// into acc proves the version's session end from acc's own
	// interactive run (builtInSessionEnd).
	endProvenElsewhere bool
}

func (s *state) set(name string, ok bool, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proofs[name] = Proof{Capability: name, Proven: ok, Why: why}
}

func certifyOne(ctx context.Context, o Options, id string) (res Result) {
	start := time.Now()
	c := clients[id]
	res = Result{Adapter: id, Proofs: []Proof{}}
	defer func() { res.ElapsedMs = time.Since(start).Milliseconds() }()
	bin := o.Client
	if bin == "" {
		p, err := exec.LookPath(c.Name)
		if err != nil {
			res.Problem = fmt.Sprintf("no %s on PATH; name the program with --client", c.Name)
			return res
		}
		bin = p
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	res.Binary = bin
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		res.Problem = bin + " is not an executable program"
		if err != nil {
			res.Problem = fmt.Sprintf("cannot run %s: %v", bin, err)
		}
		return res
	}
	// --timeout bounds everything of this client: preparing its world,
	// its --version and both runs.
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// stopped says why ctx ended while what was happening: Ctrl-C, or
	// --timeout, named with a longer one to try.
	stopped := func(what string) string {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			return "interrupted; nothing recorded"
		}
		return fmt.Sprintf("%s; nothing recorded; on a slow or busy machine give it longer with --timeout %s", what, core.ShortDuration(2*o.Timeout))
	}
	w, err := newWorld(ctx)
	if w != nil {
		// Whatever the client (or a tool's version probe) left running is
		// ended before its temporary directory is removed.
		defer func() { endOrphans(); removeAll(w.base) }()
	}
	if err != nil {
		res.Problem = "cannot prepare the temporary repository: " + err.Error()
		if ctx.Err() != nil {
			res.Problem = stopped(fmt.Sprintf("the %v of --timeout ran out while the temporary repository was prepared", o.Timeout))
		}
		return res
	}
	probeTimeout := o.ProbeTimeout
	if probeTimeout <= 0 {
		probeTimeout = VersionTimeout
	}
	var unknown string
	if res.Version, unknown = version(ctx, c, bin, w.home, probeTimeout); res.Version == "" {
		res.Problem = "version unknown: " + unknown + "; acc records proofs per exact version"
		if ctx.Err() != nil {
			// --timeout, not the probe's own bound, ended the question.
			res.Problem = stopped(fmt.Sprintf("version unknown: the %v of --timeout ran out before `%s --version` answered", o.Timeout, bin))
		}
		return res
	}
	o.say("%s %s (%s): certifying in %s", id, res.Version, bin, w.base)
	st := &state{proofs: map[string]Proof{}, endProvenElsewhere: c.SessionEnd == "" && builtInSessionEnd(o, id, res.Version)}
	if err := trialRecord(o, id, res.Version, bin, w.data); err != nil {
		st.set("attach", false, "cannot prepare the temporary data home: "+err.Error())
		st.envFault = true
	}
	res.Ran = play(ctx, o, c, bin, w, st)
	if ctx.Err() != nil {
		res.Problem = stopped(fmt.Sprintf("the client did not finish within %v", o.Timeout))
	}
	for _, name := range Capabilities {
		p, ok := st.proofs[name]
		if !ok {
			p = Proof{Capability: name, Why: "not reached"}
			if res.Problem != "" {
				p.Why += ": " + res.Problem
			} else if !res.Ran {
				p.Why += ": the client never asked the model"
			}
		}
		res.Proofs = append(res.Proofs, p)
	}
	if !res.Ran {
		if res.Problem == "" {
			res.Problem = "the client never asked the model: it cannot run headless here, or wants a login; nothing recorded"
			if st.output != "" {
				res.Problem += " (it said: " + clip(strings.TrimSpace(st.output)) + ")"
			}
		}
		return res
	}
	if ctx.Err() != nil || st.envFault {
		// Only a run that went to its end is evidence: a timeout, an
		// interruption or a fault of acc's own proves nothing either way.
		return res
	}
	rec := evidence.Record{Binary: bin, Why: map[string]string{}}
	rec.Version = res.Version
	rec.Recorded = time.Now().UTC().Format(time.RFC3339)
	rec.Test = o.Command
	if rec.Test == "" {
		rec.Test = "acc certify --adapter " + id
	}
	for _, p := range res.Proofs {
		rec.Why[p.Capability] = p.Why
		switch p.Capability {
		case "attach":
			rec.Proven.Attach = p.Proven
		case "nextTurn":
			rec.Proven.NextTurn = p.Proven
		case "guardFiles":
			rec.Proven.GuardFiles = p.Proven
		case "guardShell":
			rec.Proven.GuardShell = p.Proven
		case "sessionEnd":
			// A headless run cannot measure a session end the client
			// fires only interactively: the record keeps what acc's
			// own interactive run proved, and says so.
			rec.Proven.SessionEnd = p.Proven || st.endProvenElsewhere
			if !p.Proven && st.endProvenElsewhere {
				rec.Kept = append(rec.Kept, "sessionEnd")
			}
		case "midTurn":
			rec.Proven.MidTurn = p.Proven
		case "endOfTurn":
			rec.Proven.EndOfTurn = p.Proven
		}
	}
	rec.Note = fmt.Sprintf("%s %s at %s, run headless by acc certify against the loopback fake model in a temporary HOME and repository", c.Package, res.Version, bin)
	if st.endProvenElsewhere {
		rec.Note += "; sessionEnd is not measured headless (the client fires none there) and is kept from acc's own interactive run of this version"
	}
	if path, err := evidence.Write(o.DataHome, id, rec); err != nil {
		res.Problem = "cannot write the evidence record: " + err.Error()
	} else {
		res.Evidence = path
	}
	return res
}

// trialRecord writes, in the temporary room's data home only, a record
// for id at version that lets acc-hook attempt mid-turn delivery and the
// end-of-turn hold there: the hooks deliver that way only for a version
// with midTurn and endOfTurn proven (docs/delivery.md), and certify is
// what proves them for a version the built-in evidence does not cover.
// The other capabilities are the built-in evidence's for version, so the
// run behaves as it would on this machine. Whether the client really
// carried what the hooks printed is what play observes; the user's data
// home gets only the record of what was observed.
func trialRecord(o Options, id, version, bin, dataHome string) error {
	rec := evidence.Record{Binary: bin, Why: map[string]string{}}
	if o.Adapter != nil {
		if a := o.Adapter(id); a != nil {
			rec.Proven, _ = adapter.CapabilitiesFor(a, version)
		}
	}
	rec.Version, rec.Recorded, rec.Test = version, time.Now().UTC().Format(time.RFC3339), "acc certify (trial, temporary data home)"
	rec.Proven.MidTurn, rec.Proven.EndOfTurn = true, true
	rec.Why["midTurn"] = "a trial: the hooks attempt it so that certify can observe it"
	rec.Why["endOfTurn"] = rec.Why["midTurn"]
	_, err := evidence.Write(dataHome, id, rec)
	return err
}

// Peer names used in the temporary room.
const peerName = "certify-peer"

func participantOf(id string) string { return "certify-" + id }

// play runs the client twice (see the package comment), filling st, and
// reports whether the client asked the model at all.
func play(ctx context.Context, o Options, c realclient.Client, bin string, w *world, st *state) bool {
	// The other session: in the second worktree, holding src/a.go.
	room, err := core.Open(ctx, core.OpenOptions{Cwd: w.wt, Getenv: w.env})
	if err != nil {
		st.set("attach", false, "cannot open the temporary room: "+protocol.AsError(wording.CLIError(err)).Message)
		st.envFault = true
		return false
	}
	defer room.Close()
	peer, err := room.Attach(ctx, core.AttachInput{ParticipantID: peerName, Harness: "cli"})
	if err != nil {
		st.set("attach", false, "cannot attach the other session: "+protocol.AsError(wording.CLIError(err)).Message)
		st.envFault = true
		return false
	}
	peerCaller := core.Caller{SessionID: peer.SessionID, Generation: peer.Generation}
	if _, err := room.Claim(ctx, core.ClaimInput{Caller: peerCaller, Resource: "file:src/a.go", Cwd: w.wt, Enforcement: protocol.EnforcementGuarded}); err != nil {
		st.set("guardFiles", false, "cannot claim src/a.go for the other session: "+protocol.AsError(wording.CLIError(err)).Message)
		st.envFault = true
	}

	model, err := fakemodel.Start(fakemodel.Config{})
	if err != nil {
		st.set("attach", false, "cannot start the fake model: "+err.Error())
		st.envFault = true
		return false
	}
	defer model.Close()
	// acc-hook runs behind a small wrapper that logs each event it was
	// called for and what it answered (hooks.log), so a proof rests on the
	// hook having run, not on what the client says.
	hooks := &hookLog{path: filepath.Join(w.base, "hooks.log"), after: filepath.Join(w.base, "after-session-start"), starts: startEvents(c)}
	wrapper, err := hooks.writeWrapper(w.base, o.Hook)
	if err != nil {
		st.set("attach", false, "cannot write the hook wrapper: "+err.Error())
		st.envFault = true
		return false
	}
	setup := realclient.Setup{
		Client: c, Exe: bin, Home: w.home, Dir: w.repo, ModelURL: model.URL(),
		Install: &realclient.Install{Acc: o.Acc, DataHome: filepath.Join(w.base, "install-data"), HookBinary: wrapper},
		Env: []string{workspace.EnvDataHome + "=" + w.data, "ACC_PARTICIPANT=" + participantOf(c.Name),
			"PATH=" + filepath.Dir(o.Acc) + string(os.PathListSeparator) + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")},
	}
	if err := setup.Configure(); err != nil {
		st.set("attach", false, "cannot configure the client in the temporary HOME: "+err.Error())
		st.envFault = true
		return false
	}
	if _, err := setup.InstallAcc(ctx); err != nil {
		st.set("attach", false, "acc install into the temporary HOME failed: "+err.Error())
		st.envFault = true
		return false
	}

	abs := filepath.Join(w.repo, "src", "a.go")
	before, _ := os.Stat(abs)
	// Unchanged: the same bytes, and never written (a write put back
	// before the end still moves the modification time).
	unchanged := func() bool {
		b, err := os.ReadFile(abs)
		now, serr := os.Stat(abs)
		return err == nil && serr == nil && before != nil && string(b) == original && now.ModTime().Equal(before.ModTime())
	}
	denied := "is claimed by " + peerName
	var prev *fakemodel.Request
	// result is the output of the call the previous reply made: matched
	// by call id, or (for a client that gives none) the one result this
	// request has that the previous did not. Never an older result.
	result := func(req *fakemodel.Request) string {
		results := req.ToolResults()
		if prev == nil {
			return ""
		}
		for _, r := range results {
			if r.CallID != "" && slices.Contains(prev.CallIDs, r.CallID) {
				return r.Output
			}
		}
		if n := len(prev.ToolResults()); len(results) == n+1 && results[n].CallID == "" {
			return results[n].Output
		}
		return ""
	}
	step := func(f func(req *fakemodel.Request) fakemodel.Reply) fakemodel.Reply {
		return fakemodel.Reply{Build: func(req *fakemodel.Request) (fakemodel.Reply, error) {
			st.mu.Lock()
			st.calls++
			st.mu.Unlock()
			r := f(req)
			prev = req
			return r, nil
		}}
	}
	judge := func(name, tool string) func(req *fakemodel.Request) {
		return func(req *fakemodel.Request) {
			out := result(req)
			denials := hooks.count(c.PreTool, denied)
			switch {
			case denials <= hooks.seenDenials:
				st.set(name, false, "acc-hook's "+c.PreTool+" hook did not deny the "+tool+" call (it was not run for it)")
			case !unchanged():
				st.set(name, false, "the "+tool+" wrote the claimed file src/a.go")
			case out == "":
				st.set(name, false, "the "+tool+" call came back with no result of its own")
			case !strings.Contains(out, denied):
				st.set(name, false, "the file stayed, but the model was not told the claim's holder (tool result: "+clip(out)+")")
			default:
				st.set(name, true, "acc-hook's "+c.PreTool+" hook denied the "+tool+", the file was not written, and the model was told who holds it")
			}
			hooks.seenDenials = denials
		}
	}
	// Run 1: attach, the file tool, the shell.
	attachCheck := func(req *fakemodel.Request) {
		owner := ownerPattern.FindStringSubmatch(string(req.Body))
		s, err := room.Status(ctx, core.StatusQuery{})
		live := false
		if err == nil {
			for _, p := range s.Participants {
				live = live || p.Harness == c.Name && p.Presence != core.PresenceOffline
			}
		}
		// The session line comes with the session start hook's answer, or,
		// for a client that shows the model only the before-turn hook's
		// (Kimi Code), with that one.
		lineHook := c.SessionStart
		if hooks.count(c.SessionStart, "acc: --session ") == 0 && hooks.count(c.BeforeTurn, "acc: --session ") > 0 {
			lineHook = c.BeforeTurn
		}
		switch {
		case hooks.count(c.SessionStart, "") == 0:
			st.set("attach", false, "acc-hook's "+c.SessionStart+" hook did not run")
		case hooks.count(lineHook, "acc: --session ") == 0:
			st.set("attach", false, "acc-hook's "+c.SessionStart+" and "+c.BeforeTurn+" hooks printed no session line")
		case owner == nil:
			st.set("attach", false, "the model's first request shows no acc session line: what the session start hook printed did not reach the model")
		case !live:
			st.set("attach", false, "the model saw a session line, but no session of "+c.Name+" is live in the room")
		case lineHook != c.SessionStart:
			st.set("attach", true, "acc-hook's "+c.SessionStart+" hook attached a live session, and the session line its "+lineHook+" hook printed reached the model")
		default:
			st.set("attach", true, "acc-hook's "+c.SessionStart+" hook attached a live session, and its session line reached the model")
		}
	}
	var script fakemodel.Script
	first := true
	for _, call := range fileSteps(c, abs) {
		call := call
		isFirst := first
		first = false
		script = append(script, step(func(req *fakemodel.Request) fakemodel.Reply {
			if isFirst {
				attachCheck(req)
			}
			return fakemodel.Run(call)
		}))
	}
	script = append(script,
		step(func(req *fakemodel.Request) fakemodel.Reply {
			judge("guardFiles", "file tool")(req)
			return fakemodel.Run(fakemodel.Shell("echo certify > src/a.go"))
		}),
		step(func(req *fakemodel.Request) fakemodel.Reply {
			judge("guardShell", "shell")(req)
			return fakemodel.Say("Done.")
		}),
	)
	model.Append(script...)
	o.say("  run 1: attach, file guard, shell guard")
	res1, err := setup.Run(ctx, "acc certify: edit src/a.go")
	endOrphans()
	if err != nil || res1.ExitCode != 0 {
		o.say("  run 1 ended: %s", ended(res1, err))
	}
	st.mu.Lock()
	asked := st.calls > 0
	st.output = res1.Stdout + "\n" + res1.Stderr
	st.mu.Unlock()
	if !asked {
		return false
	}
	if ctx.Err() != nil {
		return true // out of time: what is not proven was not reached
	}
	// The file must still be as it was once the client is gone: a client
	// that reports the deny but writes anyway is not guarded.
	if !unchanged() {
		for _, name := range []string{"guardFiles", "guardShell"} {
			if p := st.proofs[name]; p.Proven {
				st.set(name, false, "the model was told of the deny, but src/a.go was changed by the end of the run")
			}
		}
	}
	// sessionEnd: the client has exited; its sessions must be closed.
	if s, err := room.Status(ctx, core.StatusQuery{All: true}); err != nil {
		st.set("sessionEnd", false, "cannot read the room: "+protocol.AsError(wording.CLIError(err)).Message)
	} else {
		open, seen := 0, 0
		for _, p := range s.Participants {
			if p.Harness == c.Name {
				seen++
				if p.State == protocol.SessionOpen {
					open++
				}
			}
		}
		switch {
		case seen == 0:
			st.set("sessionEnd", false, "no session of the client ever joined the room")
		case open > 0:
			st.set("sessionEnd", false, sessionStillOpen(c, st.endProvenElsewhere))
		case hooks.count(c.SessionEnd, "") == 0:
			st.set("sessionEnd", false, "the session is closed, but acc-hook's "+c.SessionEnd+" hook never ran")
		default:
			st.set("sessionEnd", true, "acc-hook's "+c.SessionEnd+" hook closed the session when the client exited")
		}
	}

	// Run 2: a peer's question sent once the session has started — by the
	// hook wrapper, right after the session start hook answered — so only
	// the before-turn hook can bring it to the model.
	if _, err := room.Status(ctx, core.StatusQuery{Participant: participantOf(c.Name)}); err != nil {
		st.set("nextTurn", false, "cannot read the room: "+protocol.AsError(wording.CLIError(err)).Message)
		return true
	}
	sendCmd := fmt.Sprintf("%s message --cwd %s --session %s --generation %s --to %s --type question --subject certify --body 'Which port? CERTIFY_QUESTION_MARK' --json > %s 2>&1",
		shellQuote(o.Acc), shellQuote(w.wt), peerCaller.SessionID, peerCaller.Generation, participantOf(c.Name), shellQuote(hooks.after+".out"))
	err = os.WriteFile(hooks.after+".starts", []byte(strconv.Itoa(hooks.countStarts())+"\n"), 0o644)
	if err == nil {
		err = os.WriteFile(hooks.after, []byte(sendCmd+"\n"), 0o644)
	}
	if err != nil {
		st.set("nextTurn", false, "cannot prepare the peer's question: "+err.Error())
		st.envFault = true
		return true
	}
	idOf := func() string {
		b, _ := os.ReadFile(hooks.after + ".out")
		m := regexp.MustCompile(`"messageId":\s*"(message_[A-Za-z0-9_-]+)"`).FindSubmatch(b)
		if m == nil {
			return ""
		}
		return string(m[1])
	}
	// framedIn reports whether req shows message id inside an untrusted
	// peer frame.
	framedIn := func(req *fakemodel.Request, id string) bool {
		for _, s := range req.Strings() {
			if i := strings.Index(s, core.PeerFence+"\n"+core.PeerLabel+"\n"); i >= 0 && strings.Contains(s[i:], "messageId: "+id+"\n") {
				return true
			}
		}
		return false
	}
	receipt := func(id string) string {
		if v, err := room.Sync(ctx, core.SyncQuery{Scope: core.SyncScopeHistory, MessageID: id}); err == nil && v.Message != nil {
			for _, rc := range v.Message.Receipts {
				if rc.RecipientParticipantID == participantOf(c.Name) {
					return rc.State
				}
			}
		}
		return ""
	}
	// ask has the other session send the client's participant a question.
	ask := func(capability, mark string) string {
		res, err := room.Send(ctx, core.SendInput{Caller: peerCaller, To: []string{participantOf(c.Name)}, Kind: protocol.KindQuestion,
			Subject: "certify " + capability, Body: "Which branch? " + mark})
		if e := protocol.AsError(err); e != nil && e.Reason == protocol.ReasonUnknownRecipient {
			// The client's session never joined the room: its failure.
			st.set(capability, false, "the client's session is not in the room, so no question could reach it")
			return ""
		} else if err != nil {
			st.set(capability, false, "the other session could not send its question: "+protocol.AsError(wording.CLIError(e)).Message)
			st.mu.Lock()
			st.envFault = true
			st.mu.Unlock()
			return ""
		}
		return res.Message.MessageID
	}
	// replyTo is the model answering a question the way an agent does,
	// with `acc reply` as the session its request names, so that at the
	// turn's end only the last question is owed. Without an owner line it
	// runs a harmless step instead.
	replyTo := func(req *fakemodel.Request, id string) fakemodel.Call {
		owner := ownerPattern.FindStringSubmatch(string(req.Body))
		if owner == nil || id == "" {
			return fakemodel.Shell("echo certify step")
		}
		return fakemodel.Shell(fmt.Sprintf("%s reply --session %s --generation %s --message %s --body 'certify answer'",
			shellQuote(o.Acc), owner[1], owner[2], id))
	}
	var midID, endID string
	model.Append(
		step(func(req *fakemodel.Request) fakemodel.Reply {
			id := idOf()
			if id == "" {
				st.set("nextTurn", false, "the question was not sent after the session started: acc-hook's "+c.SessionStart+" hook did not run in the second run")
				return fakemodel.Run(fakemodel.Shell("echo certify step 1"))
			}
			framed := false
			for _, s := range req.Strings() {
				if i := strings.Index(s, core.PeerFence+"\n"+core.PeerLabel+"\n"); i >= 0 && strings.Contains(s[i:], "messageId: "+id) && strings.Contains(s[i:], "CERTIFY_QUESTION_MARK") {
					framed = true
				}
			}
			state := receipt(id)
			switch {
			case hooks.count(c.BeforeTurn, id) == 0:
				st.set("nextTurn", false, "acc-hook's "+c.BeforeTurn+" hook did not carry the question sent after the session started")
			case !framed:
				st.set("nextTurn", false, "the model's next request does not show the other session's question in an untrusted peer frame")
			case state != protocol.ReceiptOffered:
				st.set("nextTurn", false, "the question reached the model, but its receipt is "+state+", not offered")
			default:
				st.set("nextTurn", true, "a question sent after the session started came with acc-hook's "+c.BeforeTurn+" hook into the model's next request, framed as untrusted peer content, and its receipt was offered")
			}
			return fakemodel.Run(replyTo(req, id))
		}),
		// Between two tool calls: a question for the post-tool hook.
		step(func(req *fakemodel.Request) fakemodel.Reply {
			midID = ask("midTurn", "CERTIFY_MIDTURN_MARK")
			return fakemodel.Run(fakemodel.Shell("echo certify step 1"))
		}),
		step(func(req *fakemodel.Request) fakemodel.Reply {
			if midID != "" {
				state := receipt(midID)
				switch {
				case c.PostTool == "" || c.PostToolUnawaited || hooks.count(c.PostTool, midID) == 0:
					st.set("midTurn", false, midTurnNotCarried(c))
				case !framedIn(req, midID):
					st.set("midTurn", false, "acc-hook's "+c.PostTool+" hook printed the question, but the model's request after the tool result does not show it framed: the client drops post-tool context")
				case state != protocol.ReceiptOffered:
					st.set("midTurn", false, "the question reached the model after the tool result, but its receipt is "+state+", not offered")
				default:
					st.set("midTurn", true, "a question sent between two tool calls came with acc-hook's "+c.PostTool+" hook into the model's request after the next tool result, framed, and its receipt was offered")
				}
			}
			return fakemodel.Run(replyTo(req, midID))
		}),
		step(func(req *fakemodel.Request) fakemodel.Reply {
			// While the model writes its final answer: a question for
			// the stop hook.
			id := ask("endOfTurn", "CERTIFY_ENDOFTURN_MARK")
			st.mu.Lock()
			endID = id
			st.mu.Unlock()
			return fakemodel.Say("Done.")
		}),
		step(func(req *fakemodel.Request) fakemodel.Reply {
			switch {
			case endID == "":
			case c.Stop == "" || hooks.count(c.Stop, endID) == 0:
				st.set("endOfTurn", false, "acc-hook's stop hook did not hold the turn for the question that arrived at its end")
			case !framedIn(req, endID):
				st.set("endOfTurn", false, "the client asked the model again after its stop, but the request does not show the question framed")
			default:
				st.set("endOfTurn", true, "a question that arrived as the turn ended made acc-hook's "+c.Stop+" hook keep the agent working, and the model's next request showed it framed")
			}
			return fakemodel.Say("Answered.")
		}),
	)
	o.say("  run 2: next turn, mid-turn, end of turn")
	res2, err := setup.Run(ctx, "acc certify: anything new?")
	endOrphans()
	if err != nil || res2.ExitCode != 0 {
		o.say("  run 2 ended: %s", ended(res2, err))
	}
	st.mu.Lock()
	_, judged := st.proofs["endOfTurn"]
	endAsked := endID != ""
	st.mu.Unlock()
	if !judged && endAsked && ctx.Err() == nil {
		st.set("endOfTurn", false, "the client stopped with a question unanswered: its stop hook did not keep it working (acc-hook's "+c.Stop+" hook held it "+fmt.Sprint(hooks.count(c.Stop, endID))+" times)")
	}
	return true
}

var ownerPattern = regexp.MustCompile(`acc: --session (session_[A-Za-z0-9_-]+) --generation (generation_[A-Za-z0-9_-]+)`)

// sessionStillOpen is why sessionEnd is not proven when the client exited
// with its session open: its session end hook did not run, and for a
// client that fires none in a headless run (Kimi Code under kimi -p,
// docs/adapters.md#kimi-code) that is to be expected. provenElsewhere
// says acc's own interactive run proved the version's session end
// (state.endProvenElsewhere), which the record keeps.
func sessionStillOpen(c realclient.Client, provenElsewhere bool) string {
	if c.SessionEnd == "" {
		why := "the client exited, but its session is still open: its session end hook did not run (the client fires none in a headless run)"
		if provenElsewhere {
			why += "; acc's own interactive run proved it for this version, and the record keeps that"
		}
		return why
	}
	return "the client exited, but its session is still open: its session end hook did not run"
}

// builtInSessionEnd is whether the evidence built into acc proves the
// session end of adapter id at version: for a client that fires none
// headless, acc's own interactive run (docs/adapters.md#kimi-code).
func builtInSessionEnd(o Options, id, version string) bool {
	if o.Adapter == nil {
		return false
	}
	a := o.Adapter(id)
	if a == nil {
		return false
	}
	caps, _ := adapter.CapabilitiesFor(a, version)
	return caps.SessionEnd
}

// midTurnNotCarried is why midTurn is not proven when no post-tool hook
// carried the question. A client that starts its post-tool hook without
// waiting for it (Kimi Code) gets no such hook from acc install, so
// nothing can reach its model between two tool calls
// (docs/adapters.md#kimi-code).
func midTurnNotCarried(c realclient.Client) string {
	if c.PostToolUnawaited {
		return "the client starts its " + c.PostTool + " hook without waiting for it, so acc installs none and nothing reaches the model between two tool calls"
	}
	return "acc-hook's post-tool hook did not carry the question sent between two tool calls"
}

// fileSteps are the calls of the client's own file-writing tool that
// replace src/a.go: Claude Code reads a file before it writes it; Codex
// edits files with apply_patch, run through its shell tool.
func fileSteps(c realclient.Client, abs string) []fakemodel.Call {
	switch c.Name {
	case "claude":
		return []fakemodel.Call{fakemodel.Tool("Read", map[string]any{"file_path": abs}), fakemodel.Write(abs, "package hacked\n")}
	case "codex":
		return []fakemodel.Call{fakemodel.Shell("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.go\n@@\n-package a\n+package hacked\n*** End Patch\nEOF\n")}
	}
	return []fakemodel.Call{fakemodel.Write(abs, "package hacked\n")}
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// removeAll removes dir, again for a moment while a process of the client
// that was just killed may still write into it.
func removeAll(dir string) {
	for range 20 {
		_ = os.RemoveAll(dir)
		time.Sleep(50 * time.Millisecond)
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return
		}
	}
}

// gitEnv is the environment of certify's own git commands: the process's,
// without any GIT_* variable (run from a git hook, GIT_DIR would point
// into the user's repository) and with no user or system configuration.
func gitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// ended says how a client run ended, for the progress lines.
func ended(res realclient.Result, err error) string {
	if err != nil {
		return "stopped (time ran out or interrupted)"
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}

// hookLog is the log the hook wrapper keeps: one line per hook call, the
// event and what acc-hook printed (base64).
type hookLog struct {
	path  string
	after string // a command the wrapper runs once: after the session start hook, or before a hook that overtook it
	// starts are the client's names for the event that starts a session
	// (startEvents): the command in after waits for one of them.
	starts []string
	// seenDenials counts the pre-tool denials already used by a proof.
	seenDenials int
}

// writeWrapper writes the wrapper that runs hook and logs each call; a
// call of one of h.starts is a session start.
func (h *hookLog) writeWrapper(dir, hook string) (string, error) {
	if len(h.starts) == 0 {
		return "", errors.New("the client has no session start event")
	}
	path := filepath.Join(dir, "acc-hook-logged")
	errFile := filepath.Join(dir, "hook-stderr")
	// The command waiting in h.after runs once, after the session start
	// hook answered: only the next hook may bring its question. Copilot
	// CLI starts its SessionStart and UserPromptSubmit hooks together, so
	// any other hook first waits (at most 10 s) for session start to be
	// logged for this run, then takes the command itself if it is still waiting (mv
	// claims it: two hooks never both run it), or waits (at most 10 s)
	// until the hook that took it has sent the question (.done).
	a := shellQuote(h.after)
	run := "if mv " + a + " " + a + ".$$ 2>/dev/null; then sh " + a + ".$$; : > " + a + ".done; rm -f " + a + ".$$; fi"
	// Session start has answered when the log holds more of its calls
	// than when the command was written (.starts; the log keeps every run's).
	var names, patterns []string
	for _, ev := range h.starts {
		names = append(names, "-e "+shellQuote(ev))
		patterns = append(patterns, shellQuote(ev))
	}
	countStarts := "cut -f1 " + shellQuote(h.path) + " 2>/dev/null | grep -cxF " + strings.Join(names, " ")
	waitStart := "n=$(cat " + a + ".starts 2>/dev/null); i=0; while c=$(" + countStarts + "); [ \"${c:-0}\" -le \"${n:-0}\" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done"
	waitSent := "if ls " + a + ".[0-9]* >/dev/null 2>&1; then i=0; while [ ! -f " + a + ".done ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; fi"
	script := "#!/bin/sh\n" +
		"# acc certify: run acc-hook, and log the event and its answer (stdout and stderr)\n" +
		"case \"$2\" in " + strings.Join(patterns, "|") + ") start=1 ;; *) start=0 ;; esac\n" +
		"if [ $start = 0 ]; then\n" +
		"  if [ -f " + a + " ]; then " + waitStart + "; " + run + "; fi\n" +
		"  " + waitSent + "\n" +
		"fi\n" +
		"errf=" + shellQuote(errFile) + ".$$\n" +
		"out=$(" + shellQuote(hook) + " \"$@\" 2>\"$errf\"); code=$?\n" +
		"err=$(cat \"$errf\"); rm -f \"$errf\"\n" +
		"printf '%s\\t%s\\n' \"$2\" \"$(printf '%s\\n%s' \"$out\" \"$err\" | base64 | tr -d '\\n')\" >> " + shellQuote(h.path) + "\n" +
		"[ -z \"$out\" ] || printf '%s\\n' \"$out\"\n" +
		"[ -z \"$err\" ] || printf '%s\\n' \"$err\" >&2\n" +
		"[ $start = 0 ] || { " + run + "; }\n" +
		"exit $code\n"
	return path, os.WriteFile(path, []byte(script), 0o755)
}

// startEvents are c's names for the event that starts a session: its
// session start, and the start of a resumed session where that has a name
// of its own (OpenCode's session.resumed). Claude Code calls it
// SessionStart, OpenCode session.created, Pi session_start.
func startEvents(c realclient.Client) []string {
	if r := c.Resumed(); r != c.SessionStart {
		return []string{c.SessionStart, r}
	}
	return []string{c.SessionStart}
}

// countStarts is how many session starts (starts) the log holds.
func (h *hookLog) countStarts() int {
	n := 0
	for _, ev := range h.starts {
		n += h.count(ev, "")
	}
	return n
}

// count is how many logged calls of event printed something containing
// text ("" counts every call of the event).
func (h *hookLog) count(event, text string) int {
	b, err := os.ReadFile(h.path)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		ev, enc, ok := strings.Cut(line, "\t")
		if !ok || ev != event {
			continue
		}
		out, _ := base64.StdEncoding.DecodeString(enc)
		if text == "" || strings.Contains(string(out), text) {
			n++
		}
	}
	return n
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
