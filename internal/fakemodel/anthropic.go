package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicBlocks spells a reply as Messages API content blocks.
func anthropicBlocks(req *Request, reply Reply) []map[string]any {
	var blocks []map[string]any
	if reply.Text != "" || len(reply.Calls) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": reply.Text})
	}
	for i, c := range reply.Calls {
		name, input := anthropicCall(req, c)
		id := fmt.Sprintf("toolu_fake_%d_%d", req.Seq, i+1)
		req.CallIDs = append(req.CallIDs, id)
		blocks = append(blocks, map[string]any{
			"type":  "tool_use",
			"id":    id,
			"name":  name,
			"input": input,
		})
	}
	return blocks
}

// anthropicCall spells a call in Messages API terms. The file-write tool is
// Write with file_path (Claude Code), or with path where the Write tool the
// request offers names that property instead (Kimi Code).
func anthropicCall(req *Request, c Call) (string, map[string]any) {
	switch c.Kind {
	case CallShell:
		return "Bash", map[string]any{"command": c.Command, "description": "Run a shell command"}
	case CallWrite:
		key := "file_path"
		if schemaHas(req.tool("Write"), "path") && !schemaHas(req.tool("Write"), "file_path") {
			key = "path"
		}
		return "Write", map[string]any{key: c.Path, "content": c.Content}
	}
	return c.Name, nonNil(c.Args)
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func anthropicUsage(req *Request, out int) map[string]any {
	return map[string]any{
		"input_tokens":                tokens(req.Body),
		"output_tokens":               out,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
}

// writeAnthropic answers a Messages API call: one JSON message, or the event
// stream message_start, per block content_block_start / _delta / _stop,
// message_delta (stop reason), message_stop.
func writeAnthropic(w http.ResponseWriter, req *Request, reply Reply) {
	blocks := anthropicBlocks(req, reply)
	stop := "end_turn"
	if len(reply.Calls) > 0 {
		stop = "tool_use"
	}
	id := fmt.Sprintf("msg_fake_%d", req.Seq)
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(req, 10),
		})
		return
	}
	e := startSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(req, 1),
	}})
	e.event("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range halves(b["text"].(string)) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			input, _ := json.Marshal(b["input"])
			for _, part := range halves(string(input)) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// schemaHas reports whether an Anthropic tool definition's input schema
// has the property prop.
func schemaHas(tool map[string]any, prop string) bool {
	schema, _ := tool["input_schema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	_, ok := props[prop]
	return ok
}
