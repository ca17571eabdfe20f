package core

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestAttachedSessionsNamesLiveSessionsOnly(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	env := envMap(tr.env)
	o := OpenOptions{Cwd: tr.dir, Getenv: env, GOOS: "linux"}
	got, err := AttachedSessions(context.Background(), o)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty room: %v %v", got, err)
	}
	a := tr.attach("alice", "claude")
	tr.attach("bob", "cli")
	if _, err := tr.Detach(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	got, err = AttachedSessions(context.Background(), o)
	if err != nil || len(got) != 1 || got[0].ParticipantID != "bob" || got[0].Harness != "cli" {
		t.Fatalf("attached: %+v %v", got, err)
	}
	err = SessionsAttachedError("/x/acc.workspace.json", got)
	wantReason(t, err, protocol.ReasonConfigSessionsAttached, protocol.ExitConflict)
	assertOneLine(t, err)
	// The way out is data each surface words (internal/wording): close the
	// sessions, or force.
	d := protocol.AsError(err).Details
	if !strings.Contains(err.Error(), "bob (cli)") || !reflect.DeepEqual(d["fields"], []string{"force"}) ||
		!reflect.DeepEqual(d["nextSteps"], []protocol.Step{{Command: protocol.StepCloseSessions}}) {
		t.Fatalf("message: %s, details %v", err, d)
	}

	// A workspace that cannot be opened gives no warning.
	bad := OpenOptions{Cwd: tr.dir, GOOS: "linux", Getenv: envMap(map[string]string{"ACC_DATA_HOME": "relative"})}
	if got, err := AttachedSessions(context.Background(), bad); err != nil || len(got) != 0 {
		t.Fatalf("unopenable workspace: %v %v", got, err)
	}
}
