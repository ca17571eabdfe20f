package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeStrict(t *testing.T) {
	good, err := MarshalCompact(validMessage())
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := DecodeStrict("message", good, &m); err != nil {
		t.Fatalf("valid record refused: %v", err)
	}
	if !reflect.DeepEqual(&m, validMessage()) {
		t.Fatalf("decoded %+v, want %+v", m, *validMessage())
	}
	withKey := func(key, value string) []byte {
		return []byte(strings.Replace(string(good), "{", "{"+fmt.Sprintf("%q:%s,", key, value), 1))
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown field", withKey("color", `"red"`), "color"},
		{"unknown nested field", []byte(strings.Replace(string(good), `"description":`, `"extra":1,"description":`, 1)), "extra"},
		{"field in other case", []byte(strings.Replace(string(good), `"subject"`, `"Subject"`, 1)), "message.Subject is not a known field"},
		{"nested field in other case", []byte(strings.Replace(string(good), `"sha256"`, `"SHA256"`, 1)), "SHA256"},
		{"trailing value", append(append([]byte{}, good...), []byte(` {}`)...), "trailing data"},
		{"trailing garbage", append(append([]byte{}, good...), 'x'), "trailing data"},
		{"trailing brace", append(append([]byte{}, good...), '}'), "trailing data"},
		{"trailing bracket", append(append([]byte{}, good...), ']'), "trailing data"},
		{"truncated", good[:len(good)-1], "message"},
		{"empty", []byte{}, "message"},
		{"wrong type", []byte(strings.Replace(string(good), `"schemaVersion":3`, `"schemaVersion":"3"`, 1)), "schemaVersion"},
		{"array", []byte(`[]`), "message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m Message
			err := DecodeStrict("message", c.data, &m)
			if err == nil {
				t.Fatalf("accepted %s", c.data)
			}
			if CodeOf(err) != ExitData || !IsReason(err, ReasonInvalidRecord) {
				t.Errorf("exit %d reason %s, want exit 4 %s", CodeOf(err), AsError(err).Reason, ReasonInvalidRecord)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
	// Trailing whitespace is not data.
	if err := DecodeStrict("message", append(append([]byte{}, good...), " \n\t"...), &m); err != nil {
		t.Errorf("trailing whitespace refused: %v", err)
	}
	// Extensions and event payloads are open objects: any key, any case.
	m2 := validMessage()
	m2.Extensions = Extensions{"Offer": map[string]any{"Transport": "x"}}
	b, _ := MarshalCompact(m2)
	if err := DecodeStrict("message", b, &m); err != nil {
		t.Errorf("open extensions refused: %v", err)
	}
	e := validEvent()
	e.Payload = map[string]any{"MessageId": []any{map[string]any{"A": 1}}}
	b, _ = MarshalCompact(e)
	var ev Event
	if err := DecodeStrict("event", b, &ev); err != nil {
		t.Errorf("open payload refused: %v", err)
	}
}

// TestDecodeStrictEmbedded checks that the exact-key rule follows the
// encoding/json rules for embedded structs and types with their own decoder.
func TestDecodeStrictEmbedded(t *testing.T) {
	type inner struct {
		A int `json:"a"`
	}
	type outer struct {
		inner
		B    int             `json:"b"`
		Raw  json.RawMessage `json:"raw"`
		Skip int             `json:"-"`
	}
	var v outer
	if err := DecodeStrict("x", []byte(`{"a":1,"b":2,"raw":{"Any":[1]}}`), &v); err != nil || v.A != 1 || v.B != 2 {
		t.Fatalf("DecodeStrict = %v, %+v", err, v)
	}
	if err := DecodeStrict("x", []byte(`{"A":1}`), &v); err == nil {
		t.Fatal("embedded field in other case accepted")
	}
	if err := DecodeStrict("x", []byte(`{"Skip":1}`), &v); err == nil {
		t.Fatal(`a json:"-" field accepted`)
	}
}

func TestMarshalIndent(t *testing.T) {
	b, err := MarshalIndent(map[string]any{"a": "<&>", "b": []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": \"<&>\",\n  \"b\": [\n    1\n  ]\n}"
	if string(b) != want {
		t.Fatalf("MarshalIndent = %q, want %q", b, want)
	}
	c, _ := MarshalCompact(map[string]string{"a": "<&>"})
	if string(c) != `{"a":"<&>"}` {
		t.Fatalf("MarshalCompact = %q", c)
	}
}

func TestSuccessEnvelope(t *testing.T) {
	b, err := MarshalCompact(Success(map[string]int{"n": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"envelope_version":1,"ok":true,"data":{"n":1}}` {
		t.Fatalf("success envelope = %s", b)
	}
}

func TestFailureEnvelope(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		code    int
		reason  string
		message string
	}{
		{"refusal", Errorf(ReasonClaimConflict, "the resource is already claimed").With("claimId", "claim_x"), 5, ReasonClaimConflict, "the resource is already claimed"},
		{"wrapped refusal", fmt.Errorf("context: %w", Errorf(ReasonUnknownRecipient, "no participant here is called x")), 4, ReasonUnknownRecipient, "no participant here is called x"},
		{"store busy", Errorf(ReasonStoreBusy, "busy"), 3, ReasonStoreBusy, "busy"},
		{"usage", Errorf(ReasonUnknownFlag, "unknown flag --x"), 2, ReasonUnknownFlag, "unknown flag --x"},
		{"plain error", errors.New("disk on fire"), 1, ReasonInternal, "internal error: disk on fire"},
		{"unknown reason", Errorf("no_such_reason", "?"), 1, "no_such_reason", "?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := MarshalCompact(Failure(c.err))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				EnvelopeVersion int  `json:"envelope_version"`
				OK              bool `json:"ok"`
				Data            any  `json:"data,omitempty"`
				Error           struct {
					Code    int            `json:"code"`
					Message string         `json:"message"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			if err := DecodeStrict("envelope", b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if got.EnvelopeVersion != 1 || got.OK || got.Data != nil || strings.Contains(string(b), `"data"`) {
				t.Errorf("envelope head %s", b)
			}
			if got.Error.Code != c.code || got.Error.Message != c.message || got.Error.Details["reasonCode"] != c.reason {
				t.Errorf("envelope %s, want code %d message %q reasonCode %s", b, c.code, c.message, c.reason)
			}
			if int(CodeOf(c.err)) != c.code {
				t.Errorf("CodeOf = %d, want %d", CodeOf(c.err), c.code)
			}
		})
	}
	// Details are copied, never aliased, and keep the thrower's keys.
	e := Errorf(ReasonClaimConflict, "x").With("claimId", "claim_x")
	env := Failure(e)
	if env.Error.Details["claimId"] != "claim_x" {
		t.Errorf("details lost: %v", env.Error.Details)
	}
	if _, leaked := e.Details["reasonCode"]; leaked {
		t.Error("Failure wrote reasonCode into the error's own details")
	}
	// A failure always has details, even without any.
	b, _ := MarshalCompact(Failure(Errorf(ReasonUsage, "bad")))
	if !strings.Contains(string(b), `"details":{"reasonCode":"usage"}`) {
		t.Errorf("failure without details = %s", b)
	}
	// The cause of a refusal is never shown.
	b, _ = MarshalCompact(Failure(Errorf(ReasonStoreCorrupt, "move the file aside").Wrap(errors.New("/secret/path: bad header"))))
	if strings.Contains(string(b), "/secret/path") {
		t.Errorf("failure leaks its cause: %s", b)
	}
}

func TestFailureOfNil(t *testing.T) {
	env := Failure(nil)
	if env.OK || env.Error == nil || env.Error.Code != int(ExitInternal) || env.Error.Details["reasonCode"] != ReasonInternal {
		t.Fatalf("Failure(nil) = %+v, want an internal failure envelope", env)
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := errors.New("cause")
	e := Errorf(ReasonStoreBusy, "busy %d", 3).Wrap(cause)
	if e.Error() != "busy 3" || !errors.Is(e, cause) || e.Code() != ExitTimeout {
		t.Fatalf("Errorf/Wrap: %q %v %d", e.Error(), errors.Is(e, cause), e.Code())
	}
	if !IsReason(fmt.Errorf("x: %w", e), ReasonStoreBusy) || IsReason(e, ReasonStoreCorrupt) || IsReason(cause, ReasonStoreBusy) {
		t.Fatal("IsReason")
	}
	if AsError(nil) != nil || CodeOf(nil) != ExitOK {
		t.Fatal("nil error handling")
	}
	if AsError(e) != e {
		t.Fatal("AsError did not return the *Error itself")
	}
	if ExitConflict.Name() != "conflict" || ExitCode(42).Name() != "unknown" {
		t.Fatal("ExitCode.Name")
	}
}

func TestFailureOfTypedNil(t *testing.T) {
	var e *Error
	env := Failure(e)
	if env.Error == nil || env.Error.Code != int(ExitInternal) {
		t.Fatalf("Failure((*Error)(nil)) = %+v", env)
	}
}

func TestCodeOfTypedNil(t *testing.T) {
	var e *Error
	if got := CodeOf(e); got != ExitInternal {
		t.Fatalf("CodeOf((*Error)(nil)) = %d, want %d", got, ExitInternal)
	}
}

func TestDecodeStrictRequiredKeys(t *testing.T) {
	good, _ := MarshalCompact(validMessage())
	var full map[string]any
	if err := json.Unmarshal(good, &full); err != nil {
		t.Fatal(err)
	}
	optional := map[string]bool{"decisionChange": true, "extensions": true}
	for key := range full {
		reduced := map[string]any{}
		for k, v := range full {
			if k != key {
				reduced[k] = v
			}
		}
		b, _ := json.Marshal(reduced)
		var m Message
		err := DecodeStrict("message", b, &m)
		if optional[key] {
			if err != nil {
				t.Errorf("without optional %s: %v", key, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "message."+key+" is required") {
			t.Errorf("without %s: %v, want \"message.%s is required\"", key, err, key)
		}
	}
	// Optional keys of docs/protocol.md#records stay optional: the decision change,
	// extensions and an artifact's sha256.
	m := validMessage()
	m.Artifacts[0].SHA256 = nil
	b, _ := MarshalCompact(m)
	if strings.Contains(string(b), "sha256") {
		t.Fatalf("nil sha256 is encoded: %s", b)
	}
	var back Message
	if err := DecodeStrict("message", b, &back); err != nil {
		t.Errorf("artifact without sha256 refused: %v", err)
	}
	// A nested closed object needs its keys too.
	h := msg(KindHandoff, ObligationAcknowledge, []string{"codex-fbqX8o"}, false)
	b, _ = MarshalCompact(h)
	b = []byte(strings.Replace(string(b), `"blockers":[],`, "", 1))
	if err := DecodeStrict("message", b, &back); err == nil || !strings.Contains(err.Error(), "message.handoff.blockers is required") {
		t.Errorf("handoff without blockers: %v", err)
	}
}

// TestEveryRecordAcceptsExtensions: docs/protocol.md#records allows an optional,
// free-form extensions object on every durable record.
func TestEveryRecordAcceptsExtensions(t *testing.T) {
	records := map[string]func() any{
		"workspace":   func() any { return validWorkspace() },
		"participant": func() any { return validParticipant() },
		"session":     func() any { return validSession() },
		"intent":      func() any { return validIntent() },
		"claim":       func() any { return validClaim() },
		"message":     func() any { return validMessage() },
		"receipt":     func() any { return validReceipt() },
		"event":       func() any { return validEvent() },
	}
	for kind, make := range records {
		b, err := MarshalCompact(make())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "extensions") {
			t.Errorf("%s: empty extensions are encoded: %s", kind, b)
		}
		with := []byte(strings.Replace(string(b), "{", `{"extensions":{"offer":{"transport":"hook"}},`, 1))
		v := make()
		if err := DecodeStrict(kind, with, v); err != nil {
			t.Errorf("%s with extensions refused: %v", kind, err)
			continue
		}
		if err := v.(validator).Validate(); err != nil {
			t.Errorf("%s with extensions invalid: %v", kind, err)
		}
		out, _ := MarshalCompact(v)
		if !strings.Contains(string(out), `"extensions":{"offer":{"transport":"hook"}}`) {
			t.Errorf("%s lost its extensions: %s", kind, out)
		}
	}
}
