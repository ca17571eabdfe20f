package protocol

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecodeMessage feeds arbitrary bytes to the record reader. DecodeStrict
// and Validate must never panic, and a message that validates must survive a
// write and a second read unchanged (the store writes MarshalCompact and reads
// with DecodeStrict + Validate).
func FuzzDecodeMessage(f *testing.F) {
	seeds := []*Message{validMessage()}
	for _, m := range []*Message{
		msg(KindQuestion, ObligationReply, []string{"codex-fbqX8o", "gemini-x"}, false),
		msg(KindAnswer, ObligationNone, []string{"codex-fbqX8o"}, true),
		msg(KindHandoff, ObligationAcknowledge, []string{"codex-fbqX8o"}, false),
		msg(KindHandoff, ObligationNone, []string{}, false),
		msg(KindDecision, ObligationNone, []string{}, false),
	} {
		seeds = append(seeds, m)
	}
	d := msg(KindDecision, ObligationAcknowledge, []string{"codex-fbqX8o"}, false)
	d.DecisionChange = &DecisionChange{Action: DecisionReplace, MessageIDs: []string{"message_b", "message_c"}}
	d.Extensions = Extensions{"offer": map[string]any{"transport": "hook", "at": testTime, "n": 1.5}}
	seeds = append(seeds, d)
	for _, m := range seeds {
		b, err := MarshalCompact(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"schemaVersion":3,"extensions":{}}`))
	f.Add([]byte(`{"schemaVersion":3} {}`))
	f.Add([]byte(`{"Subject":"x"}`))
	f.Add([]byte(`{"handoff":{"verification":[{"SHA256":"x"}]}}`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := DecodeStrict("message", data, &m); err != nil {
			if CodeOf(err) != ExitData {
				t.Fatalf("decode failure exit %d: %v", CodeOf(err), err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			if c := CodeOf(err); c != ExitData && c != ExitUsage {
				t.Fatalf("validation failure exit %d: %v", c, err)
			}
			return
		}
		out, err := MarshalCompact(&m)
		if err != nil {
			t.Fatalf("a valid message does not encode: %v", err)
		}
		var back Message
		if err := DecodeStrict("message", out, &back); err != nil {
			t.Fatalf("a valid message does not decode after encoding: %v\n%s", err, out)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("a valid message is refused after a round trip: %v\n%s", err, out)
		}
		// An empty extensions object is dropped on encoding (omitempty);
		// that is the one spelling that changes, and it means the same.
		if len(m.Extensions) == 0 {
			m.Extensions = nil
		}
		if !reflect.DeepEqual(m, back) {
			t.Fatalf("round trip changed the message:\nin  %#v\nout %#v", m, back)
		}
		again, err := MarshalCompact(&back)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("encoding is not stable:\n%s\n%s", out, again)
		}
	})
}
