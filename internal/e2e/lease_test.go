package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestShortLeaseExpiresForRealProcesses claims with a three-second lease from
// one process, sees another process refused while it runs, and lets a third
// take the resource once the lease has run out; the first owner then finds
// claim_expired in its attention, and its attempt to claim again is refused
// because the resource has a new holder.
func TestShortLeaseExpiresForRealProcesses(t *testing.T) {
	t.Parallel() // waits on timers and processes more than it computes
	shortLease(t, newSandbox(t))
}

// TestShortLeaseExpiresForRealProcessesPostgres runs the same with the room
// on the PostgreSQL test server, where the lease runs on the server's clock.
func TestShortLeaseExpiresForRealProcessesPostgres(t *testing.T) {
	t.Parallel()
	shortLease(t, newSandboxPG(t))
}

func shortLease(t *testing.T, sb *sandbox) {
	repo := sb.newRepo("repo")
	a := sb.attach(repo, "alice", "cli")
	b := sb.attach(repo, "bob", "cli")
	const lease = 3 * time.Second
	began := time.Now()
	sb.ok(repo, append([]string{"claim", "--resource", "file:lease.txt", "--lease", "3"}, a.creds()...)...)
	res := sb.as(b, "claim", "--resource", "file:lease.txt")
	if elapsed := time.Since(began); elapsed < lease {
		if res.code != 5 {
			t.Fatalf("a live claim must block: %s", res)
		}
	} else {
		// A loaded machine took longer than the lease to get here; the
		// blocking check says nothing then.
		t.Logf("the blocking check ran %v after the claim, past its lease; not asserted", elapsed)
	}
	time.Sleep(time.Until(began.Add(lease + 100*time.Millisecond)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		res = sb.as(b, "claim", "--resource", "file:lease.txt")
		if res.code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res.code != 0 {
		t.Fatalf("after the lease ran out the resource must be free: %s", res)
	}
	t.Logf("taken over %v after the %v lease began", time.Since(began).Round(time.Millisecond), lease)
	st := sb.as(a, "status", "--json")
	if st.code != 0 || !strings.Contains(st.stdout, `"kind": "claim_expired"`) {
		t.Fatalf("the first owner must see claim_expired: %s", st)
	}
	if res := sb.as(a, "claim", "--resource", "file:lease.txt"); res.code != 5 || !strings.Contains(res.stderr, "bob") {
		t.Fatalf("the first owner cannot renew over the new holder: %s", res)
	}
}
