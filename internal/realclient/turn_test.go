package realclient

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/fakemodel"
)

// holdJSON is the answer of a client's stop hook that keeps the agent
// working, with reason as what the model reads next: Claude Code and Codex
// read {"decision":"block","reason":…} from Stop, Gemini CLI the same from
// AfterAgent.
func holdJSON(reason string) string {
	b, _ := json.Marshal(map[string]any{"decision": "block", "reason": reason})
	return string(b)
}

// holdAnswer is the client's stop-hook answer that keeps the agent working:
// holdJSON, except for Kimi Code, which ignores that JSON and holds the stop
// on exit code 2, giving the model the reason from stderr as a user message.
func holdAnswer(c Client, reason string) HookResponse {
	if c.Name == "kimi" {
		return HookResponse{Stderr: reason, Exit: 2}
	}
	return HookResponse{Stdout: holdJSON(reason)}
}

// stopRefires reports whether the client runs its stop hook again when the
// model stops after a held stop: Kimi Code 2.1.0 does not (the hold works
// once per turn, and nothing can hold the second stop).
func stopRefires(c Client) bool { return c.Name != "kimi" }

// TestStopHold has the stop hook answer once with the client's hold shape:
// the client does not stop but asks the model again, and that request carries
// the reason; the stop hook then fires a second time and, with no answer,
// the client stops (Kimi Code: holds on exit 2, and does not run the stop
// hook again after the held stop). The first stop's payload says
// stop_hook_active false.
// The second says true when the model stopped again straight away ("direct")
// — and when it first ran a tool ("tool"), as an agent answering a peer
// does, on Claude Code and Codex only: Gemini CLI 0.61.0 then says false
// again, so on Gemini the flag alone cannot tell a held stop from a new one
// (docs/hooks.md).
func TestStopHold(t *testing.T) {
	const reason = "acc: HOLD_MARKER_6620 a peer asked you something; answer it before you stop."
	for _, c := range Quick() {
		for _, variant := range []string{"direct", "tool"} {
			t.Run(c.Name+"/"+variant, func(t *testing.T) {
				script := fakemodel.Script{fakemodel.Run(fakemodel.Shell("echo step 1")), fakemodel.Say("First stop.")}
				if variant == "tool" {
					script = append(script, fakemodel.Run(fakemodel.Shell("echo answering")))
				}
				if c.NoHold {
					if variant == "tool" {
						t.Skipf("%s cannot hold a stop; the direct variant shows it", c.Name)
					}
					// The hold answer changes nothing: one stop, and the
					// reason reaches no request.
					r := newRun(t, c, script)
					if err := SetHookResponseOnce(r.logDir, c.Name, c.Stop, holdAnswer(c, reason)); err != nil {
						t.Fatal(err)
					}
					_, recs := r.exec("Run one step.")
					if n := len(recordsOf(recs, c.Stop)); n != 1 {
						t.Errorf("%s fired %d times, want 1", c.Stop, n)
					}
					for _, q := range r.wantModelCalls(len(script)) {
						if q.Contains("HOLD_MARKER_6620") {
							t.Errorf("request %d carries the hold reason, which %s cannot give", q.Seq, c.Name)
						}
					}
					return
				}
				r := newRun(t, c, append(script, fakemodel.Say("Held once, now done.")))
				if err := SetHookResponseOnce(r.logDir, c.Name, c.Stop, holdAnswer(c, reason)); err != nil {
					t.Fatal(err)
				}
				_, recs := r.exec("Run one step.")

				stops := recordsOf(recs, c.Stop)
				want := []bool{false, !(c.Name == "gemini" && variant == "tool")}
				if !stopRefires(c) {
					want = want[:1]
				}
				if len(stops) != len(want) {
					t.Fatalf("%s fired %d times, want %d (held once, then let go)", c.Stop, len(stops), len(want))
				}
				for i, want := range want {
					if got, _ := stops[i].Payload()["stop_hook_active"].(bool); got != want {
						t.Errorf("%s #%d: stop_hook_active %v, want %v\n%s", c.Stop, i+1, got, want, stops[i].Stdin)
					}
				}
				calls := r.wantModelCalls(len(script) + 1)
				if calls[1].Contains("HOLD_MARKER_6620") {
					t.Error("the reason reached the model before the stop hook gave it")
				}
				if !calls[2].Contains("HOLD_MARKER_6620") {
					t.Errorf("the request after the held stop does not carry the reason")
				} else {
					t.Logf("hold reason found in request %d: %s", calls[2].Seq, where(calls[2], "HOLD_MARKER_6620"))
					t.Logf("as: %q", shownText(calls[2], "HOLD_MARKER_6620"))
				}
			})
		}
	}
}

// shownText returns the string of a request that contains marker.
func shownText(q *fakemodel.Request, marker string) string {
	for _, s := range q.Strings() {
		if strings.Contains(s, marker) {
			return s
		}
	}
	return ""
}

// TestPostToolContext has the post-tool hook add context after every tool
// call of a turn of three: each model request after a tool result carries the
// context given after that call, and none carries it before. A client that
// does not wait for its post-tool hook (Kimi Code) passes none of it on.
func TestPostToolContext(t *testing.T) {
	for _, c := range Quick() {
		t.Run(c.Name, func(t *testing.T) {
			r := newRun(t, c, fakemodel.Script{
				fakemodel.Run(fakemodel.Shell("echo step 1")),
				fakemodel.Run(fakemodel.Shell("echo step 2")),
				fakemodel.Say("Done."),
			})
			const marker = "POSTTOOL_MARKER_9902"
			if err := SetHookResponseOnce(r.logDir, c.Name, c.PostTool, HookResponse{Stdout: contextAnswer(c, c.PostTool, "acc: "+marker+" <peer> & \"quoted\"")}); err != nil {
				t.Fatal(err)
			}
			_, recs := r.exec("Run two steps.")
			calls := r.wantModelCalls(3)
			if calls[0].Contains(marker) {
				t.Error("the first request carries the post-tool context")
			}
			if c.PostToolUnawaited {
				// The client does not wait for the hook, so what it prints
				// reaches no request.
				answered := false
				for _, rec := range recordsOf(recs, c.PostTool) {
					answered = answered || strings.Contains(rec.Stdout, marker)
				}
				t.Logf("%s fired %d times; its context answered: %v", c.PostTool, len(recordsOf(recs, c.PostTool)), answered)
				for _, q := range calls {
					if q.Contains(marker) {
						t.Errorf("request %d carries the post-tool context, which %s does not wait for: %s", q.Seq, c.Name, where(q, marker))
					}
				}
				return
			}
			for _, q := range calls[1:] {
				if !q.Contains(marker) {
					t.Errorf("request %d does not carry the post-tool context", q.Seq)
					continue
				}
				t.Logf("request %d: %s: %q", q.Seq, where(q, marker), shownText(q, marker))
			}
			res := r.resultFor(calls[1], calls[0])
			t.Logf("tool result: %q", res.Output)
		})
	}
}
