package adapter

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

type fakeAdapter struct {
	Adapter
	ev []Evidence
}

func (f fakeAdapter) Evidence() []Evidence { return f.ev }

func TestCapabilitiesForCarriesEachCapabilityForward(t *testing.T) {
	a := fakeAdapter{ev: []Evidence{
		{Version: "1.2.0", Proven: Capabilities{Attach: true, NextTurn: true}},
		{Version: "1.10.0", Proven: Capabilities{GuardShell: true}}, // a later capture that tested less
		{Version: "2.0.0", Proven: Capabilities{GuardFiles: true, SessionEnd: true}},
	}}
	cases := []struct {
		version string
		want    Capabilities
		proof   string
	}{
		{"1.1.9", Capabilities{}, ""},
		{"1.2.0", Capabilities{Attach: true, NextTurn: true}, "1.2.0"},
		{"1.9.0", Capabilities{Attach: true, NextTurn: true}, "1.2.0"},
		{"1.10.0", Capabilities{Attach: true, NextTurn: true, GuardShell: true}, "1.10.0"},
		{"1.10", Capabilities{Attach: true, NextTurn: true, GuardShell: true}, "1.10.0"},
		{"3.0.0", Capabilities{Attach: true, NextTurn: true, GuardShell: true, GuardFiles: true, SessionEnd: true}, "2.0.0"},
		{"", Capabilities{}, ""},
		{"unknown", Capabilities{}, ""},
		{"2.0.0-beta", Capabilities{}, ""},
	}
	for _, c := range cases {
		got, ev := CapabilitiesFor(a, c.version)
		if got != c.want {
			t.Errorf("%q: %+v, want %+v", c.version, got, c.want)
		}
		if (ev == nil) != (c.proof == "") || (ev != nil && ev.Version != c.proof) {
			t.Errorf("%q: proof %+v, want %q", c.version, ev, c.proof)
		}
	}
	got, _ := CapabilitiesFor(a, "3.0.0")
	if !got.Guarded() {
		t.Error("files and shell proven: guarded")
	}
	if (Capabilities{GuardShell: true}).Guarded() {
		t.Error("the shell guard alone is not guarded")
	}
	// The returned record is a copy.
	_, ev := CapabilitiesFor(a, "3.0.0")
	ev.Version = "changed"
	if a.ev[2].Version != "2.0.0" {
		t.Error("CapabilitiesFor handed out the adapter's own record")
	}
}

func TestLoadEvidence(t *testing.T) {
	good := `{"version":"1.2.3","proven":{"attach":true,"nextTurn":false,"guardFiles":false,"guardShell":false,"sessionEnd":false},"test":"t","recorded":"2026-01-01"}`
	fsys := fstest.MapFS{
		"evidence/1.2.3.json":                  {Data: []byte(good)},
		"evidence/0.9.0.json":                  {Data: []byte(strings.ReplaceAll(good, "1.2.3", "0.9.0"))},
		"evidence/1.2.3/payloads/Session.json": {Data: []byte(`{}`)},
		"evidence/1.2.3/SOURCE.md":             {Data: []byte("x")},
	}
	got, err := LoadEvidence(fsys)
	if err != nil || len(got) != 2 || got[0].Version != "0.9.0" || !got[1].Proven.Attach {
		t.Fatalf("LoadEvidence: %+v %v", got, err)
	}
	bad := map[string]string{
		"unknown field":    strings.Replace(good, `"test"`, `"extra":1,"test"`, 1),
		"name mismatch":    strings.Replace(good, "1.2.3", "1.2.4", 1),
		"no test":          strings.Replace(good, `"test":"t"`, `"test":" "`, 1),
		"no date":          strings.Replace(good, `"recorded":"2026-01-01"`, `"recorded":""`, 1),
		"trailing":         good + "{}",
		"not JSON":         "{",
		"unknown capacity": strings.Replace(good, `"attach"`, `"teleport"`, 1),
	}
	for name, data := range bad {
		if _, err := LoadEvidence(fstest.MapFS{"evidence/1.2.3.json": {Data: []byte(data)}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := LoadEvidence(fstest.MapFS{
		"evidence/v1.json": {Data: []byte(strings.ReplaceAll(good, "1.2.3", "v1"))},
	}); err == nil {
		t.Error("a non-numeric version was accepted")
	}
	if _, err := LoadEvidence(fstest.MapFS{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no evidence directory: %v", err)
	}
}
