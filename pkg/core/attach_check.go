package core

import "github.com/acc-go/acc/pkg/protocol"

// CheckAttachInput validates what Attach is given, before anything is opened
// or written: exit 4 for a participant, harness, session or parent id that
// is not a portable id, a negative heartbeat cadence or one of
// CadenceLimit or longer (three cadences must end before the session is
// offline), or a negative pid. The CLI runs it before it opens (and so creates) the workspace's store, so a
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
	if limit := CadenceLimit(in.PID > 0); in.CadenceMs >= limit.Milliseconds() {
		if in.PID > 0 {
			return protocol.Errorf(protocol.ReasonInvalidInput,
				"a heartbeat cadence of %d ms is too long: every session is offline %s after its last heartbeat, so three cadences must end before that; give less than %d (%s)",
				in.CadenceMs, ShortDuration(HardExpiry), limit.Milliseconds(), ShortDuration(limit)).With("cadenceMs", in.CadenceMs)
		}
		return protocol.Errorf(protocol.ReasonInvalidInput,
			"a heartbeat cadence of %d ms is too long without a process: a session with no pid recorded is offline %s after its last heartbeat, so three cadences must end before that; give less than %d (%s), or record the client's process so presence follows it (less than %d, %s, then)",
			in.CadenceMs, ShortDuration(UnknownPIDExpiry), limit.Milliseconds(), ShortDuration(limit), CadenceLimit(true).Milliseconds(), ShortDuration(CadenceLimit(true))).With("cadenceMs", in.CadenceMs)
	}
	return nil
}
