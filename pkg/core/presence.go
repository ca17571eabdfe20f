package core

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Presence values (docs/protocol.md#presence).
const (
	PresenceOnline  = "online"
	PresenceStale   = "stale"
	PresenceOffline = "offline"
)

// Presence thresholds (docs/protocol.md#presence).
const (
	// StaleCadenceMultiple: a session is online while its last heartbeat is
	// at most this many cadences old.
	StaleCadenceMultiple = 3
	// UnknownPIDExpiry: a session without a recorded pid is offline once its
	// last heartbeat is older than this.
	UnknownPIDExpiry = 30 * time.Minute
	// HardExpiry: every session is offline once its last heartbeat is older
	// than this, whatever its process does.
	HardExpiry = 24 * time.Hour
	// PIDStartSlack is how far a process's start time may differ from the
	// one recorded at attach and still be the same process. Start times are
	// derived from the boot time in whole seconds and can drift with clock
	// corrections, so the allowance is generous; a reused pid would have to
	// cycle through the whole pid space within it.
	PIDStartSlack = 5 * time.Second
)

// ProcessInfo is what a ProcessProbe learned about one pid. StartedAt is the
// zero time when the start time could not be read.
type ProcessInfo struct {
	Exists    bool
	Zombie    bool
	StartedAt time.Time
}

// ProcessProbe inspects a process by pid. Implementations never fail: what
// they cannot tell they leave at the zero value (Exists false means "known
// not to exist").
type ProcessProbe interface {
	Probe(pid int) ProcessInfo
}

// SystemProbe returns the probe of the running machine (docs/protocol.md#presence,
// with the pid start time and zombies). Existence follows signal-0 semantics:
// kill(pid, 0) succeeding or failing with EPERM means the process exists;
// only ESRCH means it does not. Zombie status and the start time come from
// gopsutil (Linux: /proc; macOS: sysctl and ps). The probe is safe for
// concurrent use.
func SystemProbe() ProcessProbe { return systemProbe{} }

type systemProbe struct{}

var bootTimeCacheOnce sync.Once

// enableBootTimeCache makes gopsutil compute the boot time once per process,
// so start times derived from it do not jitter between calls (inside
// containers it is derived from the uptime clock).
func enableBootTimeCache() { bootTimeCacheOnce.Do(func() { process.EnableBootTimeCache(true) }) }

func (systemProbe) Probe(pid int) ProcessInfo {
	if pid <= 0 || pid > math.MaxInt32 {
		return ProcessInfo{}
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return ProcessInfo{}
	}
	info := ProcessInfo{Exists: true}
	p := &process.Process{Pid: int32(pid)}
	ctx := context.Background()
	if st, err := p.StatusWithContext(ctx); err == nil {
		for _, s := range st {
			if s == process.Zombie {
				info.Zombie = true
			}
		}
	}
	info.StartedAt = startTimeOf(ctx, p)
	return info
}

func startTimeOf(ctx context.Context, p *process.Process) time.Time {
	enableBootTimeCache()
	ms, err := p.CreateTimeWithContext(ctx)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// ProcessStart returns the start time of process pid (millisecond precision,
// UTC) and true, or the zero time and false when the process does not exist
// or its start time cannot be read. Callers record it as a session's
// pidStartedAt when they record its pid, so Presence can later tell a reused
// pid from the client (docs/decisions.md#18-details-the-original-left-open).
func ProcessStart(pid int) (time.Time, bool) {
	info := SystemProbe().Probe(pid)
	if !info.Exists || info.StartedAt.IsZero() {
		return time.Time{}, false
	}
	return info.StartedAt, true
}

// RecordedProcessGone reports whether s names a pid that probe may judge
// (PIDJudged: recorded on the probe's host and PID namespace) and that pid
// is known not to be the session's client any more: no such process, a
// zombie, or a process whose start time differs from s.PIDStartedAt by
// more than PIDStartSlack (a reused pid). A session without a pid, or
// whose pid was recorded elsewhere, is never "gone"; an unreadable start
// time or an unparsable pidStartedAt decides nothing. A nil probe means
// SystemProbe().
func RecordedProcessGone(s *protocol.Session, probe ProcessProbe) bool {
	if probe == nil {
		probe = SystemProbe()
	}
	if !PIDJudged(s, probe) {
		return false
	}
	info := probe.Probe(*s.PID)
	if !info.Exists || info.Zombie {
		return true
	}
	if s.PIDStartedAt != nil && !info.StartedAt.IsZero() {
		if rec, err := protocol.ParseTime(*s.PIDStartedAt); err == nil {
			d := info.StartedAt.Sub(rec)
			if d > PIDStartSlack || d < -PIDStartSlack {
				return true
			}
		}
	}
	return false
}

// Presence classifies a session at time now (docs/protocol.md#presence,
// with the pid start time and zombies). It reads the process table through
// probe and never writes anything. A nil probe means SystemProbe(). "With
// a pid" below means a pid probe may judge (PIDJudged): one recorded on
// another host or in another PID namespace counts as no pid, so such a
// session rests on its heartbeats alone.
//
//   - closed, or a nil session: offline;
//   - heartbeat older than the session's offline limit (PresenceWindows:
//     HardExpiry, 24 h, with a pid; UnknownPIDExpiry, 30 min, without):
//     offline;
//   - with a pid: offline when RecordedProcessGone (a live pid outranks the
//     30-minute floor);
//   - else online while the heartbeat is at most StaleCadenceMultiple (3)
//     cadences old (heartbeatCadenceMs, in milliseconds), else stale.
//
// A heartbeatAt that does not parse gives offline: the record cannot show
// the session is alive. A heartbeat in the future counts as age zero.
func Presence(s *protocol.Session, now time.Time, probe ProcessProbe) string {
	if s == nil || s.State == protocol.SessionClosed {
		return PresenceOffline
	}
	hb, err := protocol.ParseTime(s.HeartbeatAt)
	if err != nil {
		return PresenceOffline
	}
	age := now.Sub(hb)
	online, offline := PresenceWindows(s, probe)
	if age > offline {
		return PresenceOffline
	}
	if RecordedProcessGone(s, probe) {
		return PresenceOffline
	}
	if age <= online {
		return PresenceOnline
	}
	return PresenceStale
}

// PresenceWindows are Presence's two limits for s as probe sees it,
// measured from its last heartbeat: it is online while the heartbeat is at
// most online old, stale after that, and offline once it is more than
// offline old — HardExpiry with a pid probe may judge (PIDJudged),
// UnknownPIDExpiry without one, which includes a pid recorded on another
// host or in another PID namespace — or, with a judged pid, as soon as
// that process is gone. online is three cadences, or offline when three
// cadences do not fit in it (then the session is never stale). A nil probe
// means SystemProbe().
func PresenceWindows(s *protocol.Session, probe ProcessProbe) (online, offline time.Duration) {
	offline = UnknownPIDExpiry
	if PIDJudged(s, probe) {
		offline = HardExpiry
	}
	// Cap the cadence so the window cannot overflow; a cadence beyond the
	// hard expiry cannot change the answer.
	cadence := time.Duration(min(max(s.HeartbeatCadenceMs, 0), HardExpiry.Milliseconds())) * time.Millisecond
	return min(StaleCadenceMultiple*cadence, offline), offline
}

// CadenceLimit is what every heartbeat cadence acc attach accepts must be
// shorter than: three cadences must end before the offline limit
// (PresenceWindows), so that a session is stale, not offline, after three
// missed beats — 10 minutes without a pid, 8 hours with one
// (docs/design.md#presence). At the limit itself three cadences end at
// the offline limit, leaving no stale time at all.
func CadenceLimit(withPID bool) time.Duration {
	if withPID {
		return HardExpiry / StaleCadenceMultiple
	}
	return UnknownPIDExpiry / StaleCadenceMultiple
}

// ShortDuration writes d without zero parts, as acc's words name a
// duration: 30s, 1m, 1m30s, 30m, 8h, 1.5s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ClientPID walks the calling process's ancestry (parent, grandparent, …, at
// most 16 levels) and returns the pid of the nearest ancestor whose process
// name is command, or 0 when there is none or command is "". Hooks record
// it so presence follows the client rather than the short-lived hook.
func ClientPID(command string) int {
	if command == "" {
		return 0
	}
	return ancestorPID(func(pid int32, p *process.Process) bool {
		name, err := p.Name()
		return err == nil && filepath.Base(name) == command
	})
}

// ClientPIDNamed is ClientPID for a client that names its own process in
// an environment variable its hooks inherit (adapter.ClientPIDNamer; Qwen
// Code's QWEN_CODE_LAUNCHER_PID): named, the variable's value, counts
// only when it is a decimal pid above 1 of one of the calling process's
// ancestors (at most 16 levels up), so a value inherited from elsewhere
// or left over from an exited client names nothing. Otherwise the walk by
// command decides.
func ClientPIDNamed(command, named string) int {
	if want, err := strconv.ParseInt(named, 10, 32); err == nil && want > 1 && named == strconv.FormatInt(want, 10) {
		if pid := ancestorPID(func(pid int32, _ *process.Process) bool { return int64(pid) == want }); pid != 0 {
			return pid
		}
	}
	return ClientPID(command)
}

// ancestorPID returns the nearest of the calling process's ancestors (at
// most 16 levels up, pid 1 excluded) that match accepts, or 0.
func ancestorPID(match func(int32, *process.Process) bool) int {
	pid := int32(os.Getppid())
	for range 16 {
		if pid <= 1 {
			return 0
		}
		p, err := process.NewProcess(pid)
		if err != nil {
			return 0
		}
		if match(pid, p) {
			return int(pid)
		}
		parent, err := p.Ppid()
		if err != nil || parent == pid {
			return 0
		}
		pid = parent
	}
	return 0
}

// SessionProcessGone reports whether the process recorded on session id is
// known to have exited (RecordedProcessGone through r.Probe: false when
// none is recorded, when it was recorded on another host or PID namespace,
// or when the session is not open).
func (r *Room) SessionProcessGone(ctx context.Context, id string) (bool, error) {
	var gone bool
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		s, _, err := findSession(tx, id)
		if err != nil || s == nil || s.State != protocol.SessionOpen {
			return err
		}
		gone = RecordedProcessGone(s, r.Probe)
		return nil
	})
	return gone, err
}

// maxAncestry bounds how many ancestors AgentAncestor walks.
const maxAncestry = 64

// AgentAncestor returns the open session of an agent's client (any harness
// but cli) whose recorded, still running process is an ancestor of this
// process, or nil when there is none. A terminal an agent opens for
// itself (script, unbuffer, expect) is still a terminal, so `--authority
// human` also asks that no agent's client started the command
// (docs/concepts.md#forced-release). Only pids r.Probe may judge count
// (PIDJudged): a pid recorded on another host or in another PID namespace
// names some unrelated process here. A recorded process that is gone is
// skipped, so that a reused pid never counts. It reads the store and the
// process table only.
func (r *Room) AgentAncestor(ctx context.Context) (*protocol.Session, error) {
	agents := map[int32]protocol.Session{}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		sessions, err := allSessions(tx, true)
		if err != nil {
			return err
		}
		for _, s := range sessions {
			if s.Harness != "cli" && PIDJudged(&s, r.Probe) && *s.PID > 1 && !RecordedProcessGone(&s, r.Probe) {
				agents[int32(*s.PID)] = s
			}
		}
		return nil
	})
	if err != nil || len(agents) == 0 {
		return nil, err
	}
	pid := int32(os.Getppid())
	for range maxAncestry {
		if pid <= 1 {
			return nil, nil
		}
		if s, ok := agents[pid]; ok {
			return &s, nil
		}
		p, err := process.NewProcess(pid)
		if err != nil {
			return nil, nil
		}
		parent, err := p.Ppid()
		if err != nil || parent == pid {
			return nil, nil
		}
		pid = parent
	}
	return nil, nil
}
