package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Schema builders: every tool's inputSchema is a closed object (docs/mcp.md#tools).

func closed(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	if required == nil {
		required = []string{}
	}
	if props == nil {
		props = map[string]*jsonschema.Schema{}
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func enum(desc string, values ...string) *jsonschema.Schema {
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	return &jsonschema.Schema{Type: "string", Enum: e, Description: desc}
}

func integer(desc string, min, max float64) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &min}
	if max > 0 {
		s.Maximum = &max
	}
	return s
}

func strings_(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: desc}
}

func boundedIDs(desc string) *jsonschema.Schema {
	s := strings_(desc)
	one, sixteen := 1, 16
	s.MinItems, s.MaxItems, s.UniqueItems = &one, &sixteen, true
	return s
}

func requires(fields ...string) *jsonschema.Schema { return &jsonschema.Schema{Required: fields} }

func anyOf(s ...*jsonschema.Schema) *jsonschema.Schema { return &jsonschema.Schema{AnyOf: s} }

// argError is a refused tool argument: exit 2 with a reason, worded as
// "arguments.<field> …" (docs/mcp.md#tools).
func argError(reason, format string, a ...any) *protocol.Error {
	return protocol.Errorf(reason, format, a...)
}

// checkArgs validates raw tool arguments against a closed schema before any
// session is resolved. The per-field checks give messages that name the
// field; the schema's oneOf/anyOf/not shapes are then checked by
// jsonschema-go, whose failures are reported as a shape error.
//
// It returns the arguments normalised for decoding: an integer spelled
// 1.0 or 1e2 becomes 1 or 100, so that what passed validation also decodes.
func checkArgs(schema *jsonschema.Schema, resolved *jsonschema.Resolved, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // 1e400 is a number too: refused by range, not as "not JSON"
		if err := dec.Decode(&v); err != nil {
			return nil, argError(protocol.ReasonInvalidArgument, "arguments must be a JSON object")
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, argError(protocol.ReasonInvalidArgument, "arguments must be a JSON object")
		}
		args = m
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := schema.Properties[k]; !ok {
			return nil, argError(protocol.ReasonUnknownArgument, "arguments.%s is not a known field", k).With("field", k)
		}
	}
	for _, k := range schema.Required {
		if _, ok := args[k]; !ok {
			return nil, argError(protocol.ReasonMissingArgument, "arguments.%s is required", k).With("field", k)
		}
	}
	for _, k := range keys {
		norm, err := checkValue("arguments."+k, schema.Properties[k], args[k])
		if err != nil {
			return nil, err
		}
		args[k] = norm
	}
	if err := resolved.Validate(args); err != nil {
		switch {
		case len(schema.OneOf) > 0:
			return nil, argError(protocol.ReasonArgumentShape, "arguments must match exactly one accepted shape")
		case schema.Not != nil:
			return nil, argError(protocol.ReasonArgumentShape, "arguments contains fields that cannot be combined")
		}
		return nil, argError(protocol.ReasonArgumentShape, "arguments must match an accepted shape")
	}
	out, err := json.Marshal(args)
	if err != nil {
		return nil, argError(protocol.ReasonInvalidArgument, "arguments cannot be read: %v", err)
	}
	return out, nil
}

// maxSafeInteger is the largest integer every JSON reader holds exactly
// (2^53 - 1).
const maxSafeInteger = 1<<53 - 1

func checkValue(path string, s *jsonschema.Schema, v any) (any, error) {
	bad := func(format string, a ...any) error {
		reason := protocol.ReasonInvalidArgument
		if strings.HasSuffix(path, ".limit") {
			reason = protocol.ReasonInvalidLimit
		}
		return argError(reason, "%s "+format, append([]any{path}, a...)...).With("field", strings.TrimPrefix(path, "arguments."))
	}
	switch s.Type {
	case "string":
		str, ok := v.(string)
		if !ok {
			return nil, bad("must be a string")
		}
		if str == "" {
			// Leave a field out rather than send it empty: an empty string
			// never means "absent" (the CLI refuses an empty flag too).
			return nil, bad("must not be empty (leave the field out instead)")
		}
		if len(s.Enum) > 0 {
			for _, e := range s.Enum {
				if e == str {
					return v, nil
				}
			}
			quoted := make([]string, len(s.Enum))
			for i, e := range s.Enum {
				quoted[i] = fmt.Sprintf("%q", e)
			}
			return nil, bad("must be one of %s", strings.Join(quoted, ", "))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, bad("must be a boolean")
		}
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			return nil, bad("must be an integer")
		}
		n, err := strconv.ParseFloat(string(num), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, bad("must be an integer")
		}
		if n != math.Trunc(n) || math.IsInf(n, 0) {
			if math.IsInf(n, 0) {
				return nil, bad("must be an integer from %d to %d", int64(*s.Minimum), maxOf(s))
			}
			return nil, bad("must be an integer")
		}
		if s.Minimum != nil && n < *s.Minimum {
			return nil, bad("must be at least %d", int64(*s.Minimum))
		}
		if n > float64(maxOf(s)) {
			return nil, bad("must be at most %d", maxOf(s))
		}
		return int64(n), nil
	case "array":
		a, ok := v.([]any)
		if !ok {
			return nil, bad("must be an array")
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			return nil, bad("must hold at least %d item(s)", *s.MinItems)
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			return nil, bad("must hold at most %d items", *s.MaxItems)
		}
		seen := map[string]bool{}
		for i, e := range a {
			if _, err := checkValue(fmt.Sprintf("%s[%d]", path, i), s.Items, e); err != nil {
				return nil, err
			}
			if s.UniqueItems {
				k := e.(string)
				if seen[k] {
					return nil, bad("must not repeat %q", k)
				}
				seen[k] = true
			}
		}
	}
	return v, nil
}

// maxOf is an integer schema's maximum, or the largest safe integer.
func maxOf(s *jsonschema.Schema) int64 {
	if s.Maximum != nil {
		return int64(*s.Maximum)
	}
	return maxSafeInteger
}

type schemaT = jsonschema.Schema

func mustResolve(t *mcp.Tool) *jsonschema.Resolved {
	r, err := t.InputSchema.(*jsonschema.Schema).Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	return r
}
