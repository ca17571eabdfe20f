package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The prefilter: a small mcp.Transport in front of go-sdk v1.8.0 that
// screens every input line before the SDK decodes it, for the differences
// between the SDK and the contract that matter most
// (docs/mcp.md#wire-details):
//
//   - a line that is not JSON, not an object, or not a JSON-RPC 2.0 envelope
//     is answered (-32700, -32600) and the connection carries on, where the
//     SDK would end it (docs/mcp.md#wire-details);
//   - a request whose params is null or a primitive gets -32602 (docs/mcp.md#wire-details);
//   - notifications are never answered; only notifications/initialized
//     reaches the SDK (docs/mcp.md#wire-details);
//   - the legacy handshake is gated as docs/mcp.md#protocol-revisions says: a malformed initialize is
//     -32602 and changes nothing, a second one -32600, a request before
//     initialize -32602, one between initialize and initialized -32600
//     (docs/mcp.md#wire-details);
//   - a request with modern metadata (either reserved _meta key, or
//     server/discover) must carry both keys (-32602) and exactly version
//     2026-07-28 (-32022 with data{supported, requested}) (docs/mcp.md#wire-details).
//
//   - a modern ping is answered {} in the complete envelope, where the SDK
//     says -32601 (docs/mcp.md#wire-details);
//   - legacy and modern requests go to two separate SDK sessions, so a
//     server/discover (or any modern request) never makes a later
//     initialize a duplicate nor leaks modern shaping into legacy results
//     (docs/mcp.md#wire-details);
//   - on the way out, every modern result carries resultType "complete",
//     the unknown-tool isError result a middleware builds included
//     (docs/mcp.md#wire-details), and legacy results lose the SDK's ttlMs/cacheScope, which
//     the 2025 revisions do not define (docs/mcp.md#wire-details). Modern results keep
//     them, set to ttlMs 0 and cacheScope "private" (server.go). A
//     server/discover result also gains accCapabilities, the ACC extension
//     field holding the session's capability floor (docs/mcp.md#protocol-revisions).
//
//   - only the routed methods reach the SDK (initialize, ping,
//     server/discover, tools/list, tools/call, resources/list,
//     resources/read); any other is -32601 "unknown method: <m>" (docs/mcp.md#wire-details);
//   - an initialize is always legacy: it reaches the SDK with the
//     negotiated version and without modern metadata, and one the SDK could
//     not decode is -32602 before it can half-initialize the session;
//   - every request reaches the SDK under a substitute id, and its answer
//     goes out with the client's id exactly as spelled (1.5, 1e2, numbers
//     past int64), which the SDK would round (docs/mcp.md#wire-details);
//   - an error the SDK would send as code 0 goes out as -32603 (docs/mcp.md#wire-details);
//   - at the end of input every answer owed is written before the
//     sessions stop, with no time limit: each handler is bounded itself.
//
// Left to the SDK: concurrent calls may be answered out of order
// (docs/mcp.md#wire-details); clients match replies by id.

const (
	versionModern = "2026-07-28"

	codeParse          = -32700
	codeInvalidReq     = -32600
	codeInvalidArgs    = -32602
	codeMethodNotFound = -32601
	codeUnsupported    = -32022

	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"

	serverName = "agents-can-communicate"
)

// supportedVersions is the revision list acc-mcp serves, newest first.
var supportedVersions = []string{versionModern, "2025-11-25", "2025-06-18"}

type phase int

const (
	phaseUninitialized phase = iota
	phaseInitializing
	phaseReady
)

// mux serves one stdio connection with two SDK sessions behind it: one
// for the legacy era (initialize, then requests without reserved _meta)
// and one for the 2026-07-28 per-request interface. The SDK keeps one
// InitializeParams per session, so a single session would let a modern
// request (server/discover, say) make a later legacy initialize a
// "duplicate" and tag legacy results with resultType (docs/mcp.md#wire-details); with a
// session per era the two never share state. Lines are read and screened
// by one goroutine, so phase needs no lock.
type mux struct {
	wmu   sync.Mutex
	w     io.Writer
	phase phase

	legacy, modern *filterConn

	eof    chan struct{} // closed at the end of input, after every line was taken
	endErr error         // the read error, set before eof is closed

	// pending counts requests handed to the SDK and not answered yet, so
	// the end of input waits for their answers before the SDK shuts down.
	pmu     sync.Mutex
	pending map[string]bool
	waiters []chan struct{} // closed when pending empties
	// discover holds the ids of server/discover requests not answered
	// yet: their results gain accCapabilities on the way out (docs/mcp.md#protocol-revisions).
	discover map[string]bool
	// ids maps the ids given to the SDK back to the client's own.
	ids    map[string]json.RawMessage
	nextID int
}

func newMux(w io.Writer) *mux {
	m := &mux{w: w, eof: make(chan struct{})}
	m.legacy = &filterConn{m: m, msgs: make(chan jsonrpc.Message), done: make(chan struct{})}
	m.modern = &filterConn{m: m, modern: true, msgs: make(chan jsonrpc.Message), done: make(chan struct{})}
	return m
}

// connTransport hands the SDK one of the mux's two connections.
type connTransport struct{ c *filterConn }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// filterConn is one era's connection as the SDK sees it.
type filterConn struct {
	m      *mux
	modern bool
	msgs   chan jsonrpc.Message
	done   chan struct{}
	once   sync.Once
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (m *mux) track(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		m.pmu.Lock()
		if m.pending == nil {
			m.pending = map[string]bool{}
		}
		m.pending[idKey(req.ID)] = true
		m.pmu.Unlock()
	}
}

func (m *mux) answered(msg jsonrpc.Message) {
	if res, ok := msg.(*jsonrpc.Response); ok {
		m.pmu.Lock()
		delete(m.pending, idKey(res.ID))
		if len(m.pending) == 0 {
			for _, w := range m.waiters {
				close(w)
			}
			m.waiters = nil
		}
		m.pmu.Unlock()
	}
}

// drain waits until every request handed to the SDK has been answered.
// Every handler is bounded (a tool call or resource read waits at most
// storeWait for the store), so this ends; cutting it short would drop
// answers the client is owed, and possibly for work already committed.
func (m *mux) drain(done chan struct{}) {
	m.pmu.Lock()
	if len(m.pending) == 0 {
		m.pmu.Unlock()
		return
	}
	ch := make(chan struct{})
	m.waiters = append(m.waiters, ch)
	m.pmu.Unlock()
	select {
	case <-ch:
	case <-done:
	}
}

// readLoop reads lines, answers what the SDK must not see, and hands the
// rest to the session of the request's era.
func (m *mux) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if msg, modern := m.screen(bytes.TrimSpace(line)); msg != nil {
				c := m.legacy
				if modern {
					c = m.modern
				}
				m.track(msg)
				select {
				case c.msgs <- msg:
				case <-c.done:
					m.answered(&jsonrpc.Response{ID: idOf(msg)})
				}
			}
		}
		if err != nil {
			m.endErr = err
			close(m.eof)
			return
		}
	}
}

func idOf(msg jsonrpc.Message) jsonrpc.ID {
	if req, ok := msg.(*jsonrpc.Request); ok {
		return req.ID
	}
	return jsonrpc.ID{}
}

func (c *filterConn) SessionID() string { return "" }

func (c *filterConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *filterConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, mcp.ErrConnectionClosed
	case msg := <-c.msgs:
		return msg, nil
	case <-c.m.eof:
		// Every line was taken before eof closed. The answers still owed
		// (by either session) are written before this session stops.
		c.m.drain(c.done)
		return nil, c.m.endErr
	}
}

func (c *filterConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var origID json.RawMessage
	if res, ok := msg.(*jsonrpc.Response); ok {
		cp := *res
		if res.Error == nil && len(res.Result) > 0 {
			cp.Result = shapeResult(res.Result, c.modern)
			if c.modern && c.m.wasDiscover(res.ID) {
				cp.Result = withAccCapabilities(cp.Result)
			}
		}
		if res.Error != nil {
			// The SDK turns a plain Go error into code 0, which JSON-RPC does
			// not define; such a failure is an internal error (docs/mcp.md#wire-details).
			we := &jsonrpc.Error{Message: res.Error.Error()}
			var inner *jsonrpc.Error
			if errors.As(res.Error, &inner) {
				e := *inner
				we = &e
			}
			if we.Code == 0 {
				we.Code = jsonrpc.CodeInternalError
			}
			cp.Error = we
		}
		origID = c.m.originalID(res.ID)
		msg = &cp
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if origID != nil {
		b = withID(b, origID)
	}
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	err = c.m.writeLine(b)
	c.m.answered(msg)
	return err
}

// forward hands a request to the SDK under a fresh string id, with the
// params keys named in changed taken from params (when params is not nil)
// and every other key exactly as the client's bytes spelled it, so that a
// tool's arguments reach the handler undecoded (invalid UTF-8 and lone
// surrogates are refused there, not turned into U+FFFD here). It
// remembers the client's own id
// exactly as it was spelled (1.5, 1e2, 1E400, a number past int64), which
// the SDK would round, clip or refuse; the answer carries the original
// back (docs/mcp.md#wire-details: the id is echoed).
func (m *mux) forward(raw map[string]json.RawMessage, id json.RawMessage, params map[string]any, changed ...string) *jsonrpc.Request {
	m.pmu.Lock()
	m.nextID++
	sid := fmt.Sprintf("acc-%d", m.nextID)
	m.pmu.Unlock()
	out := make(map[string]json.RawMessage, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	out["id"], _ = json.Marshal(sid)
	if params != nil {
		var keep map[string]json.RawMessage
		if json.Unmarshal(raw["params"], &keep) != nil || keep == nil {
			keep = map[string]json.RawMessage{}
		}
		for _, k := range changed {
			v, ok := params[k]
			if !ok {
				delete(keep, k)
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				m.reply(id, codeInvalidArgs, "invalid params", nil)
				return nil
			}
			keep[k] = b
		}
		b, err := json.Marshal(keep)
		if err != nil {
			m.reply(id, codeInvalidArgs, "invalid params", nil)
			return nil
		}
		out["params"] = b
	}
	line, err := json.Marshal(out)
	if err != nil {
		m.reply(id, codeInvalidReq, "invalid request", nil)
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		m.reply(id, codeInvalidReq, fmt.Sprintf("invalid request: %v", err), nil)
		return nil
	}
	m.pmu.Lock()
	if m.ids == nil {
		m.ids = map[string]json.RawMessage{}
	}
	m.ids[idKey(req.ID)] = append(json.RawMessage(nil), id...)
	m.pmu.Unlock()
	return req
}

// originalID returns (once) the client's id for a synthesized one.
func (m *mux) originalID(id jsonrpc.ID) json.RawMessage {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	k := idKey(id)
	raw, ok := m.ids[k]
	if !ok {
		return nil
	}
	delete(m.ids, k)
	return raw
}

// withID replaces the id of an encoded message, keeping the id's bytes as
// they came (no HTML escaping).
func withID(b []byte, id json.RawMessage) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return b
	}
	obj["id"] = id
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(obj) != nil {
		return b
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// wasDiscover reports (once) whether id is that of a server/discover request.
func (m *mux) wasDiscover(id jsonrpc.ID) bool {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	k := idKey(id)
	if !m.discover[k] {
		return false
	}
	delete(m.discover, k)
	return true
}

// withAccCapabilities adds the ACC extension field accCapabilities, the
// capability floor of an MCP session (docs/mcp.md#protocol-revisions: every capability false), to a
// server/discover result.
func withAccCapabilities(raw json.RawMessage) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	obj["accCapabilities"] = protocol.DeclaredCapabilities{}
	obj["serverInfo"] = map[string]any{"name": serverName, "version": Version}
	// The 2026-07-28 interface has no resources/subscribe (acc-mcp serves
	// it to 2025 clients only), so discover does not offer it.
	obj["capabilities"] = map[string]any{"resources": map[string]any{}, "tools": map[string]any{}}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

// shapeResult applies the era's result conventions to a result the SDK
// built: a 2026-07-28 result always carries resultType "complete" (the SDK
// leaves it off a result a middleware made, such as the unknown-tool
// isError result, docs/mcp.md#wire-details); a 2025 result carries no ttlMs or cacheScope,
// which those revisions do not define (docs/mcp.md#wire-details).
func shapeResult(raw json.RawMessage, modern bool) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	if modern {
		if _, ok := obj["resultType"]; ok {
			return raw
		}
		obj["resultType"] = json.RawMessage(`"complete"`)
	} else {
		_, t := obj["ttlMs"]
		_, s := obj["cacheScope"]
		if !t && !s {
			return raw
		}
		delete(obj, "ttlMs")
		delete(obj, "cacheScope")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

func (m *mux) writeLine(b []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_, err := m.w.Write(append(b, '\n'))
	return err
}

// reply writes a JSON-RPC error for id (raw JSON, "null" when unknown).
func (m *mux) reply(id json.RawMessage, code int, msg string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	_ = m.writeLine(b)
}

// modernPing answers ping under the 2026-07-28 interface. That revision
// drops ping and the SDK answers -32601 (docs/mcp.md#wire-details); acc-mcp answers it as
// ACC 0.4.0 does, an empty result in the complete envelope (docs/mcp.md#protocol-revisions).
func (m *mux) modernPing(id json.RawMessage) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
		"resultType": "complete",
		"_meta":      map[string]any{metaServerInfo: map[string]any{"name": serverName, "version": Version}},
	}})
	_ = m.writeLine(b)
}

// routed are the methods acc-mcp serves after the gate (docs/mcp.md#wire-details); any other is
// -32601, even where the SDK would answer it (prompts/list,
// resources/templates/list, logging/setLevel, …).
var routed = map[string]bool{"tools/list": true, "tools/call": true, "resources/list": true, "resources/read": true}

// legacyRouted adds what only the 2025 revisions have: resource
// subscriptions (acc://inbox; the 2026-07-28 interface replaced them with
// subscriptions/listen, which acc-mcp does not serve).
var legacyRouted = map[string]bool{"resources/subscribe": true, "resources/unsubscribe": true}

// screen answers a line the SDK must not see and returns nil, or returns
// the decoded message to hand on and whether it is a modern request.
func (c *mux) screen(line []byte) (jsonrpc.Message, bool) {
	if len(line) == 0 {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // a number past float64 is still a number
	if !json.Valid(line) || dec.Decode(&v) != nil {
		c.reply(nil, codeParse, "parse error", nil)
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.reply(nil, codeInvalidReq, "invalid request", nil)
		return nil, false
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(line, &raw)
	id, idOK := echoID(obj, raw)
	method, isString := obj["method"].(string)
	_, hasMethod := obj["method"]
	if obj["jsonrpc"] != "2.0" || !idOK || (hasMethod && !isString) {
		c.reply(id, codeInvalidReq, "invalid request", nil)
		return nil, false
	}
	if !hasMethod {
		if _, res := obj["result"]; res || obj["error"] != nil {
			return nil, false // a response: this server never sends requests
		}
		c.reply(id, codeInvalidReq, "invalid request", nil)
		return nil, false
	}
	if len(id) == 0 || string(id) == "null" { // a notification: never answered
		if method == "notifications/initialized" && c.phase == phaseInitializing {
			c.phase = phaseReady
			return c.decode(nil, line), false
		}
		return nil, false
	}
	params, hasParams := obj["params"]
	pmap, isObj := params.(map[string]any)
	if hasParams && !isObj {
		c.reply(id, codeInvalidArgs, "invalid params", nil)
		return nil, false
	}
	if method == "initialize" { // always the legacy path, whatever its _meta (docs/mcp.md#protocol-revisions)
		if c.phase != phaseUninitialized {
			c.reply(id, codeInvalidReq, "already initialized", nil)
			return nil, false
		}
		negotiated, ok := checkInitialize(pmap, raw["params"])
		if !ok {
			c.reply(id, codeInvalidArgs, "initialize needs protocolVersion (a string), capabilities (an object) and clientInfo {name, version}", nil)
			return nil, false
		}
		// The SDK shapes later results by the version it was asked for, so
		// it is given the negotiated one (an unknown version is answered
		// 2025-11-25 and must then be served as 2025-11-25).
		pmap["protocolVersion"] = negotiated
		// Nor does it see modern metadata on an initialize, which it would
		// route as a 2026-07-28 request (where initialize does not exist).
		if meta, ok := pmap["_meta"].(map[string]any); ok {
			delete(meta, metaVersion)
			delete(meta, metaCapabilities)
		}
		req := c.forward(raw, id, pmap, "protocolVersion", "_meta")
		if req == nil {
			return nil, false
		}
		c.phase = phaseInitializing
		return req, false
	}
	meta, metaObj := pmap["_meta"].(map[string]any)
	_, hasVer := meta[metaVersion]
	_, hasCaps := meta[metaCapabilities]
	if method == "server/discover" || metaObj && (hasVer || hasCaps) {
		ver, vok := meta[metaVersion].(string)
		_, cok := meta[metaCapabilities].(map[string]any)
		if !vok || !cok {
			c.reply(id, codeInvalidArgs, "each request requires _meta protocolVersion and clientCapabilities", nil)
			return nil, false
		}
		if ver != versionModern {
			c.reply(id, codeUnsupported, "unsupported protocol version: "+ver,
				map[string]any{"supported": supportedVersions, "requested": ver})
			return nil, false
		}
		if method == "ping" {
			c.modernPing(id)
			return nil, false
		}
		if method != "server/discover" && !routed[method] {
			c.reply(id, codeMethodNotFound, "unknown method: "+method, nil)
			return nil, false
		}
		// acc-mcp uses nothing of the client's capabilities or
		// self-description, so the SDK gets them in a form it always reads
		// (it refuses a clientInfo that is not an object, or a number it
		// cannot hold, and then mistakes the request for a legacy one).
		meta[metaCapabilities] = map[string]any{}
		delete(meta, metaClientInfo)
		req := c.forward(raw, id, pmap, "_meta")
		if req == nil {
			return nil, false
		}
		if method == "server/discover" {
			c.pmu.Lock()
			if c.discover == nil {
				c.discover = map[string]bool{}
			}
			c.discover[idKey(req.ID)] = true
			c.pmu.Unlock()
		}
		return req, true
	}
	switch {
	case method == "ping":
	case c.phase == phaseUninitialized:
		c.reply(id, codeInvalidArgs, "send initialize first, or give each request _meta protocolVersion and clientCapabilities", nil)
		return nil, false
	case c.phase == phaseInitializing:
		c.reply(id, codeInvalidReq, "client has not sent initialized", nil)
		return nil, false
	case !routed[method] && !legacyRouted[method]:
		c.reply(id, codeMethodNotFound, "unknown method: "+method, nil)
		return nil, false
	}
	req := c.forward(raw, id, nil)
	if req == nil {
		return nil, false
	}
	return req, false
}

func (c *mux) decode(id json.RawMessage, line []byte) jsonrpc.Message {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if len(id) > 0 {
			c.reply(id, codeInvalidReq, fmt.Sprintf("invalid request: %v", err), nil)
		}
		return nil
	}
	return msg
}

// echoID returns the request id as raw JSON and whether it is a legal one
// (absent, null, a string or a number). An illegal id is echoed as null.
func echoID(obj map[string]any, raw map[string]json.RawMessage) (json.RawMessage, bool) {
	v, ok := obj["id"]
	if !ok {
		return nil, true
	}
	switch v.(type) {
	case nil:
		return json.RawMessage("null"), true
	case string, float64, json.Number:
		return raw["id"], true
	}
	return nil, false
}

// checkInitialize validates initialize params as docs/mcp.md#protocol-revisions says, and as
// the SDK will decode them (a params object the SDK cannot read would leave
// its session half-initialized for good), and returns the version to
// negotiate: the requested one when acc-mcp initializes it, else 2025-11-25.
func checkInitialize(p map[string]any, raw json.RawMessage) (string, bool) {
	ver, ok := p["protocolVersion"].(string)
	if !ok {
		return "", false
	}
	if _, ok := p["capabilities"].(map[string]any); !ok {
		return "", false
	}
	ci, ok := p["clientInfo"].(map[string]any)
	if !ok {
		return "", false
	}
	_, n := ci["name"].(string)
	_, v := ci["version"].(string)
	if !n || !v {
		return "", false
	}
	var sdk mcp.InitializeParams
	if err := json.Unmarshal(raw, &sdk); err != nil {
		return "", false
	}
	for _, iv := range supportedVersions[1:] {
		if ver == iv {
			return ver, true
		}
	}
	return "2025-11-25", true
}
