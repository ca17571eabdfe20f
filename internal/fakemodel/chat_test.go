package fakemodel

import (
	"encoding/json"
	"strings"
	"testing"
)

// parseChatStream splits a Chat Completions stream into its chunks,
// failing on any line that is not "data: {json}" or a blank separator,
// and on a stream that does not end with "data: [DONE]".
func parseChatStream(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	blocks := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	if len(blocks) == 0 || blocks[len(blocks)-1] != "data: [DONE]" || !strings.HasSuffix(string(body), "\n\n") {
		t.Fatalf("stream does not end with data: [DONE]: %q", body)
	}
	var out []map[string]any
	for _, b := range blocks[:len(blocks)-1] {
		data, ok := strings.CutPrefix(b, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("not one data line: %q", b)
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk is not a JSON object: %q: %v", data, err)
		}
		if chunk["object"] != "chat.completion.chunk" {
			t.Fatalf("chunk object %v", chunk["object"])
		}
		out = append(out, chunk)
	}
	return out
}

// chatFunction is a tool offer of a Chat Completions request.
func chatFunction(name string, required []string, props ...string) any {
	p := map[string]any{}
	for _, k := range props {
		p[k] = map[string]any{"type": "string"}
	}
	return map[string]any{"type": "function", "function": map[string]any{
		"name": name, "parameters": map[string]any{"type": "object", "properties": p, "required": required}}}
}

// assembled is what a client rebuilds from a stream: the text, each tool
// call's id, name and arguments, the finish reason and the usage.
type assembled struct {
	text   string
	calls  []map[string]string
	finish string
	usage  map[string]any
}

func assemble(t *testing.T, chunks []map[string]any) assembled {
	t.Helper()
	var a assembled
	for _, c := range chunks {
		if u := obj(c["usage"]); u != nil {
			a.usage = u
		}
		for _, ch := range c["choices"].([]any) {
			choice := obj(ch)
			if f, ok := choice["finish_reason"].(string); ok {
				a.finish = f
			}
			delta := obj(choice["delta"])
			a.text += str(delta["content"])
			for _, tc := range asSlice(delta["tool_calls"]) {
				tcm := obj(tc)
				i := int(tcm["index"].(float64))
				for len(a.calls) <= i {
					a.calls = append(a.calls, map[string]string{})
				}
				if id := str(tcm["id"]); id != "" {
					a.calls[i]["id"] = id
				}
				fn := obj(tcm["function"])
				if n := str(fn["name"]); n != "" {
					a.calls[i]["name"] = n
				}
				a.calls[i]["arguments"] += str(fn["arguments"])
			}
		}
	}
	return a
}

func TestChatStreamingToolCallThenText(t *testing.T) {
	s := start(t, Config{Script: Script{
		{Text: "Running it.", Calls: []Call{Shell("echo hi > out.txt")}},
		Say("Done."),
	}})
	url := s.URL() + "/v1/chat/completions"
	tools := []any{chatFunction("bash", []string{"command", "description"}, "command", "description", "timeout")}
	user := map[string]any{"role": "user", "content": "go"}
	_, hdr, body := post(t, url, map[string]any{"model": "fake-model", "stream": true, "tools": tools,
		"stream_options": map[string]any{"include_usage": true}, "messages": []any{user}},
		"Authorization", "Bearer secret")
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("content type %q", hdr.Get("Content-Type"))
	}
	chunks := parseChatStream(t, body)
	a := assemble(t, chunks)
	if a.text != "Running it." || a.finish != "tool_calls" || len(a.calls) != 1 {
		t.Fatalf("assembled %+v", a)
	}
	if a.usage == nil || a.usage["total_tokens"] == nil {
		t.Errorf("no usage chunk: %v", chunks[len(chunks)-1])
	}
	if last := chunks[len(chunks)-1]; len(last["choices"].([]any)) != 0 {
		t.Errorf("the usage chunk has choices: %v", last)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(a.calls[0]["arguments"]), &args); err != nil {
		t.Fatal(err)
	}
	if a.calls[0]["name"] != "bash" || args["command"] != "echo hi > out.txt" || args["description"] == "" || args["timeout"] != nil {
		t.Errorf("call %v args %v", a.calls[0], args)
	}
	callID := a.calls[0]["id"]
	if got := s.ModelCalls()[0].CallIDs; len(got) != 1 || got[0] != callID {
		t.Errorf("recorded call ids %v, streamed %q", got, callID)
	}
	if s.Requests()[0].Header.Get("Authorization") != "<redacted>" {
		t.Errorf("the key was kept: %v", s.Requests()[0].Header)
	}

	// The tool result comes back as a role "tool" message; without
	// include_usage there is no usage chunk.
	_, _, body = post(t, url, map[string]any{"model": "fake-model", "stream": true, "tools": tools,
		"messages": []any{user,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": callID, "type": "function",
				"function": map[string]any{"name": "bash", "arguments": a.calls[0]["arguments"]}}}},
			map[string]any{"role": "tool", "tool_call_id": callID, "content": []any{map[string]any{"type": "text", "text": "Denied by preToolUse hook: held by claude-1"}}},
		}})
	chunks = parseChatStream(t, body)
	a = assemble(t, chunks)
	if a.text != "Done." || a.finish != "stop" || len(a.calls) != 0 || a.usage != nil {
		t.Errorf("final %+v", a)
	}
	res := s.ModelCalls()[1].ToolResults()
	if len(res) != 1 || res[0].CallID != callID || !strings.Contains(res[0].Output, "held by claude-1") {
		t.Errorf("tool results %+v", res)
	}
	if s.ModelCalls()[1].API != Chat {
		t.Errorf("API %q", s.ModelCalls()[1].API)
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
}

func TestChatNonStreamingSideAndJSONCalls(t *testing.T) {
	s := start(t, Config{Script: Script{Run(Write("/w/a.txt", "A\n"), Shell("true"))}})
	// Under a base path other than /v1, as a client given ".../api" asks.
	url := s.URL() + "/api/chat/completions"
	_, _, body := post(t, url, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "title?"}}})
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	msg := obj(obj(resp["choices"].([]any)[0])["message"])
	if resp["object"] != "chat.completion" || msg["content"] != DefaultSideText || obj(resp["usage"])["prompt_tokens"] == nil {
		t.Errorf("side call answer %v", resp)
	}
	_, _, body = post(t, url, map[string]any{"model": "m", "response_format": map[string]any{"type": "json_object"},
		"messages": []any{map[string]any{"role": "user", "content": "who speaks next?"}}})
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	var next map[string]any
	if err := json.Unmarshal([]byte(str(obj(obj(resp["choices"].([]any)[0])["message"])["content"])), &next); err != nil || next["next_speaker"] != "user" {
		t.Errorf("JSON side call answer %v: %v", resp, err)
	}

	tools := []any{
		chatFunction("write_file", []string{"file_path", "content"}, "file_path", "content"),
		chatFunction("run_shell_command", []string{"command"}, "command", "description"),
	}
	_, _, body = post(t, url, map[string]any{"model": "m", "tools": tools, "messages": []any{map[string]any{"role": "user", "content": "go"}}})
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	choice := obj(resp["choices"].([]any)[0])
	msg = obj(choice["message"])
	calls := asSlice(msg["tool_calls"])
	if choice["finish_reason"] != "tool_calls" || msg["content"] != nil || len(calls) != 2 {
		t.Fatalf("answer %v", resp)
	}
	var got []string
	for _, c := range calls {
		fn := obj(obj(c)["function"])
		got = append(got, str(fn["name"])+" "+str(fn["arguments"]))
	}
	want := []string{`write_file {"content":"A\n","file_path":"/w/a.txt"}`, `run_shell_command {"command":"true","description":"Run a shell command"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
	if n := len(s.ModelCalls()); n != 1 {
		t.Errorf("%d model calls took a script reply, want 1 (side calls do not)", n)
	}
	if err := s.Verify(); err != nil {
		t.Error(err)
	}
}

// TestChatToolShapes checks that a Shell or Write call follows the tool
// names and argument names each client offers.
func TestChatToolShapes(t *testing.T) {
	boolReq := map[string]any{"type": "function", "function": map[string]any{"name": "bash", "parameters": map[string]any{
		"type": "object", "required": []any{"command", "async", "mode", "initial_wait"},
		"properties": map[string]any{"command": map[string]any{"type": "string"}, "async": map[string]any{"type": "boolean"},
			"mode": map[string]any{"type": "string", "enum": []any{"sync", "async"}}, "initial_wait": map[string]any{"type": "integer"}}}}}
	cases := []struct {
		name  string
		tools []any
		call  Call
		want  string
	}{
		{"copilot create", []any{chatFunction("create", []string{"path", "file_text"}, "path", "file_text")}, Write("/w/x", "X"),
			`create {"file_text":"X","path":"/w/x"}`},
		{"opencode write", []any{chatFunction("read", nil, "filePath"), chatFunction("write", []string{"filePath", "content"}, "filePath", "content")}, Write("/w/x", "X"),
			`write {"content":"X","filePath":"/w/x"}`},
		{"pi write", []any{chatFunction("write", []string{"path", "content"}, "path", "content")}, Write("/w/x", "X"),
			`write {"content":"X","path":"/w/x"}`},
		{"droid create and execute", []any{chatFunction("Execute", []string{"command"}, "command"), chatFunction("Create", []string{"file_path", "content"}, "file_path", "content")}, Write("/w/x", "X"),
			`Create {"content":"X","file_path":"/w/x"}`},
		{"droid execute", []any{chatFunction("Create", nil, "file_path", "content"), chatFunction("Execute", []string{"command"}, "command")}, Shell("ls"),
			`Execute {"command":"ls"}`},
		{"required values filled", []any{boolReq}, Shell("ls"),
			`bash {"async":false,"command":"ls","initial_wait":0,"mode":"sync"}`},
		{"a raw call as given", []any{chatFunction("edit", nil)}, Tool("edit", map[string]any{"old": "a"}),
			`edit {"old":"a"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Script: Script{Run(tc.call)}})
			_, _, body := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": tc.tools,
				"messages": []any{map[string]any{"role": "user", "content": "go"}}})
			a := assemble(t, parseChatStream(t, body))
			if len(a.calls) != 1 {
				t.Fatalf("calls %v", a.calls)
			}
			// Compare the arguments as JSON values, keys sorted.
			var args map[string]any
			if err := json.Unmarshal([]byte(a.calls[0]["arguments"]), &args); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(args)
			if got := a.calls[0]["name"] + " " + string(b); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
