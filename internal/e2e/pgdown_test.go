package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/hook"
	"github.com/acc-go/acc/pkg/protocol"
)

// privateCluster starts a PostgreSQL cluster of the test's own with
// scripts/pg-cluster.sh (a test that stops its server must not stop the
// one every other test shares) and ends it with the test. It returns the
// cluster's directory and a sandbox whose rooms live on it.
func privateCluster(t *testing.T) (*sandbox, string) {
	t.Helper()
	pgURL(t) // skips, or fails under ACC_REQUIRE_PG=1, when there is no server at all
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "pg-cluster.sh")
	dir := filepath.Join(t.TempDir(), "pg")
	out, err := exec.Command(script, "start", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("start a private cluster: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(script, "stop", dir).Run() })
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^export (\w+)='([^']*)'$`).FindAllStringSubmatch(string(out), -1) {
		vars[m[1]] = m[2]
	}
	if vars["ACC_TEST_PG_URL"] == "" || vars["PGPASSFILE"] == "" {
		t.Fatalf("pg-cluster.sh printed no URL or password file:\n%s", out)
	}
	sb := newSandbox(t)
	sb.pgURL, sb.pgPassFile = vars["ACC_TEST_PG_URL"], vars["PGPASSFILE"]
	// The test's own reads of the room (pgx reads PGPASSFILE on connect).
	t.Setenv("PGPASSFILE", sb.pgPassFile)
	return sb, dir
}

// clusterCtl runs pg-cluster.sh halt or restart on dir.
func clusterCtl(t *testing.T, verb, dir string) {
	t.Helper()
	root, _ := repoRoot()
	if out, err := exec.Command(filepath.Join(root, "scripts", "pg-cluster.sh"), verb, dir).CombinedOutput(); err != nil {
		t.Fatalf("pg-cluster.sh %s: %v\n%s", verb, err, out)
	}
}

// TestPostgresServerDown stops the room's server while senders are
// writing, and keeps it down for a while. Every send ends as the truth:
// exit 0 with its message stored once, exit 3 store_unreachable with
// nothing stored, or exit 4 outcome_unknown whose printed retry settles it.
// While the server is down, every hook answers "proceed" within its budget
// with one line naming store_unreachable, and commands exit 3 with that
// reason. After a restart the room continues: nothing recorded is lost, a
// turn offers the question that was pending, and a new send lands.
func TestPostgresServerDown(t *testing.T) {
	sb, cluster := privateCluster(t)
	c := hookClients[0]
	repo := sb.newRepo("repo")
	sid := "down-" + c.id
	sb.hookSession(c, sid, repo, "ACC_PARTICIPANT=me")
	peer := sb.attach(repo, "peer", "cli")
	other := sb.attach(repo, "other", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, peer.creds()...)...)
	q := sb.sendAs(peer, "--to", "me", "--type", "question", "--subject", "pending", "--body", "a question from before the outage")
	ws := sb.roomStatus(repo).WorkspaceID

	// Senders run through the outage, each send with its own key.
	type send struct {
		subject string
		res     result
	}
	var (
		mu    sync.Mutex
		sends []send
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				subject := fmt.Sprintf("w%d-%04d", w, i)
				r := sb.as(peer, "message", "--to", other.ParticipantID, "--subject", subject, "--body", "sent through the outage", "--client-message-id", "key-"+subject)
				mu.Lock()
				sends = append(sends, send{subject, r})
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	clusterCtl(t, "halt", cluster)

	// Down: hooks proceed within budget; commands say what is wrong.
	for _, v := range []struct {
		label, event string
		payload      []byte
	}{
		{"turn", c.turn, c.turnPayload(t, sid, repo)},
		{"pre-tool write into the guarded claim", c.tool, c.shellPayload(t, sid, repo, "echo x > src/a.go")},
		{"new session start", c.start, c.startPayload(t, "another-"+c.id, repo)},
	} {
		r := sb.hook(hookOpts{}, v.payload, c.id, v.event)
		proceeds(t, r, c.allow, v.label+" with the server down")
		if !strings.Contains(r.stderr, protocol.ReasonStoreUnreachable) {
			t.Errorf("%s: the diagnostic should name %s: %q", v.label, protocol.ReasonStoreUnreachable, r.stderr)
		}
		if r.took > hook.Deadline+10*time.Second {
			t.Errorf("%s: the hook took %v, far past its %v budget", v.label, r.took, hook.Deadline)
		}
		t.Logf("%s with the server down: exit %d after %v", v.label, r.code, r.took)
	}
	for _, args := range [][]string{
		append([]string{"status", "--json"}, peer.creds()...),
		append([]string{"message", "--json", "--to", "me", "--subject", "down", "--body", "b"}, peer.creds()...),
		append([]string{"inbox", "--json"}, peer.creds()...),
		append([]string{"wait", "--json", "--timeout", "2"}, peer.creds()...),
	} {
		r := sb.run(repo, args...)
		env := sb.parseEnvelope(r)
		if r.code != int(protocol.ExitTimeout) || env.OK || env.Error.Details["reasonCode"] != protocol.ReasonStoreUnreachable {
			t.Errorf("acc %s with the server down: expected exit 3 store_unreachable:\n%s", args[0], r)
		}
		if strings.Contains(r.stdout+r.stderr, "password") && !strings.Contains(r.stdout+r.stderr, "PGPASSWORD") {
			t.Errorf("acc %s mentions a password:\n%s", args[0], r)
		}
	}

	close(stop)
	wg.Wait()
	clusterCtl(t, "restart", cluster)

	// Up again: every send's exit told the truth.
	st := sb.openRoom(ws)
	snap := readSnapshot(t, st)
	stored := map[string]int{}
	for _, m := range snap.messages {
		stored[m.Subject]++
	}
	var ok, unreachable, unknown int
	for _, s := range sends {
		switch {
		case s.res.code == 0 && recordedID(s.res.stdout) != "":
			ok++
			if stored[s.subject] != 1 {
				t.Errorf("send %s exited 0, yet the room holds it %d times", s.subject, stored[s.subject])
			}
		case s.res.code == int(protocol.ExitTimeout) && strings.Contains(s.res.stderr, "cannot be reached") && strings.Contains(s.res.stderr, "nothing was written"):
			unreachable++
			if stored[s.subject] != 0 {
				t.Errorf("send %s exited 3 store_unreachable (nothing written), yet the room holds it:\n%s", s.subject, s.res)
			}
		case s.res.code == int(protocol.ExitData) && retryLine.MatchString(s.res.stderr):
			unknown++
			retry := retryLine.FindStringSubmatch(s.res.stderr)[1]
			if r := sb.runShell(repo, retry); r.code != 0 || recordedID(r.stdout) == "" {
				t.Errorf("send %s: the printed retry failed:\n%s", s.subject, r)
			}
		default:
			t.Errorf("send %s ended neither recorded, unreachable nor outcome_unknown:\n%s", s.subject, s.res)
		}
	}
	t.Logf("sends through the outage: %d recorded, %d store_unreachable, %d outcome_unknown (retried)", ok, unreachable, unknown)
	if ok == 0 || unreachable == 0 {
		t.Errorf("the outage did not fall inside the load: %d recorded, %d unreachable", ok, unreachable)
	}
	snap = readSnapshot(t, st)
	checkReceiptsComplete(t, snap, protocol.ReceiptQueued)
	checkEventLog(t, snap.events)
	checkMessagesMatchEvents(t, snap)
	sb.checkStoreConsistent(t, ws, st)

	// The room carries on: the pending question reaches the session's turn,
	// the guard denies the write again, and a new send lands.
	if ctxt, _ := sb.turn(c, sid, repo); !strings.Contains(ctxt, q) {
		t.Errorf("after the restart a turn did not project the pending question %s:\n%s", q, ctxt)
	}
	if _, denied := c.denial(t, sb.hook(hookOpts{}, c.shellPayload(t, sid, repo, "echo x > src/a.go"), c.id, c.tool)); !denied {
		t.Errorf("after the restart the guard let a write into the guarded claim through")
	}
	sb.send(peer, other.ParticipantID, "after the restart")
}
