//go:build !linux && !darwin

package core

import "github.com/acc-go/acc/pkg/protocol"

// readHostIDs knows no ids on this platform: every field stays empty, so
// no session's pid recorded with a host record is judged here
// (SameHost needs a boot id).
func readHostIDs() protocol.SessionHost { return protocol.SessionHost{} }
