package acp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestPeek(t *testing.T) {
	for _, c := range []struct {
		line   string
		kind   frameKind
		method string
		key    string
	}{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n", frameRequest, "initialize", "n:0"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{}}`, frameNotification, "session/update", ""},
		{`{"jsonrpc":"2.0","method":"_auth/status_update"}`, frameNotification, "_auth/status_update", ""},
		{`{"jsonrpc":"2.0","id":"8af738f5-306d","result":{}}`, frameResponse, "", "s:8af738f5-306d"},
		{`{"result":{"stopReason":"end_turn"},"jsonrpc":"2.0","id":7.0}`, frameResponse, "", "n:7"},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}`, frameResponse, "", "n:3"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, frameOther, "", ""},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, frameOther, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, frameOther, "", ""},
		{`not json at all`, frameOther, "", ""},
		{"\n", frameOther, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"x"`, frameOther, "", ""},
	} {
		f := peek([]byte(c.line))
		if f.kind != c.kind || f.method != c.method || f.key != c.key {
			t.Errorf("peek(%q) = kind %d method %q key %q, want %d %q %q", c.line, f.kind, f.method, f.key, c.kind, c.method, c.key)
		}
	}
}

func TestAppendBlock(t *testing.T) {
	block := []byte(`{"type":"text","text":"acc"}`)
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}` + "\n",
			`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"text","text":"acc"}]}}` + "\n"},
		// An empty prompt, spaces kept, keys in another order.
		{`{ "params" : { "prompt" : [ ] , "sessionId":"s"}, "id":2, "method":"session/prompt"}`,
			`{ "params" : { "prompt" : [ {"type":"text","text":"acc"}] , "sessionId":"s"}, "id":2, "method":"session/prompt"}`},
		// Nested arrays and objects inside the prompt, a "prompt" key deeper
		// down and a "]" inside a string are not the array's end.
		{`{"params":{"meta":{"prompt":[1]},"prompt":[{"type":"resource","resource":{"text":"] [","prompt":[[]]}},[1,[2]]],"x":1},"id":1}`,
			`{"params":{"meta":{"prompt":[1]},"prompt":[{"type":"resource","resource":{"text":"] [","prompt":[[]]}},[1,[2]],{"type":"text","text":"acc"}],"x":1},"id":1}`},
		// Escapes and non-ASCII stay byte for byte.
		{`{"params":{"prompt":[{"type":"text","text":"caf\u00e9 é \"q\" \n"}]}}`,
			`{"params":{"prompt":[{"type":"text","text":"caf\u00e9 é \"q\" \n"},{"type":"text","text":"acc"}]}}`},
	} {
		got, err := appendBlock([]byte(c.in), block)
		if err != nil || string(got) != c.want {
			t.Errorf("appendBlock(%s)\n got %s (%v)\nwant %s", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		`{"params":{"sessionId":"s"}}`,
		`{"params":{"prompt":"text"}}`,
		`{"prompt":[1],"params":{}}`,
		`{"params":{"inner":{"prompt":[1]}}}`,
		`[1,2]`,
		`"x"`,
		`{"params":{"prompt":[1,}`,
		`{"params":{"prompt":[1]},"params":{"prompt":[2]}}`,
		`{"params":{"prompt":[1],"prompt":[2]}}`,
	} {
		if got, err := appendBlock([]byte(in), block); err == nil {
			t.Errorf("appendBlock(%s) = %s, want an error", in, got)
		}
	}
}

// FuzzAppendBlock: for any line that is a JSON object with a
// params.prompt array, the result is that line with the block as the
// array's new last element (decoded), and every byte of the line is still
// there, in order, around one insertion.
func FuzzAppendBlock(f *testing.F) {
	for _, s := range []string{
		`{"params":{"prompt":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"params":{"prompt":[{"a":["]"]},{"b":{"prompt":[]}}]},"x":[{}]}`,
		` { "params" : { "prompt" : [ 1 , 2 ] } } `,
	} {
		f.Add(s)
	}
	block := []byte(`{"type":"text","text":"acc \u2028 block"}`)
	f.Fuzz(func(t *testing.T, line string) {
		got, err := appendBlock([]byte(line), block)
		var before struct {
			Params struct {
				Prompt []json.RawMessage `json:"prompt"`
			} `json:"params"`
		}
		if err != nil {
			return
		}
		if json.Unmarshal([]byte(line), &before) != nil {
			return // a line that does not decode as a whole may still be walked; nothing to compare
		}
		var after struct {
			Params struct {
				Prompt []json.RawMessage `json:"prompt"`
			} `json:"params"`
		}
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("result does not decode: %v\n%s", err, got)
		}
		want := append(before.Params.Prompt, block)
		if len(after.Params.Prompt) != len(want) {
			t.Fatalf("prompt has %d elements, want %d\n%s", len(after.Params.Prompt), len(want), got)
		}
		var last any
		_ = json.Unmarshal(after.Params.Prompt[len(want)-1], &last)
		var wantLast any
		_ = json.Unmarshal(block, &wantLast)
		if !reflect.DeepEqual(last, wantLast) {
			t.Fatalf("last element %s", after.Params.Prompt[len(want)-1])
		}
		// One insertion: a common prefix and suffix cover the original.
		i := 0
		for i < len(line) && got[i] == line[i] {
			i++
		}
		if !bytes.HasSuffix(got, []byte(line[i:])) {
			t.Fatalf("bytes of the line changed beyond one insertion:\n%s\n%s", line, got)
		}
	})
}

func TestIDKey(t *testing.T) {
	for raw, want := range map[string]string{`0`: "n:0", `7.0`: "n:7", ` 12 `: "n:12", `"0"`: "s:0", `"a\"b"`: `s:a"b`, `true`: "", `{}`: "", ``: ""} {
		if got := idKey(json.RawMessage(raw)); got != want {
			t.Errorf("idKey(%s) = %q, want %q", raw, got, want)
		}
	}
}
