package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pidNamespace starts a process in a PID namespace of its own (unshare
// --pid --fork --mount-proc, as root) that lives until the test ends, and
// returns the host pid of its first process, for nsenter. Before settling
// it runs spawn short-lived processes, so the namespace's pids have reached
// beyond spawn: a pid numbered there names no process in a namespace that
// has not (a process judged by such a pid elsewhere would look gone).
func pidNamespace(t *testing.T, spawn int) int {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a PID namespace of its own needs root (unshare --pid)")
	}
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done; exec sleep 3600`, spawn)
	cmd := exec.Command("unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The namespace's first process is unshare's only child.
	deadline := time.Now().Add(20 * time.Second)
	for {
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if f := strings.Fields(string(raw)); len(f) == 1 {
			pid, _ := strconv.Atoi(f[0])
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if strings.TrimSpace(string(comm)) == "sleep" {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace of unshare %d did not settle into its sleep", cmd.Process.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// statusSessions reads `acc status --json --all` in dir: presence and
// pidJudged by session id.
func statusSessions(t *testing.T, sb *sandbox, dir string) map[string]map[string]any {
	t.Helper()
	var st struct {
		Participants []map[string]any `json:"participants"`
	}
	sb.jsonOK(&st, dir, "status", "--all")
	out := map[string]map[string]any{}
	for _, p := range st.Participants {
		out[fmt.Sprint(p["sessionId"])] = p
	}
	return out
}

// TestTwoMachinesShareARoomOnPostgres runs one room across two "machines"
// on one host: two clones of a repository with one committed config
// (naming no server: ACC_STORE_URL gives the test's), two data homes and
// HOMEs, and every process of each in a PID namespace of its own. Each side
// records its session with a pid of its own namespace, which means nothing
// on the other: each sees the other online by heartbeat and lease, the pid
// not judged, and its own session's pid judged. A question from A is
// answered on B, and the `acc wait --answer` running on A wakes on the
// reply through NOTIFY. A guarded claim made on A denies a write to the
// same file in B's clone through B's real acc-hook.
func TestTwoMachinesShareARoomOnPostgres(t *testing.T) {
	a, b := newSandboxPG(t), newSandboxPG(t)
	origin := a.newRepo("origin") // commits acc.workspace.json with a fresh workspace id
	cloneA, cloneB := filepath.Join(a.base, "clone"), filepath.Join(b.base, "clone")
	a.git(a.base, "clone", "-q", origin, cloneA)
	b.git(b.base, "clone", "-q", origin, cloneB)

	// Machine A's namespace has used 300 pids before its "client" runs;
	// machine B's only a few.
	nsA, nsB := pidNamespace(t, 300), pidNamespace(t, 0)
	a.wrap = []string{"nsenter", "-t", strconv.Itoa(nsA), "-p", "-m"}
	b.wrap = []string{"nsenter", "-t", strconv.Itoa(nsB), "-p", "-m"}
	// A's client: a process of A's namespace, numbered past 300 there.
	var pidA int
	{
		r := a.runProgram(cloneA, "sh", "-c", "sleep 3600 >/dev/null 2>&1 & echo $!")
		pidA, _ = strconv.Atoi(strings.TrimSpace(r.stdout))
		if pidA <= 300 {
			t.Fatalf("A's client process is %d in its namespace; want a pid past 300:\n%s", pidA, r)
		}
	}
	var alice, bob session
	a.jsonOK(&alice, cloneA, "attach", "--participant", "alice", "--harness", "cli", "--pid", strconv.Itoa(pidA))
	alice.dir = cloneA
	b.jsonOK(&bob, cloneB, "attach", "--participant", "bob", "--harness", "cli", "--pid", "1")
	bob.dir = cloneB
	if alice.WorkspaceID != bob.WorkspaceID {
		t.Fatalf("the clones opened two rooms: %s and %s", alice.WorkspaceID, bob.WorkspaceID)
	}
	for _, dir := range []string{a.data, b.data} {
		if _, err := os.Stat(filepath.Join(dir, "acc", "workspaces")); !os.IsNotExist(err) {
			t.Errorf("a room on PostgreSQL left SQLite stores under %s (%v)", dir, err)
		}
	}

	// Presence by lease on the other side, by pid on one's own.
	onB := statusSessions(t, b, cloneB)
	onA := statusSessions(t, a, cloneA)
	for _, c := range []struct {
		label    string
		row      map[string]any
		judged   bool
		presence string
	}{
		{"alice seen from B", onB[alice.SessionID], false, "online"},
		{"bob seen from A", onA[bob.SessionID], false, "online"},
		{"alice seen from A", onA[alice.SessionID], true, "online"},
		{"bob seen from B", onB[bob.SessionID], true, "online"},
	} {
		if c.row == nil {
			t.Errorf("%s: the session is not in acc status", c.label)
			continue
		}
		if c.row["presence"] != c.presence || c.row["pidJudged"] != c.judged {
			t.Errorf("%s: presence %v, pidJudged %v; want %s, %v", c.label, c.row["presence"], c.row["pidJudged"], c.presence, c.judged)
		}
	}

	// A asks; A's acc wait --answer wakes on B's reply.
	q := a.sendAs(alice, "--to", "bob", "--type", "question", "--subject", "schema", "--body", "may I drop the legacy column?")
	w := a.startWait(cloneA, append([]string{"--answer", q, "--timeout", "60"}, alice.creds()...)...)
	time.Sleep(300 * time.Millisecond) // listening by now (the reply would be found either way)
	var page struct {
		Items []struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		} `json:"items"`
	}
	b.jsonOK(&page, cloneB, append([]string{"inbox"}, bob.creds()...)...)
	if len(page.Items) != 1 || page.Items[0].Message.MessageID != q {
		t.Fatalf("bob's inbox on B: %+v; want the question %s", page.Items, q)
	}
	var reply struct {
		Message struct {
			MessageID string `json:"messageId"`
			ThreadID  string `json:"threadId"`
		} `json:"message"`
	}
	b.jsonOK(&reply, cloneB, append([]string{"reply", "--message", q, "--body", "yes, nothing reads it"}, bob.creds()...)...)
	replied := time.Now()
	if !w.finished(t, 30*time.Second) {
		t.Fatal("acc wait --answer on A did not wake within 30 s of the reply on B")
	}
	t.Logf("acc wait --answer on A woke %v after the reply on B returned", w.ended.Sub(replied))
	if items := w.result(t); len(items) != 1 || items[0] != reply.Message.MessageID || reply.Message.ThreadID != q {
		t.Fatalf("acc wait --answer returned %v; want the reply %s in thread %s", items, reply.Message.MessageID, q)
	}

	// A guarded claim on A denies B's write to the same file.
	a.ok(cloneA, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, alice.creds()...)...)
	c := clientByID(t, "claude")
	b.hookSession(c, "machine-b", cloneB, "ACC_PARTICIPANT=bob-agent")
	r := b.hook(hookOpts{}, c.shellPayload(t, "machine-b", cloneB, "mkdir -p src && echo x > src/a.go"), c.id, c.tool)
	reason, denied := c.denial(t, r)
	if !denied || !strings.Contains(reason, "alice") || !strings.Contains(reason, "src/a.go") {
		t.Fatalf("B's write into A's guarded claim: want a denial naming alice and src/a.go:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(cloneB, "src", "a.go")); !os.IsNotExist(err) {
		t.Fatalf("the denied write happened (%v)", err)
	}
	if r := b.hook(hookOpts{}, c.shellPayload(t, "machine-b", cloneB, "echo x > src/b.go"), c.id, c.tool); r.stdout != c.allow {
		t.Fatalf("B's write outside the claim: want it allowed:\n%s", r)
	}
}

// runProgram runs prog in dir the way the sandbox runs acc (its
// environment, under its wrap); it never fails the test.
func (sb *sandbox) runProgram(dir, prog string, args ...string) result {
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := sb.program(ctx, dir, prog, args...)
	cmd.Env = sb.environ()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{args: append([]string{prog}, args...), stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err)}
}
