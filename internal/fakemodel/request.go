package fakemodel

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// API names a wire protocol the server speaks.
type API string

// The APIs.
const (
	Anthropic API = "anthropic" // Anthropic Messages
	Responses API = "responses" // OpenAI Responses
	Gemini    API = "gemini"    // Gemini generateContent
	Chat      API = "chat"      // OpenAI Chat Completions
)

// A Request is one HTTP request the server received, kept whole.
type Request struct {
	// Seq numbers the requests from 1 in arrival order.
	Seq int
	// At is when the server began reading the request.
	At time.Time
	// API is the protocol of a model call or token count; empty otherwise.
	API API
	// Method and Path (with the query) as received.
	Method, Path string
	// Header as received, with credentials replaced by "<redacted>".
	Header http.Header
	// Body is the request body, decompressed.
	Body []byte
	// Model is the model the client named, Stream whether it asked for SSE.
	Model  string
	Stream bool
	// ModelCall is true for a request that asked the model for an answer.
	ModelCall bool
	// Side is true for a model call answered without the script.
	Side bool
	// Reply is the index in the script of the reply served, or -1 (none, or
	// an open-ended Agenda's answer past the script).
	Reply int
	// Status is the HTTP status the server answered with.
	Status int
	// CallIDs are the ids of the tool calls in the answer, in order.
	CallIDs []string

	decoded      any // the body decoded as JSON, nil if it is not JSON
	strs         []string
	geminiMethod string // generateContent, streamGenerateContent, countTokens
}

// A ToolResult is the outcome of a tool call as the client reported it to the
// model.
type ToolResult struct {
	// CallID is the id of the call (Anthropic tool_use_id, Responses call_id,
	// Chat Completions tool_call_id, Gemini functionResponse id when the
	// client sends one).
	CallID string
	// Name is the tool's name where the API carries it (Gemini, and Chat
	// Completions when the client names it).
	Name string
	// Output is the result text; for a Gemini response object, its "output"
	// or "error" string, or else the object as JSON.
	Output string
	// Error is true when the client marked the result as an error
	// (Anthropic is_error, a Gemini "error" field).
	Error bool
}

func (r *Request) decode() {
	if len(r.Body) == 0 {
		return
	}
	var v any
	if json.Unmarshal(r.Body, &v) == nil {
		r.decoded = v
		r.strs = collectStrings(v, nil)
	}
}

func collectStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = collectStrings(x[k], out)
		}
	}
	return out
}

// JSON is the body decoded as JSON (maps, slices, strings, float64, bool,
// nil), or nil if the body is not JSON.
func (r *Request) JSON() any { return r.decoded }

// Contains reports whether s occurs in any string of the JSON body (after JSON
// unescaping, so quotes, newlines and angle brackets match as written), or in
// the raw body when it is not JSON.
func (r *Request) Contains(s string) bool {
	if r.decoded == nil {
		return strings.Contains(string(r.Body), s)
	}
	for _, x := range r.strs {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// Strings lists every string value in the JSON body, in a stable order.
func (r *Request) Strings() []string { return slices.Clone(r.strs) }

// Tools lists the names of the tools the request offers the model.
func (r *Request) Tools() []string {
	root, _ := r.decoded.(map[string]any)
	var names []string
	for _, t := range asSlice(root["tools"]) {
		tm, _ := t.(map[string]any)
		if n, ok := tm["name"].(string); ok { // Anthropic, Responses
			names = append(names, n)
		}
		if fn, ok := tm["function"].(map[string]any); ok { // Chat Completions
			if n, ok := fn["name"].(string); ok {
				names = append(names, n)
			}
		}
		for _, d := range asSlice(tm["functionDeclarations"]) { // Gemini
			dm, _ := d.(map[string]any)
			if n, ok := dm["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// tool returns the tool named name that the request offers, or nil.
func (r *Request) tool(name string) map[string]any {
	root, _ := r.decoded.(map[string]any)
	for _, t := range asSlice(root["tools"]) {
		tm, _ := t.(map[string]any)
		if tm["name"] == name {
			return tm
		}
		for _, d := range asSlice(tm["functionDeclarations"]) {
			if dm, _ := d.(map[string]any); dm["name"] == name {
				return dm
			}
		}
	}
	return nil
}

// ToolResults lists the tool results in the request, in order.
func (r *Request) ToolResults() []ToolResult {
	root, _ := r.decoded.(map[string]any)
	var out []ToolResult
	switch r.API {
	case Anthropic:
		for _, m := range asSlice(root["messages"]) {
			mm, _ := m.(map[string]any)
			for _, b := range asSlice(mm["content"]) {
				bm, _ := b.(map[string]any)
				if bm["type"] != "tool_result" {
					continue
				}
				id, _ := bm["tool_use_id"].(string)
				isErr, _ := bm["is_error"].(bool)
				out = append(out, ToolResult{CallID: id, Output: textOf(bm["content"]), Error: isErr})
			}
		}
	case Responses:
		for _, it := range asSlice(root["input"]) {
			im, _ := it.(map[string]any)
			switch im["type"] {
			case "function_call_output", "custom_tool_call_output":
				id, _ := im["call_id"].(string)
				out = append(out, ToolResult{CallID: id, Output: textOf(im["output"])})
			}
		}
	case Chat:
		out = chatToolResults(root)
	case Gemini:
		for _, c := range asSlice(root["contents"]) {
			cm, _ := c.(map[string]any)
			for _, p := range asSlice(cm["parts"]) {
				pm, _ := p.(map[string]any)
				fr, ok := pm["functionResponse"].(map[string]any)
				if !ok {
					continue
				}
				id, _ := fr["id"].(string)
				name, _ := fr["name"].(string)
				tr := ToolResult{CallID: id, Name: name}
				resp, _ := fr["response"].(map[string]any)
				if e, ok := resp["error"].(string); ok {
					tr.Output, tr.Error = e, true
				} else if o, ok := resp["output"].(string); ok {
					tr.Output = o
				} else {
					b, _ := json.Marshal(fr["response"])
					tr.Output = string(b)
				}
				out = append(out, tr)
			}
		}
	}
	return out
}

// textOf flattens a result content: a string, or a list of text blocks.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			em, _ := e.(map[string]any)
			if t, ok := em["text"].(string); ok {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// redact hides the credentials a client sends.
func redact(h http.Header) http.Header {
	out := h.Clone()
	for k := range out {
		switch strings.ToLower(k) {
		case "authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "proxy-authorization":
			out[k] = []string{"<redacted>"}
		}
	}
	return out
}
