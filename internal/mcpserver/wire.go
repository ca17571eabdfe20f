package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The prefilter: a small mcp.Transport in front of go-sdk v1.8.0 that
// screens every input line before the SDK decodes it, for the differences
// between the SDK and the contract that matter most
// (reference/mcp-acp.md B1):
//
//   - a line that is not JSON, not an object, or not a JSON-RPC 2.0 envelope
//     is answered (-32700, -32600) and the connection carries on, where the
//     SDK would end it (B1 item 1, A2);
//   - a request whose params is null or a primitive gets -32602 (A2);
//   - notifications are never answered; only notifications/initialized
//     reaches the SDK (A2);
//   - the legacy handshake is gated as A3 says: a malformed initialize is
//     -32602 and changes nothing, a second one -32600, a request before
//     initialize -32602, one between initialize and initialized -32600
//     (B1 items 2, 3);
//   - a request with modern metadata (either reserved _meta key, or
//     server/discover) must carry both keys (-32602) and exactly version
//     2026-07-28 (-32022 with data{supported, requested}) (B1 item 4).
//
//   - a modern ping is answered {} in the complete envelope, where the SDK
//     says -32601 (B1 item 6);
//   - legacy and modern requests go to two separate SDK sessions, so a
//     server/discover (or any modern request) never makes a later
//     initialize a duplicate nor leaks modern shaping into legacy results
//     (B1 item 5);
//   - on the way out, every modern result carries resultType "complete",
//     the unknown-tool isError result a middleware builds included (B1
//     item 7), and legacy results lose the SDK's ttlMs/cacheScope, which
//     the 2025 revisions do not define (B1 item 9). Modern results keep
//     them, set to ttlMs 0 and cacheScope "private" (server.go). A
//     server/discover result also gains accCapabilities, the ACC extension
//     field holding the session's capability floor (A3, A8).
//
// Left to the SDK: concurrent calls may be answered out of order (B1 item
// 11); clients match replies by id.

const (
	versionModern = "2026-07-28"

	codeParse       = -32700
	codeInvalidReq  = -32600
	codeInvalidArgs = -32602
	codeUnsupported = -32022

	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"

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
// "duplicate" and tag legacy results with resultType (B1 item 5); with a
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
	// yet: their results gain accCapabilities on the way out (A3, A8).
	discover map[string]bool
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

// drain waits (at most storeWait twice over) until every request handed
// to the SDK has been answered.
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
	case <-time.After(2 * storeWait):
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
	if res, ok := msg.(*jsonrpc.Response); ok && res.Error == nil && len(res.Result) > 0 {
		cp := *res
		cp.Result = shapeResult(res.Result, c.modern)
		if c.modern && c.m.wasDiscover(res.ID) {
			cp.Result = withAccCapabilities(cp.Result)
		}
		msg = &cp
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
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
// capability floor of an MCP session (A8: every capability false), to a
// server/discover result.
func withAccCapabilities(raw json.RawMessage) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	obj["accCapabilities"] = protocol.DeclaredCapabilities{}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

// shapeResult applies the era's result conventions to a result the SDK
// built: a 2026-07-28 result always carries resultType "complete" (the SDK
// leaves it off a result a middleware made, such as the unknown-tool
// isError result, B1 item 7); a 2025 result carries no ttlMs or cacheScope,
// which those revisions do not define (B1 item 9).
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
// drops ping and the SDK answers -32601 (B1 item 6); acc-mcp answers it as
// ACC 0.4.0 does, an empty result in the complete envelope (A3).
func (m *mux) modernPing(id json.RawMessage) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
		"resultType": "complete",
		"_meta":      map[string]any{metaServerInfo: map[string]any{"name": serverName, "version": Version}},
	}})
	_ = m.writeLine(b)
}

// screen answers a line the SDK must not see and returns nil, or returns
// the decoded message to hand on and whether it is a modern request.
func (c *mux) screen(line []byte) (jsonrpc.Message, bool) {
	if len(line) == 0 {
		return nil, false
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
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
	if meta, ok := pmap["_meta"].(map[string]any); method == "server/discover" || ok && (meta[metaVersion] != nil || meta[metaCapabilities] != nil) {
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
		msg := c.decode(id, line)
		if req, ok := msg.(*jsonrpc.Request); ok && method == "server/discover" {
			c.pmu.Lock()
			if c.discover == nil {
				c.discover = map[string]bool{}
			}
			c.discover[idKey(req.ID)] = true
			c.pmu.Unlock()
		}
		return msg, true
	}
	switch {
	case method == "initialize":
		if c.phase != phaseUninitialized {
			c.reply(id, codeInvalidReq, "already initialized", nil)
			return nil, false
		}
		if !validInitialize(pmap) {
			c.reply(id, codeInvalidArgs, "initialize needs protocolVersion (a string), capabilities (an object) and clientInfo {name, version}", nil)
			return nil, false
		}
		c.phase = phaseInitializing
	case method == "ping":
	case c.phase == phaseUninitialized:
		c.reply(id, codeInvalidArgs, "send initialize first, or give each request _meta protocolVersion and clientCapabilities", nil)
		return nil, false
	case c.phase == phaseInitializing:
		c.reply(id, codeInvalidReq, "client has not sent initialized", nil)
		return nil, false
	}
	return c.decode(id, line), false
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
	case string, float64:
		return raw["id"], true
	}
	return nil, false
}

func validInitialize(p map[string]any) bool {
	if _, ok := p["protocolVersion"].(string); !ok {
		return false
	}
	if _, ok := p["capabilities"].(map[string]any); !ok {
		return false
	}
	ci, ok := p["clientInfo"].(map[string]any)
	if !ok {
		return false
	}
	_, n := ci["name"].(string)
	_, v := ci["version"].(string)
	return n && v
}
