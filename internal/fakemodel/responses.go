package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// responsesItems spells a reply as Responses API output items: a message
// item for the text, then one item per call. The shape of a call depends on
// the tools the request offers (see responsesCall).
func responsesItems(req *Request, reply Reply) []map[string]any {
	var items []map[string]any
	if reply.Text != "" || len(reply.Calls) == 0 {
		items = append(items, map[string]any{
			"id": fmt.Sprintf("msg_fake_%d", req.Seq), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}},
		})
	}
	for i, c := range reply.Calls {
		id := fmt.Sprintf("call_fake_%d_%d", req.Seq, i+1)
		req.CallIDs = append(req.CallIDs, id)
		items = append(items, responsesCall(req, c, id, fmt.Sprintf("fc_fake_%d_%d", req.Seq, i+1)))
	}
	return items
}

// responsesCall spells one call. A shell command goes to exec_command
// ({"cmd": …}) when offered, else to the older shell tool ({"command":
// [argv]}). A file write is an apply_patch that adds the file: a custom
// (freeform) tool call or a function call when apply_patch is offered,
// otherwise an apply_patch command line through the shell tool.
func responsesCall(req *Request, c Call, callID, itemID string) map[string]any {
	function := func(name string, args map[string]any) map[string]any {
		b, _ := json.Marshal(nonNil(args))
		return map[string]any{"id": itemID, "type": "function_call", "status": "completed",
			"call_id": callID, "name": name, "arguments": string(b)}
	}
	custom := func(name, input string) map[string]any {
		return map[string]any{"id": itemID, "type": "custom_tool_call", "status": "completed",
			"call_id": callID, "name": name, "input": input}
	}
	shell := func(command string) map[string]any {
		if req.tool("exec_command") == nil && req.tool("shell") != nil {
			return function("shell", map[string]any{"command": []string{"bash", "-lc", command}})
		}
		return function("exec_command", map[string]any{"cmd": command})
	}
	switch c.Kind {
	case CallShell:
		return shell(c.Command)
	case CallWrite:
		patch := addFilePatch(c.Path, c.Content)
		t := req.tool("apply_patch")
		switch {
		case t == nil:
			return shell("apply_patch <<'ACC_FAKE_PATCH'\n" + patch + "ACC_FAKE_PATCH\n")
		case t["type"] == "custom":
			return custom("apply_patch", patch)
		default:
			return function("apply_patch", map[string]any{"input": patch})
		}
	}
	if t := req.tool(c.Name); t != nil && t["type"] == "custom" {
		input, _ := c.Args["input"].(string)
		return custom(c.Name, input)
	}
	return function(c.Name, c.Args)
}

func responsesUsage(req *Request) map[string]any {
	in := tokens(req.Body)
	return map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + 10,
	}
}

// writeResponses answers a Responses API call: the response object, or the
// event stream response.created, response.in_progress, per item
// output_item.added / its deltas / output_item.done, response.completed.
func writeResponses(w http.ResponseWriter, req *Request, reply Reply) {
	items := responsesItems(req, reply)
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	resp := func(status string, output []map[string]any) map[string]any {
		r := map[string]any{
			"id": fmt.Sprintf("resp_fake_%d", req.Seq), "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": model, "output": output,
		}
		if status == "completed" {
			r["usage"] = responsesUsage(req)
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, resp("completed", items))
		return
	}
	e := startSSE(w)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	send("response.created", map[string]any{"response": resp("in_progress", []map[string]any{})})
	send("response.in_progress", map[string]any{"response": resp("in_progress", []map[string]any{})})
	for i, it := range items {
		id := it["id"]
		switch it["type"] {
		case "message":
			text := it["content"].([]any)[0].(map[string]any)["text"].(string)
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, part := range halves(text) {
				send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": part})
			}
			send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text})
			send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			added := map[string]any{"id": id, "type": "function_call", "status": "in_progress",
				"call_id": it["call_id"], "name": it["name"], "arguments": ""}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			args := it["arguments"].(string)
			for _, part := range halves(args) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": part})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			added := map[string]any{"id": id, "type": "custom_tool_call", "status": "in_progress",
				"call_id": it["call_id"], "name": it["name"], "input": ""}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			input := it["input"].(string)
			for _, part := range halves(input) {
				send("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": part})
			}
			send("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "input": input})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	send("response.completed", map[string]any{"response": resp("completed", items)})
}
