package fakemodel

import (
	"fmt"
	"net/http"
)

func geminiCall(c Call) (string, map[string]any) {
	switch c.Kind {
	case CallShell:
		return "run_shell_command", map[string]any{"command": c.Command, "description": "Run a shell command"}
	case CallWrite:
		return "write_file", map[string]any{"file_path": c.Path, "content": c.Content}
	}
	return c.Name, nonNil(c.Args)
}

// geminiWantsJSON reports a JSON-mode request (a structured side call).
func geminiWantsJSON(root map[string]any) bool {
	gc, _ := root["generationConfig"].(map[string]any)
	if gc == nil {
		return false
	}
	mime, _ := gc["responseMimeType"].(string)
	return mime == "application/json" || gc["responseSchema"] != nil || gc["responseJsonSchema"] != nil
}

// geminiChunks spells a reply as GenerateContentResponse chunks. It is one
// chunk holding every part (text first, then the function calls) with the
// finish reason and usage: Gemini CLI 0.61 repeats the later chunks of a
// text split over several in its AfterAgent hook's prompt_response, so text
// is never split.
func geminiChunks(req *Request, reply Reply) []map[string]any {
	var parts []any
	if reply.Text != "" || len(reply.Calls) == 0 {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for i, c := range reply.Calls {
		name, args := geminiCall(c)
		id := fmt.Sprintf("gemini_fake_%d_%d", req.Seq, i+1)
		req.CallIDs = append(req.CallIDs, id)
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": args}})
	}
	in := tokens(req.Body)
	return []map[string]any{{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": 10, "totalTokenCount": in + 10},
		"modelVersion":  req.Model,
		"responseId":    fmt.Sprintf("fake-%d", req.Seq),
	}}
}

// writeGemini answers a generateContent call: SSE data lines (alt=sse), a
// JSON array of chunks (streamGenerateContent without alt=sse), or the one
// response object (generateContent).
func writeGemini(w http.ResponseWriter, req *Request, reply Reply) {
	chunks := geminiChunks(req, reply)
	switch {
	case req.Stream:
		e := startSSE(w)
		for _, c := range chunks {
			e.event("", c)
		}
	case req.geminiMethod == "streamGenerateContent":
		writeJSON(w, chunks)
	default:
		writeJSON(w, chunks[0])
	}
}
