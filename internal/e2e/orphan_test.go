package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// orphanStatus is the part of `acc status --json` the orphan test reads.
type orphanStatus struct {
	Protection string `json:"protection"`
	Claims     []struct {
		ClaimID            string `json:"claimId"`
		Resource           string `json:"resource"`
		Enforcement        string `json:"enforcement"`
		OwnerParticipantID string `json:"ownerParticipantId"`
		Orphaned           *struct {
			PID        int    `json:"pid"`
			LastSeenAt string `json:"lastSeenAt"`
			GraceMs    int    `json:"graceMs"`
		} `json:"orphaned"`
	} `json:"claims"`
	Counts struct {
		Claims   int `json:"claims"`
		Orphaned int `json:"orphaned"`
	} `json:"counts"`
}

// writeOrphanConfig pins the room's id and sets policy.orphanGraceMs; the
// id stays the same when the grace changes, so the room is the same.
func writeOrphanConfig(t *testing.T, repo string, graceMs int) {
	t.Helper()
	raw := `{"schemaVersion": 1, "workspaceId": "workspace_orphan_e2e", "policy": {"orphanGraceMs": ` + strconv.Itoa(graceMs) + `}}`
	if err := os.WriteFile(filepath.Join(repo, "acc.workspace.json"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startSleeper starts a real process to stand for a client; the test
// kills it itself, or at cleanup.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// TestOrphanedClaimIsTakenOver: a holder attached with the pid of a real
// process claims src/a.go guarded, edits it and is killed with SIGKILL.
// Within the grace its claim still blocks: the hooked writer is denied and
// `acc claim` conflicts (exit 5, claim_conflict, nothing recorded). Once
// the grace (2 s) has passed since the holder last showed life, status
// shows the claim orphaned, the guard allows the write, and the writer's
// `acc claim` takes it over: recorded as claim.taken_over, the old row
// kept and ended, and the holder's inbox holds a note naming the resource
// and `git diff --stat` of the change it left. A holder whose process
// lives is never orphaned, however old its heartbeat.
func TestOrphanedClaimIsTakenOver(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	sb.dir("repo", "src")
	for _, f := range []string{"src/a.go", "src/live.go"} {
		if err := os.WriteFile(filepath.Join(repo, f), []byte("package src\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb.git(repo, "add", "-A")
	sb.git(repo, "commit", "-q", "-m", "src")
	// A grace no test run reaches first: the claim must still block.
	writeOrphanConfig(t, repo, 600_000)

	alive := startSleeper(t)
	live := session{}
	sb.jsonOK(&live, repo, "attach", "--participant", "liveholder", "--harness", "cli", "--pid", strconv.Itoa(alive.Process.Pid))
	live.dir = repo
	if r := sb.as(live, "claim", "--resource", "file:src/live.go", "--enforcement", "guarded"); r.code != 0 {
		t.Fatalf("live holder's claim:\n%s", r)
	}

	doomed := startSleeper(t)
	pid := doomed.Process.Pid
	holder := session{}
	sb.jsonOK(&holder, repo, "attach", "--participant", "holder", "--harness", "cli", "--pid", strconv.Itoa(pid))
	holder.dir = repo
	if r := sb.as(holder, "claim", "--resource", "file:src/a.go", "--enforcement", "guarded"); r.code != 0 {
		t.Fatalf("holder's claim:\n%s", r)
	}
	// The holder's uncommitted work, which the takeover note must name.
	if err := os.WriteFile(filepath.Join(repo, "src/a.go"), []byte("package src\n\n// half done\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	c := clientByID(t, "claude")
	writer := sb.hookSession(c, "writer", repo, "ACC_PARTICIPANT=writer")
	writeA := c.writePayload(t, "writer", repo, "src/a.go")
	writeLive := c.writePayload(t, "writer", repo, "src/live.go")

	if err := doomed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = doomed.Wait() // reaped: the pid names no process, not even a zombie

	// Within the grace: denied, and a claim conflicts and records nothing.
	if reason, denied := c.denial(t, sb.hook(hookOpts{}, writeA, c.id, c.tool)); !denied || !strings.Contains(reason, "holder (session ") {
		t.Fatalf("within the grace the write into src/a.go should be denied naming the holder; denied=%v reason=%q", denied, reason)
	}
	st := sb.openStore("workspace_orphan_e2e")
	before := len(readSnapshot(t, st).events)
	r := sb.as(writer, "claim", "--resource", "file:src/a.go", "--enforcement", "guarded", "--json")
	env := sb.parseEnvelope(r)
	if r.code != 5 || env.OK || env.Error == nil || env.Error.Details["reasonCode"] != protocol.ReasonClaimConflict ||
		!strings.Contains(env.Error.Message, "file:src/a.go is already claimed by holder") || env.Error.Details["ownerPresence"] != "offline" {
		t.Fatalf("within the grace acc claim should conflict (exit 5, claim_conflict, naming the offline holder):\n%s", r)
	}
	if after := len(readSnapshot(t, st).events); after != before {
		t.Fatalf("a refused claim recorded %d events", after-before)
	}
	var sts orphanStatus
	sb.jsonOK(&sts, repo, "status")
	if sts.Counts.Orphaned != 0 || sts.Counts.Claims != 2 {
		t.Fatalf("within the grace status should show 2 blocking claims, none orphaned: %+v", sts)
	}

	// A short grace: the dead holder's claim lapses 2 s after it last
	// showed life. Poll for the change; never time it.
	writeOrphanConfig(t, repo, 2000)
	deadline := time.Now().Add(90 * time.Second)
	for {
		sts = orphanStatus{}
		sb.jsonOK(&sts, repo, "status")
		if sts.Counts.Orphaned > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead holder's claim never showed as orphaned: %+v", sts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, cl := range sts.Claims {
		switch cl.Resource {
		case "file:src/a.go":
			if cl.Orphaned == nil || cl.Orphaned.PID != pid || cl.Orphaned.GraceMs != 2000 {
				t.Fatalf("src/a.go should be orphaned by process %d with a 2000 ms grace: %+v", pid, cl)
			}
		case "file:src/live.go":
			// The live holder claimed before the dead one last showed
			// life, so its heartbeat is older than the grace too.
			if cl.Orphaned != nil {
				t.Fatalf("a live holder's claim was orphaned: %+v", cl)
			}
		}
	}
	if sts.Counts.Claims != 1 || sts.Counts.Orphaned != 1 {
		t.Fatalf("status should count 1 blocking and 1 orphaned claim: %+v", sts.Counts)
	}
	text := sb.ok(repo, "status").stdout
	if !strings.Contains(text, "1 claim (1 orphaned claim)") ||
		!strings.Contains(text, "claim file:src/a.go exclusive guarded by holder orphaned: process "+strconv.Itoa(pid)+" gone") ||
		!strings.Contains(text, "blocks nothing, the next claim on it takes it over") {
		t.Fatalf("status text should show the orphaned claim:\n%s", text)
	}
	for _, w := range []string{"generation_", holder.Generation} {
		if strings.Contains(text, w) {
			t.Fatalf("status shows a generation:\n%s", text)
		}
	}

	// The guard no longer counts it; the live holder's claim still blocks.
	if reason, denied := c.denial(t, sb.hook(hookOpts{}, writeA, c.id, c.tool)); denied {
		t.Fatalf("after the grace the write into src/a.go should pass, was denied: %q", reason)
	}
	if _, denied := c.denial(t, sb.hook(hookOpts{}, writeLive, c.id, c.tool)); !denied {
		t.Fatal("the live holder's guarded src/live.go should still be denied")
	}
	if r := sb.as(writer, "claim", "--resource", "file:src/live.go", "--json"); r.code != 5 || !strings.Contains(r.stdout, `"claim_conflict"`) {
		t.Fatalf("the live holder's claim should still conflict:\n%s", r)
	}

	// The claim takes it over.
	r = sb.as(writer, "claim", "--resource", "file:src/a.go", "--enforcement", "guarded")
	if r.code != 0 || !strings.Contains(r.stdout, "claimed file:src/a.go") ||
		!strings.Contains(r.stdout, "took over file:src/a.go from holder (session "+holder.SessionID) ||
		!strings.Contains(r.stdout, "process "+strconv.Itoa(pid)+" gone") || !strings.Contains(r.stdout, "they were told in message message_") {
		t.Fatalf("acc claim should take the orphaned claim over and say from whom:\n%s", r)
	}
	snap := readSnapshot(t, st)
	var taken *protocol.Event
	for i := range snap.events {
		if snap.events[i].Type == protocol.EventClaimTakenOver {
			taken = &snap.events[i]
		}
	}
	if taken == nil || taken.ActorSessionID != writer.SessionID || taken.Payload["resource"] != "file:src/a.go" ||
		taken.Payload["formerSessionId"] != holder.SessionID || taken.Payload["evidence"] != "process "+strconv.Itoa(pid)+" gone" ||
		taken.Payload["graceMs"] != float64(2000) {
		t.Fatalf("expected one claim.taken_over event by the writer naming the holder and the evidence, got %+v", taken)
	}
	sts = orphanStatus{}
	sb.jsonOK(&sts, repo, "status")
	var mine bool
	for _, cl := range sts.Claims {
		if cl.Resource == "file:src/a.go" {
			if cl.OwnerParticipantID != "writer" || cl.Enforcement != "guarded" || cl.Orphaned != nil || mine {
				t.Fatalf("src/a.go should now be the writer's one guarded claim: %+v", sts.Claims)
			}
			mine = true
		}
	}
	if !mine || sts.Counts.Orphaned != 0 {
		t.Fatalf("after the takeover: %+v", sts)
	}
	// The old row stays, ended, with who took it.
	ended := false
	var rows []protocol.Claim
	ctx, cancel := withTimeout()
	defer cancel()
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		var err error
		rows, err = tx.Claims()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, cl := range rows {
		if cl.OwnerSessionID == holder.SessionID && cl.Resource == "file:src/a.go" {
			ended = cl.ExpiresAt <= taken.OccurredAt && cl.Extensions["takenOver"] != nil
		}
	}
	if !ended {
		t.Fatalf("the holder's claim row should stay, ended at the takeover: %+v", rows)
	}

	// The former participant's inbox names the resource and the diff stat.
	var inbox struct {
		Items []struct {
			Message struct {
				MessageID     string `json:"messageId"`
				FromSessionID string `json:"fromSessionId"`
				Kind          string `json:"kind"`
				Subject       string `json:"subject"`
			} `json:"message"`
		} `json:"items"`
	}
	sb.jsonOK(&inbox, repo, append([]string{"inbox"}, holder.creds()...)...)
	id := ""
	for _, it := range inbox.Items {
		if it.Message.Subject == "took over your claim on file:src/a.go" && it.Message.FromSessionID == writer.SessionID && it.Message.Kind == protocol.KindNote {
			id = it.Message.MessageID
		}
	}
	if id == "" {
		t.Fatalf("the holder's inbox should hold the writer's takeover note: %+v", inbox)
	}
	body := sb.as(holder, "inbox", "--message", id)
	for _, w := range []string{"file:src/a.go", "process " + strconv.Itoa(pid) + " gone", "src/a.go | 2 ++", "1 file changed, 2 insertions(+)"} {
		if body.code != 0 || !strings.Contains(body.stdout, w) {
			t.Fatalf("the note should carry %q:\n%s", w, body)
		}
	}
}
