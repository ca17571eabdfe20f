package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// EnvelopeVersion is the version of the --json output envelope.
const EnvelopeVersion = 1

// Envelope is the one JSON object a --json command prints on stdout
// (docs/protocol.md#output-envelope): {"envelope_version":1,"ok":true,"data":…} or
// {"envelope_version":1,"ok":false,"error":{"code":N,"message":…,"details":{"reasonCode":…}}}.
type Envelope struct {
	EnvelopeVersion int            `json:"envelope_version"`
	OK              bool           `json:"ok"`
	Data            any            `json:"data,omitempty"`
	Error           *EnvelopeError `json:"error,omitempty"`
}

// EnvelopeError is the error half of an Envelope. Details always hold
// reasonCode; they never hold stack traces or internal paths.
type EnvelopeError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Success wraps data in an ok envelope.
func Success(data any) Envelope {
	return Envelope{EnvelopeVersion: EnvelopeVersion, OK: true, Data: data}
}

// Failure wraps err in a failure envelope; any error that is not an *Error
// reports exit 1 with reason internal_error. A nil err (a caller's bug) is
// reported the same way rather than crashing the one output a run has.
func Failure(err error) Envelope {
	pe := AsError(err)
	if pe == nil {
		pe = &Error{Reason: ReasonInternal, Message: "internal error: a failure was reported without an error"}
	}
	details := map[string]any{}
	for k, v := range pe.Details {
		details[k] = v
	}
	details["reasonCode"] = pe.Reason
	return Envelope{EnvelopeVersion: EnvelopeVersion, OK: false, Error: &EnvelopeError{Code: int(pe.Code()), Message: pe.Message, Details: details}}
}

// MarshalIndent encodes v the way acc counts bytes everywhere (docs/decisions.md#5-text-limits): two-space indentation, no HTML escaping, no trailing newline.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MarshalCompact encodes v on one line without HTML escaping.
func MarshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeStrict decodes one JSON value into v as a closed object
// (docs/protocol.md#identifiers-and-text-fields): unknown fields and trailing data are refused,
// field names must match exactly (encoding/json alone would take "MessageId"
// for "messageId"), and every struct field not tagged omitempty or omitzero
// must be present (a nullable one as null). Maps, interfaces and types with
// their own UnmarshalJSON stay open. A failure is an exit-4 invalid_record
// error naming what.
func DecodeStrict(what string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Errorf(ReasonInvalidRecord, "%s: %v", what, err).Wrap(err)
	}
	// More() reports false for a stray ']' or '}', so ask for the next
	// token instead: only the end of the input is acceptable.
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(ReasonInvalidRecord, "%s: trailing data after the JSON value", what)
	}
	keys := json.NewDecoder(bytes.NewReader(data))
	keys.UseNumber()
	return checkExactKeys(keys, reflect.TypeOf(v), what)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkExactKeys walks one JSON value (already known to be well formed) next
// to the Go type it was decoded into. It refuses an object key that matched a
// struct field only case-insensitively, and a missing key of a field without
// omitempty: records are closed objects whose listed keys are all required
// unless optional (docs/protocol.md#identifiers-and-text-fields); a nullable field is present as
// null. Maps, interfaces and types with their own UnmarshalJSON are open and
// not inspected.
func checkExactKeys(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return Errorf(ReasonInvalidRecord, "%s: %v", path, err).Wrap(err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkExactKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case '{':
		var fields []jsonField
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		} else if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return Errorf(ReasonInvalidRecord, "%s: %v", path, err).Wrap(err)
			}
			key, _ := tok.(string)
			ft := elem
			if t != nil && t.Kind() == reflect.Struct {
				i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == key })
				if i < 0 {
					return Errorf(ReasonInvalidRecord, "%s.%s is not a known field", path, key)
				}
				ft = fields[i].typ
				seen[key] = true
			}
			if err := checkExactKeys(dec, ft, path+"."+key); err != nil {
				return err
			}
		}
		for _, f := range fields {
			if !f.optional && !seen[f.name] {
				return Errorf(ReasonInvalidRecord, "%s.%s is required", path, f.name)
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// jsonField is one JSON member of a struct: its name, its Go type, and
// whether it may be absent (tagged omitempty or omitzero).
type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool
}

// jsonFields lists the JSON members of t in field order, following the
// encoding/json rules for names, "-" and embedded structs.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	has := func(name string) bool {
		return slices.ContainsFunc(out, func(f jsonField) bool { return f.name == name })
	}
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if ft := f.Type; f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, inner := range jsonFields(ft) {
					if !has(inner.name) {
						out = append(out, inner)
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		// An outer field shadows an embedded one of the same name.
		out = slices.DeleteFunc(out, func(g jsonField) bool { return g.name == name })
		out = append(out, jsonField{name: name, typ: f.Type, optional: optional})
	}
	return out
}

// DecodeRecord decodes a record acc wrote itself (a store row): unknown
// fields and trailing data are refused like DecodeStrict, but required keys
// are not walked token by token; the record's Validate, which callers run
// next, refuses the zero values a missing key leaves. It is the fast path
// for reads that may touch thousands of rows.
func DecodeRecord(what string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Errorf(ReasonInvalidRecord, "%s: %v", what, err).Wrap(err)
	}
	if dec.More() {
		return Errorf(ReasonInvalidRecord, "%s: trailing data after the JSON value", what)
	}
	return nil
}
