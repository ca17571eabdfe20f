package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// frame is what the relay needs to know of one line: whether it is a
// request, a notification or a response, its method and its id. A line
// that is not a JSON object (a batch, garbage, an empty line) has kind
// frameOther and is forwarded without a second look.
type frame struct {
	kind   frameKind
	method string
	// id is the id exactly as the line spelled it (raw JSON); key is the
	// same id normalised for the pending-request tables (idKey).
	id  json.RawMessage
	key string
	// params and result are the raw members, when present.
	params json.RawMessage
	result json.RawMessage
	isErr  bool
}

type frameKind int

const (
	frameOther frameKind = iota
	frameRequest
	frameNotification
	frameResponse
)

// peek reads the envelope of one JSON-RPC line (docs/acp.md#what-the-relay-does):
// a member "method" with an "id" is a request, without one a notification;
// an "id" with no "method" is a response. Member names match exactly, as
// the agents' and editors' own JSON readers match them, and a repeated
// member counts as its last occurrence, as theirs do. It never fails:
// anything it cannot read is frameOther.
func peek(line []byte) frame {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return frame{}
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(trimmed, &env) != nil {
		return frame{}
	}
	f := frame{params: env["params"], result: env["result"], isErr: env["error"] != nil}
	var method *string
	if raw, ok := env["method"]; ok {
		var m string
		if json.Unmarshal(raw, &m) != nil {
			return frame{}
		}
		method = &m
	}
	id := env["id"]
	hasID := len(id) > 0 && string(id) != "null"
	if hasID {
		f.id, f.key = id, idKey(id)
		if f.key == "" {
			return frame{}
		}
	}
	switch {
	case method != nil && hasID:
		f.kind, f.method = frameRequest, *method
	case method != nil:
		f.kind, f.method = frameNotification, *method
	case hasID:
		f.kind = frameResponse
	}
	return f
}

// param returns the string member name of the frame's params (exact name,
// last occurrence), or "".
func (f frame) param(name string) string {
	var p map[string]json.RawMessage
	if json.Unmarshal(f.params, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p[name], &v)
	return v
}

// idKey normalises a JSON-RPC id for lookup: "s:" and the decoded string
// for a string id, "n:" and the shortest decimal spelling for a number
// (so 7 and 7.0 match), "" for anything else. Ids are kept per direction:
// the editor's and the agent's both start at 0
// (docs/acp.md#what-the-relay-does).
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return "s:" + s
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return ""
	}
	return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
}

// errNoPrompt: the line has no params.prompt array to add a block to.
var errNoPrompt = errors.New("no params.prompt array")

// appendBlock returns line with block (one JSON value) added as the last
// element of its params.prompt array, and every other byte of the line
// exactly as it was: the block is spliced in before the array's closing
// bracket, found by walking the line's tokens. The line is not changed
// when it has no such array.
func appendBlock(line []byte, block []byte) ([]byte, error) {
	end, empty, err := promptEnd(line)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(line)+len(block)+1)
	out = append(out, line[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, block...)
	out = append(out, line[end:]...)
	// A line whose reader would see another prompt (a repeated "params"
	// or "prompt" member: readers keep the last) is left alone.
	var top, params map[string]json.RawMessage
	var prompt []json.RawMessage
	if json.Unmarshal(out, &top) != nil || json.Unmarshal(top["params"], &params) != nil ||
		json.Unmarshal(params["prompt"], &prompt) != nil || len(prompt) == 0 ||
		!bytes.Equal(bytes.TrimSpace(prompt[len(prompt)-1]), bytes.TrimSpace(block)) {
		return nil, errNoPrompt
	}
	return out, nil
}

// promptEnd finds the offset of the closing bracket of the top-level
// params.prompt array in line, and whether the array is empty.
func promptEnd(line []byte) (int, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	// path holds, for each open container, whether it is an object and
	// the key being read in it ("" for arrays).
	type level struct {
		object bool
		key    string
		// expectKey: in an object, the next string token is a key.
		expectKey bool
		count     int
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return 0, false, errNoPrompt
		}
		if err != nil {
			return 0, false, err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].expectKey = true // after this value, a key
				}
				stack = append(stack, level{object: d == '{', expectKey: d == '{'})
			case '}', ']':
				n := len(stack)
				top := stack[n-1]
				stack = stack[:n-1]
				// The prompt array: params.prompt under the top-level object.
				if d == ']' && n == 3 && stack[0].key == "params" && stack[1].key == "prompt" {
					off := int(dec.InputOffset()) - 1
					return off, top.count == 0, nil
				}
				if n := len(stack); n > 0 && !stack[n-1].object {
					stack[n-1].count++
				}
			}
			continue
		}
		n := len(stack)
		if n == 0 {
			return 0, false, errNoPrompt // a scalar line
		}
		top := &stack[n-1]
		switch {
		case top.object && top.expectKey:
			top.key, _ = tok.(string)
			top.expectKey = false
		case top.object:
			top.expectKey = true
		default:
			top.count++
		}
	}
}
