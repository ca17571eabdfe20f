package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The OpenAI Chat Completions API (POST …/chat/completions), which
// GitHub Copilot CLI, Qwen Code, Factory Droid, OpenCode, Kilo and Pi all
// speak when pointed at a compatible endpoint. A request offers tools as
// {"type": "function", "function": {"name", "parameters"}}; the model's
// calls come back as message.tool_calls (or delta.tool_calls when
// streamed) with their arguments as a JSON string, and the client returns
// each result as a {"role": "tool", "tool_call_id", "content"} message.
//
// Each client names its shell and file-write tools differently and gives
// them different parameters, so a Shell or Write call is spelled as the
// first tool the request offers among the known names below, with its
// argument names read from that tool's JSON schema (docs/real-clients.md#chat-completions).

// chatShellTools are the shell tools of the Chat Completions clients, in the
// order they are looked for: OpenCode, Kilo and Pi (bash), Copilot CLI
// (bash), Qwen Code (run_shell_command), Factory Droid (Execute), and the
// Claude-style Bash.
var chatShellTools = []string{"bash", "run_shell_command", "Execute", "Bash", "shell"}

// chatWriteTools are their whole-file write tools: Copilot CLI (create),
// Qwen Code (write_file), Factory Droid (Create), OpenCode, Kilo and Pi
// (write), and Write.
var chatWriteTools = []string{"create", "write_file", "Create", "write", "Write"}

// Argument names a tool's schema may use for the same thing, in order of
// preference.
var (
	chatCommandKeys = []string{"command", "cmd"}
	chatPathKeys    = []string{"file_path", "filePath", "path", "absolute_path"}
	chatContentKeys = []string{"content", "file_text", "text", "contents"}
)

// chatTool is a tool a Chat Completions request offers: its name and the
// properties and required names of its parameters' schema.
type chatTool struct {
	name     string
	props    map[string]any
	required []string
}

// chatTools lists the function tools a Chat Completions request offers.
func (r *Request) chatTools() []chatTool {
	root, _ := r.decoded.(map[string]any)
	var out []chatTool
	for _, t := range asSlice(root["tools"]) {
		tm, _ := t.(map[string]any)
		fn, _ := tm["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if name == "" {
			continue
		}
		params, _ := fn["parameters"].(map[string]any)
		ct := chatTool{name: name}
		ct.props, _ = params["properties"].(map[string]any)
		for _, q := range asSlice(params["required"]) {
			if s, ok := q.(string); ok {
				ct.required = append(ct.required, s)
			}
		}
		out = append(out, ct)
	}
	return out
}

// chatPick returns the first of names the request offers.
func chatPick(tools []chatTool, names []string) (chatTool, bool) {
	for _, n := range names {
		for _, t := range tools {
			if t.name == n {
				return t, true
			}
		}
	}
	return chatTool{}, false
}

// key returns the first of keys the tool's schema has, or keys[0] when it
// has none of them (a tool with no schema).
func (t chatTool) key(keys []string) string {
	for _, k := range keys {
		if _, ok := t.props[k]; ok {
			return k
		}
	}
	return keys[0]
}

// fill gives each required property args lacks a harmless value: a short
// text for a string (a description, most often), false, 0, or an empty
// list or object.
func (t chatTool) fill(args map[string]any) map[string]any {
	for _, k := range t.required {
		if _, ok := args[k]; ok {
			continue
		}
		prop, _ := t.props[k].(map[string]any)
		typ, _ := prop["type"].(string)
		if enum := asSlice(prop["enum"]); len(enum) > 0 {
			args[k] = enum[0]
			continue
		}
		switch typ {
		case "boolean":
			args[k] = false
		case "integer", "number":
			args[k] = 0
		case "array":
			args[k] = []any{}
		case "object":
			args[k] = map[string]any{}
		default:
			args[k] = "fake model call"
		}
	}
	return args
}

// chatCall spells a call as a tool name and its arguments.
func chatCall(req *Request, c Call) (string, map[string]any) {
	tools := req.chatTools()
	switch c.Kind {
	case CallShell:
		t, ok := chatPick(tools, chatShellTools)
		if !ok {
			t = chatTool{name: "bash"}
		}
		args := map[string]any{t.key(chatCommandKeys): c.Command}
		if _, ok := t.props["description"]; ok {
			args["description"] = "Run a shell command"
		}
		return t.name, t.fill(args)
	case CallWrite:
		t, ok := chatPick(tools, chatWriteTools)
		if !ok {
			t = chatTool{name: "write"}
		}
		return t.name, t.fill(map[string]any{t.key(chatPathKeys): c.Path, t.key(chatContentKeys): c.Content})
	}
	return c.Name, nonNil(c.Args)
}

// chatWantsJSON reports a JSON-mode request: a structured side call.
func chatWantsJSON(root map[string]any) bool {
	rf, _ := root["response_format"].(map[string]any)
	typ, _ := rf["type"].(string)
	return typ == "json_object" || typ == "json_schema"
}

// chatToolCalls spells the reply's calls as message.tool_calls entries,
// recording their ids on req.
func chatToolCalls(req *Request, reply Reply) []map[string]any {
	var calls []map[string]any
	for i, c := range reply.Calls {
		name, args := chatCall(req, c)
		b, _ := json.Marshal(args)
		id := fmt.Sprintf("call_fake_%d_%d", req.Seq, i+1)
		req.CallIDs = append(req.CallIDs, id)
		calls = append(calls, map[string]any{
			"id": id, "type": "function",
			"function": map[string]any{"name": name, "arguments": string(b)},
		})
	}
	return calls
}

func chatUsage(req *Request) map[string]any {
	in := tokens(req.Body)
	return map[string]any{"prompt_tokens": in, "completion_tokens": 10, "total_tokens": in + 10}
}

// writeChat answers a Chat Completions call: one chat.completion object, or
// a stream of chat.completion.chunk data lines — the role, the text in two
// deltas, each tool call's name and id then its arguments in two
// deltas, a chunk with the finish reason ("tool_calls" or "stop"), a
// usage chunk with no choices when stream_options.include_usage asks for
// it — ended by "data: [DONE]".
func writeChat(w http.ResponseWriter, req *Request, reply Reply) {
	calls := chatToolCalls(req, reply)
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	id := fmt.Sprintf("chatcmpl-fake-%d", req.Seq)
	created := time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": reply.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
			if reply.Text == "" {
				msg["content"] = nil
			}
		}
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   chatUsage(req),
		})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) {
		e.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if reply.Text != "" {
		for _, part := range halves(reply.Text) {
			chunk(map[string]any{"content": part}, nil)
		}
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""},
		}}}, nil)
		for _, part := range halves(fn["arguments"].(string)) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": part},
			}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	root, _ := req.decoded.(map[string]any)
	if opts, _ := root["stream_options"].(map[string]any); opts["include_usage"] == true {
		e.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": chatUsage(req),
		})
	}
	_, _ = e.w.Write([]byte("data: [DONE]\n\n"))
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chatToolResults lists the results of role "tool" messages: content as a
// string or a list of text parts.
func chatToolResults(root map[string]any) []ToolResult {
	var out []ToolResult
	for _, m := range asSlice(root["messages"]) {
		mm, _ := m.(map[string]any)
		if mm["role"] != "tool" {
			continue
		}
		id, _ := mm["tool_call_id"].(string)
		name, _ := mm["name"].(string)
		out = append(out, ToolResult{CallID: id, Name: name, Output: textOf(mm["content"])})
	}
	return out
}

// isChatPath reports a Chat Completions path: /v1/chat/completions, or
// /chat/completions under whatever base path a client was given.
func isChatPath(path string) bool {
	return strings.HasSuffix(path, "/chat/completions")
}
