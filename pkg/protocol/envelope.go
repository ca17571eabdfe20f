package protocol

import (
	"bytes"
	"encoding/json"
)

// EnvelopeVersion is the version of the --json output envelope.
const EnvelopeVersion = 1

// Envelope is the one JSON object a --json command prints on stdout
// (reference/core.md §15.1): {"envelope_version":1,"ok":true,"data":…} or
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
// reports exit 1 with reason internal_error.
func Failure(err error) Envelope {
	pe := AsError(err)
	details := map[string]any{}
	for k, v := range pe.Details {
		details[k] = v
	}
	details["reasonCode"] = pe.Reason
	return Envelope{EnvelopeVersion: EnvelopeVersion, OK: false, Error: &EnvelopeError{Code: int(pe.Code()), Message: pe.Message, Details: details}}
}

// MarshalIndent encodes v the way acc counts bytes everywhere (SPEC decision
// 5): two-space indentation, no HTML escaping, no trailing newline.
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

// DecodeStrict decodes one JSON value into v refusing unknown fields and
// trailing data. A failure is an exit-4 invalid_record error naming what.
func DecodeStrict(what string, data []byte, v any) error {
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
