package realclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// interactiveSessionEndTest is the test that proves the session end of a
// client that fires none headless; the evidence's note and test fields
// name it (sessionEndNote, mergeSessionEnd).
const interactiveSessionEndTest = "TestSessionEndInteractive"

// TestSessionEndInteractive proves the session end of each client that
// fires it only interactively (Kimi Code, Qwen Code): a headless run fires
// no SessionEnd, so the conversation tests cannot measure it. Here the
// client runs in tmux as a person runs it, its hooks wired by `acc
// install`: Kimi Code's folder is trusted at its prompt, one typed turn
// runs against the fake model (the session attaches and is live), and
// /exit ends the client. The SessionEnd hook must fire once and acc-hook
// must close the acc session: `acc status --all` shows it closed, not
// merely offline. (A CLI session shares the room, so the client's session
// is on durable record.)
func TestSessionEndInteractive(t *testing.T) {
	requireTmux(t)
	for _, c := range Pinned {
		if c.SessionEnd != "" {
			continue // its headless runs prove it
		}
		t.Run(c.Name, func(t *testing.T) { sessionEndInteractive(t, c) })
	}
}

func sessionEndInteractive(t *testing.T, c Client) {
	w := newWorld(t)
	r := w.hooked(t, c, w.repo, answers(5))
	r.configure()
	// A second session makes the room durable
	// (docs/design.md#lazy-materialisation), so a closed session stays on
	// record.
	w.attach(w.repo, "alice")
	u, err := r.setup.StartTUI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s screen:\n%s\nstderr:\n%.4000s", c.Name, u.Screen(), u.Stderr())
			for _, rec := range r.records() {
				t.Logf("hook %s exit %d: %.300s %.300s", rec.Event, rec.Exit, rec.Stdout, rec.Stderr)
			}
		}
	})

	if c.Name == "kimi" {
		// A new folder is trusted first; Enter takes the highlighted
		// choice, "Trust this folder".
		if _, ok := u.WaitScreen(90*time.Second, func(s string) bool { return strings.Contains(s, "Trust this folder") }); !ok {
			t.Fatal("Kimi Code never asked whether to trust the folder")
		}
		if err := u.Keys("Enter"); err != nil {
			t.Fatal(err)
		}
		if _, ok := u.WaitScreen(30*time.Second, func(s string) bool { return !strings.Contains(s, "Trust this folder") }); !ok {
			t.Fatal("the trust prompt stayed on the screen")
		}
	} else if _, ok := u.WaitScreen(90*time.Second, func(s string) bool { return strings.Contains(s, "Type your message") }); !ok {
		t.Fatalf("%s never showed its input box", c.Name)
	}
	time.Sleep(time.Second) // let the input box take focus
	if err := u.Type("hello"); err != nil {
		t.Fatal(err)
	}
	if !waitRecords(r, c.Stop, 1, 120*time.Second) {
		t.Fatalf("the typed turn never ended (no %s hook)", c.Stop)
	}
	st, err := w.status()
	if err != nil {
		t.Fatal(err)
	}
	if live := st.liveOf(c.Name); len(live) != 1 {
		t.Fatalf("after the typed turn the room shows %d live %s sessions, want 1", len(live), c.Name)
	}

	if err := u.Type("/exit"); err != nil {
		t.Fatal(err)
	}
	if !waitRecords(r, "SessionEnd", 1, 60*time.Second) {
		t.Fatal("/exit fired no SessionEnd hook")
	}
	if _, ok := u.WaitScreen(30*time.Second, func(s string) bool { return strings.Contains(s, "Bye!") || u.PID() == 0 }); !ok {
		t.Errorf("%s neither said Bye! nor exited after /exit", c.Name)
	}

	recs := r.records()
	observeFired(w, r, recs)
	ends := recordsOf(recs, "SessionEnd")
	ended := proof{Cap: "sessionEnd", OK: len(ends) == 1}
	if len(ends) != 1 {
		t.Errorf("SessionEnd fired %d times, want 1", len(ends))
	} else {
		ended.Record = ends[0]
		if ends[0].Exit != 0 {
			t.Errorf("acc-hook answered SessionEnd with exit %d: %s", ends[0].Exit, ends[0].Stderr)
			ended.OK = false
		}
		// /exit is "exit" to Kimi Code and, in Claude Code's words,
		// "prompt_input_exit" to Qwen Code.
		want := map[string]string{"kimi": "exit", "qwen": "prompt_input_exit"}[c.Name]
		if reason, _ := ends[0].Payload()["reason"].(string); reason != want {
			t.Errorf("SessionEnd reason %q, want %q", reason, want)
		}
	}
	all, err := w.status("--all")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range all.Participants {
		if p.Harness != c.Name {
			continue
		}
		seen++
		t.Logf("%s session %s: state %s, presence %s, lifecycle %s", c.Name, p.SessionID, p.State, p.Presence, p.Lifecycle)
		// The session's lifecycle is managed where the evidence built into
		// acc-hook proves the version's session end, manual otherwise.
		if want := map[bool]string{true: "managed", false: "manual"}[expectManaged(c)]; p.Lifecycle != want {
			t.Errorf("session %s of %s has lifecycle %s, want %s", p.SessionID, c.Name, p.Lifecycle, want)
		}
		if p.State != "closed" {
			t.Errorf("SessionEnd fired, but session %s of %s is %s (presence %s), not closed", p.SessionID, c.Name, p.State, p.Presence)
			ended.OK = false
		}
	}
	if seen != 1 {
		t.Errorf("acc status --all shows %d %s sessions, want 1", seen, c.Name)
		ended.OK = false
	}
	observe(t, w, c, ended)
}

// expectManaged is whether acc-hook must attach sessions of c with a
// managed lifecycle: whether the built-in evidence proves the version's
// session end.
func expectManaged(c Client) bool {
	caps, _ := adapter.CapabilitiesFor(clients.Get(c.Name), c.Version)
	return caps.SessionEnd
}

// waitRecords waits until event has fired at least n times.
func waitRecords(r *run, event string, n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if len(recordsOf(r.records(), event)) >= n {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
