// Package mcpserver is acc-mcp, the MCP stdio server (docs/mcp.md) on github.com/modelcontextprotocol/go-sdk, behind a small
// prefilter (wire.go). Identity comes only from the launch configuration:
// ACC_MCP_PARTICIPANT and ACC_MCP_WORKSPACE (docs/decisions.md#19-workspace-config). Every tool
// calls the same pkg/core operation as the CLI.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/acc-go/acc/internal/buildinfo"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Launch variables (docs/mcp.md#registering-it).
const (
	EnvParticipant = "ACC_MCP_PARTICIPANT"
	EnvWorkspace   = "ACC_MCP_WORKSPACE"

	defaultParticipant = "mcp"
)

// storeWait bounds one call's wait for a busy store, as the CLI does (a
// variable so that tests can shorten it).
var storeWait = 5 * time.Second

// Version is reported as serverInfo.version: the package version (docs/mcp.md#registering-it),
// the same as `acc version` prints.
var Version = buildinfo.Version()

// Config is the launch configuration.
type Config struct {
	Participant string
	// Dir is the directory the workspace is discovered from (absolute).
	Dir    string
	Getenv func(string) string
	// Now is the clock every call's room reads; nil means time.Now. Tests
	// hold it still to show that a call wrote nothing but what the time
	// changes (annotations_test.go).
	Now func() time.Time
}

// ConfigFromEnv reads the launch configuration (docs/mcp.md#registering-it): the participant from
// ACC_MCP_PARTICIPANT (default mcp, sanitised like ACC_PARTICIPANT), the
// directory from ACC_MCP_WORKSPACE (absolute) else wd. Errors are exit 2.
func ConfigFromEnv(getenv func(string) string, wd string) (*Config, error) {
	cfg := &Config{Participant: defaultParticipant, Dir: wd, Getenv: getenv}
	if v := getenv(EnvParticipant); v != "" {
		cfg.Participant = protocol.SanitiseParticipantID(v)
		if cfg.Participant == "" {
			return nil, protocol.Errorf(protocol.ReasonEnvInvalid, "%s %q leaves no usable participant id (letters, digits, . _ -)", EnvParticipant, v).With("variable", EnvParticipant)
		}
	}
	if v := getenv(EnvWorkspace); v != "" {
		if !filepath.IsAbs(v) {
			return nil, protocol.Errorf(protocol.ReasonPathNotAbsolute, "%s must be an absolute directory, not %q", EnvWorkspace, v).With("variable", EnvWorkspace)
		}
		cfg.Dir = filepath.Clean(v)
	}
	return cfg, nil
}

// Main runs acc-mcp over stdin and stdout and returns its exit code: 2 for
// any argument or an unusable launch variable, 0 at the end of input.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "acc-mcp: takes no arguments (got %s); set %s (default mcp) and %s (an absolute directory) instead\n",
			strings.Join(args, " "), EnvParticipant, EnvWorkspace)
		return 2
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "acc-mcp: cannot read the working directory (%v); set %s\n", err, EnvWorkspace)
		return 2
	}
	cfg, err := ConfigFromEnv(os.Getenv, wd)
	if err != nil {
		fmt.Fprintf(stderr, "acc-mcp: %v\n", err)
		return 2
	}
	if err := Serve(context.Background(), cfg, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "acc-mcp: %v\n", err)
		return 1
	}
	return 0
}

// Serve runs one connection over r and w until the end of input, and
// answers every request it took before it returns. The acc session is left
// open, bound to the launch configuration: the next server started with it
// resumes the same session (docs/mcp.md#sessions, docs/mcp.md#conformance item 7), and while none runs the
// session shows offline, since its recorded pid (this process) is gone. An
// MCP session declares no session-end capability (docs/mcp.md#protocol-revisions); acc_finish ends it.
func Serve(ctx context.Context, cfg *Config, r io.Reader, w, logw io.Writer) error {
	s := &server{cfg: cfg, logw: logw, life: ctx}
	srv := s.newMCPServer()
	m := newMux(w)
	legacy, err := srv.Connect(ctx, connTransport{m.legacy}, nil)
	if err != nil {
		return err
	}
	modern, err := srv.Connect(ctx, connTransport{m.modern}, nil)
	if err != nil {
		legacy.Close()
		return err
	}
	go m.readLoop(r)
	stop := context.AfterFunc(ctx, func() { legacy.Close(); modern.Close() })
	keep, cancelKeep := context.WithCancel(ctx)
	s.life = keep
	go s.keepPresence(keep)
	errL, errM := legacy.Wait(), modern.Wait()
	cancelKeep()
	stop()
	for _, e := range []error{ctx.Err(), errL, errM} {
		if e != nil && e != io.EOF {
			return e
		}
	}
	return nil
}

// server holds one connection's acc session.
type server struct {
	cfg  *Config
	logw io.Writer
	// mu serialises tool calls and resource reads: the SDK handles requests
	// concurrently, and one connection owns one session.
	mu     sync.Mutex
	caller *core.Caller

	srv *mcp.Server
	// stopWatch ends the watch that serves the acc://inbox subscription
	// (nil when there is none).
	subMu     sync.Mutex
	stopWatch context.CancelFunc
	// stopRoster ends the watch that serves the acc://roster subscription
	// (nil when there is none; roster.go).
	stopRoster context.CancelFunc
	// life ends with the connection.
	life context.Context
}

func (s *server) logf(format string, a ...any) {
	if s.logw != nil {
		fmt.Fprintf(s.logw, "acc-mcp: "+format+"\n", a...)
	}
}

func (s *server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: serverName, Version: Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
		// acc://inbox and acc://roster can be subscribed to (2025
		// revisions): the server then sends notifications/resources/updated
		// when something arrives for its participant (inbox.go), or a
		// session joins or leaves the roster or its presence or turn
		// activity changes (roster.go).
		SubscribeHandler:          s.subscribe,
		UnsubscribeHandler:        s.unsubscribe,
		SupportedProtocolVersions: supportedVersions,
		// Cache hints on modern results: nothing acc-mcp lists is cached
		// across callers or over time (docs/mcp.md#protocol-revisions; legacy results drop them, wire.go).
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs, c.CacheScope = 0, "private" },
	})
	known := map[string]bool{}
	for _, mk := range registry {
		t := mk()
		known[t.def.Name] = true
		srv.AddTool(t.listing(), s.handler(t))
	}
	for _, res := range s.resources() {
		srv.AddResource(res.def, res.read)
	}
	s.srv = srv
	// An unknown tool is a tool result, not a protocol error (docs/mcp.md#tools, docs/mcp.md#wire-details).
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ct, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && !known[ct.Params.Name] {
				if ct.Params.Name == "" {
					return errorResult("tools/call", protocol.Errorf(protocol.ReasonUnknownTool, "params.name is required: the tool to call (tools/list lists them)")), nil
				}
				return errorResult(ct.Params.Name, protocol.Errorf(protocol.ReasonUnknownTool, "unknown tool: %s", ct.Params.Name)), nil
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// listing is the tool as tools/list shows it: the schema in its listed
// shape and the annotations of its effect.
func (t tool) listing() *mcp.Tool {
	listed := *t.def
	listed.InputSchema = listedSchema(t.def.InputSchema.(*schemaT))
	listed.Annotations = t.effect.annotations()
	return &listed
}

// listedSchema is a tool's input schema as tools/list shows it: the
// literal shape, which always carries "required" ([] when nothing is),
// where jsonschema-go leaves an empty list out.
func listedSchema(schema *schemaT) json.RawMessage {
	b, err := json.Marshal(schema)
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	if _, ok := m["required"]; !ok {
		m["required"] = json.RawMessage("[]")
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out
}

// openOptions are how this server opens its room: the workspace from
// ACC_MCP_WORKSPACE (else the launch directory) only, with ACC_WORKSPACE_ROOT
// hidden from discovery (docs/decisions.md#19-workspace-config); the store created when create.
func (s *server) openOptions(create bool) core.OpenOptions {
	getenv := func(k string) string {
		if k == "ACC_WORKSPACE_ROOT" {
			return ""
		}
		return s.cfg.Getenv(k)
	}
	return core.OpenOptions{Cwd: s.cfg.Dir, Getenv: getenv, NoCreate: !create, ReadInstall: install.ReadPolicies}
}

// open opens the room for one call, as the CLI does for one command. The
// workspace comes from ACC_MCP_WORKSPACE (else the launch directory) only:
// ACC_WORKSPACE_ROOT, the CLI's override, is hidden from discovery, so it
// cannot move this server into another room (docs/decisions.md#19-workspace-config).
func (s *server) open(ctx context.Context, create bool, fn func(r *core.Room) error) error {
	r, err := core.Open(ctx, s.openOptions(create))
	if err != nil {
		return err
	}
	defer r.Close()
	if s.cfg.Now != nil {
		r.Now = s.cfg.Now
	}
	return fn(r)
}

// bindingAdapter is the adapter id of acc-mcp's session bindings (docs/mcp.md#sessions).
const bindingAdapter = "mcp"

// bindingID is the client session id acc-mcp binds its acc session under:
// the participant and the workspace, never anything the client reports, so
// a restarted server with the same configuration resumes the same session
// while it is still open (docs/mcp.md#sessions, docs/mcp.md#conformance item 7).
func (s *server) bindingID(r *core.Room) string {
	return s.cfg.Participant + "@" + r.WS.ID
}

// owner returns the connection's session, resolved on every call through
// the persistent binding (docs/mcp.md#sessions): the bound session is resumed while it is
// open at its bound generation — which refreshes its heartbeat and records
// this server's pid, so a session two servers share stays online while
// either runs — and a new one is opened and bound when it is not (finished
// by acc_finish, here or in another server). heartbeat false (acc_finish)
// looks the binding up without touching the session first, and finishes
// that exact generation when it is current; with none current, a new
// session is opened to carry the handoff.
func (s *server) owner(ctx context.Context, r *core.Room, heartbeat bool) (core.Caller, error) {
	if !heartbeat {
		c, err := r.HookCaller(ctx, bindingAdapter, s.bindingID(r))
		if err != nil {
			return core.Caller{}, err
		}
		if c != nil {
			s.caller = c
			return *c, nil
		}
	}
	res, err := r.HookAttach(ctx, core.HookAttachInput{Adapter: bindingAdapter, ClientSessionID: s.bindingID(r),
		Participant: s.cfg.Participant, PID: os.Getpid(),
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManual,
		Capabilities: &protocol.DeclaredCapabilities{}}) // the floor of docs/mcp.md#protocol-revisions: nothing
	if err != nil {
		return core.Caller{}, err
	}
	if s.caller != nil && s.caller.SessionID != res.Caller.SessionID {
		s.logf("session %s ended elsewhere; now %s", s.caller.SessionID, res.Caller.SessionID)
	}
	s.caller = &res.Caller
	return *s.caller, nil
}

// presenceEvery is how often a server looks at the session it shares.
var presenceEvery = 3 * time.Second

// keepPresence keeps a session that several servers of one participant
// share online while any of them runs: the session records one pid (the
// last server to resolve it), so when that server exits, another one that
// is still running records its own pid instead, within presenceEvery. It
// reads only, and writes only when the recorded process is gone.
//
// The look runs on one room opened for the loop (opening one runs git and
// opens the store: not work to repeat every few seconds); only a gone
// process takes the server's lock and a call's own room.
func (s *server) keepPresence(ctx context.Context) {
	t := time.NewTicker(presenceEvery)
	defer t.Stop()
	var room *core.Room
	defer func() {
		if room != nil {
			room.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		caller := s.caller
		s.mu.Unlock()
		if caller == nil {
			continue // nothing attached yet, so no store to open either
		}
		if room == nil {
			r, err := s.watchRoom(ctx)
			if err != nil {
				continue
			}
			room = r
		}
		c, cancel := context.WithTimeout(ctx, storeWait)
		gone, err := room.SessionProcessGone(c, caller.SessionID)
		cancel()
		if err != nil {
			room.Close() // looked at afresh next time
			room = nil
			continue
		}
		if !gone {
			continue
		}
		s.mu.Lock()
		if s.caller != nil {
			c, cancel := context.WithTimeout(ctx, storeWait)
			_ = s.open(c, false, func(r *core.Room) error {
				gone, err := r.SessionProcessGone(c, s.caller.SessionID)
				if err != nil || !gone {
					return err
				}
				_, err = s.owner(c, r, true)
				return err
			})
			cancel()
		}
		s.mu.Unlock()
	}
}

// handler wraps a tool: validation first (no session is resolved for an
// invalid call), then the session, then the core operation.
func (s *server) handler(t tool) mcp.ToolHandler {
	var resolved = mustResolve(t.def)
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		name := t.def.Name
		defer func() {
			if p := recover(); p != nil {
				s.logf("%s: panic: %v\n%s", name, p, debug.Stack())
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error (a bug in acc-mcp; see its stderr)", name)}
			}
		}()
		// The text first, on the bytes as they came (docs/mcp.md): decoding
		// would turn invalid UTF-8 and lone surrogates into U+FFFD, which
		// the CLI refuses, so they are refused here before any decoding.
		if err := checkArgText(req.Params.Arguments); err != nil {
			return errorResult(name, err), nil
		}
		raw, err := checkArgs(t.def.InputSchema.(*schemaT), resolved, req.Params.Arguments)
		if err != nil {
			return errorResult(name, err), nil
		}
		if t.check != nil {
			if err := t.check(raw); err != nil {
				return errorResult(name, renamed(err, t.renames)), nil
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		ctx, cancel := context.WithTimeout(ctx, storeWait)
		defer cancel()
		var out any
		if t.roomCheck != nil {
			// Judged against the workspace, without creating the store: a
			// refused call leaves no trace at all.
			if err := s.open(ctx, false, func(r *core.Room) error { return t.roomCheck(r, s.cfg.Dir, raw) }); err != nil {
				return errorResult(name, err), nil
			}
		}
		err = s.open(ctx, true, func(r *core.Room) error {
			if t.before != nil {
				v, done, err := t.before(ctx, r, s.cfg.Participant, raw)
				if err != nil || done {
					out = v
					return err
				}
			}
			for attempt := 0; ; attempt++ {
				c, err := s.owner(ctx, r, !t.finish)
				if err != nil {
					return err
				}
				out, err = t.run(ctx, &call{room: r, caller: c, dir: s.cfg.Dir}, raw)
				if err != nil && attempt == 0 && sessionGone(err) {
					// Another server of this participant finished the
					// shared session between resolving it and using it:
					// resolve again (a new session) and retry once.
					s.caller = nil
					continue
				}
				if err == nil && t.finish {
					s.caller = nil // finish closed the session
				}
				return err
			}
		})
		if protocol.IsReason(err, protocol.ReasonOutcomeUnknown) {
			err = retryAdvice(name, raw, err)
		}
		if err != nil {
			// Every failure inside a call is a tool result (docs/mcp.md#tools), the
			// store's own included (exit 1, internal); only a panic, a bug,
			// is a protocol error (the recover above).
			if protocol.CodeOf(err) == protocol.ExitInternal {
				s.logf("%s: %v", name, err)
			}
			return errorResult(name, renamed(err, t.renames)), nil
		}
		return okResult(out, isModern(req.Params.GetMeta()))
	}
}

// checkArgText refuses tool arguments holding invalid UTF-8 or a lone
// surrogate escape, naming the argument that holds it
// (protocol.CheckJSONText; invalid_input, as the CLI refuses such text).
func checkArgText(raw json.RawMessage) error {
	if err := protocol.CheckJSONText("arguments", raw); err == nil {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) == nil {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := protocol.CheckJSONText("arguments."+k, args[k]); err != nil {
				return err
			}
		}
	}
	return protocol.CheckJSONText("arguments", raw)
}

// sessionGone reports a refusal that means the resolved session was
// closed or replaced meanwhile.
func sessionGone(err error) bool {
	pe := protocol.AsError(err)
	return pe.Reason == protocol.ReasonSessionNotOpen || pe.Reason == protocol.ReasonStaleGeneration
}

// renamed words a core refusal with the tool's argument names: a message
// starting with core's field name ("subject must not be empty") names the
// argument instead ("arguments.title must not be empty").
func renamed(err error, renames map[string]string) error {
	if len(renames) == 0 {
		return err
	}
	pe := protocol.AsError(err)
	for from, to := range renames {
		if strings.HasPrefix(pe.Message, from+" ") {
			cp := *pe
			cp.Message = "arguments." + to + pe.Message[len(from):]
			if strings.Contains(to, " ") {
				cp.Message = to + pe.Message[len(from):]
			}
			if cp.Details != nil {
				d := map[string]any{}
				for k, v := range cp.Details {
					d[k] = v
				}
				if d["field"] == from {
					d["field"] = to
				}
				cp.Details = d
			}
			return &cp
		}
	}
	return err
}

func isModern(meta map[string]any) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= versionModern
}

// okResult is a success (docs/mcp.md#tools): the pretty JSON as text, and the same value as
// structuredContent unless it is not an object and the caller speaks a
// 2025 revision, which requires an object there (docs/mcp.md#protocol-revisions).
func okResult(v any, modern bool) (*mcp.CallToolResult, error) {
	text, err := protocol.MarshalIndent(v)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	if modern || (len(text) > 0 && text[0] == '{') {
		res.StructuredContent = json.RawMessage(text)
	}
	return res, nil
}

// errorResult is a refusal as a tool result (docs/mcp.md#tools): "<tool>: <message>" as
// text, and the exit-code name and reasonCode in structuredContent. The
// message is in acc-mcp's words: its fields are arguments.<name> and its
// next steps tool calls (docs/mcp.md#refusal-details).
func errorResult(name string, err error) *mcp.CallToolResult {
	pe := protocol.AsError(wording.MCPError(err))
	code := pe.Code()
	details := pe.Details
	if details == nil {
		details = map[string]any{}
	}
	body := map[string]any{"error": map[string]any{
		"tool": name, "code": int(code), "codeName": code.Name(), "reasonCode": pe.Reason,
		"message": pe.Message, "details": details,
	}}
	return &mcp.CallToolResult{IsError: true,
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %s (%s, %s)", name, pe.Message, code.Name(), pe.Reason)}},
		StructuredContent: body}
}
