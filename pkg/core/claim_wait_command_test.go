package core

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// TestClaimConflictWaitCommandPastesBack: the `acc wait --released …` a
// claim refusal names is shown through the display rule (every acc: line
// is). For a resource holding a C1 control or a bidi override the shown
// line must still paste back the resource's exact bytes: single quotes
// showed 'file:src/evil\u009b…', which the shell passes as those six
// characters — a resource no claim holds, so `acc wait` answered at once,
// exit 0, "… is free", while the peer still held the file.
func TestClaimConflictWaitCommandPastesBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
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
	_, err = w.main.Claim(ctx, ClaimInput{Caller: b, Resource: resource, Cwd: w.repo,
		WaitFlags: []string{"--session", b.SessionID}})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	shown := protocol.EscapeText(err.Error(), protocol.TextLine)
	m := regexp.MustCompile("`(acc wait --released [^`]*)`").FindStringSubmatch(shown)
	if m == nil {
		t.Fatalf("no wait command in %q", shown)
	}
	out, err := exec.Command(bash, "-c", "printf '%s\\0' "+strings.TrimPrefix(m[1], "acc wait --released ")).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if got[0] != resource {
		t.Errorf("pasting the shown %s passes the resource %q, not the claimed %q", m[1], got[0], resource)
	}
}
