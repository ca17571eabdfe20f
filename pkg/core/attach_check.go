package core

import "github.com/acc-go/acc/pkg/protocol"

// CheckAttachInput validates what Attach is given, before anything is opened
// or written: exit 4 for a participant, harness, session or parent id that
// is not a portable id, a negative heartbeat cadence or a negative pid. The
// CLI runs it before it opens (and so creates) the workspace's store, so a
// refused attach leaves no store file behind; Attach runs it again.
func CheckAttachInput(in AttachInput) error {
	if err := firstError(
		protocol.CheckPortableID("participant", in.ParticipantID),
		optionalID("harness", in.Harness),
		optionalID("session", in.SessionID),
		optionalID("parent session", in.ParentSessionID),
	); err != nil {
		return err
	}
	if in.CadenceMs < 0 {
		return protocol.Errorf(protocol.ReasonInvalidInput, "the heartbeat cadence must be a positive number of milliseconds")
	}
	if in.PID < 0 {
		return protocol.Errorf(protocol.ReasonInvalidInput, "the pid must be a positive integer")
	}
	return nil
}
