package mcpserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The conformance suite: every row of the list of docs/mcp.md#conformance, driven
// over real stdio against the built acc-mcp, for each era a client can
// speak — initialized 2025-06-18, initialized 2025-11-25, and the
// 2026-07-28 per-request interface. Replies are matched by id (string and
// numeric ids both); each row names its docs/mcp.md#conformance item.

// era is one way of speaking to acc-mcp.
type era struct {
	name    string
	version string
	modern  bool
}

var eras = []era{
	{name: "2025-06-18", version: "2025-06-18"},
	{name: "2025-11-25", version: "2025-11-25"},
	{name: "2026-07-28", version: versionModern, modern: true},
}

// open prepares a connection for requests of this era: the legacy
// handshake, or nothing for the per-request interface.
func (e era) open(t *testing.T, c *client) {
	t.Helper()
	if e.modern {
		return
	}
	res := result(t, c.initialize(e.version))
	if res["protocolVersion"] != e.version {
		t.Fatalf("initialize %s negotiated %v", e.version, res["protocolVersion"])
	}
}

// params adds the era's per-request metadata.
func (e era) params(p map[string]any) map[string]any {
	if p == nil {
		p = map[string]any{}
	}
	if e.modern {
		p["_meta"] = modernMeta()
	}
	return p
}

// call sends one request in this era and checks the result envelope the
// era requires (docs/mcp.md#protocol-revisions): resultType "complete" and serverInfo on a modern
// result, neither on a legacy one.
func (e era) call(t *testing.T, c *client, method string, p map[string]any) map[string]any {
	t.Helper()
	res := result(t, c.request(method, e.params(p)))
	if e.modern {
		complete(t, method, res)
	} else {
		for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
			if _, ok := res[k]; ok {
				t.Errorf("legacy %s result carries %s", method, k)
			}
		}
	}
	return res
}

// toolOutcome is one tools/call result, read as the contract describes it.
type toolOutcome struct {
	value  any    // the JSON value of the text content (success)
	isErr  bool   // isError
	text   string // the text content
	reason string // structuredContent.error.reasonCode (failure)
}

// tool calls a tool and checks docs/mcp.md#tools: success is the pretty-printed JSON of
// the value as text, and the same value as structuredContent unless a
// 2025 client would get an array (then structuredContent is absent);
// failure is isError with "<tool>: <message>" as text.
func (e era) tool(t *testing.T, c *client, name string, args any) toolOutcome {
	t.Helper()
	res := e.call(t, c, "tools/call", map[string]any{"name": name, "arguments": args})
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("%s: content %v", name, res["content"])
	}
	out := toolOutcome{text: content[0].(map[string]any)["text"].(string)}
	out.isErr, _ = res["isError"].(bool)
	sc, hasSC := res["structuredContent"]
	if out.isErr {
		if !strings.HasPrefix(out.text, name+": ") {
			t.Errorf("%s: error text %q does not start with the tool name", name, out.text)
		}
		if m, ok := sc.(map[string]any); ok {
			out.reason, _ = m["error"].(map[string]any)["reasonCode"].(string)
		}
		return out
	}
	if err := json.Unmarshal([]byte(out.text), &out.value); err != nil {
		t.Fatalf("%s: text is not JSON: %v", name, err)
	}
	var compact, pretty bytes.Buffer
	_ = json.Compact(&compact, []byte(out.text))
	_ = json.Indent(&pretty, compact.Bytes(), "", "  ")
	if pretty.String() != out.text {
		t.Errorf("%s: text is not the pretty-printed value", name)
	}
	_, isArray := out.value.([]any)
	switch {
	case isArray && !e.modern:
		if hasSC {
			t.Errorf("%s: a 2025 result keeps an array in structuredContent", name)
		}
	case !hasSC:
		t.Errorf("%s: no structuredContent", name)
	default:
		a, _ := json.Marshal(sc)
		b, _ := json.Marshal(out.value)
		if string(a) != string(b) {
			t.Errorf("%s: structured and text content differ:\n%s\n%s", name, a, b)
		}
	}
	return out
}

func (e era) ok(t *testing.T, c *client, name string, args any) any {
	t.Helper()
	out := e.tool(t, c, name, args)
	if out.isErr {
		t.Fatalf("%s %v: %s", name, args, out.text)
	}
	return out.value
}

// rpcError returns the error of a reply, failing when it is a result.
func rpcError(t *testing.T, what string, reply map[string]any) (code float64, message string, data any) {
	t.Helper()
	e, ok := reply["error"].(map[string]any)
	if !ok {
		t.Fatalf("%s: want an error, got %v", what, reply)
	}
	return e["code"].(float64), e["message"].(string), e["data"]
}

// pingOK checks the connection still answers.
func pingOK(t *testing.T, c *client) {
	t.Helper()
	if b, _ := json.Marshal(result(t, c.request("ping", map[string]any{}))); string(b) != "{}" {
		t.Errorf("ping: %s", b)
	}
}

func rosterText(t *testing.T, e era, c *client) string {
	t.Helper()
	res := e.call(t, c, "resources/read", map[string]any{"uri": "acc://roster"})
	return res["contents"].([]any)[0].(map[string]any)["text"].(string)
}

// docs/mcp.md#conformance item 1: the five-line framing vector, in order, then the connection lives.
func TestConformanceFramingVector(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	for _, line := range []string{`null`, `{`, `{"method":42,"id":7}`, `{"jsonrpc":"2.0","id":8,"method":"ping","params":false}`, `{"jsonrpc":"2.0","id":9,"method":"ping"}`} {
		c.send(line)
	}
	want := []struct {
		key     string
		code    float64
		message string
	}{
		{"null", codeInvalidReq, "invalid request"},
		{"null#1", codeParse, "parse error"},
		{"7", codeInvalidReq, "invalid request"},
		{"8", codeInvalidArgs, "invalid params"},
	}
	for _, w := range want {
		code, msg, _ := rpcError(t, w.key, c.wait(w.key))
		if code != w.code || msg != w.message {
			t.Errorf("reply %s: %v %q, want %v %q", w.key, code, msg, w.code, w.message)
		}
	}
	if b, _ := json.Marshal(result(t, c.wait("9"))); string(b) != "{}" {
		t.Errorf("ping 9: %s", b)
	}
	// A blank line and a notification with bad params get no reply; the
	// next request is answered.
	c.send(``)
	c.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":7}`)
	pingOK(t, c)
}

// docs/mcp.md#conformance item 2, for each era: the basic session.
func TestConformanceBasicSession(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			r := newRoom(t)
			c := startBinary(t, r, "research")
			if !e.modern {
				init := result(t, c.initialize(e.version))
				if _, ok := init["resultType"]; ok {
					t.Error("initialize carries resultType")
				}
				if si, _ := init["serverInfo"].(map[string]any); si["name"] != serverName {
					t.Errorf("serverInfo %v", init["serverInfo"])
				}
				if b, _ := json.Marshal(init["capabilities"]); string(b) != `{"resources":{"subscribe":true},"tools":{}}` {
					t.Errorf("capabilities %s", b)
				}
			}
			var names []string
			for _, tl := range e.call(t, c, "tools/list", nil)["tools"].([]any) {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			if len(names) != 12 || !strings.Contains(strings.Join(names, " "), "acc_inbox") {
				t.Errorf("tools: %v", names)
			}
			if w := e.ok(t, c, "acc_work", map[string]any{"summary": "docs", "mode": "edit"}).(map[string]any); w["summary"] != "docs" {
				t.Errorf("acc_work: %v", w)
			}
			st := e.ok(t, c, "acc_status", map[string]any{}).(map[string]any)
			ps := st["participants"].([]any)
			if len(ps) != 1 || ps[0].(map[string]any)["participantId"] != "research" {
				t.Errorf("roster shows %v, want only the configured participant", ps)
			}
			if strings.Contains(fmt.Sprint(st), "self_reported_not_the_participant") {
				t.Error("the self-reported clientInfo name reached the roster")
			}
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"still-alive","method":"ping","params":%s}`, mustJSON(e.params(nil))))
			ping := result(t, c.wait(`"still-alive"`))
			if e.modern {
				complete(t, "ping", ping)
			} else if b, _ := json.Marshal(ping); string(b) != "{}" {
				t.Errorf("ping: %s", b)
			}
			inbox := e.ok(t, c, "acc_inbox", map[string]any{})
			if b, _ := json.Marshal(inbox); string(b) != `{"items":[],"nextCursor":null}` {
				t.Errorf("empty inbox: %s", b)
			}
			if out := e.tool(t, c, "acc_work", map[string]any{}); !out.isErr || !strings.HasPrefix(out.text, "acc_work: ") {
				t.Errorf("acc_work {}: %+v", out)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// docs/mcp.md#conformance items 3, 4 and 5: negotiation and the legacy handshake gate.
func TestConformanceHandshake(t *testing.T) {
	t.Run("unknown versions negotiate 2025-11-25", func(t *testing.T) {
		for _, v := range []string{"2099-01-01", versionModern, "1999-01-01"} {
			c := startBinary(t, newRoom(t), "mcp")
			if got := result(t, c.initialize(v))["protocolVersion"]; got != "2025-11-25" {
				t.Errorf("initialize %s negotiated %v", v, got)
			}
		}
	})
	t.Run("malformed initialize changes nothing", func(t *testing.T) {
		c := startBinary(t, newRoom(t), "mcp")
		good := func() map[string]any {
			return map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "x", "version": "1"}}
		}
		bad := map[string]string{"params null": `null`, "params {}": `{}`}
		for name, mutate := range map[string]func(map[string]any){
			"version 7":         func(p map[string]any) { p["protocolVersion"] = 7 },
			"capabilities []":   func(p map[string]any) { p["capabilities"] = []any{} },
			"clientInfo null":   func(p map[string]any) { p["clientInfo"] = nil },
			"clientInfo no ver": func(p map[string]any) { p["clientInfo"] = map[string]any{"name": "x"} },
		} {
			p := good()
			mutate(p)
			bad[name] = mustJSON(p)
		}
		n := 0
		for name, params := range bad {
			n++
			id := fmt.Sprintf(`"bad-%d"`, n)
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"initialize","params":%s}`, id, params))
			if code, _, _ := rpcError(t, name, c.wait(id)); code != codeInvalidArgs {
				t.Errorf("%s: code %v, want -32602", name, code)
			}
		}
		// Still uninitialized: a legacy request is refused as before
		// initialize, and a valid initialize now succeeds.
		if code, _, _ := rpcError(t, "tools/list", c.request("tools/list", map[string]any{})); code != codeInvalidArgs {
			t.Errorf("legacy request after malformed initializes: %v, want -32602", code)
		}
		if v := result(t, c.request("initialize", good()))["protocolVersion"]; v != "2025-06-18" {
			t.Errorf("valid initialize after malformed ones: %v", v)
		}
	})
	t.Run("initialized gate and repeated initialize", func(t *testing.T) {
		c := startBinary(t, newRoom(t), "mcp")
		init := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}
		result(t, c.request("initialize", init))
		if code, msg, _ := rpcError(t, "before initialized", c.request("tools/list", map[string]any{})); code != codeInvalidReq || msg != "client has not sent initialized" {
			t.Errorf("before initialized: %v %q", code, msg)
		}
		pingOK(t, c) // ping is accepted in any phase
		if code, msg, _ := rpcError(t, "second initialize", c.request("initialize", init)); code != codeInvalidReq || msg != "already initialized" {
			t.Errorf("initialize before initialized: %v %q", code, msg)
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if code, _, _ := rpcError(t, "third initialize", c.request("initialize", init)); code != codeInvalidReq {
			t.Errorf("initialize after initialized: %v", code)
		}
		if n := len(result(t, c.request("tools/list", map[string]any{}))["tools"].([]any)); n != 12 {
			t.Errorf("ready: %d tools", n)
		}
		if code, msg, _ := rpcError(t, "unknown method", c.request("tasks/teleport", map[string]any{})); code != -32601 || !strings.Contains(msg, "tasks/teleport") {
			t.Errorf("unknown method: %v %q", code, msg)
		}
	})
}

// docs/mcp.md#conformance item 6: the two eras keep apart. A modern request never inherits
// metadata from initialize, works in any phase and leaves the phase as it
// was; a legacy request may carry extension _meta keys.
func TestConformanceEraSeparation(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	metaCases := map[string]map[string]any{
		"version only":         {metaVersion: versionModern},
		"capabilities only":    {metaCapabilities: map[string]any{}},
		"capabilities null":    {metaVersion: versionModern, metaCapabilities: nil},
		"capabilities array":   {metaVersion: versionModern, metaCapabilities: []any{}},
		"capabilities string":  {metaVersion: versionModern, metaCapabilities: "tools"},
		"version not a string": {metaVersion: 20260728, metaCapabilities: map[string]any{}},
	}
	check := func(phase string) {
		for name, meta := range metaCases {
			if code, _, _ := rpcError(t, name, c.request("tools/list", map[string]any{"_meta": meta})); code != codeInvalidArgs {
				t.Errorf("%s, %s: code %v, want -32602", phase, name, code)
			}
		}
		if code, _, _ := rpcError(t, "discover without meta", c.request("server/discover", map[string]any{})); code != codeInvalidArgs {
			t.Errorf("%s: server/discover without meta: %v", phase, code)
		}
		code, msg, data := rpcError(t, "old version", c.request("tools/list", map[string]any{"_meta": map[string]any{
			metaVersion: "1999-01-01", metaCapabilities: map[string]any{}}}))
		if code != codeUnsupported || msg != "unsupported protocol version: 1999-01-01" ||
			mustJSON(data) != `{"requested":"1999-01-01","supported":["2026-07-28","2025-11-25","2025-06-18"]}` {
			t.Errorf("%s: old version: %v %q %v", phase, code, msg, data)
		}
		disc := result(t, c.request("server/discover", modernParams(nil)))
		complete(t, "discover", disc)
		want := `{"context":{"beforeTurnInjection":false,"safePointInjection":false,"startupInjection":false},` +
			`"delivery":{"livePush":false,"nextTurn":false,"replyRoute":false},` +
			`"guards":{"beforeRead":false,"beforeShell":false,"beforeWrite":false},` +
			`"lifecycle":{"childSessions":false,"sessionEnd":false,"sessionResume":false,"sessionStart":false}}`
		if got := mustJSON(disc["accCapabilities"]); got != want {
			t.Errorf("%s: accCapabilities %s", phase, got)
		}
		if mustJSON(disc["capabilities"]) != `{"resources":{},"tools":{}}` {
			t.Errorf("%s: discover capabilities %v", phase, disc["capabilities"])
		}
	}
	check("uninitialized")
	// The modern requests left the phase alone: legacy is still refused.
	if code, _, _ := rpcError(t, "legacy", c.request("tools/list", map[string]any{"_meta": map[string]any{"arbitrary": "extension"}})); code != codeInvalidArgs {
		t.Errorf("legacy before initialize after modern requests: %v", code)
	}
	result(t, c.initialize("2025-06-18"))
	check("ready") // initialize lends a modern request nothing
	res := result(t, c.request("tools/list", map[string]any{"_meta": map[string]any{"arbitrary": "extension"}}))
	if _, ok := res["resultType"]; ok || len(res["tools"].([]any)) != 12 {
		t.Errorf("legacy request with an extension _meta key: %v", res["resultType"])
	}
}

// docs/mcp.md#conformance item 7: a restart with another clientInfo, and another era, keeps
// the same session (the binding is the launch configuration's, docs/mcp.md#sessions).
func TestConformanceRestartKeepsSession(t *testing.T) {
	r := newRoom(t)
	first, p1 := spawnBinary(t, r, "research")
	eras[0].open(t, first)
	id1 := eras[0].ok(t, first, "acc_status", map[string]any{}).(map[string]any)["callerSessionId"]
	p1.cmd.Process.Kill()
	p1.cmd.Wait()
	second := startBinary(t, r, "research")
	p := modernParams(map[string]any{"name": "acc_status", "arguments": map[string]any{}})
	p["_meta"].(map[string]any)["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "another", "version": "2"}
	res := result(t, second.request("tools/call", p))
	if id2 := res["structuredContent"].(map[string]any)["callerSessionId"]; id2 != id1 || id1 == nil {
		t.Errorf("restart: session %v, want %v", id2, id1)
	}
}

// badCall is one refused tool call: the field (or word) the message must
// name and the reasonCode.
type badCall struct {
	tool   string
	args   any
	names  string
	reason string
}

func badCalls() []badCall {
	msg := func(extra map[string]any) map[string]any {
		m := map[string]any{"to": []any{"alice"}, "subject": "s", "body": "b"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	minimal := map[string]map[string]any{
		"acc_status":  {},
		"acc_sync":    {},
		"acc_search":  {"query": "q"},
		"acc_work":    {"summary": "s", "mode": "edit"},
		"acc_claim":   {"action": "acquire", "resource": "file:a"},
		"acc_release": {"claimId": "claim_x"},
		"acc_message": msg(nil),
		"acc_request": {"toParticipantId": "alice", "title": "t"},
		"acc_inbox":   {},
		"acc_reply":   {"messageId": "message_x", "body": "b"},
		"acc_ack":     {"messageId": "message_x"},
		"acc_finish":  {"goal": "g"},
	}
	var out []badCall
	for name, args := range minimal { // every tool rejects legacyField
		a := map[string]any{"legacyField": true}
		for k, v := range args {
			a[k] = v
		}
		out = append(out, badCall{name, a, "arguments.legacyField is not a known field", "unknown_argument"})
	}
	ids17 := make([]any, 17)
	for i := range ids17 {
		ids17[i] = fmt.Sprintf("message_%02d", i)
	}
	return append(out, []badCall{
		// the 0.1-era controls
		{"acc_message", msg(map[string]any{"priority": "high"}), "arguments.priority", "unknown_argument"},
		{"acc_message", msg(map[string]any{"requiresAck": true}), "arguments.requiresAck", "unknown_argument"},
		{"acc_message", msg(map[string]any{"workstreamId": "w"}), "arguments.workstreamId", "unknown_argument"},
		{"acc_ack", map[string]any{"messageId": "message_x", "state": "acknowledged"}, "arguments.state", "unknown_argument"},
		// required fields
		{"acc_message", map[string]any{"to": []any{"alice"}, "subject": "s"}, "arguments.body is required", "missing_argument"},
		{"acc_request", map[string]any{"title": "t"}, "arguments.toParticipantId is required", "missing_argument"},
		{"acc_reply", map[string]any{"messageId": "message_x"}, "arguments.body is required", "missing_argument"},
		{"acc_ack", map[string]any{}, "arguments.messageId is required", "missing_argument"},
		{"acc_release", map[string]any{}, "arguments.claimId is required", "missing_argument"},
		{"acc_finish", map[string]any{}, "arguments.goal is required", "missing_argument"},
		{"acc_claim", map[string]any{"resource": "file:a"}, "arguments.action is required", "missing_argument"},
		// types
		{"acc_message", msg(map[string]any{"to": "alice"}), "arguments.to must be an array", "invalid_argument"},
		{"acc_message", msg(map[string]any{"to": []any{7}}), "arguments.to[0] must be a string", "invalid_argument"},
		{"acc_inbox", map[string]any{"limit": "ten"}, "arguments.limit must be an integer", "invalid_limit"},
		{"acc_inbox", map[string]any{"limit": 1.5}, "arguments.limit must be an integer", "invalid_limit"},
		{"acc_sync", map[string]any{"current": "yes"}, "arguments.current must be a boolean", "invalid_argument"},
		{"acc_work", map[string]any{"summary": 7, "mode": "edit"}, "arguments.summary must be a string", "invalid_argument"},
		{"acc_status", []any{}, "arguments must be a JSON object", "invalid_argument"},
		// enums
		{"acc_message", msg(map[string]any{"kind": "answer"}), "arguments.kind must be one of", "invalid_argument"},
		{"acc_message", msg(map[string]any{"kind": "handoff"}), "arguments.kind must be one of", "invalid_argument"},
		{"acc_message", msg(map[string]any{"obligation": "maybe"}), "arguments.obligation must be one of", "invalid_argument"},
		{"acc_sync", map[string]any{"scope": "everything"}, "arguments.scope must be one of", "invalid_argument"},
		{"acc_claim", map[string]any{"action": "release", "claimId": "claim_x"}, "arguments.action must be one of", "invalid_argument"},
		{"acc_finish", map[string]any{"goal": "g", "status": "done"}, "arguments.status must be one of", "invalid_argument"},
		// ranges and array bounds
		{"acc_inbox", map[string]any{"limit": 0}, "arguments.limit must be at least 1", "invalid_limit"},
		{"acc_inbox", map[string]any{"limit": 501}, "arguments.limit must be at most 500", "invalid_limit"},
		{"acc_sync", map[string]any{"limit": 501}, "arguments.limit must be at most 500", "invalid_limit"},
		{"acc_claim", map[string]any{"action": "acquire", "resource": "file:a", "leaseSeconds": 0}, "arguments.leaseSeconds must be at least 1", "invalid_argument"},
		{"acc_message", msg(map[string]any{"kind": "decision", "supersedes": []any{}}), "arguments.supersedes must hold at least 1", "invalid_argument"},
		{"acc_message", msg(map[string]any{"kind": "decision", "withdraws": ids17}), "arguments.withdraws must hold at most 16", "invalid_argument"},
		{"acc_message", msg(map[string]any{"kind": "decision", "supersedes": []any{"message_a", "message_a"}}), "arguments.supersedes must not repeat", "invalid_argument"},
		// oneOf / not shapes
		{"acc_work", map[string]any{}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_work", map[string]any{"summary": "s"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_work", map[string]any{"mode": "edit"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_work", map[string]any{"clear": true, "summary": "s", "mode": "edit"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_work", map[string]any{"clear": false}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "acquire"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "acquire", "resource": "file:a", "claimId": "claim_x"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "renew"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "renew", "claimId": "claim_x", "resource": "file:a"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "renew", "claimId": "claim_x", "mode": "shared"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_claim", map[string]any{"action": "renew", "claimId": "claim_x", "reason": "r"}, "arguments must match exactly one accepted shape", "argument_shape"},
		{"acc_inbox", map[string]any{"messageId": "message_x", "cursor": "message_y"}, "arguments contains fields that cannot be combined", "argument_shape"},
		{"acc_inbox", map[string]any{"messageId": "message_x", "limit": 5}, "arguments contains fields that cannot be combined", "argument_shape"},
		// acc_sync's scope rules, worded with the argument names
		{"acc_sync", map[string]any{"kind": "note"}, "arguments.kind", "sync_usage"},
		{"acc_sync", map[string]any{"messageId": "message_x"}, "arguments.messageId", "sync_usage"},
		{"acc_sync", map[string]any{"scope": "history", "messageId": "message_x", "cursor": "message_y"}, "arguments.messageId reads one message", "sync_usage"},
		{"acc_sync", map[string]any{"scope": "history", "current": true}, "arguments.current lists decision heads", "sync_usage"},
		{"acc_sync", map[string]any{"cursor": "12"}, "16-digit", "invalid_cursor"},
		// unknown tool
		{"acc_teleport", map[string]any{}, "acc_teleport: unknown tool: acc_teleport", "unknown_tool"},
	}...)
}

// docs/mcp.md#conformance items 8 and 9, for each era: every refusal is an isError result
// naming the field and carrying its reasonCode, the connection stays
// usable, the store does not change and no presence is created.
func TestConformanceToolValidation(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			r := newRoom(t)
			r.acc("attach", "--participant", "alice")
			c := startBinary(t, r, "research")
			e.open(t, c)
			before := r.fingerprint()
			for _, bc := range badCalls() {
				out := e.tool(t, c, bc.tool, bc.args)
				if !out.isErr || !strings.Contains(out.text, bc.names) || out.reason != bc.reason {
					t.Errorf("%s %s: isError %v, reason %q, text %q; want %q naming %q", bc.tool, mustJSON(bc.args), out.isErr, out.reason, out.text, bc.reason, bc.names)
				}
			}
			if after := r.fingerprint(); after != before {
				t.Error("refused calls changed the store")
			}
			if roster := rosterText(t, e, c); strings.Contains(roster, "research") {
				t.Errorf("a refused call created presence: %s", roster)
			}
			pingOK(t, c)
		})
	}
	// In an empty room the roster after an invalid call is exactly [].
	for _, e := range eras {
		c := startBinary(t, newRoom(t), "research")
		e.open(t, c)
		if out := e.tool(t, c, "acc_status", map[string]any{"legacyField": true}); !out.isErr {
			t.Fatalf("%s: acc_status with legacyField succeeded", e.name)
		}
		if roster := rosterText(t, e, c); roster != "[]" {
			t.Errorf("%s: roster after an invalid call %q, want []", e.name, roster)
		}
	}
}

// docs/mcp.md#conformance item 10, for each era: the snapshot keeps the whole thread and
// handoff envelope, escapes control characters and marks peer content.
func TestConformanceSnapshot(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			r := newRoom(t)
			c := startBinary(t, r, "research")
			e.open(t, c)
			e.ok(t, c, "acc_status", map[string]any{})
			alice := r.acc("attach", "--participant", "alice")
			as := []string{"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string)}
			q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "windows lines", "--body", "one\r\ntwo"}, as...)...)
			qid := q["message"].(map[string]any)["messageId"].(string)
			ans := e.ok(t, c, "acc_reply", map[string]any{"messageId": qid, "body": "fine"}).(map[string]any)["message"].(map[string]any)
			r.acc(append([]string{"finish", "--goal", "ship", "--to", "research", "--completed", "docs"}, as...)...)

			res := e.call(t, c, "resources/read", map[string]any{"uri": "acc://snapshot"})
			text := res["contents"].([]any)[0].(map[string]any)["text"].(string)
			// The stored body keeps its CR (prose allows it); the
			// snapshot shows it as the six characters \u000d.
			if !strings.Contains(text, `"one\\u000d\ntwo"`) {
				t.Errorf("snapshot lacks the escaped body:\n%s", text)
			}
			var snap any
			if err := json.Unmarshal([]byte(text), &snap); err != nil {
				t.Fatal(err)
			}
			msgs := findMessages(snap)
			byKind := map[string]map[string]any{}
			for _, m := range msgs {
				if m["trust"] != "untrusted peer content" {
					t.Errorf("message %v without the trust marker", m["messageId"])
				}
				byKind[m["kind"].(string)] = m
			}
			if a := byKind["answer"]; a == nil || a["inReplyTo"] != qid || a["threadId"] != byKind["question"]["threadId"] || a["messageId"] != ans["messageId"] {
				t.Errorf("answer envelope: %v", a)
			}
			if h := byKind["handoff"]; h == nil || !strings.Contains(mustJSON(h["handoff"]), `"completed":["docs"]`) || h["obligation"] != "acknowledge" {
				t.Errorf("handoff envelope: %v", h)
			}
		})
	}
}

// findMessages collects every object in v that looks like a message record.
func findMessages(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["messageId"].(string); ok && x["kind"] != nil && x["fromParticipantId"] != nil {
			return append(out, x)
		}
		for _, e := range x {
			out = append(out, findMessages(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, findMessages(e)...)
		}
	}
	return out
}

// The escaping of docs/mcp.md#resources reaches every string of a message, nested ones
// included, and leaves other records alone. (The store refuses most
// control characters on write, so this is checked on a crafted snapshot.)
func TestPeerSnapshotEscapes(t *testing.T) {
	data := map[string]any{"snapshot": map[string]any{
		"participants": []any{map[string]any{"participantId": "a\x1b"}},
		"messages": []any{map[string]any{"messageId": "m1", "subject": "bell\x07", "body": "red \x1b[31m\tok\n\x7f",
			"handoff": map[string]any{"completed": []any{"docs\u0085"}}, "artifacts": []any{map[string]any{"description": "x\u2028y"}}}},
	}}
	got, err := peerSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"snapshot":{"messages":[{"artifacts":[{"description":"x\u2028y"}],"body":"red \\u001b[31m\tok\n\\u007f",` +
		`"handoff":{"completed":["docs` + "\u0085" + `"]},"messageId":"m1","subject":"bell\\u0007","trust":"untrusted peer content"}],` +
		`"participants":[{"participantId":"a\u001b"}]}}`
	if s := mustJSON(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

// Edge cases of acc-mcp, each kept as a check.

// Every request taken before the end of input is answered before the
// server stops, however long the answers take (here: a store held by
// another process, so each call waits out storeWait in turn).
func TestEndOfInputAnswersEverything(t *testing.T) {
	saved := storeWait
	storeWait = 300 * time.Millisecond
	t.Cleanup(func() { storeWait = saved })
	r := newRoom(t)
	r.acc("attach", "--participant", "alice") // creates the store
	db, err := sql.Open("sqlite", "file:"+storeFile(t, r))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), &Config{Participant: "research", Dir: r.ws, Getenv: r.getenv}, inR, &out, io.Discard)
	}()
	lines := []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	const calls = 6
	for i := 1; i <= calls; i++ {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"acc_status","arguments":{}}}`, i))
	}
	io.WriteString(inW, strings.Join(lines, "\n")+"\n")
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	answered := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["id"] != 0.0 {
			answered++
			if !strings.Contains(line, "store_busy") {
				t.Errorf("answer %s", line)
			}
		}
	}
	if answered != calls {
		t.Errorf("%d of %d calls answered before the server stopped", answered, calls)
	}
}

func storeFile(t *testing.T, r *room) string {
	t.Helper()
	var found string
	filepath.WalkDir(r.data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "acc.db" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatal("no store")
	}
	return found
}

// Ids are echoed exactly as the client spelled them.
func TestIDsEchoedExactly(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	for _, id := range []string{`1.5`, `-1.5`, `12345678901234567890`, `1e2`, `0`, `"x"`, `""`} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if res := c.wait(id); res["result"] == nil {
			t.Errorf("id %s: %v", id, res)
		}
	}
}

// An initialize the SDK could not read is refused like any malformed one
// and leaves the phase alone; an initialize carrying modern _meta is still
// an initialize; an initialize asking for a newer revision is served as the
// 2025-11-25 it was answered with.
func TestInitializeEdges(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	for _, caps := range []string{`{"roots":"x"}`, `{"elicitation":[]}`} {
		c.send(`{"jsonrpc":"2.0","id":"bad","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`)
		if code, _, _ := rpcError(t, caps, c.wait(`"bad"`)); code != codeInvalidArgs {
			t.Errorf("capabilities %s: code %v", caps, code)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if v := result(t, c.wait(`"init"`))["protocolVersion"]; v != "2025-11-25" {
		t.Fatalf("negotiated %v", v)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, step := range []struct {
		method string
		params map[string]any
	}{
		{"tools/list", map[string]any{}},
		{"resources/read", map[string]any{"uri": "acc://roster"}},
		{"tools/call", map[string]any{"name": "acc_status", "arguments": map[string]any{}}},
		{"tools/call", map[string]any{"name": "acc_work", "arguments": map[string]any{}}},
	} {
		res := result(t, c.request(step.method, step.params))
		if _, ok := res["resultType"]; ok {
			t.Errorf("%s: a 2025-11-25 result carries resultType", step.method)
		}
	}
}

// Only the routed methods are served; everything else is -32601 in both
// eras, and a reserved _meta key makes a request modern even when null.
// resources/templates/list is routed, and answers an empty list in both.
func TestUnroutedMethods(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	result(t, c.initialize("2025-11-25"))
	for _, p := range []map[string]any{{}, modernParams(nil)} {
		res := result(t, c.request("resources/templates/list", p))
		if got := mustJSON(res["resourceTemplates"]); got != "[]" {
			t.Errorf("resources/templates/list %v: resourceTemplates %s, want []", p, got)
		}
	}
	for _, m := range []string{"prompts/list", "logging/setLevel", "notifications/initialized", "completion/complete"} {
		code, msg, _ := rpcError(t, m, c.request(m, map[string]any{}))
		if code != codeMethodNotFound || msg != "unknown method: "+m {
			t.Errorf("legacy %s: %v %q", m, code, msg)
		}
	}
	for _, m := range []string{"subscriptions/listen", "prompts/list"} {
		if code, _, _ := rpcError(t, m, c.request(m, modernParams(nil))); code != codeMethodNotFound {
			t.Errorf("modern %s: %v", m, code)
		}
	}
	for _, meta := range []map[string]any{{metaVersion: nil}, {metaCapabilities: nil}} {
		if code, _, _ := rpcError(t, "null meta", c.request("tools/list", map[string]any{"_meta": meta})); code != codeInvalidArgs {
			t.Errorf("meta %v: %v", meta, code)
		}
	}
	disc := result(t, c.request("server/discover", modernParams(nil)))
	if si, _ := disc["serverInfo"].(map[string]any); si["name"] != serverName {
		t.Errorf("discover serverInfo %v", disc["serverInfo"])
	}
}

// Integers in any JSON spelling: one that is an integer is served, one out
// of range is refused like any bad argument, before any session exists.
func TestIntegerSpellings(t *testing.T) {
	for _, e := range []era{eras[0], eras[2]} {
		r := newRoom(t)
		c := startBinary(t, r, "research")
		e.open(t, c)
		for _, args := range []string{`{"limit":1e400}`, `{"limit":1.5}`, `{"limit":9223372036854775808}`} {
			out := e.tool(t, c, "acc_inbox", json.RawMessage(args))
			if !out.isErr || out.reason != "invalid_limit" {
				t.Errorf("%s %s: %+v", e.name, args, out)
			}
		}
		if out := e.tool(t, c, "acc_claim", json.RawMessage(`{"action":"acquire","resource":"file:a","leaseSeconds":9223372036854775808}`)); !out.isErr || out.reason != "invalid_argument" {
			t.Errorf("%s leaseSeconds 2^63: %+v", e.name, out)
		}
		if roster := rosterText(t, e, c); roster != "[]" {
			t.Errorf("%s: refused calls created presence: %s", e.name, roster)
		}
		for _, args := range []string{`{"limit":1.0}`, `{"limit":1e2}`} {
			if out := e.tool(t, c, "acc_inbox", json.RawMessage(args)); out.isErr {
				t.Errorf("%s %s: %s", e.name, args, out.text)
			}
		}
		if out := e.tool(t, c, "acc_claim", json.RawMessage(`{"action":"acquire","resource":"file:a","leaseSeconds":1e3}`)); out.isErr {
			t.Errorf("%s leaseSeconds 1e3: %s", e.name, out.text)
		}
		if out := e.tool(t, c, "acc_sync", json.RawMessage(`{"limit":2.0}`)); out.isErr {
			t.Errorf("%s sync limit 2.0: %s", e.name, out.text)
		}
	}
}

// A failure to read a resource is a JSON-RPC internal error, -32603.
func TestResourceFailureCode(t *testing.T) {
	r := newRoom(t)
	cmd := exec.Command(filepath.Join(binDir, "acc-mcp"))
	cmd.Env = r.environ("ACC_MCP_WORKSPACE=" + filepath.Join(r.ws, "does-not-exist"))
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	c := newClient(t, in, out)
	result(t, c.initialize("2025-06-18"))
	if code, _, _ := rpcError(t, "roster", c.request("resources/read", map[string]any{"uri": "acc://roster"})); code != -32603 {
		t.Errorf("code %v, want -32603", code)
	}
}

// Servers started together with one participant share one session.
func TestConcurrentServersOneSession(t *testing.T) {
	r := newRoom(t)
	r.acc("attach", "--participant", "alice")
	const n = 4
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = startBinary(t, r, "research")
		clients[i].initialize("2025-11-25")
	}
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.nextID++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": "tools/call", "params": map[string]any{"name": "acc_status", "arguments": map[string]any{}}})
			c.send(string(b))
			res := c.wait(fmt.Sprint(c.nextID))
			ids[i], _ = res["result"].(map[string]any)["structuredContent"].(map[string]any)["callerSessionId"].(string)
		}()
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] || id == "" {
			t.Fatalf("sessions %v, want one", ids)
		}
	}
}

// A line with a stray closing bracket is not JSON: -32700, id null; ids
// out of float64 range and ids with HTML-significant characters come back
// as sent; modern metadata the SDK could not read does not turn a request
// into a legacy one.
func TestFramingEdges(t *testing.T) {
	c := startBinary(t, newRoom(t), "mcp")
	result(t, c.initialize("2025-11-25"))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}]`)
	for _, key := range []string{"null", "null#1"} {
		if code, _, _ := rpcError(t, key, c.wait(key)); code != codeParse {
			t.Errorf("stray bracket: %v", code)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":1E400,"method":"ping"}`)
	if raw := c.waitRaw(`1E400`); !bytes.Contains(raw, []byte(`"result":{}`)) || !bytes.Contains(raw, []byte(`"id":1E400`)) {
		t.Errorf("id 1E400: %s", raw)
	}
	c.send(`{"jsonrpc":"2.0","id":"<a&b>","method":"ping"}`)
	if raw := c.waitRaw(`"<a&b>"`); !bytes.Contains(raw, []byte(`"id":"<a&b>"`)) {
		t.Errorf("id <a&b>: %s", raw)
	}
	for _, meta := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":1e400}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}`,
	} {
		for _, method := range []string{"tools/list", "server/discover"} {
			c.send(`{"jsonrpc":"2.0","id":"m","method":"` + method + `","params":{"_meta":` + meta + `}}`)
			complete(t, method, result(t, c.wait(`"m"`)))
		}
	}
}

// Refusals core makes before it touches the store are made before a
// session is resolved too: no presence. A store that cannot be opened is an
// isError result, not a protocol error.
func TestCoreRefusalsLeaveNoPresence(t *testing.T) {
	for _, e := range []era{eras[1], eras[2]} {
		r := newRoom(t)
		c := startBinary(t, r, "research")
		e.open(t, c)
		for _, call := range []struct {
			tool string
			args string
		}{
			{"acc_message", `{"to":[],"subject":"s","body":"b","supersedes":["x"]}`},
			{"acc_message", `{"to":[],"subject":"s","body":"b","obligation":"reply"}`},
			{"acc_message", `{"to":[],"subject":"s","body":"b","kind":"question"}`},
			{"acc_message", `{"to":[],"subject":"s","body":"b","kind":"decision","supersedes":["x"],"withdraws":["y"]}`},
			{"acc_message", `{"to":["alice"],"subject":"","body":"b"}`},
			{"acc_request", `{"toParticipantId":"alice","title":"t\u0007"}`},
			{"acc_reply", `{"messageId":"not an id","body":"b"}`},
			{"acc_ack", `{"messageId":"not an id"}`},
			{"acc_inbox", `{"cursor":"nonsense!"}`},
			{"acc_inbox", `{"messageId":"not an id"}`},
			{"acc_claim", `{"action":"acquire","resource":"file:../outside.go"}`},
			{"acc_claim", `{"action":"acquire","resource":"nonsense"}`},
			{"acc_claim", `{"action":"acquire","resource":"file:src/*"}`},
			{"acc_claim", `{"action":"acquire","resource":"file:a.go","leaseSeconds":99999999}`},
			{"acc_claim", `{"action":"renew","claimId":"not an id"}`},
			{"acc_release", `{"claimId":"not an id"}`},
			{"acc_work", `{"summary":"s","mode":"edit","resourceHints":["file:../x"]}`},
			{"acc_work", `{"summary":"","mode":"edit"}`},
			{"acc_finish", `{"goal":""}`},
			{"acc_finish", `{"goal":"g","completed":["line\u0007"]}`},
		} {
			out := e.tool(t, c, call.tool, json.RawMessage(call.args))
			if !out.isErr {
				t.Errorf("%s %s %s: accepted", e.name, call.tool, call.args)
			}
			if strings.Contains(out.text, "--") || strings.Contains(out.text, "`acc ") {
				t.Errorf("%s %s: CLI words in %q", e.name, call.tool, out.text)
			}
		}
		if roster := rosterText(t, e, c); roster != "[]" {
			t.Errorf("%s: refused calls created presence: %s", e.name, roster)
		}
		if fp := r.fingerprint(); fp != emptyFingerprint(t) {
			t.Errorf("%s: refused calls wrote into the data home", e.name)
		}
	}
	r := newRoom(t)
	if err := os.WriteFile(filepath.Join(r.base(), "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "acc-mcp"))
	cmd.Env = append(r.environ("ACC_MCP_WORKSPACE="+r.ws), "ACC_DATA_HOME="+filepath.Join(r.base(), "afile"))
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	c := newClient(t, in, outp)
	result(t, c.initialize("2025-11-25"))
	if out := eras[1].tool(t, c, "acc_status", map[string]any{}); !out.isErr {
		t.Errorf("a store that cannot be created: %+v", out)
	}
}

// Two servers of one participant share one session: it stays online while
// either runs, and either can finish it (the other then opens a new one).
func TestSharedSession(t *testing.T) {
	r := newRoom(t)
	a := startBinary(t, r, "research")
	a.initialize("2025-11-25")
	first := a.ok("acc_status", map[string]any{})["callerSessionId"].(string)
	b, pb := spawnBinary(t, r, "research")
	b.initialize("2025-11-25")
	if got := b.ok("acc_status", map[string]any{})["callerSessionId"]; got != first {
		t.Fatalf("second server: %v, want %s", got, first)
	}
	pb.in.Close()
	pb.cmd.Wait()
	a.ok("acc_work", map[string]any{"summary": "s", "mode": "edit"})
	if got := presenceOf(r, first); got != "online" {
		t.Errorf("after the other server exited, the live one's session is %q", got)
	}
	c := startBinary(t, r, "research")
	c.initialize("2025-11-25")
	c.ok("acc_finish", map[string]any{"goal": "done"})
	fin := a.ok("acc_finish", map[string]any{"goal": "also done"})
	if fin["message"].(map[string]any)["kind"] != "handoff" {
		t.Errorf("finish after the other finished: %v", fin)
	}
}

// ACC_WORKSPACE_ROOT, the CLI's override, does not move acc-mcp out of
// ACC_MCP_WORKSPACE.
func TestWorkspaceRootIgnored(t *testing.T) {
	r := newRoom(t)
	other := filepath.Join(r.base(), "other")
	os.MkdirAll(other, 0o755)
	cmd := exec.Command(filepath.Join(binDir, "acc-mcp"))
	cmd.Env = r.environ("ACC_MCP_WORKSPACE="+r.ws, "ACC_WORKSPACE_ROOT="+other)
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	c := newClient(t, in, outp)
	c.initialize("2025-11-25")
	st := c.ok("acc_status", map[string]any{})
	if root := st["participants"].([]any)[0].(map[string]any)["checkoutRoot"]; root != r.ws {
		t.Errorf("checkoutRoot %v, want %s", root, r.ws)
	}
}

// emptyFingerprint is the fingerprint of an empty data home.
func emptyFingerprint(t *testing.T) string {
	return newRoom(t).fingerprint()
}

// An empty string is refused, never taken as "absent"; refusals name the
// tool's own arguments; a retried acc_finish returns its handoff without
// opening a session; a call with no tool name is refused as such.
func TestEmptyFieldsLimitsAndRetriedFinish(t *testing.T) {
	r := newRoom(t)
	c := startBinary(t, r, "research")
	e := eras[1]
	e.open(t, c)
	for _, call := range []struct{ tool, args, want string }{
		{"acc_inbox", `{"messageId":""}`, "arguments.messageId must not be empty"},
		{"acc_finish", `{"goal":"g","toParticipantId":""}`, "arguments.toParticipantId must not be empty"},
		{"acc_message", `{"to":["alice"],"subject":"s","body":"b","clientMessageId":""}`, "arguments.clientMessageId must not be empty"},
		{"acc_request", `{"toParticipantId":"alice","title":"t","detail":"` + strings.Repeat("x", 4001) + `"}`, "arguments.detail is 4001 characters"},
		{"acc_request", `{"toParticipantId":"alice","title":"` + strings.Repeat("x", 501) + `"}`, "arguments.title is 501 characters"},
		{"acc_finish", `{"goal":"` + strings.Repeat("x", 501) + `"}`, "arguments.goal is 501 characters"},
		{"acc_finish", `{"goal":"g","completed":["` + strings.Repeat("x", 501) + `"]}`, "arguments.completed is 501 characters"},
	} {
		out := e.tool(t, c, call.tool, json.RawMessage(call.args))
		if !out.isErr || !strings.Contains(out.text, call.want) {
			t.Errorf("%s: %q, want it to say %q", call.tool, clip(out.text), call.want)
		}
	}
	alice := r.acc("attach", "--participant", "alice")
	_ = alice
	args := map[string]any{"goal": "g", "clientMessageId": "fin1", "toParticipantId": "alice"}
	first := e.ok(t, c, "acc_finish", args).(map[string]any)["message"].(map[string]any)["messageId"]
	again := e.ok(t, c, "acc_finish", args).(map[string]any)["message"].(map[string]any)["messageId"]
	if first != again {
		t.Errorf("a retried finish gave %v, want the first handoff %v", again, first)
	}
	if roster := rosterText(t, e, c); strings.Contains(roster, `"research"`) {
		t.Errorf("the retry opened a session: %s", roster)
	}
	res := result(t, c.request("tools/call", map[string]any{}))
	if res["isError"] != true || !strings.Contains(mustJSON(res["content"]), "params.name is required") {
		t.Errorf("a call with no name: %v", res)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// A session two servers share stays online while one runs, though the
// other, whose pid it recorded last, has exited.
func TestSharedSessionStaysOnline(t *testing.T) {
	saved := presenceEvery
	presenceEvery = 200 * time.Millisecond
	t.Cleanup(func() { presenceEvery = saved })
	r := newRoom(t)
	a := startInProcess(t, r, "research")
	a.initialize("2025-11-25")
	id := a.ok("acc_status", map[string]any{})["callerSessionId"].(string)
	b, pb := spawnBinary(t, r, "research")
	b.initialize("2025-11-25")
	b.ok("acc_status", map[string]any{}) // the session now records b's pid
	pb.in.Close()
	pb.cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for presenceOf(r, id) != "online" {
		if time.Now().After(deadline) {
			t.Fatalf("the shared session stayed %q while a server of it runs", presenceOf(r, id))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
