package e2e

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// sendWithFailpoint runs one `acc message` from s to bob and carol with
// ACC_FAILPOINT=point and requires that the process died by SIGKILL without
// printing `recorded`.
func sendWithFailpoint(t *testing.T, sb *sandbox, s session, point string) {
	t.Helper()
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := sb.command(ctx, s.dir, append([]string{"message", "--to", "bob", "--to", "carol", "--subject", "crash " + point, "--body", "b"}, s.creds()...)...)
	cmd.Env = append(cmd.Env, "ACC_FAILPOINT="+point)
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("failpoint %s: expected the send to die by SIGKILL, it exited %v with %q", point, cmd.ProcessState, out.String())
	}
	if strings.Contains(out.String(), "recorded") {
		t.Fatalf("failpoint %s: a crashed send printed %q", point, out.String())
	}
}

func fingerprint(t *testing.T, sb *sandbox, workspaceID string) string {
	t.Helper()
	st := sb.openStore(workspaceID)
	defer st.Close()
	fp, err := st.Fingerprint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// TestCrashAtEachStepOfASend kills a real send at named steps: before its
// receipts are written and before COMMIT nothing of it may exist; right
// after COMMIT all of it must (the sender just never heard back).
func TestCrashAtEachStepOfASend(t *testing.T) {
	for _, point := range []string{storage.FailAfterMessage, storage.FailBeforeCommit, storage.FailAfterCommit} {
		t.Run(point, func(t *testing.T) {
			sb := newSandbox(t)
			repo := sb.newRepo("repo")
			a := sb.attach(repo, "alice", "cli")
			sb.attach(repo, "bob", "cli")
			sb.attach(repo, "carol", "cli")
			before := fingerprint(t, sb, a.WorkspaceID)
			sendWithFailpoint(t, sb, a, point)
			st := sb.openStore(a.WorkspaceID)
			checkIntegrity(t, st)
			snap := readSnapshot(t, st)
			checkEventLog(t, snap.events)
			fp, err := st.Fingerprint(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if point != storage.FailAfterCommit {
				if fp != before {
					t.Fatalf("a send killed at %s left changes in the store", point)
				}
			} else {
				if len(snap.messages) != 1 {
					t.Fatalf("a send killed after COMMIT: %d messages, want 1", len(snap.messages))
				}
				rs := snap.receipts[snap.messages[0].MessageID]
				if len(rs) != 2 || rs[0].State != protocol.ReceiptQueued || rs[1].State != protocol.ReceiptQueued {
					t.Fatalf("a send killed after COMMIT must have both queued receipts, got %+v", rs)
				}
				checkMessagesMatchEvents(t, snap)
			}
			// The store still takes writes.
			sb.send(a, "bob", "after the crash")
		})
	}
}

// TestMaterialisationIsAllOrNothing kills the first message of a lone
// session, which materialises the room: killed before COMMIT, the room stays
// unmaterialised with no durable row; killed after, it is complete.
func TestMaterialisationIsAllOrNothing(t *testing.T) {
	for _, point := range []string{storage.FailAfterMessage, storage.FailAfterCommit} {
		t.Run(point, func(t *testing.T) {
			sb := newSandbox(t)
			repo2 := sb.newRepo("repo2")
			lone := sb.attach(repo2, "alice", "cli")
			ctx, cancel := withTimeout()
			defer cancel()
			cmd := sb.command(ctx, repo2, append([]string{"message", "--subject", "room note", "--body", "b"}, lone.creds()...)...)
			cmd.Env = append(cmd.Env, "ACC_FAILPOINT="+point)
			_ = cmd.Run()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("expected the send to be killed at %s, it exited %v", point, cmd.ProcessState)
			}
			st := sb.openStore(lone.WorkspaceID)
			defer st.Close()
			checkIntegrity(t, st)
			n, err := st.DurableRowCount(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var events []protocol.Event
			var ws *protocol.Workspace
			err = st.View(context.Background(), func(tx storage.ReadTx) error {
				var err error
				if ws, err = tx.Workspace(); err != nil {
					return err
				}
				events, err = tx.Events(0, 100)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if point == storage.FailAfterMessage {
				if n != 0 || ws != nil {
					t.Fatalf("a first message killed before COMMIT left %d durable rows (workspace %v)", n, ws != nil)
				}
				return
			}
			types := make([]string, len(events))
			for i, e := range events {
				types[i] = e.Type
			}
			want := []string{protocol.EventWorkspaceMaterialised, protocol.EventSessionOpened, protocol.EventMessageRecorded}
			if ws == nil || strings.Join(types, ",") != strings.Join(want, ",") {
				t.Fatalf("after COMMIT the room must be materialised with events %v, got workspace %v and %v", want, ws != nil, types)
			}
		})
	}
}
