package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// hostStatus is the part of `acc status --all --json` the namespace test
// reads.
type hostStatus struct {
	Participants []struct {
		SessionID string `json:"sessionId"`
		Presence  string `json:"presence"`
		PIDJudged *bool  `json:"pidJudged"`
	} `json:"participants"`
	Claims []struct {
		OwnerSessionID string `json:"ownerSessionId"`
		Orphaned       *struct {
			PID int `json:"pid"`
		} `json:"orphaned"`
	} `json:"claims"`
	Counts struct {
		Orphaned int `json:"orphaned"`
	} `json:"counts"`
}

// row is session id's presence and pidJudged.
func (st hostStatus) row(t *testing.T, id string) (string, bool) {
	t.Helper()
	for _, p := range st.Participants {
		if p.SessionID == id {
			if p.PIDJudged == nil {
				t.Fatalf("status row of %s has no pidJudged", id)
			}
			return p.Presence, *p.PIDJudged
		}
	}
	t.Fatalf("status has no row for %s: %+v", id, st.Participants)
	return "", false
}

// snapshotSessions are the session records of `acc sync --scope full`.
type snapshotSessions struct {
	Snapshot struct {
		Sessions []struct {
			SessionID    string                `json:"sessionId"`
			PID          *int                  `json:"pid"`
			PIDStartedAt *string               `json:"pidStartedAt"`
			Host         *protocol.SessionHost `json:"host"`
		} `json:"sessions"`
	} `json:"snapshot"`
}

// canUnsharePID reports whether this process may run a command in a new
// PID namespace (root, or unprivileged user namespaces), and why not.
func canUnsharePID() (string, bool) {
	path, err := exec.LookPath("unshare")
	if err != nil {
		return "no unshare command on the PATH", false
	}
	out, err := exec.Command(path, "--pid", "--fork", "--mount-proc", "true").CombinedOutput()
	if err != nil {
		return "unshare --pid --fork --mount-proc is refused here (it needs root): " + strings.TrimSpace(string(out)), false
	}
	return path, true
}

// TestPIDJudgedOnlyInItsNamespace: a session attached from inside a new
// PID namespace (unshare --pid --fork --mount-proc, sharing the data home
// and the repository) records its pid numbered in that namespace, and its
// host record says so. From outside, acc status shows it online with
// pidJudged false, while a session attached outside with the pid of a live
// process shows pidJudged true — and the inner pid read here names another
// process or none, so judging it would call the session gone. Once the
// namespace has ended, the inner session is still online by its heartbeat
// (never gone by pid): its claim is not orphaned although the grace is 0,
// an outside claim on it conflicts and a reopen from outside is
// session_live, each exit 5 changing nothing. The outside session whose
// process is killed is offline at once: the pid is judged where it can be.
func TestPIDJudgedOnlyInItsNamespace(t *testing.T) {
	t.Parallel()
	unshare, ok := canUnsharePID()
	if !ok {
		t.Skip(unshare)
	}
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	config := `{"schemaVersion": 1, "workspaceId": "workspace_pidns_e2e", "policy": {"orphanGraceMs": 0}}`
	if err := os.WriteFile(filepath.Join(repo, "acc.workspace.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	near := startSleeper(t)
	var inside session
	sb.jsonOK(&inside, repo, "attach", "--participant", "near", "--harness", "cli", "--pid", strconv.Itoa(near.Process.Pid))
	inside.dir = repo

	// Inside the namespace: a client stand-in (sleep), a session attached
	// with its pid, and a guarded claim; then the shell waits, as pid 1,
	// until the test ends the namespace.
	out := sb.dir("ns")
	script := `sleep 600 & pid=$!
eval "$("$ACC" attach --participant far --harness cli --pid "$pid" --shell)" || exit 3
"$ACC" claim --resource file:a.go --enforcement guarded > "$OUT/claim" 2>&1 || exit 4
readlink /proc/self/ns/pid > "$OUT/ns"
echo "$ACC_SESSION $ACC_GENERATION $pid" > "$OUT/ready.tmp" && mv "$OUT/ready.tmp" "$OUT/ready"
wait`
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	ns := exec.CommandContext(ctx, unshare, "--pid", "--fork", "--mount-proc", "--kill-child", "/bin/sh", "-c", script)
	ns.Dir = repo
	ns.Env = append(sb.environ(), "ACC="+accBin, "OUT="+out)
	var nsOut strings.Builder
	ns.Stdout, ns.Stderr = &nsOut, &nsOut
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ns.Wait() }()
	t.Cleanup(func() {
		_ = ns.Process.Kill()
		<-exited
	})
	var ready []string
	for deadline := time.Now().Add(20 * time.Second); ready == nil; {
		if b, err := os.ReadFile(filepath.Join(out, "ready")); err == nil {
			ready = strings.Fields(string(b))
			break
		}
		select {
		case err := <-exited:
			claim, _ := os.ReadFile(filepath.Join(out, "claim"))
			t.Fatalf("the namespace ended before its session was ready: %v\n%s\nclaim: %s", err, nsOut.String(), claim)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session inside the namespace was not ready within 20 s:\n%s", nsOut.String())
		}
	}
	if len(ready) != 3 {
		t.Fatalf("ready file: %q", ready)
	}
	far := session{SessionID: ready[0], Generation: ready[1], dir: repo}
	innerPID, _ := strconv.Atoi(ready[2])
	innerNS, err := os.ReadFile(filepath.Join(out, "ns"))
	if err != nil {
		t.Fatal(err)
	}
	here := core.LocalHost()
	if strings.TrimSpace(string(innerNS)) == here.PIDNamespace {
		t.Fatalf("unshare did not give a new PID namespace: %s", innerNS)
	}

	// Each session's host record names the namespace it was attached in.
	var snap snapshotSessions
	sb.jsonOK(&snap, repo, "sync", "--scope", "full")
	hosts := map[string]*protocol.SessionHost{}
	var farRec *protocol.Session
	for _, s := range snap.Snapshot.Sessions {
		hosts[s.SessionID] = s.Host
		if s.SessionID == far.SessionID {
			farRec = &protocol.Session{PID: s.PID, PIDStartedAt: s.PIDStartedAt}
		}
	}
	if h := hosts[far.SessionID]; h == nil || h.PIDNamespace != strings.TrimSpace(string(innerNS)) || h.BootID != here.BootID || h.MachineID != here.MachineID {
		t.Fatalf("the inner session's host record %+v; want namespace %s on this machine and boot", h, innerNS)
	}
	if h := hosts[inside.SessionID]; h == nil || *h != here {
		t.Fatalf("the outer session's host record %+v; want %+v", h, here)
	}
	if farRec == nil || farRec.PID == nil || *farRec.PID != innerPID || farRec.PIDStartedAt == nil {
		t.Fatalf("the inner session's pid record: %+v (the shell saw pid %d)", farRec, innerPID)
	}
	// Judged here as a pid of this namespace, the inner pid is another
	// process or none: the session would be called gone.
	if !core.RecordedProcessGone(farRec, core.SystemProbe()) {
		t.Fatalf("pid %d (started %s inside) looks like the same process from outside; the test cannot tell judged from not judged", innerPID, *farRec.PIDStartedAt)
	}

	var st hostStatus
	sb.jsonOK(&st, repo, "status", "--all")
	if p, judged := st.row(t, far.SessionID); p != core.PresenceOnline || judged {
		t.Fatalf("the session inside the namespace: %s, pidJudged %v; want online, false", p, judged)
	}
	if p, judged := st.row(t, inside.SessionID); p != core.PresenceOnline || !judged {
		t.Fatalf("the session outside: %s, pidJudged %v; want online, true", p, judged)
	}

	// End the namespace: its session's process is gone for good, and
	// still nothing here may call it gone. (unshare ignores SIGTERM while
	// its child runs; --kill-child passes its own death on as SIGKILL to
	// the namespace's pid 1, which takes every process there with it.)
	_ = ns.Process.Kill()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the namespace did not end within 20 s")
	}
	exited <- nil // for the cleanup's receive
	sb.jsonOK(&st, repo, "status", "--all")
	if p, judged := st.row(t, far.SessionID); p != core.PresenceOnline || judged {
		t.Fatalf("after its namespace ended: %s, pidJudged %v; want online by heartbeat, false", p, judged)
	}
	if len(st.Claims) != 1 || st.Claims[0].OwnerSessionID != far.SessionID || st.Claims[0].Orphaned != nil || st.Counts.Orphaned != 0 {
		t.Fatalf("the inner session's claim after its namespace ended: %+v", st)
	}
	before := fingerprint(t, sb, "workspace_pidns_e2e")
	sb.refusal(sb.as(inside, "claim", "--resource", "file:a.go", "--json"), 5, protocol.ReasonClaimConflict)
	sb.refusal(sb.run(repo, "attach", "--participant", "far", "--session", far.SessionID, "--generation", far.Generation, "--json"), 5, protocol.ReasonSessionLive)
	if fingerprint(t, sb, "workspace_pidns_e2e") != before {
		t.Fatal("a refused claim or reopen changed the store")
	}

	// Outside, the pid is judged: the killed process makes its session
	// offline at once.
	if err := near.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = near.Wait()
	sb.jsonOK(&st, repo, "status", "--all")
	if p, judged := st.row(t, inside.SessionID); p != core.PresenceOffline || !judged {
		t.Fatalf("the outside session whose process was killed: %s, pidJudged %v; want offline, true", p, judged)
	}
}
