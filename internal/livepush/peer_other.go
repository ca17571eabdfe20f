//go:build !linux

package livepush

import (
	"errors"
	"net"
)

// peer cannot name the process at the other end of a Unix socket off Linux
// (live push is proven on Linux only, docs/delivery.md), so every offer
// through the claude-inbox transport is refused there and the message waits
// for the recipient's next turn.
func peer(net.Conn) (pid, uid int, err error) {
	return 0, 0, errors.New("live push checks the listener's credentials on Linux only")
}
