package core

import (
	"os"
	"strings"
	"sync"

	"github.com/acc-go/acc/pkg/protocol"
)

// LocalHost returns where this process runs, as a session attached from it
// records it (protocol.SessionHost; docs/protocol.md#session-and-generation):
// the host name, the machine id, the id of the current boot and the PID
// namespace. It is read once per process and cached: none of it changes
// while a process lives. A value that cannot be read, or that is not line
// text of at most protocol.MaxLineText code points, is left empty; nothing
// is made up. What each platform reads is in readHostIDs.
func LocalHost() protocol.SessionHost { return localHost() }

var localHost = sync.OnceValue(func() protocol.SessionHost {
	h := readHostIDs()
	if name, err := os.Hostname(); err == nil {
		h.Name = name
	}
	h.Name, h.MachineID, h.BootID, h.PIDNamespace = hostField(h.Name), hostField(h.MachineID), hostField(h.BootID), hostField(h.PIDNamespace)
	return h
})

// hostField is v without surrounding white space when that is valid line
// text for a host record, else "".
func hostField(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || protocol.CheckLine("host", v, protocol.MaxLineText) != nil {
		return ""
	}
	return v
}

// readFirst returns the trimmed content of the first of paths that can be
// read and is not empty, else "".
func readFirst(paths ...string) string {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				return v
			}
		}
	}
	return ""
}

// HostProbe is a ProcessProbe that says whose processes it sees: the
// machine, boot and PID namespace its pids are numbered in. SystemProbe's
// is LocalHost(); a test's fake probe may name any.
type HostProbe interface {
	ProcessProbe
	Host() protocol.SessionHost
}

// Host is LocalHost(): the system probe sees this process's PID namespace.
func (systemProbe) Host() protocol.SessionHost { return LocalHost() }

// probeHost is the host whose processes probe sees: its own answer when
// it is a HostProbe, else LocalHost() (a probe that does not say looks at
// this machine). A nil probe is SystemProbe().
func probeHost(probe ProcessProbe) protocol.SessionHost {
	if hp, ok := probe.(HostProbe); ok {
		return hp.Host()
	}
	return LocalHost()
}

// SameHost reports whether a session recorded at host h runs where probe
// looks (docs/protocol.md#presence): its bootId known, and machineId,
// bootId and pidNamespace each equal to the probe's. An empty
// pidNamespace beside a boot id means a system without PID namespaces
// (macOS; on Linux a boot id is recorded only with its namespace). A
// missing host record (nil: a session written before sessions said where
// they run, so by an acc that kept every room on one machine) counts as
// the probe's host, as it always did. The host name is never compared: it
// proves nothing. A nil probe is SystemProbe().
func SameHost(h *protocol.SessionHost, probe ProcessProbe) bool {
	if h == nil {
		return true
	}
	mine := probeHost(probe)
	return h.BootID != "" &&
		h.MachineID == mine.MachineID && h.BootID == mine.BootID && h.PIDNamespace == mine.PIDNamespace
}

// PIDJudged reports whether probe may judge the pid recorded on s
// (docs/protocol.md#presence): s names a positive pid and runs where probe
// looks (SameHost). A pid recorded on another machine, another boot or in
// another PID namespace means nothing here: probing it could find an
// unrelated process or none. Every reading of a session's process goes
// through this one rule — Presence and PresenceWindows, RecordedProcessGone
// (and so orphaned claims and reopening a session), and AgentAncestor —
// so a session whose pid is not judged is treated everywhere as one
// without a pid. A nil probe is SystemProbe().
func PIDJudged(s *protocol.Session, probe ProcessProbe) bool {
	return s != nil && s.PID != nil && *s.PID > 0 && SameHost(protocol.SessionHostOf(s), probe)
}

// localHostRecord is LocalHost() as a record to store on a session.
func localHostRecord() *protocol.SessionHost {
	h := LocalHost()
	return &h
}
