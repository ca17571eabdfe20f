package core

import (
	"math"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

type fakeProbe map[int]ProcessInfo

func (f fakeProbe) Probe(pid int) ProcessInfo { return f[pid] }

// countingProbe records whether it was asked at all.
type countingProbe struct{ calls int }

func (c *countingProbe) Probe(int) ProcessInfo { c.calls++; return ProcessInfo{Exists: true} }

func TestPresenceClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 4, 12, 0, 0, 0, time.UTC)
	started := now.Add(-48 * time.Hour)
	ts := func(d time.Duration) *string { s := protocol.FormatTime(now.Add(-d)); return &s }
	pidPtr := func(p int) *int { return &p }
	str := func(s string) *string { return &s }
	probe := fakeProbe{
		100: {Exists: true, StartedAt: started},
		101: {Exists: false},
		102: {Exists: true, Zombie: true, StartedAt: started},
		103: {Exists: true}, // start time unknown
	}
	tests := []struct {
		name      string
		state     string
		age       time.Duration
		cadenceMs int64
		pid       *int
		pidStart  *string
		heartbeat *string // overrides age
		want      string
	}{
		{"closed", protocol.SessionClosed, 0, 30000, nil, nil, nil, PresenceOffline},
		{"closed with live pid", protocol.SessionClosed, 0, 30000, pidPtr(100), nil, nil, PresenceOffline},
		{"fresh, no pid", protocol.SessionOpen, 10 * time.Second, 30000, nil, nil, nil, PresenceOnline},
		{"exactly three cadences", protocol.SessionOpen, 90 * time.Second, 30000, nil, nil, nil, PresenceOnline},
		{"just over three cadences", protocol.SessionOpen, 90*time.Second + time.Millisecond, 30000, nil, nil, nil, PresenceStale},
		{"no pid, 30 min", protocol.SessionOpen, 30 * time.Minute, 30000, nil, nil, nil, PresenceStale},
		{"no pid, over 30 min", protocol.SessionOpen, 30*time.Minute + time.Millisecond, 30000, nil, nil, nil, PresenceOffline},
		{"no pid, long cadence keeps online", protocol.SessionOpen, 20 * time.Minute, 600000, nil, nil, nil, PresenceOnline},
		{"no pid, 1 h cadence: online to the 30-min floor", protocol.SessionOpen, 30 * time.Minute, 3600000, nil, nil, nil, PresenceOnline},
		{"no pid, 1 h cadence: then offline, never stale", protocol.SessionOpen, 30*time.Minute + time.Millisecond, 3600000, nil, nil, nil, PresenceOffline},
		{"live pid, 10 h cadence: online to 24 h", protocol.SessionOpen, 24 * time.Hour, 36000000, pidPtr(100), nil, nil, PresenceOnline},
		{"huge cadence, no overflow", protocol.SessionOpen, 20 * time.Minute, math.MaxInt64, nil, nil, nil, PresenceOnline},
		{"live pid outranks the 30-min floor", protocol.SessionOpen, 2 * time.Hour, 60000, pidPtr(100), nil, nil, PresenceStale},
		{"live pid, fresh", protocol.SessionOpen, time.Second, 60000, pidPtr(100), nil, nil, PresenceOnline},
		{"live pid, 24 h", protocol.SessionOpen, 24 * time.Hour, 60000, pidPtr(100), nil, nil, PresenceStale},
		{"live pid, over 24 h", protocol.SessionOpen, 24*time.Hour + time.Millisecond, 60000, pidPtr(100), nil, nil, PresenceOffline},
		{"dead pid, fresh", protocol.SessionOpen, time.Second, 60000, pidPtr(101), nil, nil, PresenceOffline},
		{"zombie pid, fresh", protocol.SessionOpen, time.Second, 60000, pidPtr(102), nil, nil, PresenceOffline},
		{"start time matches", protocol.SessionOpen, time.Second, 60000, pidPtr(100), str(protocol.FormatTime(started)), nil, PresenceOnline},
		{"start time within slack", protocol.SessionOpen, time.Second, 60000, pidPtr(100), str(protocol.FormatTime(started.Add(PIDStartSlack))), nil, PresenceOnline},
		{"start time later than recorded", protocol.SessionOpen, time.Second, 60000, pidPtr(100), str(protocol.FormatTime(started.Add(-PIDStartSlack - time.Millisecond))), nil, PresenceOffline},
		{"start time earlier than recorded", protocol.SessionOpen, time.Second, 60000, pidPtr(100), str(protocol.FormatTime(started.Add(time.Hour))), nil, PresenceOffline},
		{"unknown start time decides nothing", protocol.SessionOpen, time.Second, 60000, pidPtr(103), str(protocol.FormatTime(started)), nil, PresenceOnline},
		{"unparsable pidStartedAt decides nothing", protocol.SessionOpen, time.Second, 60000, pidPtr(100), str("yesterday"), nil, PresenceOnline},
		{"unparsable heartbeat", protocol.SessionOpen, 0, 60000, nil, nil, str("soon"), PresenceOffline},
		{"heartbeat in the future", protocol.SessionOpen, -time.Hour, 60000, nil, nil, nil, PresenceOnline},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &protocol.Session{State: tc.state, HeartbeatCadenceMs: tc.cadenceMs, PID: tc.pid, PIDStartedAt: tc.pidStart, HeartbeatAt: *ts(tc.age)}
			if tc.heartbeat != nil {
				s.HeartbeatAt = *tc.heartbeat
			}
			if got := Presence(s, now, probe); got != tc.want {
				t.Fatalf("Presence = %s; want %s", got, tc.want)
			}
		})
	}
	if got := Presence(nil, now, probe); got != PresenceOffline {
		t.Fatalf("Presence(nil) = %s", got)
	}
}

// TestPresenceWindowsAndCadenceLimit: the windows are Presence's limits,
// and every cadence attach accepts has three beats that end before them
// (docs/design.md), so such a session can always turn stale.
func TestPresenceWindowsAndCadenceLimit(t *testing.T) {
	t.Parallel()
	pid := 4242
	for _, tc := range []struct {
		cadenceMs           int64
		pid                 *int
		wantOnline, wantOff time.Duration
	}{
		{30000, nil, 90 * time.Second, 30 * time.Minute},
		{3600000, nil, 30 * time.Minute, 30 * time.Minute},
		{60000, &pid, 3 * time.Minute, 24 * time.Hour},
		{36000000, &pid, 24 * time.Hour, 24 * time.Hour},
	} {
		on, off := PresenceWindows(&protocol.Session{HeartbeatCadenceMs: tc.cadenceMs, PID: tc.pid}, nil)
		if on != tc.wantOnline || off != tc.wantOff {
			t.Errorf("cadence %d pid %v: windows %v, %v; want %v, %v", tc.cadenceMs, tc.pid != nil, on, off, tc.wantOnline, tc.wantOff)
		}
	}
	if CadenceLimit(false) != 10*time.Minute || CadenceLimit(true) != 8*time.Hour {
		t.Errorf("CadenceLimit = %v, %v; want 10m, 8h", CadenceLimit(false), CadenceLimit(true))
	}
	for _, tc := range []struct {
		cadenceMs int64
		pid       int
		ok        bool
	}{{599999, 0, true}, {600000, 0, false}, {28799999, os.Getpid(), true}, {28800000, os.Getpid(), false}} {
		err := CheckAttachInput(AttachInput{ParticipantID: "bob", CadenceMs: tc.cadenceMs, PID: tc.pid})
		if (err == nil) != tc.ok {
			t.Errorf("CheckAttachInput(cadence %d, pid %d) = %v; want ok %v", tc.cadenceMs, tc.pid, err, tc.ok)
		}
	}
}

func TestPresenceProbesOnlyWhenItMatters(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	pid := 4242
	c := &countingProbe{}
	closed := &protocol.Session{State: protocol.SessionClosed, PID: &pid, HeartbeatCadenceMs: 1000, HeartbeatAt: protocol.FormatTime(now)}
	old := &protocol.Session{State: protocol.SessionOpen, PID: &pid, HeartbeatCadenceMs: 1000, HeartbeatAt: protocol.FormatTime(now.Add(-25 * time.Hour))}
	Presence(closed, now, c)
	Presence(old, now, c)
	if c.calls != 0 {
		t.Fatalf("probed %d times for sessions whose presence the record decides", c.calls)
	}
	live := &protocol.Session{State: protocol.SessionOpen, PID: &pid, HeartbeatCadenceMs: 1000, HeartbeatAt: protocol.FormatTime(now)}
	if Presence(live, now, c) != PresenceOnline || c.calls != 1 {
		t.Fatalf("live pid: calls %d", c.calls)
	}
}

// startSleep starts a real child process that lives until killed.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestPresenceSystemProbeRealProcesses(t *testing.T) {
	t.Parallel()
	probe := SystemProbe()
	before := time.Now()
	cmd := startSleep(t)
	pid := cmd.Process.Pid

	info := probe.Probe(pid)
	if !info.Exists || info.Zombie {
		t.Fatalf("running child: %+v", info)
	}
	if info.StartedAt.IsZero() {
		t.Fatal("start time of a running child is unknown")
	}
	// Generous bound: the start time is derived from boot time and ticks.
	if d := info.StartedAt.Sub(before); d < -time.Minute || d > time.Minute {
		t.Fatalf("start time %v is %v away from launch", info.StartedAt, d)
	}
	t.Logf("child start time %v, launched at %v", info.StartedAt, before)

	start, ok := ProcessStart(pid)
	if !ok || start.Sub(info.StartedAt).Abs() > PIDStartSlack {
		t.Fatalf("ProcessStart = %v, %v; probe said %v", start, ok, info.StartedAt)
	}

	now := time.Now()
	rec := protocol.FormatTime(start)
	session := func(pidStartedAt *string) *protocol.Session {
		return &protocol.Session{State: protocol.SessionOpen, PID: &pid, PIDStartedAt: pidStartedAt,
			HeartbeatCadenceMs: 30000, HeartbeatAt: protocol.FormatTime(now)}
	}
	if got := Presence(session(&rec), now, probe); got != PresenceOnline {
		t.Fatalf("live child with its start time: %s", got)
	}
	if got := Presence(session(nil), now, probe); got != PresenceOnline {
		t.Fatalf("live child without a start time: %s", got)
	}
	wrong := protocol.FormatTime(start.Add(-time.Hour))
	if got := Presence(session(&wrong), now, probe); got != PresenceOffline {
		t.Fatalf("live child with a wrong start time (reused pid): %s", got)
	}

	// Killed but not reaped: a zombie, which counts as gone.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for info = probe.Probe(pid); !info.Zombie && time.Now().Before(deadline); info = probe.Probe(pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if !info.Exists || !info.Zombie {
		t.Fatalf("killed, unreaped child: %+v; want an existing zombie", info)
	}
	if got := Presence(session(&rec), now, probe); got != PresenceOffline {
		t.Fatalf("zombie child: %s", got)
	}

	// Reaped: gone.
	_ = cmd.Wait()
	if info = probe.Probe(pid); info.Exists {
		t.Fatalf("reaped child still exists: %+v", info)
	}
	if got := Presence(session(nil), now, probe); got != PresenceOffline {
		t.Fatalf("reaped child: %s", got)
	}
	if _, ok := ProcessStart(pid); ok {
		t.Fatal("ProcessStart of a reaped child reported a start time")
	}
}

func TestPresenceSystemProbeEdges(t *testing.T) {
	t.Parallel()
	probe := SystemProbe()
	if info := probe.Probe(os.Getpid()); !info.Exists || info.Zombie || info.StartedAt.IsZero() {
		t.Fatalf("own process: %+v", info)
	}
	// pid 1 exists on every Unix system; it may belong to another user
	// (EPERM), which still means alive.
	if info := probe.Probe(1); !info.Exists {
		t.Fatalf("pid 1: %+v", info)
	}
	for _, pid := range []int{0, -1, math.MaxInt32 + 1, math.MaxInt} {
		if info := probe.Probe(pid); info != (ProcessInfo{}) {
			t.Fatalf("pid %d: %+v; want nothing known", pid, info)
		}
	}
}
