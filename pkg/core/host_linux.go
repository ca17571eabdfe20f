package core

import (
	"os"

	"github.com/acc-go/acc/pkg/protocol"
)

// readHostIDs reads Linux's ids of where this process runs: the machine id
// (/etc/machine-id, else D-Bus's copy in /var/lib/dbus/machine-id), the
// boot id (/proc/sys/kernel/random/boot_id) and this process's PID
// namespace (the target of the /proc/self/ns/pid link, "pid:[<inode>]").
// What cannot be read stays empty. A boot id is kept only with the PID
// namespace: on Linux a pid means something only inside its namespace, so
// a record with a boot id and no namespace would place it wrongly
// (SameHost takes an empty namespace to mean a system without any, as on
// macOS).
func readHostIDs() protocol.SessionHost {
	h := protocol.SessionHost{MachineID: readFirst("/etc/machine-id", "/var/lib/dbus/machine-id")}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil && hostField(ns) != "" {
		h.PIDNamespace = ns
		h.BootID = readFirst("/proc/sys/kernel/random/boot_id")
	}
	return h
}
