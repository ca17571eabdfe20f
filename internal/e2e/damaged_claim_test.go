package e2e

import (
	"database/sql"
	"strings"
	"testing"
)

// TestHookGuardKeepsADamagedClaim damages the record of one guarded claim
// (its row's own columns intact): the built acc-hook still denies every
// other guarded file, denies a write to the damaged claim's file too
// (acc cannot tell its enforcement, so it keeps it as guarded, naming the
// claim and acc doctor), and allows writes elsewhere; acc status still
// lists the other claims and names the damaged one. Nothing is written.
func TestHookGuardKeepsADamagedClaim(t *testing.T) {
	g := newGuardRoom(t)
	c := clientByID(t, "claude")
	ws := g.peer.WorkspaceID
	db, err := sql.Open("sqlite", "file:"+g.sb.storePath(ws)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE claims SET record = '{"schemaVersion": 3, damaged' WHERE resource = 'file:notes.txt'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("damaged %d claim rows, want 1", n)
	}
	var damagedID string
	if err := db.QueryRow(`SELECT claim_id FROM claims WHERE resource = 'file:notes.txt'`).Scan(&damagedID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fp := g.sb.fingerprint(ws)

	// Every other guarded claim still guards.
	g.check(t, c, hookOpts{}, c.shellPayload(t, "writer", g.repo, "echo x > f"), true, "peer", "a write to another guarded file")
	g.check(t, c, hookOpts{}, c.writePayload(t, "writer", g.repo, "src/a.go"), true, "peer", "an edit of another guarded file")
	// The damaged claim's own file is kept guarded, and the reason says why.
	r := g.sb.hook(hookOpts{}, c.writePayload(t, "writer", g.repo, "notes.txt"), c.id, c.tool)
	reason, denied := c.denial(t, r)
	if !denied || !strings.Contains(reason, "claim "+damagedID+" on file:notes.txt by peer") || !strings.Contains(reason, "stored damaged") || !strings.Contains(reason, "acc doctor") {
		t.Errorf("a write to the damaged claim's file: denied=%v %q\n%s", denied, reason, r)
	}
	// Writes no claim covers still pass.
	g.check(t, c, hookOpts{}, c.shellPayload(t, "writer", g.repo, "echo x > g"), false, "", "a write to an unclaimed file")
	g.untouched(t)

	st := g.sb.ok(g.repo, "status")
	if !strings.Contains(st.stdout, "claim file:f exclusive guarded by peer") ||
		!strings.Contains(st.stdout, "damaged: 1 stored record(s) could not be read and are not listed (claims "+damagedID+"); run `acc doctor`") {
		t.Errorf("acc status should list the other claims and name the damaged one:\n%s", st)
	}
	if got := g.sb.fingerprint(ws); got != fp {
		t.Error("the guard or status changed the store")
	}
}
