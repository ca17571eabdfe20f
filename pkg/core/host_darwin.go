package core

import (
	"golang.org/x/sys/unix"

	"github.com/acc-go/acc/pkg/protocol"
)

// readHostIDs reads macOS's id of the current boot (the kern.bootsessionuuid
// sysctl, new at every boot). macOS has no PID namespaces and no machine-id
// file, so machineId and pidNamespace stay empty on every Mac: two
// sessions of one boot of one Mac compare equal, as they should, and a
// session of another Mac differs by its boot id.
func readHostIDs() protocol.SessionHost {
	var h protocol.SessionHost
	if id, err := unix.Sysctl("kern.bootsessionuuid"); err == nil {
		h.BootID = id
	}
	return h
}
