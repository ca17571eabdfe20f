package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// TestDeliveryLines: each way a message can travel has its own short line,
// and recipients whose copies travel the same way share one line.
func TestDeliveryLines(t *testing.T) {
	code := func(c string) *string { return &c }
	cli := router.Session{Harness: "cli", Manual: true}
	mcp := router.Session{Harness: "mcp"}
	claude := router.Session{Harness: "claude", ClientVersion: "2.1.332", NextTurn: true}
	gemini := router.Session{Harness: "gemini", ClientVersion: "0.1.0"}
	geminiUnknown := router.Session{Harness: "gemini"}
	codex := router.Session{Harness: "codex", ClientVersion: "0.64.0", NextTurn: true}
	working := &protocol.Activity{State: protocol.ActivityWorking, Since: "2026-12-02T09:00:00.000Z"}
	busy := router.Session{Harness: "claude", ClientVersion: "2.1.332", NextTurn: true, MidTurn: true, EndOfTurn: true, Activity: working, Carries: true}
	busyEnd := router.Session{Harness: "codex", ClientVersion: "0.64.0", NextTurn: true, EndOfTurn: true, Activity: working, Carries: true}
	queued := func(p, transport string, c *string, s ...router.Session) router.Delivery {
		return router.Delivery{RecipientParticipantID: p, Outcome: router.OutcomeQueued, Transport: transport, ErrorCode: c, Sessions: s}
	}
	durable, next := router.TransportDurable, router.TransportNextTurn
	unsupported := code(router.ErrUnsupportedClientVersion)
	for _, c := range []struct {
		name string
		in   []router.Delivery
		want []string
	}{
		{"one CLI session", []router.Delivery{queued("bob", durable, unsupported, cli)},
			[]string{"bob: queued; a CLI session reads it with acc inbox"}},
		{"two CLI recipients share a line", []router.Delivery{queued("bob", durable, unsupported, cli), queued("carol", durable, unsupported, cli)},
			[]string{"bob, carol: queued; CLI sessions read it with acc inbox"}},
		{"one recipient with two CLI sessions", []router.Delivery{queued("bob", durable, unsupported, cli, cli)},
			[]string{"bob: queued; CLI sessions read it with acc inbox"}},
		{"MCP", []router.Delivery{queued("dave", durable, unsupported, mcp)},
			[]string{"dave: queued; an MCP session reads it with acc_inbox"}},
		{"CLI and MCP sessions of one recipient", []router.Delivery{queued("bob", durable, unsupported, cli, mcp)},
			[]string{"bob: queued; their sessions read it with acc inbox or acc_inbox"}},
		{"nobody attached", []router.Delivery{queued("erin", durable, code(router.ErrRecipientUnavailable))},
			[]string{"erin: queued; no live session, so it waits in their inbox"}},
		{"mid-turn", []router.Delivery{queued("bob", router.TransportMidTurn, nil, busy)},
			[]string{"bob: queued; their busy Claude Code 2.1.332 shows it after its next tool call (mid-turn)"}},
		{"mid-turn, live push off", []router.Delivery{queued("bob", router.TransportMidTurn, code(router.ErrDeliveryDisabled), busy)},
			[]string{"bob: queued; their busy Claude Code 2.1.332 shows it after its next tool call (mid-turn) (their live-push policy does not cover it)"}},
		{"mid-turn, beside a CLI session", []router.Delivery{queued("bob", router.TransportMidTurn, nil, cli, busy)},
			[]string{"bob: queued; their busy Claude Code 2.1.332 shows it after its next tool call (mid-turn), unless another of their sessions takes it first"}},
		{"end of turn", []router.Delivery{queued("bob", router.TransportEndOfTurn, nil, busyEnd)},
			[]string{"bob: queued; their busy Codex 0.64.0 shows it when it is about to stop (end of turn)"}},
		{"next turn", []router.Delivery{queued("claude", next, nil, claude)},
			[]string{"claude: queued; their Claude Code 2.1.332 shows it at its next turn"}},
		// The session with next turn is named, wherever it is in the list;
		// a CLI or MCP session beside it reads the message itself, and the
		// hooked one shows it only while it is still queued.
		{"next turn, with a CLI session listed first", []router.Delivery{queued("mix", next, nil, cli, claude)},
			[]string{"mix: queued; their Claude Code 2.1.332 shows it at its next turn, unless their CLI session reads it first with acc inbox"}},
		{"next turn, with an MCP session", []router.Delivery{queued("mix", next, nil, claude, mcp)},
			[]string{"mix: queued; their Claude Code 2.1.332 shows it at its next turn, unless their MCP session reads it first with acc_inbox"}},
		{"next turn, with two CLI sessions", []router.Delivery{queued("mix", next, nil, cli, claude, cli)},
			[]string{"mix: queued; their Claude Code 2.1.332 shows it at its next turn, unless one of their CLI sessions reads it first with acc inbox"}},
		{"next turn, with CLI, MCP and unproven sessions", []router.Delivery{queued("mix", next, code(router.ErrAmbiguousSessions), gemini, claude, cli, mcp)},
			[]string{"mix: queued; their Claude Code 2.1.332 shows it at its next turn (several live sessions, so none is pushed to), unless another of their sessions reads it first"}},
		{"next turn, two hooked sessions", []router.Delivery{queued("two", next, nil, cli, claude, codex)},
			[]string{"two: queued; whichever of their Claude Code 2.1.332 and Codex 0.64.0 sessions takes a turn first shows it, unless their CLI session reads it first with acc inbox"}},
		{"next turn, two hooked sessions of one client", []router.Delivery{queued("two", next, nil, claude, claude)},
			[]string{"two: queued; whichever of their Claude Code 2.1.332 sessions takes a turn first shows it"}},
		{"next turn, live push off", []router.Delivery{queued("claude", next, code(router.ErrDeliveryDisabled), claude)},
			[]string{"claude: queued; their Claude Code 2.1.332 shows it at its next turn (their live-push policy does not cover it)"}},
		{"next turn, the session on another machine", []router.Delivery{queued("far", next, code(router.ErrRecipientRemote), claude)},
			[]string{"far: queued; their Claude Code 2.1.332 shows it at its next turn (not pushed live: their session runs on another host or container)"}},
		{"the inbox, the session on another machine", []router.Delivery{queued("far", durable, code(router.ErrRecipientRemote), gemini)},
			[]string{"far: queued; next-turn delivery is not proven for their Gemini CLI 0.1.0, so it waits in their inbox (not pushed live: their session runs on another host or container)"}},
		{"a client without proven next turn", []router.Delivery{queued("gem", durable, unsupported, gemini), queued("gem2", durable, unsupported, geminiUnknown)},
			[]string{"gem: queued; next-turn delivery is not proven for their Gemini CLI 0.1.0, so it waits in their inbox",
				"gem2: queued; next-turn delivery is not proven for their Gemini CLI (version unknown), so it waits in their inbox"}},
		{"live push", []router.Delivery{{RecipientParticipantID: "claude", Outcome: router.OutcomeOffered, Transport: "claude-inbox", Sessions: []router.Session{claude}}},
			[]string{"claude: offered live (claude-inbox): their session takes it now, an idle one starts a turn"}},
		{"a repeated send", []router.Delivery{{RecipientParticipantID: "bob", Outcome: "acknowledged", Transport: durable, Sessions: []router.Session{cli}}},
			[]string{"bob: already acknowledged"}},
		{"a replaced decision", []router.Delivery{queued("bob", durable, nil, cli)},
			[]string{"bob: queued; a later decision replaced it, so only an exact read shows it"}},
		{"mixed, in order of first appearance",
			[]router.Delivery{queued("bob", durable, unsupported, cli), queued("erin", durable, code(router.ErrRecipientUnavailable)), queued("carol", durable, unsupported, cli)},
			[]string{"bob, carol: queued; CLI sessions read it with acc inbox", "erin: queued; no live session, so it waits in their inbox"}},
	} {
		got := deliveryLines(c.in, "alice")
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		// Short: even a recipient with sessions of several kinds gets one
		// line that fits a wide terminal.
		for _, line := range got {
			if len(line) > 170 {
				t.Errorf("%s: %d characters is not short: %q", c.name, len(line), line)
			}
		}
	}
}

// TestDeliveryLinesToOneself: a message to one's own participant never
// counts the sending session as the recipient's (pkg/router), so "no live
// session" would be false while the sender is live: the line says that no
// other session of theirs is.
func TestDeliveryLinesToOneself(t *testing.T) {
	unavailable := router.ErrRecipientUnavailable
	ds := []router.Delivery{
		{RecipientParticipantID: "alice", Outcome: router.OutcomeQueued, Transport: router.TransportDurable, ErrorCode: &unavailable},
		{RecipientParticipantID: "erin", Outcome: router.OutcomeQueued, Transport: router.TransportDurable, ErrorCode: &unavailable},
	}
	want := []string{
		"alice: queued; no live session of theirs apart from the sender, so it waits in their inbox",
		"erin: queued; no live session, so it waits in their inbox",
	}
	if got := deliveryLines(ds, "alice"); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestHeartbeatWords: the heartbeat's words follow core.Presence and
// core.PresenceWindows: with a process recorded the session goes offline
// with it, not after 30 minutes; a cadence whose three beats do not fit
// before the offline limit (a session recorded before attach refused such
// cadences) is online until that limit, never "every <cadence>"; a session
// offline by proof says so and how to come back, with its own generation
// (the caller proved it; no one else reads this output).
func TestHeartbeatWords(t *testing.T) {
	pid := 4242
	at := "2026-06-01T12:00:00.000Z"
	head := "heartbeat recorded for bob (session_b) at " + at + "\n"
	for _, c := range []struct {
		cadenceMs int64
		pid       *int
		presence  string
		want      string
	}{
		{60000, &pid, core.PresenceOnline, "  it counts as online until 3m pass without another heartbeat (three cadences of 1m, set when it attached), then stale; offline as soon as process 4242 exits, or once 24h pass without one\n"},
		{15000, nil, core.PresenceOnline, "  it counts as online until 45s pass without another heartbeat (three cadences of 15s, set when it attached), then stale; offline once 30m pass without one (no process is recorded)\n"},
		{3600000, nil, core.PresenceOnline, "  it counts as online until 30m pass without another heartbeat, then offline, never stale: with no process recorded 30m is the limit, and three cadences of 1h (set when it attached) do not end before it\n"},
		{36000000, &pid, core.PresenceOnline, "  it counts as online until 24h pass without another heartbeat, then offline, never stale (and offline as soon as process 4242 exits): 24h is every session's limit, and three cadences of 10h (set when it attached) do not end before it\n"},
		{30000, &pid, core.PresenceOffline, "  it counts as offline all the same: its recorded process 4242 has exited, and a heartbeat cannot change that; attach again to be online (`acc attach --participant bob --session session_b --generation generation_b`, with --pid of the client's running process or none) and use the pair it prints\n"},
	} {
		var b strings.Builder
		printHeartbeat(&b, &protocol.Session{ParticipantID: "bob", SessionID: "session_b", Generation: "generation_b", HeartbeatAt: at, HeartbeatCadenceMs: c.cadenceMs, PID: c.pid}, c.presence, nil)
		if b.String() != head+c.want {
			t.Errorf("cadence %d pid %v %s: got\n%swant\n%s", c.cadenceMs, c.pid != nil, c.presence, b.String(), head+c.want)
		}
	}
	// A pid recorded on another host (another boot id than this
	// machine's) is none here: the 30-minute limit, never "as soon as
	// process 4242 exits", and the words say why.
	elsewhere := &protocol.SessionHost{Name: "far", BootID: "another-boot", PIDNamespace: "pid:[1]"}
	for _, c := range []struct {
		cadenceMs int64
		presence  string
		want      string
	}{
		{60000, core.PresenceOnline, "  it counts as online until 3m pass without another heartbeat (three cadences of 1m, set when it attached), then stale; offline once 30m pass without one (its process runs on another host or in another PID namespace, so only heartbeats count here)\n"},
		{3600000, core.PresenceOnline, "  it counts as online until 30m pass without another heartbeat, then offline, never stale: with its process on another host or in another PID namespace 30m is the limit, and three cadences of 1h (set when it attached) do not end before it\n"},
		{60000, core.PresenceOffline, "  it counts as offline all the same; attach again to be online (`acc attach --participant bob --session session_b --generation generation_b`, with --pid of the client's running process or none) and use the pair it prints\n"},
	} {
		var b strings.Builder
		s := &protocol.Session{ParticipantID: "bob", SessionID: "session_b", Generation: "generation_b", HeartbeatAt: at, HeartbeatCadenceMs: c.cadenceMs, PID: &pid}
		protocol.SetSessionHost(s, elsewhere)
		printHeartbeat(&b, s, c.presence, nil)
		if b.String() != head+c.want {
			t.Errorf("elsewhere, cadence %d %s: got\n%swant\n%s", c.cadenceMs, c.presence, b.String(), head+c.want)
		}
	}
	for d, want := range map[time.Duration]string{1500 * time.Millisecond: "1.5s", 90 * time.Second: "1m30s", 30 * time.Minute: "30m", 24 * time.Hour: "24h"} {
		if got := core.ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
