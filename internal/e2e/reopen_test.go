package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// ownerOf reads, from the store of workspaceID (through pkg/storage,
// read-only), the claim on resource and the current generation of the
// session that owns it; nil and "" when there is no such claim.
func (sb *sandbox) ownerOf(workspaceID, resource string) (*protocol.Claim, string) {
	sb.t.Helper()
	st := sb.openStore(workspaceID)
	defer st.Close()
	ctx, cancel := withTimeout()
	defer cancel()
	var claim *protocol.Claim
	var generation string
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		cs, err := tx.Claims()
		if err != nil {
			return err
		}
		for i := range cs {
			if cs[i].Resource == resource {
				claim = &cs[i]
			}
		}
		if claim == nil {
			return nil
		}
		ss, err := tx.Sessions(storage.Durable, false)
		for _, s := range ss {
			if s.SessionID == claim.OwnerSessionID {
				generation = s.Generation
			}
		}
		return err
	}); err != nil {
		sb.t.Fatal(err)
	}
	return claim, generation
}

// TestReopenAfterKillNeedsTheHoldersGeneration: through the built
// binaries, a holder attached with --pid of a real process holds a guarded
// claim; the process is killed with SIGKILL, so the session may be
// reopened — but only by itself (docs/concepts.md#reopening-a-session).
// A peer that read the session id from its deny reason and the participant
// from status runs `acc attach --participant <holder's> --session <holder's>`,
// bare and from its own hooked client's environment: exit 2
// generation_required, the store unchanged, the claim still the old
// generation's (status --json and the store), and the peer's write still
// denied. The holder reattaching with its old generation is accepted and
// keeps the claim under the new one.
func TestReopenAfterKillNeedsTheHoldersGeneration(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	sb.hookSession(claude, "client-writer", repo)

	proc := exec.Command("sleep", "3600")
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if proc.ProcessState == nil {
			proc.Process.Kill()
			proc.Wait()
		}
	})
	var holder session
	sb.jsonOK(&holder, repo, "attach", "--participant", "alice", "--pid", strconv.Itoa(proc.Process.Pid))
	holder.dir = repo
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	proc.Wait() // killed: the error says so

	deny, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool))
	if !denied || !strings.Contains(deny, holder.SessionID) {
		t.Fatalf("the writer's edit must be denied naming the holder's session, got %q", deny)
	}
	st := sb.roomStatus(repo)
	if row := st.session(holder.SessionID); row == nil || row.ParticipantID != "alice" || row.Presence != "offline" {
		t.Fatalf("status --all must show the killed holder as alice, offline: %+v", row)
	}

	fp := sb.fingerprint(holder.WorkspaceID)
	for _, env := range [][]string{nil, {"CLAUDE_CODE_SESSION_ID=client-writer"}} {
		res := sb.runEnv(repo, env, "attach", "--json", "--participant", "alice", "--session", holder.SessionID)
		msg := sb.refusal(res, 2, protocol.ReasonGenerationRequired)
		for _, want := range []string{"reopening session " + holder.SessionID + " needs its last generation", "attach without --session to open a new session"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("the refusal must say %q, got %q", want, msg)
			}
		}
		if strings.Contains(res.stdout+res.stderr, holder.Generation) {
			t.Fatalf("the refusal must not show the holder's generation:\n%s", res)
		}
	}
	if got := sb.fingerprint(holder.WorkspaceID); got != fp {
		t.Fatal("a refused reopen changed the store")
	}
	var status struct {
		Claims []struct {
			Resource       string `json:"resource"`
			OwnerSessionID string `json:"ownerSessionId"`
		} `json:"claims"`
	}
	sb.jsonOK(&status, repo, "status", "--all")
	if len(status.Claims) != 1 || status.Claims[0].OwnerSessionID != holder.SessionID {
		t.Fatalf("status must still show the holder's claim: %+v", status.Claims)
	}
	if c, g := sb.ownerOf(holder.WorkspaceID, "file:src/a.go"); c == nil || c.OwnerSessionID != holder.SessionID || g != holder.Generation {
		t.Fatalf("the claim must still belong to the holder's session at its old generation: %+v, owner at %q", c, g)
	}
	if _, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool)); !denied {
		t.Fatal("after the refused reopen the holder's guarded claim must still deny the writer")
	}

	// The holder itself, with its old generation: accepted, keeps its claim.
	var again struct {
		SessionID  string  `json:"sessionId"`
		Generation string  `json:"generation"`
		Replaced   *string `json:"replaced"`
	}
	sb.jsonOK(&again, repo, "attach", "--participant", "alice", "--session", holder.SessionID, "--generation", holder.Generation)
	if again.SessionID != holder.SessionID || again.Replaced == nil || *again.Replaced != holder.Generation || again.Generation == holder.Generation {
		t.Fatalf("the holder's reopen must replace its old generation with a new one: %+v", again)
	}
	var renewed struct {
		Renewed bool `json:"renewed"`
	}
	sb.jsonOK(&renewed, repo, "claim", "--resource", "file:src/a.go", "--session", holder.SessionID, "--generation", again.Generation)
	if !renewed.Renewed {
		t.Fatal("the reopened session must own its claim: claiming again renews it")
	}
	if c, g := sb.ownerOf(holder.WorkspaceID, "file:src/a.go"); c == nil || c.OwnerSessionID != holder.SessionID || g != again.Generation {
		t.Fatalf("the claim must now belong to the holder's session at its new generation: %+v, owner at %q", c, g)
	}
	if _, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool)); !denied {
		t.Fatal("the reopened holder's guarded claim must deny the writer")
	}
}
