package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// smallFS mounts a tmpfs of size bytes on the sandbox's data home (empty
// until then) and unmounts it at cleanup. Mounting needs root and the
// capability to mount; the test is skipped, with the reason, otherwise.
func smallFS(t *testing.T, sb *sandbox, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root; not root here")
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", sb.data).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", sb.data).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", sb.data, err, out)
		}
	})
}

// storeFault runs a refused acc command with --json and checks the answer:
// exit 4, reasonCode reason, a message naming want (the path and the fix).
func storeFault(t *testing.T, sb *sandbox, reason string, want []string, dir string, args ...string) {
	t.Helper()
	res := sb.run(dir, append(args, "--json")...)
	if res.code != int(protocol.ExitData) {
		t.Fatalf("want exit 4 %s, got:\n%s", reason, res)
	}
	env := sb.parseEnvelope(res)
	if env.OK || env.Error == nil || env.Error.Details["reasonCode"] != reason {
		t.Fatalf("want reasonCode %s, got:\n%s", reason, res)
	}
	for _, w := range want {
		if !strings.Contains(env.Error.Message, w) {
			t.Errorf("the message of %v does not say %q:\n%s", args, w, env.Error.Message)
		}
	}
}

// fingerprint is the store's content fingerprint (every row of every table).
func (sb *sandbox) fingerprint(workspaceID string) string {
	sb.t.Helper()
	st := sb.openStore(workspaceID)
	ctx, cancel := withTimeout()
	defer cancel()
	fp, err := st.Fingerprint(ctx)
	if err != nil {
		sb.t.Fatal(err)
	}
	st.Close()
	return fp
}

// TestStoreOnAFullDisk fills the file system under the store: a send is
// refused with exit 4 store_full naming the directory and the fix, nothing
// is recorded, acc doctor reports the store unhealthy with the fix, and once
// space is free the same send works.
func TestStoreOnAFullDisk(t *testing.T) {
	sb := newSandbox(t)
	smallFS(t, sb, "8m")
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	bob := sb.attach(repo, "bob", "cli")
	sb.send(alice, "bob", "before the disk filled")
	dir := filepath.Dir(sb.storePath(alice.WorkspaceID))
	before := sb.fingerprint(alice.WorkspaceID)

	filler := filepath.Join(sb.data, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	f.Close()

	send := append([]string{"message", "--to", "bob", "--subject", "on a full disk", "--body", strings.Repeat("a body that needs room ", 150)}, alice.creds()...)
	storeFault(t, sb, protocol.ReasonStoreFull, []string{dir, "the disk is full", "free space"}, repo, send...)
	storeFault(t, sb, protocol.ReasonStoreUnhealthy, []string{"store_full", "free space on the file system holding " + dir}, repo, "doctor")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if after := sb.fingerprint(alice.WorkspaceID); after != before {
		t.Fatal("the refused send changed the store")
	}
	sb.ok(repo, send...)
	sb.ok(repo, "doctor")
	_ = bob
}

// TestStoreOnAReadOnlyDataHome makes the data home read-only: as another
// user by removing write permission, as root by remounting its file system
// read-only (root ignores permissions). A send, and an attach that would
// create a new store, are refused with exit 4 store_unwritable naming the
// directory and the fix; acc doctor reports it; nothing changed.
func TestStoreOnAReadOnlyDataHome(t *testing.T) {
	sb := newSandbox(t)
	root := os.Geteuid() == 0
	if root {
		smallFS(t, sb, "8m")
	}
	repo := sb.newRepo("repo")
	other := sb.newRepo("other")
	alice := sb.attach(repo, "alice", "cli")
	sb.attach(repo, "bob", "cli")
	sb.send(alice, "bob", "before the data home went read-only")
	dir := filepath.Dir(sb.storePath(alice.WorkspaceID))
	before := sb.fingerprint(alice.WorkspaceID)

	if root {
		if out, err := exec.Command("mount", "-o", "remount,ro", sb.data).CombinedOutput(); err != nil {
			t.Skipf("cannot remount the tmpfs read-only (%v): %s", err, out)
		}
		t.Cleanup(func() { exec.Command("mount", "-o", "remount,rw", sb.data).Run() })
	} else {
		chmodTree(t, sb.data, false)
		t.Cleanup(func() { chmodTree(t, sb.data, true) })
	}

	send := append([]string{"message", "--to", "bob", "--subject", "read-only", "--body", "b"}, alice.creds()...)
	storeFault(t, sb, protocol.ReasonStoreUnwritable, []string{dir, "writable"}, repo, send...)
	storeFault(t, sb, protocol.ReasonStoreUnwritable, []string{"writable"}, other, "attach", "--participant", "carol")
	storeFault(t, sb, protocol.ReasonStoreUnhealthy, []string{"store_unwritable", "writable by this user"}, repo, "doctor")
	sb.ok(repo, "status") // reading still works

	if root {
		if out, err := exec.Command("mount", "-o", "remount,rw", sb.data).CombinedOutput(); err != nil {
			t.Fatalf("remount read-write: %v: %s", err, out)
		}
	} else {
		chmodTree(t, sb.data, true)
	}
	if after := sb.fingerprint(alice.WorkspaceID); after != before {
		t.Fatal("a refused command changed the store")
	}
	sb.ok(repo, send...)
}

// chmodTree removes (or gives back) the owner's write permission on every
// directory and file under dir.
func chmodTree(t *testing.T, dir string, writable bool) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		mode := info.Mode().Perm() &^ 0o200
		if writable {
			mode |= 0o200
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDoctorOnASmallDataHome: a data home on a small file system that is
// far from full (2 MiB, most of it free) is not reported as full: acc
// doctor exits 0, healthy, with a warning line saying how much is free
// and that writes fail when it runs out; the JSON report carries the same
// warning and no problem. Sends still work, and doctor changes nothing.
func TestDoctorOnASmallDataHome(t *testing.T) {
	sb := newSandbox(t)
	smallFS(t, sb, "2m")
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	sb.attach(repo, "bob", "cli")
	sb.send(alice, "bob", "on a small disk")
	dir := filepath.Dir(sb.storePath(alice.WorkspaceID))
	before := sb.fingerprint(alice.WorkspaceID)

	res := sb.ok(repo, "doctor")
	if strings.Contains(res.stdout, "problem store_full") || strings.Contains(res.stdout, "is full") || !strings.HasPrefix(res.stdout, "store healthy") ||
		!strings.Contains(res.stdout, "warning: the file system holding "+dir+" has ") ||
		!strings.Contains(res.stdout, "writes fail with store_full when it runs out") {
		t.Errorf("doctor on a small, mostly free file system:\n%s", res)
	}
	var rep struct {
		Healthy bool `json:"healthy"`
		Store   struct {
			Healthy  bool              `json:"healthy"`
			Problems []json.RawMessage `json:"problems"`
			Warnings []string          `json:"warnings"`
		} `json:"store"`
	}
	sb.jsonOK(&rep, repo, "doctor")
	if !rep.Healthy || !rep.Store.Healthy || len(rep.Store.Problems) != 0 || len(rep.Store.Warnings) != 1 || !strings.Contains(rep.Store.Warnings[0], dir) {
		t.Errorf("doctor --json on a small disk: %+v", rep)
	}
	if sb.fingerprint(alice.WorkspaceID) != before {
		t.Error("doctor changed the store")
	}
	sb.send(alice, "bob", "still room")
}
