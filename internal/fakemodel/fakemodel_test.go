package fakemodel

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends a JSON body and returns the status and the raw response.
func post(t *testing.T, url string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

type event struct {
	name string
	data map[string]any
}

// parseSSE splits a stream into events, failing on anything that is not an
// "event:" or "data:" line or whose data is not one JSON object.
func parseSSE(t *testing.T, body []byte) []event {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", body)
	}
	var out []event
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var ev event
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if ev.data != nil {
					t.Fatalf("two data lines in one event: %q", block)
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					t.Fatalf("data is not a JSON object: %q: %v", line, err)
				}
			default:
				t.Fatalf("unexpected line %q in event %q", line, block)
			}
		}
		if ev.data == nil {
			t.Fatalf("event without data: %q", block)
		}
		out = append(out, ev)
	}
	return out
}

func names(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.name
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

var anthropicTools = []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}}

func TestStartRefusesAnythingButLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "localhost:0", "example.com:80", "garbage"} {
		if s, err := Start(Config{Addr: addr}); err == nil {
			s.Close()
			t.Errorf("Start(%q) succeeded; want a refusal", addr)
		} else if addr != "garbage" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Start(%q): %v; want ErrNotLoopback", addr, err)
		}
	}
	s := start(t, Config{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q is not on 127.0.0.1", s.URL())
	}
}

func TestAnthropicStreamingToolCallThenText(t *testing.T) {
	s := start(t, Config{Script: Turn(Shell("echo x > f"), "All done.")})
	url := s.URL() + "/v1/messages?beta=true"
	req := map[string]any{"model": "claude-test", "stream": true, "tools": anthropicTools,
		"messages": []any{map[string]any{"role": "user", "content": "go"}}}

	status, hdr, body := post(t, url, req, "x-api-key", "secret")
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", status, hdr.Get("Content-Type"))
	}
	evs := parseSSE(t, body)
	want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if got := names(evs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", got, want)
	}
	var partial string
	for _, e := range evs {
		if str(e.data["type"]) != e.name {
			t.Errorf("event %s carries type %v", e.name, e.data["type"])
		}
		if e.name == "content_block_delta" {
			d := obj(e.data["delta"])
			if d["type"] != "input_json_delta" {
				t.Errorf("delta type %v", d["type"])
			}
			partial += str(d["partial_json"])
		}
	}
	block := obj(evs[2].data["content_block"])
	if block["type"] != "tool_use" || block["name"] != "Bash" || !strings.HasPrefix(str(block["id"]), "toolu_") {
		t.Errorf("content block %v", block)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(partial), &input); err != nil || input["command"] != "echo x > f" {
		t.Errorf("tool input %q: %v", partial, err)
	}
	if r := obj(evs[6].data["delta"])["stop_reason"]; r != "tool_use" {
		t.Errorf("stop reason %v", r)
	}
	if m := obj(evs[0].data["message"]); m["model"] != "claude-test" || m["role"] != "assistant" {
		t.Errorf("message_start %v", m)
	}

	// The client sends the tool result back; the model ends the turn.
	id := str(block["id"])
	req["messages"] = []any{
		map[string]any{"role": "user", "content": "go"},
		map[string]any{"role": "assistant", "content": []any{block}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id,
			"content": []any{map[string]any{"type": "text", "text": "blocked: <reason>"}}, "is_error": true}}},
		map[string]any{"role": "system", "content": "hook context"},
	}
	_, _, body = post(t, url, req)
	evs = parseSSE(t, body)
	var text string
	for _, e := range evs {
		if e.name == "content_block_delta" {
			text += str(obj(e.data["delta"])["text"])
		}
	}
	if text != "All done." {
		t.Errorf("streamed text %q", text)
	}
	if r := obj(evs[len(evs)-2].data["delta"])["stop_reason"]; r != "end_turn" {
		t.Errorf("stop reason %v", r)
	}

	calls := s.ModelCalls()
	if len(calls) != 2 || calls[0].CallIDs[0] != id || calls[1].Reply != 1 {
		t.Fatalf("recorded calls %+v", calls)
	}
	res := calls[1].ToolResults()
	if len(res) != 1 || res[0].CallID != id || res[0].Output != "blocked: <reason>" || !res[0].Error {
		t.Errorf("tool results %+v", res)
	}
	if !calls[1].Contains("blocked: <reason>") || !calls[1].Contains("hook context") || calls[1].Contains("nowhere") {
		t.Error("Contains does not search the decoded strings")
	}
	if h := calls[0].Header.Get("X-Api-Key"); h != "<redacted>" {
		t.Errorf("the key was kept: %q", h)
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
}

func TestAnthropicNonStreamingAndSideCalls(t *testing.T) {
	s := start(t, Config{Script: Script{Run(Write("/tmp/x", "hi")), Say("ok")}})
	url := s.URL() + "/v1/messages"

	// A call without tools is a side call: it does not use the script.
	_, _, body := post(t, url, map[string]any{"model": "haiku", "messages": []any{}})
	var side map[string]any
	if err := json.Unmarshal(body, &side); err != nil {
		t.Fatal(err)
	}
	if c := side["content"].([]any); str(obj(c[0])["text"]) != DefaultSideText {
		t.Errorf("side answer %v", side)
	}

	_, _, body = post(t, url, map[string]any{"model": "m", "tools": anthropicTools, "messages": []any{}})
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	c := obj(msg["content"].([]any)[0])
	if msg["type"] != "message" || msg["stop_reason"] != "tool_use" || c["name"] != "Write" ||
		obj(c["input"])["file_path"] != "/tmp/x" || obj(c["input"])["content"] != "hi" {
		t.Errorf("message %v", msg)
	}
	if s.Remaining() != 1 {
		t.Errorf("remaining %d, want 1", s.Remaining())
	}
	if err := s.Verify(); err == nil || !strings.Contains(err.Error(), "1 of 2 scripted replies were never requested") {
		t.Errorf("Verify: %v", err)
	}

	_, _, body = post(t, s.URL()+"/v1/messages/count_tokens", map[string]any{"messages": []any{}})
	if !bytes.Contains(body, []byte(`"input_tokens"`)) {
		t.Errorf("count_tokens: %s", body)
	}
	resp, err := http.Head(s.URL() + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || !reqs[0].Side || reqs[1].Side || reqs[2].ModelCall || reqs[3].Method != "HEAD" {
		t.Errorf("requests recorded: %d", len(reqs))
	}
}

// TestAnthropicWriteFollowsTheOfferedSchema: the Write call names the path
// as the offered Write tool's schema does (file_path for Claude Code, path
// for Kimi Code).
func TestAnthropicWriteFollowsTheOfferedSchema(t *testing.T) {
	for _, tc := range []struct {
		props      map[string]any
		key, other string
	}{
		{map[string]any{"file_path": map[string]any{}, "content": map[string]any{}}, "file_path", "path"},
		{map[string]any{"path": map[string]any{}, "content": map[string]any{}, "mode": map[string]any{}}, "path", "file_path"},
	} {
		s := start(t, Config{Script: Script{Run(Write("/tmp/x", "hi"))}})
		tools := []any{map[string]any{"name": "Write", "input_schema": map[string]any{"type": "object", "properties": tc.props}}}
		_, _, body := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": []any{}})
		var msg map[string]any
		if err := json.Unmarshal(body, &msg); err != nil {
			t.Fatal(err)
		}
		in := obj(obj(msg["content"].([]any)[0])["input"])
		if in[tc.key] != "/tmp/x" || in[tc.other] != nil || in["content"] != "hi" {
			t.Errorf("offered %v: Write input %v, want the path under %q", tc.props, in, tc.key)
		}
	}
}

func TestResponsesStreaming(t *testing.T) {
	s := start(t, Config{Script: Script{
		{Text: "Running it.", Calls: []Call{Shell("echo hi > out.txt")}},
		Say("Done."),
	}})
	url := s.URL() + "/v1/responses"
	tools := []any{map[string]any{"type": "function", "name": "exec_command"}}
	_, hdr, body := post(t, url, map[string]any{"model": "fake-model", "stream": true, "tools": tools,
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "go"}}}}},
		"Authorization", "Bearer secret")
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("content type %q", hdr.Get("Content-Type"))
	}
	evs := parseSSE(t, body)
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if got := names(evs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	for i, e := range evs {
		if e.data["type"] != e.name || e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d %s: type %v sequence %v", i, e.name, e.data["type"], e.data["sequence_number"])
		}
	}
	item := obj(evs[13].data["item"])
	var args map[string]any
	if err := json.Unmarshal([]byte(str(item["arguments"])), &args); err != nil || args["cmd"] != "echo hi > out.txt" {
		t.Errorf("function call %v: %v", item, err)
	}
	callID := str(item["call_id"])
	if item["type"] != "function_call" || item["name"] != "exec_command" || callID == "" {
		t.Errorf("function call item %v", item)
	}
	done := obj(evs[14].data["response"])
	if done["status"] != "completed" || str(done["id"]) == "" || obj(done["usage"])["total_tokens"] == nil || len(done["output"].([]any)) != 2 {
		t.Errorf("response.completed %v", done)
	}

	_, _, body = post(t, url, map[string]any{"model": "fake-model", "stream": true, "tools": tools,
		"input": []any{item, map[string]any{"type": "function_call_output", "call_id": callID,
			"output": "Command blocked by PreToolUse hook: held by claude-1"}}})
	evs = parseSSE(t, body)
	last := obj(evs[len(evs)-1].data["response"])
	msg := obj(last["output"].([]any)[0])
	if text := str(obj(msg["content"].([]any)[0])["text"]); text != "Done." {
		t.Errorf("final text %q", text)
	}
	res := s.ModelCalls()[1].ToolResults()
	if len(res) != 1 || res[0].CallID != callID || !strings.Contains(res[0].Output, "held by claude-1") {
		t.Errorf("tool results %+v", res)
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
}

// TestResponsesToolShapes checks how calls follow the tools a request offers.
func TestResponsesToolShapes(t *testing.T) {
	cases := []struct {
		name  string
		tools []any
		call  Call
		check func(item map[string]any) bool
	}{
		{"old shell tool", []any{map[string]any{"type": "function", "name": "shell"}}, Shell("ls"),
			func(it map[string]any) bool {
				return it["name"] == "shell" && str(it["arguments"]) == `{"command":["bash","-lc","ls"]}`
			}},
		{"freeform apply_patch", []any{map[string]any{"type": "custom", "name": "apply_patch"}}, Write("a.txt", "x\ny\n"),
			func(it map[string]any) bool {
				return it["type"] == "custom_tool_call" && it["name"] == "apply_patch" &&
					it["input"] == "*** Begin Patch\n*** Add File: a.txt\n+x\n+y\n*** End Patch\n"
			}},
		{"function apply_patch", []any{map[string]any{"type": "function", "name": "apply_patch"}}, Write("a.txt", "x"),
			func(it map[string]any) bool {
				return it["type"] == "function_call" && strings.Contains(str(it["arguments"]), `"input":"*** Begin Patch`)
			}},
		{"apply_patch through the shell", []any{map[string]any{"type": "function", "name": "exec_command"}}, Write("a.txt", "x"),
			func(it map[string]any) bool {
				return it["name"] == "exec_command" && strings.Contains(str(it["arguments"]), `apply_patch \u003c\u003c'ACC_FAKE_PATCH'`)
			}},
		{"raw tool", []any{map[string]any{"type": "function", "name": "view_image"}}, Tool("view_image", map[string]any{"path": "p.png"}),
			func(it map[string]any) bool {
				return it["name"] == "view_image" && str(it["arguments"]) == `{"path":"p.png"}`
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Script: Script{Run(tc.call)}})
			_, _, body := post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "tools": tc.tools, "input": []any{}})
			var resp map[string]any
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatal(err)
			}
			item := obj(resp["output"].([]any)[0])
			if !tc.check(item) {
				t.Errorf("item %v", item)
			}
		})
	}
}

func TestGemini(t *testing.T) {
	s := start(t, Config{Script: Script{
		Run(Shell("echo hi > out.txt")),
		Say("Done."),
		Run(Write("b.txt", "x")),
	}})
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}, map[string]any{"name": "write_file"}}}}
	base := s.URL() + "/v1beta/models/gemini-2.5-flash"
	user := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}

	_, hdr, body := post(t, base+":streamGenerateContent?alt=sse", map[string]any{"contents": []any{user}, "tools": tools},
		"x-goog-api-key", "secret")
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("content type %q", hdr.Get("Content-Type"))
	}
	evs := parseSSE(t, body)
	if len(evs) != 1 || evs[0].name != "" {
		t.Fatalf("events %v", evs)
	}
	cand := obj(evs[0].data["candidates"].([]any)[0])
	part := obj(obj(cand["content"])["parts"].([]any)[0])
	fc := obj(part["functionCall"])
	if cand["finishReason"] != "STOP" || fc["name"] != "run_shell_command" || obj(fc["args"])["command"] != "echo hi > out.txt" {
		t.Errorf("chunk %v", evs[0].data)
	}
	if evs[0].data["usageMetadata"] == nil {
		t.Error("no usageMetadata")
	}

	// The tool result comes back as a functionResponse; the answer without
	// alt=sse is a JSON array of chunks.
	fr := map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
		"id": fc["id"], "name": "run_shell_command", "response": map[string]any{"error": "Tool execution blocked: claimed"}}}}}
	_, _, body = post(t, base+":streamGenerateContent", map[string]any{"contents": []any{user, fr}, "tools": tools})
	var arr []map[string]any
	if err := json.Unmarshal(body, &arr); err != nil || len(arr) != 1 {
		t.Fatalf("array answer %s: %v", body, err)
	}
	res := s.ModelCalls()[1].ToolResults()
	if len(res) != 1 || res[0].CallID != fc["id"] || res[0].Name != "run_shell_command" || !res[0].Error ||
		res[0].Output != "Tool execution blocked: claimed" {
		t.Errorf("tool results %+v", res)
	}

	// generateContent answers one object; a JSON-mode call without tools is
	// a side call; countTokens counts.
	_, _, body = post(t, base+":generateContent", map[string]any{"contents": []any{user},
		"generationConfig": map[string]any{"responseMimeType": "application/json"}})
	if !bytes.Contains(body, []byte(`next_speaker`)) {
		t.Errorf("JSON-mode side answer %s", body)
	}
	_, _, body = post(t, base+":generateContent", map[string]any{"contents": []any{user}, "tools": tools})
	var one map[string]any
	if err := json.Unmarshal(body, &one); err != nil {
		t.Fatal(err)
	}
	fc = obj(obj(obj(obj(one["candidates"].([]any)[0])["content"])["parts"].([]any)[0])["functionCall"])
	if fc["name"] != "write_file" || obj(fc["args"])["file_path"] != "b.txt" {
		t.Errorf("generateContent %v", one)
	}
	_, _, body = post(t, base+":countTokens", map[string]any{"contents": []any{user}})
	if !bytes.Contains(body, []byte(`"totalTokens"`)) {
		t.Errorf("countTokens %s", body)
	}
	if calls := s.ModelCalls(); len(calls) != 3 || calls[0].Model != "gemini-2.5-flash" || !calls[0].Stream || calls[1].Stream {
		t.Errorf("calls %+v", calls)
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
}

func TestScriptRunsOutAndBuild(t *testing.T) {
	s := start(t, Config{Script: Script{{Build: func(req *Request) (Reply, error) {
		for _, str := range req.Strings() {
			if id, ok := strings.CutPrefix(str, "message id: "); ok {
				return Run(Shell("acc inbox --message " + id)), nil
			}
		}
		return Reply{}, errors.New("no message id shown")
	}}}})
	url := s.URL() + "/v1/messages"
	_, _, body := post(t, url, map[string]any{"tools": anthropicTools, "messages": []any{
		map[string]any{"role": "user", "content": "message id: m_42"}}})
	if !bytes.Contains(body, []byte(`acc inbox --message m_42`)) {
		t.Errorf("built reply %s", body)
	}
	_, _, body = post(t, url, map[string]any{"tools": anthropicTools, "messages": []any{}})
	if !bytes.Contains(body, []byte("no reply left")) {
		t.Errorf("answer past the end %s", body)
	}
	err := s.Verify()
	if err == nil || !strings.Contains(err.Error(), "the script has no reply left") {
		t.Errorf("Verify: %v", err)
	}
	s.Append(Reply{Build: func(*Request) (Reply, error) { return Reply{}, errors.New("boom") }})
	post(t, url, map[string]any{"tools": anthropicTools, "messages": []any{}})
	if err := s.Verify(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Verify after a failed Build: %v", err)
	}
}

func TestBodiesAreBoundedAndDecompressed(t *testing.T) {
	s := start(t, Config{MaxBodyBytes: 1000, Script: Script{Say("a"), Say("b")}})
	url := s.URL() + "/v1/messages"
	status, _, _ := post(t, url, map[string]any{"tools": anthropicTools, "pad": strings.Repeat("x", 2000)})
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d", status)
	}

	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	fmt.Fprintf(zw, `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"\u003cping\u003e"}]}`)
	zw.Close()
	req, _ := http.NewRequest(http.MethodPost, url, &zb)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("gzip body: status %d", resp.StatusCode)
	}
	// A bomb: small on the wire, too large once inflated.
	zb.Reset()
	zw = gzip.NewWriter(&zb)
	zw.Write(bytes.Repeat([]byte(" "), 5000))
	zw.Close()
	req, _ = http.NewRequest(http.MethodPost, url, &zb)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("inflated bomb: status %d", resp.StatusCode)
	}
	calls := s.ModelCalls()
	if len(calls) != 1 || !calls[0].Contains("<ping>") {
		t.Errorf("calls %+v", calls)
	}
	if err := s.Verify(); err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Errorf("Verify: %v", err)
	}
}

func TestMaxRequestsAndUnknownPaths(t *testing.T) {
	s := start(t, Config{MaxRequests: 2})
	for i, want := range []int{404, 404, 429} {
		resp, err := http.Get(s.URL() + "/nowhere")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("request %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests kept, want 2", n)
	}
}

func TestConcurrentCallsAndClose(t *testing.T) {
	var script Script
	for range 20 {
		script = append(script, Say("x"))
	}
	s, err := Start(Config{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, err := http.Post(s.URL()+"/v1/responses", "application/json",
				strings.NewReader(`{"stream":true,"tools":[{"name":"exec_command"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for i, r := range s.Requests() {
		if r.Seq != i+1 || seen[r.Reply] {
			t.Errorf("request %d: seq %d reply %d", i, r.Seq, r.Reply)
		}
		seen[r.Reply] = true
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Error("the server still answers after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestCloseRacesServe closes servers right after they start, from several
// goroutines at once, while a request is in flight: Close never reports the
// listener closed twice (http.Server closes the listeners it tracks too).
func TestCloseRacesServe(t *testing.T) {
	for range 200 {
		s, err := Start(Config{Script: Script{Say("x")}})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			if resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{"stream":true}`)); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
		wg.Wait()
	}
}

// TestAgenda plays a turn of three steps against an Anthropic caller: React
// interrupts once, when a request shows a marker, with a call of its own; the
// displaced step follows, the turn ends with Final, the script is used up
// exactly, and Again answers a further call with After.
func TestAgenda(t *testing.T) {
	s := start(t, Config{})
	p := s.Play(Agenda{
		Steps: PacedSteps(3, 1500*time.Millisecond),
		Final: "all steps done",
		After: "nothing more",
		React: func(req *Request) []Call {
			if req.Contains("PEER_ASKED") && !req.Contains("replied to the peer") {
				return []Call{Shell("echo replied to the peer")}
			}
			return nil
		},
	})
	url := s.URL() + "/v1/messages"
	ask := func(text string) string {
		_, _, body := post(t, url, map[string]any{"tools": anthropicTools, "messages": []any{
			map[string]any{"role": "user", "content": text}}})
		return string(body)
	}
	for i, want := range []struct{ prompt, answer string }{
		{"go", `sleep 1.5; echo step 1`},
		{"result 1 PEER_ASKED", `echo replied to the peer`},
		{"replied to the peer PEER_ASKED", `sleep 1.5; echo step 2`},
		{"result 2", `sleep 1.5; echo step 3`},
		{"result 3", `all steps done`},
	} {
		if got := ask(want.prompt); !strings.Contains(got, want.answer) {
			t.Errorf("call %d (%q): answer lacks %q:\n%s", i+1, want.prompt, want.answer, got)
		}
	}
	if !p.Done() || p.Reactions() != 1 {
		t.Errorf("Done %v, Reactions %d; want true, 1", p.Done(), p.Reactions())
	}
	if err := s.Verify(); err != nil {
		t.Errorf("Verify after the turn: %v", err)
	}
	p.Again()
	if got := ask("held"); !strings.Contains(got, "nothing more") {
		t.Errorf("Again answered %s", got)
	}
	if err := s.Verify(); err != nil {
		t.Errorf("Verify after Again: %v", err)
	}
	if got := PacedSteps(1, 0)[0].Command; got != "sleep 0; echo step 1" {
		t.Errorf("PacedSteps(1, 0) = %q", got)
	}
}

// TestAgendaOpenEnd: an open-ended agenda answers calls past its script
// with After, reacting first when React has something, and Verify reports
// nothing for them.
func TestAgendaOpenEnd(t *testing.T) {
	s := start(t, Config{})
	s.Play(Agenda{Steps: PacedSteps(1, 0), Final: "done", After: "still done", OpenEnd: true,
		React: func(req *Request) []Call {
			if req.Contains("HELD") && !req.Contains("reacted") {
				return []Call{Shell("echo reacted")}
			}
			return nil
		}})
	url := s.URL() + "/v1/messages"
	ask := func(text string) string {
		_, _, body := post(t, url, map[string]any{"tools": anthropicTools, "messages": []any{
			map[string]any{"role": "user", "content": text}}})
		return string(body)
	}
	for i, want := range []struct{ prompt, answer string }{
		{"go", "echo step 1"}, {"result", "done"}, {"HELD", "echo reacted"}, {"HELD reacted", "still done"}, {"again", "still done"},
	} {
		if got := ask(want.prompt); !strings.Contains(got, want.answer) {
			t.Errorf("call %d (%q): answer lacks %q:\n%s", i+1, want.prompt, want.answer, got)
		}
	}
	if err := s.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
