package adaptertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/hookio"
)

// Observations is what a real run showed, kept beside an evidence record
// as evidence/<version>/observations.json; the payloads the client wrote
// are in evidence/<version>/payloads/. It is the basis on which the
// record's capabilities are checked.
type Observations struct {
	Client     string `json:"client"`
	Version    string `json:"version"`
	Platform   string `json:"platform"`
	ObservedAt string `json:"observedAt"`
	// Source says where the observation comes from and how it was made.
	Source string `json:"source"`
	// Fired lists the events seen firing; each has a payload file.
	Fired []string `json:"fired"`
	// Responses are hook answers tried against the real client.
	Responses []Response `json:"responses"`
	Note      string     `json:"note,omitempty"`
}

// Response is one hook answer tried against a real client and its effect.
type Response struct {
	// Purpose is "deny", "inject", "hold" (a stop hook's answer that kept
	// the agent working) or "push" (a live push: the payload is the
	// before-turn event of the turn it started, its prompt carrying
	// Marker, acc's frame, whole).
	Purpose string `json:"purpose"`
	Event   string `json:"event"`
	// Payload is the payloads/ file whose shape the hook's input had.
	Payload  string `json:"payload"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	ExitCode int    `json:"exitCode"`
	// Marker is the text the answer carried (reason or context).
	Marker string `json:"marker"`
	// Effect: "blocked" (the tool did not run), "delivered" (the text
	// reached the model's next request), "verbatim" (it reached the model
	// with its envelope, as text), "kept working" (a hold: the client asked
	// the model again with the reason), "ignored" or "dropped". Only
	// blocked, delivered and kept working support a capability.
	Effect string `json:"effect"`
	// Seen is what reached the model, where recorded.
	Seen string `json:"seen,omitempty"`
}

// CheckEvidence checks the evidence a embeds (module is its embedded
// files): the records load and are what a returns, and every capability a
// record claims rests on its observations — an event fired with a payload
// that normalises (attach, sessionEnd); a context the client delivered on a
// before-turn event (nextTurn) or a post-tool event (midTurn); a hold that
// kept the agent working on a turn-end event (endOfTurn); a denial that
// blocked the shell tool (guardShell) or a file-writing tool (guardFiles)
// — and a's own Inject, Hold or
// Deny renders exactly that proven answer. A module without evidence must
// return none.
func CheckEvidence(t *testing.T, a adapter.Adapter, module fs.FS) {
	records, err := adapter.LoadEvidence(module)
	if errors.Is(err, fs.ErrNotExist) {
		if len(a.Evidence()) != 0 {
			t.Fatalf("adapter returns evidence %+v but embeds none", a.Evidence())
		}
		return
	}
	if err != nil {
		t.Fatalf("evidence does not load: %v", err)
	}
	if !reflect.DeepEqual(records, a.Evidence()) {
		t.Fatalf("Evidence() = %+v, embedded records are %+v", a.Evidence(), records)
	}
	for _, rec := range records {
		t.Run(rec.Version, func(t *testing.T) { checkRecord(t, a, module, rec) })
	}
}

func checkRecord(t *testing.T, a adapter.Adapter, module fs.FS, rec adapter.Evidence) {
	dir := "evidence/" + rec.Version
	raw, err := fs.ReadFile(module, dir+"/observations.json")
	if err != nil {
		t.Fatalf("record without observations: %v", err)
	}
	var obs Observations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obs); err != nil {
		t.Fatalf("observations: %v", err)
	}
	if obs.Version != rec.Version {
		t.Fatalf("observations are of version %s", obs.Version)
	}
	payloads, err := fs.Sub(module, dir+"/payloads")
	if err != nil {
		t.Fatal(err)
	}
	normalize := func(file string) *adapter.Event {
		b, err := fs.ReadFile(payloads, file)
		if err != nil {
			t.Errorf("payload %s: %v", file, err)
			return nil
		}
		ev, err := a.Normalize(EventOfFile(file), b)
		if err != nil {
			t.Errorf("payload %s refused: %v", file, err)
			return nil
		}
		return ev
	}
	fired := func(kind adapter.Kind) bool {
		for _, e := range obs.Fired {
			if ExpectedKind(e) != kind {
				continue
			}
			if ev := normalize(e + ".json"); ev != nil && ev.Kind == kind {
				return true
			}
		}
		return false
	}
	for _, r := range obs.Responses {
		if EventOfFile(r.Payload) != r.Event {
			t.Errorf("response on %s cites payload %s of another event", r.Event, r.Payload)
		}
	}
	proven := func(purpose, effect string, ok func(*adapter.Event) bool, render func(*adapter.Event, string) adapter.Output) bool {
		for _, r := range obs.Responses {
			if r.Purpose != purpose || r.Effect != effect {
				continue
			}
			ev := normalize(r.Payload)
			if ev == nil || !ok(ev) {
				continue
			}
			if out := render(ev, r.Marker); reproduces(out, r) {
				return true
			}
		}
		return false
	}
	pushed := func() bool {
		for _, r := range obs.Responses {
			if r.Purpose != "push" || r.Effect != "started a turn" || !liveFrame(r.Marker) {
				continue
			}
			if ev := normalize(r.Payload); ev != nil && ev.Kind == adapter.BeforeTurn && strings.Contains(ev.Prompt, r.Marker) {
				return true
			}
		}
		return false
	}
	p := rec.Proven
	if p.Attach && !fired(adapter.SessionStart) {
		t.Error("claims attach, but no session-start payload was observed")
	}
	if p.SessionEnd && !fired(adapter.SessionEnd) {
		t.Error("claims sessionEnd, but no session-end payload was observed")
	}
	if p.NextTurn && !proven("inject", "delivered", func(ev *adapter.Event) bool { return ev.Kind == adapter.BeforeTurn }, a.Inject) {
		t.Error("claims nextTurn, but no before-turn context the adapter renders was seen delivered")
	}
	if p.GuardShell && !proven("deny", "blocked", func(ev *adapter.Event) bool { return ev.Shell != "" }, a.Deny) {
		t.Error("claims guardShell, but no shell-tool denial the adapter renders was seen blocking")
	}
	if p.GuardFiles && !proven("deny", "blocked", func(ev *adapter.Event) bool { return ev.Write }, a.Deny) {
		t.Error("claims guardFiles, but no file-tool denial the adapter renders was seen blocking")
	}
	if p.MidTurn && !proven("inject", "delivered", func(ev *adapter.Event) bool { return ev.Kind == adapter.AfterTool }, a.Inject) {
		t.Error("claims midTurn, but no post-tool context the adapter renders was seen delivered")
	}
	if p.EndOfTurn && !proven("hold", "kept working", func(ev *adapter.Event) bool { return ev.Kind == adapter.TurnEnd }, a.Hold) {
		t.Error("claims endOfTurn, but no held stop the adapter renders was seen keeping the agent working")
	}
	if p.LivePush && !pushed() {
		t.Error("claims livePush, but no before-turn payload carrying a pushed frame was observed")
	}
}

// reproduces: the adapter's answer is the recorded one (same exit code,
// stdout equal as JSON or as text, stderr equal as text).
func reproduces(out adapter.Output, r Response) bool {
	if out.ExitCode != r.ExitCode || !sameText(out.Stdout, r.Stdout) {
		return false
	}
	return strings.TrimSpace(string(out.Stderr)) == strings.TrimSpace(r.Stderr)
}

func sameText(got []byte, want string) bool {
	if strings.TrimSpace(want) == "" {
		return len(bytes.TrimSpace(got)) == 0
	}
	g, errG := hookio.Parse(got)
	w, errW := hookio.Parse([]byte(want))
	if errG == nil && errW == nil {
		return reflect.DeepEqual(g, w)
	}
	return strings.TrimRight(string(got), "\n") == strings.TrimRight(want, "\n")
}

// liveFrame reports whether marker has the shape of acc's live frame
// (core.LiveFrame): its first line, one peer block naming a message id,
// and the command that reads it — not just any text a prompt contains.
func liveFrame(marker string) bool {
	first, rest, ok := strings.Cut(marker, "\n")
	if !ok || !strings.HasPrefix(first, "acc: a message for you arrived") {
		return false
	}
	_, id, ok := strings.Cut(rest, "\nmessageId: message_")
	if !ok {
		return false
	}
	id, _, _ = strings.Cut(id, "\n")
	return strings.Count(rest, "```acc-peer-message\n") == 1 &&
		strings.HasSuffix(marker, "acc inbox --message message_"+id)
}
