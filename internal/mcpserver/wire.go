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
// Not handled yet (decided or left to the SDK): modern ping gets the SDK's
// -32601 (B1 item 6); after server/discover the SDK treats initialize as a
// duplicate (item 5); unknown tools are turned into isError results by a
// receiving middleware, whose result lacks resultType for 2026 callers
// (item 7); 2025 results carry the SDK's ttlMs/cacheScope (item 9); the
// SDK answers concurrent calls out of order (item 11).

const (
	versionModern = "2026-07-28"

	codeParse       = -32700
	codeInvalidReq  = -32600
	codeInvalidArgs = -32602
	codeUnsupported = -32022

	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// supportedVersions is the revision list acc-mcp serves, newest first.
var supportedVersions = []string{versionModern, "2025-11-25", "2025-06-18"}

type phase int

const (
	phaseUninitialized phase = iota
	phaseInitializing
	phaseReady
)

// filterTransport serves one connection over r and w.
type filterTransport struct {
	r io.Reader
	w io.Writer
}

func (t *filterTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &filterConn{w: t.w, lines: make(chan []byte), done: make(chan struct{}), readErr: make(chan error, 1)}
	go c.readLoop(t.r)
	return c, nil
}

type filterConn struct {
	wmu     sync.Mutex
	w       io.Writer
	lines   chan []byte
	readErr chan error
	done    chan struct{}
	once    sync.Once
	phase   phase // only touched by Read, which the SDK calls from one goroutine

	// pending counts requests handed to the SDK and not answered yet, so
	// the end of input waits for their answers before the SDK shuts down.
	pmu     sync.Mutex
	pending map[string]bool
	drained chan struct{} // closed when pending empties after EOF
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *filterConn) track(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.pmu.Lock()
		if c.pending == nil {
			c.pending = map[string]bool{}
		}
		c.pending[idKey(req.ID)] = true
		c.pmu.Unlock()
	}
}

func (c *filterConn) answered(msg jsonrpc.Message) {
	if res, ok := msg.(*jsonrpc.Response); ok {
		c.pmu.Lock()
		delete(c.pending, idKey(res.ID))
		if len(c.pending) == 0 && c.drained != nil {
			close(c.drained)
			c.drained = nil
		}
		c.pmu.Unlock()
	}
}

// drain waits (at most storeWait twice over) until every request handed
// to the SDK has been answered.
func (c *filterConn) drain() {
	c.pmu.Lock()
	if len(c.pending) == 0 {
		c.pmu.Unlock()
		return
	}
	ch := make(chan struct{})
	c.drained = ch
	c.pmu.Unlock()
	select {
	case <-ch:
	case <-time.After(2 * storeWait):
	case <-c.done:
	}
}

func (c *filterConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			select {
			case c.lines <- line:
			case <-c.done:
				return
			}
		}
		if err != nil {
			c.readErr <- err
			return
		}
	}
}

func (c *filterConn) SessionID() string { return "" }

func (c *filterConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *filterConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(b)
	c.answered(msg)
	return err
}

func (c *filterConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// reply writes a JSON-RPC error for id (raw JSON, "null" when unknown).
func (c *filterConn) reply(id json.RawMessage, code int, msg string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	_ = c.writeLine(b)
}

func (c *filterConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var line []byte
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, mcp.ErrConnectionClosed
		case line = <-c.lines:
		case err := <-c.readErr:
			// Lines sent before the error were already taken: the reader
			// blocks on c.lines until each is read. At the end of input the
			// answers still owed are written before the SDK stops.
			c.drain()
			return nil, err
		}
		if msg := c.screen(bytes.TrimSpace(line)); msg != nil {
			c.track(msg)
			return msg, nil
		}
	}
}

// screen answers a line the SDK must not see and returns nil, or returns
// the decoded message to hand on.
func (c *filterConn) screen(line []byte) jsonrpc.Message {
	if len(line) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		c.reply(nil, codeParse, "parse error", nil)
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.reply(nil, codeInvalidReq, "invalid request", nil)
		return nil
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(line, &raw)
	id, idOK := echoID(obj, raw)
	method, isString := obj["method"].(string)
	_, hasMethod := obj["method"]
	if obj["jsonrpc"] != "2.0" || !idOK || (hasMethod && !isString) {
		c.reply(id, codeInvalidReq, "invalid request", nil)
		return nil
	}
	if !hasMethod {
		if _, res := obj["result"]; res || obj["error"] != nil {
			return nil // a response: this server never sends requests
		}
		c.reply(id, codeInvalidReq, "invalid request", nil)
		return nil
	}
	if len(id) == 0 || string(id) == "null" { // a notification: never answered
		if method == "notifications/initialized" && c.phase == phaseInitializing {
			c.phase = phaseReady
			return c.decode(nil, line)
		}
		return nil
	}
	params, hasParams := obj["params"]
	pmap, isObj := params.(map[string]any)
	if hasParams && !isObj {
		c.reply(id, codeInvalidArgs, "invalid params", nil)
		return nil
	}
	if meta, ok := pmap["_meta"].(map[string]any); method == "server/discover" || ok && (meta[metaVersion] != nil || meta[metaCapabilities] != nil) {
		ver, vok := meta[metaVersion].(string)
		_, cok := meta[metaCapabilities].(map[string]any)
		if !vok || !cok {
			c.reply(id, codeInvalidArgs, "each request requires _meta protocolVersion and clientCapabilities", nil)
			return nil
		}
		if ver != versionModern {
			c.reply(id, codeUnsupported, "unsupported protocol version: "+ver,
				map[string]any{"supported": supportedVersions, "requested": ver})
			return nil
		}
		return c.decode(id, line)
	}
	switch {
	case method == "initialize":
		if c.phase != phaseUninitialized {
			c.reply(id, codeInvalidReq, "already initialized", nil)
			return nil
		}
		if !validInitialize(pmap) {
			c.reply(id, codeInvalidArgs, "initialize needs protocolVersion (a string), capabilities (an object) and clientInfo {name, version}", nil)
			return nil
		}
		c.phase = phaseInitializing
	case method == "ping":
	case c.phase == phaseUninitialized:
		c.reply(id, codeInvalidArgs, "send initialize first, or give each request _meta protocolVersion and clientCapabilities", nil)
		return nil
	case c.phase == phaseInitializing:
		c.reply(id, codeInvalidReq, "client has not sent initialized", nil)
		return nil
	}
	return c.decode(id, line)
}

func (c *filterConn) decode(id json.RawMessage, line []byte) jsonrpc.Message {
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
