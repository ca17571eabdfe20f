package core

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// hostProbe is a fake probe that says which host it looks at: its pids
// are answered by ProcessProbe (nil: every pid is gone), and it counts
// how often it was asked.
type hostProbe struct {
	ProcessProbe
	host  protocol.SessionHost
	calls *int
}

func (h hostProbe) Probe(pid int) ProcessInfo {
	if h.calls != nil {
		*h.calls++
	}
	if h.ProcessProbe == nil {
		return ProcessInfo{}
	}
	return h.ProcessProbe.Probe(pid)
}

func (h hostProbe) Host() protocol.SessionHost { return h.host }

// Hosts the tests place sessions and probes on.
var (
	hostHere = protocol.SessionHost{Name: "here", MachineID: "m1", BootID: "b1", PIDNamespace: "pid:[4026531836]"}
	hostAway = protocol.SessionHost{Name: "here", MachineID: "m2", BootID: "b2", PIDNamespace: "pid:[4026531836]"}
)

// TestLocalHostReadsThisMachine: on Linux LocalHost is what the system
// files say (machine id, boot id, the link of this process's PID
// namespace) and the host name; it is the system probe's host, and it is
// read once.
func TestLocalHostReadsThisMachine(t *testing.T) {
	t.Parallel()
	h := LocalHost()
	if name, err := os.Hostname(); err == nil && h.Name != strings.TrimSpace(name) {
		t.Errorf("name %q, hostname %q", h.Name, name)
	}
	if runtime.GOOS == "linux" {
		ns, err := os.Readlink("/proc/self/ns/pid")
		if err != nil {
			t.Skipf("no /proc/self/ns/pid here: %v", err)
		}
		if h.PIDNamespace != ns || !strings.HasPrefix(h.PIDNamespace, "pid:[") {
			t.Errorf("pidNamespace %q, /proc/self/ns/pid names %q", h.PIDNamespace, ns)
		}
		if h.BootID != readFirst("/proc/sys/kernel/random/boot_id") || h.BootID == "" {
			t.Errorf("bootId %q", h.BootID)
		}
		if h.MachineID != readFirst("/etc/machine-id", "/var/lib/dbus/machine-id") {
			t.Errorf("machineId %q", h.MachineID)
		}
	}
	if err := (&h).Validate(); err != nil {
		t.Errorf("LocalHost is not a valid host record: %v", err)
	}
	if SystemProbe().(HostProbe).Host() != h || LocalHost() != h {
		t.Error("the system probe's host, or a second reading, differs")
	}
	// A value that is no line text is left out, never kept or mended.
	for in, want := range map[string]string{" abc\n": "abc", "": "", " \n": "", "a\x01b": "", strings.Repeat("x", protocol.MaxLineText+1): ""} {
		if got := hostField(in); got != want {
			t.Errorf("hostField(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPIDJudgedOnlyOnItsHost: a pid is judged only where the session's
// host record matches the probe's machine id, boot id and PID namespace,
// with the boot id known; the host name proves nothing; a record without
// a host (written before sessions said where they run) is judged as
// before; no pid is never judged.
func TestPIDJudgedOnlyOnItsHost(t *testing.T) {
	t.Parallel()
	pid := 4242
	probe := hostProbe{host: hostHere}
	with := func(h *protocol.SessionHost) *protocol.Session { return withHost(&protocol.Session{PID: &pid}, h) }
	other := func(edit func(h *protocol.SessionHost)) *protocol.SessionHost {
		h := hostHere
		edit(&h)
		return &h
	}
	for _, c := range []struct {
		name string
		s    *protocol.Session
		want bool
	}{
		{"same machine, boot and namespace", with(&hostHere), true},
		{"another name only", with(other(func(h *protocol.SessionHost) { h.Name = "elsewhere" })), true},
		{"no host record (legacy)", with(nil), true},
		{"another machine id", with(other(func(h *protocol.SessionHost) { h.MachineID = "m9" })), false},
		{"another boot", with(other(func(h *protocol.SessionHost) { h.BootID = "b9" })), false},
		{"another PID namespace", with(other(func(h *protocol.SessionHost) { h.PIDNamespace = "pid:[4026532179]" })), false},
		{"machine id missing there", with(other(func(h *protocol.SessionHost) { h.MachineID = "" })), false},
		{"boot id unknown", with(other(func(h *protocol.SessionHost) { h.BootID = "" })), false},
		{"empty host record", with(&protocol.SessionHost{}), false},
		{"no pid", withHost(&protocol.Session{}, &hostHere), false},
		{"nil session", nil, false},
	} {
		if got := PIDJudged(c.s, probe); got != c.want {
			t.Errorf("%s: PIDJudged = %v, want %v", c.name, got, c.want)
		}
	}
	// Where neither side has PID namespaces (macOS), one boot of one
	// machine is one numbering.
	mac := protocol.SessionHost{BootID: "b-mac"}
	if !PIDJudged(with(&mac), hostProbe{host: mac}) {
		t.Error("same boot without namespaces on both sides is not judged")
	}
	// A probe that does not say its host looks at this machine.
	here := LocalHost()
	if PIDJudged(with(&here), mapProbe{}) != (here.BootID != "") || PIDJudged(with(&hostAway), mapProbe{}) {
		t.Error("a probe without a host is not taken to look at LocalHost()")
	}
}

// TestPresenceOfAPIDRecordedElsewhere: a session whose recorded process
// is gone is offline at once on its own host; on another host (another
// machine, boot or PID namespace) the pid is never probed and the session
// is one without a pid: online while its heartbeat is fresh, stale after
// three cadences, and offline only once the heartbeat is older than
// UnknownPIDExpiry (not HardExpiry).
func TestPresenceOfAPIDRecordedElsewhere(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 4, 12, 0, 0, 0, time.UTC)
	pid := 4242
	session := func(age time.Duration, h *protocol.SessionHost) *protocol.Session {
		return withHost(&protocol.Session{State: protocol.SessionOpen, HeartbeatCadenceMs: 60000, PID: &pid,
			HeartbeatAt: protocol.FormatTime(now.Add(-age))}, h)
	}
	calls := 0
	probe := hostProbe{host: hostHere, calls: &calls} // every pid is gone
	if got := Presence(session(time.Second, &hostHere), now, probe); got != PresenceOffline || calls != 1 {
		t.Fatalf("on its own host a gone pid is offline at once: %s (%d probes)", got, calls)
	}
	if !RecordedProcessGone(session(time.Second, &hostHere), probe) {
		t.Fatal("on its own host the gone pid is not reported gone")
	}
	calls = 0
	for _, c := range []struct {
		age  time.Duration
		want string
	}{
		{time.Second, PresenceOnline},
		{3 * time.Minute, PresenceOnline},
		{3*time.Minute + time.Millisecond, PresenceStale},
		{UnknownPIDExpiry, PresenceStale},
		{UnknownPIDExpiry + time.Millisecond, PresenceOffline},
		{2 * time.Hour, PresenceOffline},
	} {
		s := session(c.age, &hostAway)
		if got := Presence(s, now, probe); got != c.want {
			t.Errorf("elsewhere, heartbeat %v old: %s, want %s", c.age, got, c.want)
		}
		if RecordedProcessGone(s, probe) {
			t.Errorf("elsewhere, heartbeat %v old: reported gone by pid", c.age)
		}
		if on, off := PresenceWindows(s, probe); on != 3*time.Minute || off != UnknownPIDExpiry {
			t.Errorf("elsewhere: windows %v, %v; want 3m, %v", on, off, UnknownPIDExpiry)
		}
	}
	if calls != 0 {
		t.Fatalf("a pid recorded elsewhere was probed %d times", calls)
	}
	// A live pid on its own host keeps the 24-hour window.
	alive := hostProbe{ProcessProbe: mapProbe{}, host: hostHere}
	if _, off := PresenceWindows(session(0, &hostHere), alive); off != HardExpiry {
		t.Fatalf("on its own host: offline window %v, want %v", off, HardExpiry)
	}
	if got := Presence(session(2*time.Hour, &hostHere), now, alive); got != PresenceStale {
		t.Fatalf("on its own host a live pid outranks the 30-minute floor: %s", got)
	}
}

// TestRemotePIDIsNeverProofOfDeath: in a room, a session attached with a
// pid that is gone, seen from another host, is online with pidJudged
// false in status, sync and a wait for idle; its claim still blocks (no
// orphan, a claim on it conflicts and changes nothing), and its session
// id cannot be reopened (session_live, nothing changed). Seen from its own
// host the same facts make it offline, orphan its claim and let it be
// reopened.
func TestRemotePIDIsNeverProofOfDeath(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tr.Now = func() time.Time { return now }
	tr.WS.Policy.OrphanGraceMs = 5000
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "far", Harness: "cli", PID: 900001})
	if err != nil {
		t.Fatal(err)
	}
	far := Caller{SessionID: res.SessionID, Generation: res.Generation}
	taker := tr.attach("taker", "cli")
	if _, err := tr.Claim(ctx, ClaimInput{Caller: far, Resource: "file:f.go", Cwd: tr.dir, Enforcement: protocol.EnforcementGuarded, LeaseSeconds: MaxLeaseSeconds}); err != nil {
		t.Fatal(err)
	}
	var rec *protocol.Session
	if err := tr.Store.View(ctx, func(tx storage.ReadTx) (err error) { rec, _, err = findSession(tx, far.SessionID); return err }); err != nil {
		t.Fatal(err)
	}
	if h := protocol.SessionHostOf(rec); h == nil || *h != LocalHost() {
		t.Fatalf("attach recorded host %+v, want LocalHost() %+v", protocol.SessionHostOf(rec), LocalHost())
	}
	// The grace has passed and the process is gone: only where it ran is
	// that proof.
	now = now.Add(10 * time.Second)
	away := LocalHost()
	away.BootID += "-another-boot"
	tr.Probe = hostProbe{host: away} // every pid gone, and not this session's host

	st, err := tr.Status(ctx, StatusQuery{})
	if err != nil {
		t.Fatal(err)
	}
	row := statusRow(t, st, far.SessionID)
	if row.Presence != PresenceOnline || row.PIDJudged {
		t.Fatalf("elsewhere: presence %s, pidJudged %v; want online, false", row.Presence, row.PIDJudged)
	}
	if len(st.Claims) != 1 || st.Claims[0].Orphaned != nil || st.Counts.Orphaned != 0 {
		t.Fatalf("elsewhere the claim was judged orphaned: %+v", st.Claims)
	}
	sync, err := tr.Sync(ctx, SyncQuery{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range sync.Delta.Roster {
		if r.SessionID == far.SessionID {
			found = r.Presence == PresenceOnline && !r.PIDJudged
		}
	}
	if !found {
		t.Fatalf("sync's roster does not show the session online unjudged: %+v", sync.Delta.Roster)
	}
	w, err := tr.CheckCondition(ctx, WaitQuery{For: WaitIdle, Participant: "far"})
	if err != nil || len(w.Sessions) != 1 || w.Sessions[0].PIDJudged || w.Sessions[0].Presence != PresenceOnline {
		t.Fatalf("wait for idle: %+v, %v", w, err)
	}
	before := tr.fingerprint()
	_, err = tr.Claim(ctx, ClaimInput{Caller: taker, Resource: "file:f.go", Cwd: tr.dir})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	_, err = tr.Attach(ctx, AttachInput{ParticipantID: "far", SessionID: far.SessionID, Generation: far.Generation})
	wantReason(t, err, protocol.ReasonSessionLive, protocol.ExitConflict)
	if tr.fingerprint() != before {
		t.Fatal("a refused claim or reopen changed the store")
	}
	if gone, err := tr.SessionProcessGone(ctx, far.SessionID); err != nil || gone {
		t.Fatalf("SessionProcessGone elsewhere = %v, %v", gone, err)
	}
	// Thirty minutes without a heartbeat: offline by its heartbeats, not
	// by its pid, and still nobody may take its claim.
	now = now.Add(UnknownPIDExpiry)
	st, err = tr.Status(ctx, StatusQuery{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if row := statusRow(t, st, far.SessionID); row.Presence != PresenceOffline || st.Claims[0].Orphaned != nil {
		t.Fatalf("elsewhere after %v: presence %s, orphaned %+v", UnknownPIDExpiry, row.Presence, st.Claims[0].Orphaned)
	}
	now = now.Add(-UnknownPIDExpiry)

	// On its own host the same gone pid is proof.
	tr.Probe = hostProbe{host: LocalHost()}
	if LocalHost().BootID == "" {
		t.Skip("this system has no boot id, so no pid is judged here at all")
	}
	st, err = tr.Status(ctx, StatusQuery{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if row := statusRow(t, st, far.SessionID); row.Presence != PresenceOffline || !row.PIDJudged || st.Claims[0].Orphaned == nil {
		t.Fatalf("on its own host: presence %s, pidJudged %v, orphaned %+v", row.Presence, row.PIDJudged, st.Claims[0].Orphaned)
	}
	if _, err := tr.Attach(ctx, AttachInput{ParticipantID: "far", SessionID: far.SessionID, Generation: far.Generation}); err != nil {
		t.Fatalf("on its own host a session whose process is gone is reopened: %v", err)
	}
}

// statusRow finds session id among status's rows.
func statusRow(t *testing.T, st *Status, id string) SessionRow {
	t.Helper()
	for _, r := range st.Participants {
		if r.SessionID == id {
			return r
		}
	}
	t.Fatalf("status has no row for %s: %+v", id, st.Participants)
	return SessionRow{}
}

// TestAgentAncestorOnlyAmongLocalSessions: a session whose recorded pid
// is this test's parent process is found as the agent running it when it
// was recorded here, and not when the probe looks at another host: there
// the same number names an unrelated process.
func TestAgentAncestorOnlyAmongLocalSessions(t *testing.T) {
	t.Parallel()
	if LocalHost().BootID == "" {
		t.Skip("this system has no boot id, so no pid is judged here at all")
	}
	tr := newTestRoom(t)
	ctx := context.Background()
	parent := os.Getppid()
	if parent <= 1 {
		t.Skipf("this test's parent is pid %d", parent)
	}
	res, err := tr.Attach(ctx, AttachInput{ParticipantID: "agent", Harness: "claude", PID: parent})
	if err != nil {
		t.Fatal(err)
	}
	tr.Probe = hostProbe{ProcessProbe: SystemProbe(), host: LocalHost()}
	got, err := tr.AgentAncestor(ctx)
	if err != nil || got == nil || got.SessionID != res.SessionID {
		t.Fatalf("here: AgentAncestor = %+v, %v; want %s", got, err, res.SessionID)
	}
	away := LocalHost()
	away.PIDNamespace = "pid:[1]"
	tr.Probe = hostProbe{ProcessProbe: SystemProbe(), host: away}
	if got, err := tr.AgentAncestor(ctx); err != nil || got != nil {
		t.Fatalf("from another PID namespace: AgentAncestor = %+v, %v; want none", got, err)
	}
}

// TestHookResumeMovesTheHost: a hook that resumes its binding with a pid
// records the host beside it, since the pid is numbered where the hook
// runs; a resume without a pid leaves both as they were.
func TestHookResumeMovesTheHost(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	ctx := context.Background()
	h, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged, PID: 4343})
	if err != nil {
		t.Fatal(err)
	}
	read := func() *protocol.Session {
		var s *protocol.Session
		if err := tr.Store.View(ctx, func(tx storage.ReadTx) (err error) { s, _, err = findSession(tx, h.Caller.SessionID); return err }); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// As if an older record, or one written on another host.
	if err := tr.Store.Update(ctx, func(tx storage.Tx) error {
		s, area, err := findSession(tx, h.Caller.SessionID)
		if err != nil {
			return err
		}
		protocol.SetSessionHost(s, &hostAway)
		return tx.PutSession(area, s)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged}); err != nil {
		t.Fatal(err)
	}
	if s := read(); protocol.SessionHostOf(s) == nil || *protocol.SessionHostOf(s) != hostAway || *s.PID != 4343 {
		t.Fatalf("a resume without a pid changed the host or pid: %+v %v", protocol.SessionHostOf(s), *s.PID)
	}
	res, err := tr.HookAttach(ctx, HookAttachInput{Adapter: "claude", ClientSessionID: "cc-1", Participant: "bob", Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged, PID: 4444})
	if err != nil || !res.Resumed {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if s := read(); protocol.SessionHostOf(s) == nil || *protocol.SessionHostOf(s) != LocalHost() || *s.PID != 4444 {
		t.Fatalf("a resume with a pid left host %+v, pid %v", protocol.SessionHostOf(s), *s.PID)
	}
}

// withHost records h on s (nil: no host record) and returns s.
func withHost(s *protocol.Session, h *protocol.SessionHost) *protocol.Session {
	protocol.SetSessionHost(s, h)
	return s
}
