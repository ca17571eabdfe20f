package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// syncCall matches one fsync or fdatasync in `strace -f -y` output and
// captures the path of the file synced. The call may be cut in two when
// another thread's system call is printed meanwhile — `fsync(8</p/acc.db-wal>
// <unfinished ...>` and later `<... fsync resumed>) = 0` — so only the
// opening part, which names the file, is matched.
var syncCall = regexp.MustCompile(`\b(?:fsync|fdatasync)\(\d+<([^>]*)>`)

// straced runs bin with args and stdin under strace and returns the paths
// it fsynced, one per call. It skips the test when strace is not installed
// or cannot trace here.
func straced(t *testing.T, sb *sandbox, dir string, stdin []byte, bin string, args ...string) []string {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: fsyncs are not counted")
	}
	log := filepath.Join(t.TempDir(), "strace.log")
	ctx, cancel := withTimeout()
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, append([]string{"-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = sb.environ()
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if strings.Contains(errb.String(), "PTRACE") || strings.Contains(errb.String(), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", errb.String())
		}
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", filepath.Base(bin), args, err, out.String(), errb.String())
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range syncCall.FindAllStringSubmatch(string(raw), -1) {
		paths = append(paths, m[1])
	}
	return paths
}

// TestFsyncsPerCommand counts the fsyncs of one `acc message` and of one
// acc-hook pre-tool event in a room that has seen some traffic
// (docs/design.md#durability-and-checkpoints): a commit syncs the WAL
// once, SQLite's unix VFS syncs the store directory once for a process's
// first WAL sync, and nothing syncs acc.db itself (no checkpoint when a
// process closes the store). Run with -v for the counts.
func TestFsyncsPerCommand(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	bob := sb.attach(repo, "bob", "cli")
	for range 5 {
		sb.send(bob, "alice", "warm-up")
	}
	// Many sends, each its own process: the WAL passes walCheckpointBytes
	// several times, and the send that takes it past empties it into acc.db
	// (one checkpoint: a few more fsyncs, once); every other send syncs the
	// WAL once and the directory once.
	const sends = 60
	total, checkpoints := 0, 0
	for i := range sends {
		paths := straced(t, sb, repo, nil, accBin, append([]string{"message", "--to", "alice", "--subject", fmt.Sprintf("counted %d", i), "--body", "one message"}, bob.creds()...)...)
		total += len(paths)
		walSyncs, dbSyncs := 0, 0
		for _, p := range paths {
			switch {
			case strings.HasSuffix(p, "/acc.db"):
				dbSyncs++
			case strings.HasSuffix(p, "/acc.db-wal"):
				walSyncs++
			}
		}
		if dbSyncs > 0 {
			checkpoints++
			continue
		}
		// The first commit into an emptied WAL also syncs the WAL's new
		// header (SQLite does so before the frames): two WAL syncs, once.
		if walSyncs < 1 || walSyncs > 2 || len(paths) > walSyncs+1 {
			t.Errorf("send %d made %d fsyncs, %d of the WAL: want the WAL once (twice after a checkpoint) and at most one more (the directory): %v", i, len(paths), walSyncs, paths)
		}
	}
	t.Logf("acc message: %d fsyncs in %d sends (%.2f per send); %d of them checkpointed", total, sends, float64(total)/sends, checkpoints)
	if float64(total)/sends > 2.5 {
		t.Errorf("%.2f fsyncs per send: want about two (the WAL, the directory), checkpoints amortised", float64(total)/sends)
	}
	if checkpoints == 0 || checkpoints > sends/10 {
		t.Errorf("%d of %d sends checkpointed the WAL into acc.db: want a few (once per %d bytes of WAL), not none and not most", checkpoints, sends, 1<<20)
	}

	// The hook's events below must not meet a WAL just short of the
	// checkpoint bound, or the commit that crosses it checkpoints (as a
	// send would): empty the WAL first, as a checkpoint would.
	emptyWAL(t, sb.storePath(bob.WorkspaceID))
	c := clientByID(t, "claude")
	sb.hookSession(c, "fsync-session", repo, "ACC_PARTICIPANT=carol")
	payload := c.toolPayload(t, "fsync-session", repo, "Edit", map[string]any{"file_path": filepath.Join(repo, "README.md")})
	hp := straced(t, sb, sb.base, payload, hookBin, c.id, c.tool)
	t.Logf("acc-hook %s: %d fsyncs %v", c.tool, len(hp), hp)
	for _, p := range hp {
		if strings.HasSuffix(p, "/acc.db") {
			t.Errorf("acc-hook %s fsynced acc.db itself: the WAL was checkpointed (%v)", c.tool, hp)
		}
	}
	if len(hp) > 2 {
		t.Errorf("acc-hook %s made %d fsyncs: want at most a WAL sync and the directory: %v", c.tool, len(hp), hp)
	}
	// A turn that delivers a waiting message writes: it commits twice today
	// (two WAL syncs), and still never syncs acc.db.
	sb.send(alice, "carol", "for the turn")
	tp := straced(t, sb, sb.base, c.turnPayload(t, "fsync-session", repo), hookBin, c.id, c.turn)
	t.Logf("acc-hook %s: %d fsyncs %v", c.turn, len(tp), tp)
	walSyncs := 0
	for _, p := range tp {
		switch {
		case strings.HasSuffix(p, "/acc.db"):
			t.Errorf("acc-hook %s fsynced acc.db itself: the WAL was checkpointed (%v)", c.turn, tp)
		case strings.HasSuffix(p, "/acc.db-wal"):
			walSyncs++
		}
	}
	if len(tp) > walSyncs+1 {
		t.Errorf("acc-hook %s made %d fsyncs, %d of the WAL: want one per commit and at most one more (the directory): %v", c.turn, len(tp), walSyncs, tp)
	}
}

// emptyWAL copies a store's WAL into acc.db and truncates it
// (wal_checkpoint(TRUNCATE)), through a connection of the test's own.
func emptyWAL(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, frames, copied int
	if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil || busy != 0 {
		t.Fatalf("checkpoint %s: busy %d, %v", path, busy, err)
	}
}
