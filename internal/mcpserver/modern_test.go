package mcpserver

import (
	"encoding/json"
	"testing"
)

// modernMeta is the per-request metadata of the 2026-07-28 interface.
func modernMeta() map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
}

func modernParams(p map[string]any) map[string]any {
	if p == nil {
		p = map[string]any{}
	}
	p["_meta"] = modernMeta()
	return p
}

func result(t *testing.T, reply map[string]any) map[string]any {
	t.Helper()
	res, ok := reply["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", reply)
	}
	return res
}

func complete(t *testing.T, what string, res map[string]any) {
	t.Helper()
	if res["resultType"] != "complete" {
		t.Errorf("%s: resultType %v", what, res["resultType"])
	}
	meta, _ := res["_meta"].(map[string]any)
	if si, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); si["name"] != "agents-can-communicate" {
		t.Errorf("%s: _meta %v", what, res["_meta"])
	}
}

// TestModernInterface drives the built acc-mcp with 2026-07-28 requests
// and no initialize (docs/mcp.md#protocol-revisions, docs/mcp.md#tools).
func TestModernInterface(t *testing.T) {
	r := newRoom(t)
	c := startBinary(t, r, "research")

	disc := result(t, c.request("server/discover", modernParams(nil)))
	complete(t, "discover", disc)
	if b, _ := json.Marshal(disc["supportedVersions"]); string(b) != `["2026-07-28","2025-11-25","2025-06-18"]` {
		t.Errorf("supportedVersions %s", b)
	}
	if disc["ttlMs"] != 0.0 || disc["cacheScope"] != "private" {
		t.Errorf("discover cache hints %v %v", disc["ttlMs"], disc["cacheScope"])
	}

	ping := result(t, c.request("ping", modernParams(nil)))
	complete(t, "ping", ping)
	if len(ping) != 2 {
		t.Errorf("ping carries more than the envelope: %v", ping)
	}

	unknown := result(t, c.request("tools/call", modernParams(map[string]any{"name": "acc_teleport", "arguments": map[string]any{}})))
	complete(t, "unknown tool", unknown)
	if unknown["isError"] != true {
		t.Errorf("unknown tool: %v", unknown)
	}

	list := result(t, c.request("tools/list", modernParams(nil)))
	complete(t, "tools/list", list)
	if n := len(list["tools"].([]any)); n != 12 {
		t.Errorf("%d tools", n)
	}
	complete(t, "resources/read", result(t, c.request("resources/read", modernParams(map[string]any{"uri": "acc://roster"}))))

	// An exact inbox read is an array: raw in structuredContent (2026).
	complete(t, "acc_status", result(t, c.request("tools/call", modernParams(map[string]any{"name": "acc_status", "arguments": map[string]any{}}))))
	alice := r.acc("attach", "--participant", "alice")
	q := r.acc("message", "--to", "research", "--type", "question", "--subject", "q", "--body", "?",
		"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string))
	qid := q["message"].(map[string]any)["messageId"].(string)
	exact := result(t, c.request("tools/call", modernParams(map[string]any{"name": "acc_inbox", "arguments": map[string]any{"messageId": qid}})))
	complete(t, "acc_inbox exact", exact)
	if items, ok := exact["structuredContent"].([]any); !ok || len(items) != 1 {
		t.Errorf("exact read structuredContent: %v", exact["structuredContent"])
	}
}

// TestDiscoverThenInitialize: a modern probe followed by the legacy
// handshake keeps the eras apart (docs/mcp.md#protocol-revisions; docs/mcp.md#wire-details).
func TestDiscoverThenInitialize(t *testing.T) {
	r := newRoom(t)
	c := startBinary(t, r, "research")
	complete(t, "discover", result(t, c.request("server/discover", modernParams(nil))))

	// Before initialize, a legacy request is still refused.
	if e, _ := c.request("tools/list", map[string]any{})["error"].(map[string]any); e["code"] != float64(codeInvalidArgs) {
		t.Errorf("legacy before initialize: %v", e)
	}
	init := result(t, c.initialize("2025-06-18"))
	if init["protocolVersion"] != "2025-06-18" {
		t.Errorf("initialize after discover: %v", init)
	}
	if _, ok := init["resultType"]; ok {
		t.Error("initialize carries resultType")
	}
	for _, step := range []struct {
		method string
		params map[string]any
	}{
		{"tools/list", map[string]any{}},
		{"resources/list", map[string]any{}},
		{"resources/read", map[string]any{"uri": "acc://roster"}},
		{"tools/call", map[string]any{"name": "acc_status", "arguments": map[string]any{}}},
		{"tools/call", map[string]any{"name": "acc_teleport", "arguments": map[string]any{}}},
	} {
		res := result(t, c.request(step.method, step.params))
		for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
			if _, ok := res[k]; ok {
				t.Errorf("legacy %s carries %s", step.method, k)
			}
		}
	}
	// The legacy exact read drops the array from structuredContent (docs/mcp.md#protocol-revisions).
	alice := r.acc("attach", "--participant", "alice")
	q := r.acc("message", "--to", "research", "--type", "question", "--subject", "q", "--body", "?",
		"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string))
	qid := q["message"].(map[string]any)["messageId"].(string)
	exact := result(t, c.request("tools/call", map[string]any{"name": "acc_inbox", "arguments": map[string]any{"messageId": qid}}))
	if _, ok := exact["structuredContent"]; ok {
		t.Errorf("2025 exact read keeps structuredContent: %v", exact)
	}
	// A modern request still works after the handshake, in its own era.
	complete(t, "modern after initialize", result(t, c.request("tools/list", modernParams(nil))))
	if e, _ := c.request("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "x", "version": "1"}})["error"].(map[string]any); e["code"] != float64(codeInvalidReq) {
		t.Errorf("second initialize: %v", e)
	}
}
