package core

import (
	"context"
	"reflect"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestClaimConflictWaitCommandPastesBack: the `acc wait --released …` a
// claim refusal names is shown through the display rule (every acc: line
// is). For a resource holding a C1 control or a bidi override the shown
// line must still paste back the resource's exact bytes: single quotes
// showed 'file:src/evil\u009b…', which the shell passes as those six
// characters — a resource no claim holds, so `acc wait` answered at once,
// exit 0, "… is free", while the peer still held the file. Core hands the
// surface the resource's exact bytes and the flags already quoted; the CLI's
// words for the step, and that they paste back, are tested in internal/wording.
func TestClaimConflictWaitCommandPastesBack(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	attach := func(r *Room, p string) Caller {
		res, err := r.Attach(ctx, AttachInput{ParticipantID: p})
		if err != nil {
			t.Fatal(err)
		}
		return Caller{SessionID: res.SessionID, Generation: res.Generation}
	}
	a, b := attach(w.main, "alice"), attach(w.main, "bob")
	resource := "file:src/evil\u009b31m\u202egpj.go\u2066x"
	if _, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: resource, Cwd: w.repo}); err != nil {
		t.Fatal(err)
	}
	_, err := w.main.Claim(ctx, ClaimInput{Caller: b, Resource: resource, Cwd: w.repo,
		WaitFlags: []string{"--session", b.SessionID, "--cwd", "/tmp/a b"}})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	steps, _ := protocol.AsError(err).Details["nextSteps"].([]protocol.Step)
	want := []protocol.Step{
		{Command: protocol.StepMessage, Args: map[string]string{"to": "alice"}},
		{Command: protocol.StepWaitRelease, Args: map[string]string{"resource": resource, "flags": "--session " + b.SessionID + " --cwd '/tmp/a b'"}},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("nextSteps = %#v\nwant       %#v", steps, want)
	}
}
