package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// twoRooms is two repositories, A and B, each a room. In B a CLI session
// ("holder") holds a guarded claim on src/a.go and a hooked Claude Code
// session ("bowner") one on src/own.go; in A a CLI session ("apeer") holds
// one on src/held.go, and the hooked session "writer" works in A.
type twoRooms struct {
	sb         *sandbox
	a, b       string
	holder     session
	aPeer      session
	bOwner     session
	bID, aID   string
	nested     string            // a repository inside A's work tree
	files      map[string]string // absolute path → content
	workspaces []string          // the data home's rooms after set-up
}

func newTwoRooms(t *testing.T) *twoRooms {
	t.Helper()
	sb := newSandbox(t)
	tr := &twoRooms{sb: sb, a: sb.newRepo("A"), b: sb.newRepo("B"), files: map[string]string{}}
	for _, f := range []string{"B/src/a.go", "B/src/free.go", "B/src/own.go", "A/src/held.go", "A/src/mine.go", "C/f"} {
		p := filepath.Join(sb.base, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := "original " + f + "\n"
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		tr.files[p] = content
	}
	// A link from A into B's src: writing through it writes B's files.
	if err := os.Symlink(filepath.Join(tr.b, "src"), filepath.Join(tr.a, "linkB")); err != nil {
		t.Fatal(err)
	}
	sb.dir("tmp")
	// A repository of its own inside A's work tree (not a submodule): its
	// files are in its room, not A's.
	tr.nested = filepath.Join(tr.a, "vendor", "N")
	sb.dir("A", "vendor", "N")
	sb.git(tr.nested, "init", "-q", "-b", "main")
	nested := sb.attach(tr.nested, "nholder", "cli")
	sb.ok(tr.nested, append([]string{"claim", "--resource", "file:x.go", "--enforcement", "guarded"}, nested.creds()...)...)
	claude := clientByID(t, "claude")
	tr.holder = sb.attach(tr.b, "holder", "cli")
	sb.ok(tr.b, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, tr.holder.creds()...)...)
	tr.bOwner = sb.hookSession(claude, "bowner", tr.b, "ACC_PARTICIPANT=bowner")
	sb.ok(tr.b, append([]string{"claim", "--resource", "file:src/own.go", "--enforcement", "guarded"}, tr.bOwner.creds()...)...)
	tr.aPeer = sb.attach(tr.a, "apeer", "cli")
	sb.ok(tr.a, append([]string{"claim", "--resource", "file:src/held.go", "--enforcement", "guarded"}, tr.aPeer.creds()...)...)
	for _, c := range hookClients {
		sb.hookSession(c, "writer", tr.a, "ACC_PARTICIPANT=writer-"+c.id)
	}
	tr.aID = sb.roomStatus(tr.a).WorkspaceID
	tr.bID = sb.roomStatus(tr.b).WorkspaceID
	tr.workspaces = tr.rooms(t)
	return tr
}

// rooms lists the workspace directories of the data home.
func (tr *twoRooms) rooms(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(workspace.AccDir(tr.sb.data), "workspaces"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// untouched asserts every file holds what set-up wrote and no room was
// added to the data home.
func (tr *twoRooms) untouched(t *testing.T) {
	t.Helper()
	for p, want := range tr.files {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s changed: %q (%v)", p, got, err)
		}
	}
	if got := tr.rooms(t); !slices.Equal(got, tr.workspaces) {
		t.Errorf("a pre-tool hook changed the data home's rooms: %v, was %v", got, tr.workspaces)
	}
}

// roomCase is one pre-tool call and the answer it must get.
type roomCase struct {
	label string
	shell string // a shell command, or
	write string // the path the file tool writes
	deny  bool
	// names: a denial's reason must contain each (the holder, the other
	// workspace); other: whether it says the write lands in another
	// workspace.
	names []string
	other bool
}

func (tr *twoRooms) run(t *testing.T, c hookClient, sid, cwd string, cases []roomCase) {
	t.Helper()
	for _, v := range cases {
		var payload []byte
		if v.shell != "" {
			payload = c.shellPayload(t, sid, cwd, v.shell)
		} else {
			payload = c.writePayload(t, sid, cwd, v.write)
		}
		r := tr.sb.hook(hookOpts{}, payload, c.id, c.tool)
		reason, denied := c.denial(t, r)
		if denied != v.deny {
			t.Errorf("%s from %s, %s: denied=%v, want %v\n%s", c.id, cwd, v.label, denied, v.deny, r)
			continue
		}
		if !denied {
			continue
		}
		for _, n := range v.names {
			if !strings.Contains(reason, n) {
				t.Errorf("%s from %s, %s: the reason should name %q: %q", c.id, cwd, v.label, n, reason)
			}
		}
		if got := strings.Contains(reason, "lands in another workspace"); got != v.other {
			t.Errorf("%s from %s, %s: says another workspace=%v, want %v: %q", c.id, cwd, v.label, got, v.other, reason)
		}
		if strings.Contains(reason, "generation_") {
			t.Errorf("%s from %s, %s: a deny reason carries a generation: %q", c.id, cwd, v.label, reason)
		}
	}
}

// intoB are the writes into B every directory outside B must have judged
// in B's room: denied naming B and the holder; an unclaimed file and a
// read allowed.
func (tr *twoRooms) intoB() []roomCase {
	holder := []string{"holder (session " + tr.holder.SessionID, "file:src/a.go", "B at " + tr.b}
	a, free := filepath.Join(tr.b, "src/a.go"), filepath.Join(tr.b, "src/free.go")
	return []roomCase{
		{label: "file tool, absolute path", write: a, deny: true, names: holder, other: true},
		{label: "shell redirection, absolute path", shell: "echo x > " + a, deny: true, names: holder, other: true},
		{label: "cd into B, then rm", shell: "cd " + tr.b + " && rm src/a.go", deny: true, names: holder, other: true},
		// B's src holds two guarded claims (holder's and bowner's): the
		// denial may name either, in the store's order.
		{label: "rm -r of B's src", shell: "rm -rf " + filepath.Join(tr.b, "src"), deny: true, names: []string{"B at " + tr.b, "(session "}, other: true},
		{label: "git pull in B (what it changes is unknown)", shell: "git -C " + tr.b + " pull", deny: true, names: []string{"B at " + tr.b}, other: true},
		{label: "git stash in B", shell: "cd " + tr.b + " && git stash", deny: false},
		{label: "file tool, unclaimed file in B", write: free},
		{label: "shell, unclaimed file in B", shell: "echo x > " + free},
		{label: "inline code naming the claimed file", shell: `python3 -c "open('` + a + `','w')"`, deny: true, names: holder, other: true},
		{label: "xargs fed the claimed file's path", shell: "echo " + a + " | xargs rm", deny: true, names: holder, other: true},
		{label: "inline code naming an unclaimed file in B", shell: `python3 -c "open('` + free + `','w')"`},
		{label: "shell, read of the claimed file", shell: "cat " + a + " | wc -l"},
		{label: "a repository with no room yet", shell: "echo x > " + filepath.Join(tr.sb.base, "C/f")},
		{label: "acc's own data home", shell: "echo x > " + filepath.Join(workspace.AccDir(tr.sb.data), "note")},
	}
}

// TestHookJudgesTargetsInTheirRooms: a write is checked in the room that
// holds its target, whatever the client's directory — another repository's
// room, a plain directory with no store, or a directory that is no room at
// all (it holds acc's data, as a home directory does) — through the built
// acc-hook and every client's shell and file tool.
func TestHookJudgesTargetsInTheirRooms(t *testing.T) {
	tr := newTwoRooms(t)
	sb := tr.sb
	for _, c := range hookClients {
		t.Run(c.id, func(t *testing.T) {
			// From A: B's claims judged in B; A's own room as before.
			tr.run(t, c, "writer", tr.a, append(tr.intoB(), []roomCase{
				{label: "relative path climbing into B", shell: "echo x > ../B/src/a.go", deny: true, names: []string{"B at " + tr.b}, other: true},
				{label: "a symlink in A leading into B", shell: "echo x > linkB/a.go", deny: true, names: []string{"B at " + tr.b}, other: true},
				{label: "A's own guarded file", write: "src/held.go", deny: true, names: []string{"apeer (session " + tr.aPeer.SessionID, "file:src/held.go"}},
				{label: "A's own guarded file by shell", shell: "echo x > src/held.go", deny: true, names: []string{"apeer (session "}},
				{label: "A's unclaimed file", write: "src/mine.go"},
				{label: "a repository nested in A", shell: "echo x > vendor/N/x.go", deny: true, names: []string{"nholder (session ", "file:x.go", "N at " + tr.nested}, other: true},
				{label: "a repository nested in A, by its file tool", write: "vendor/N/x.go", deny: true, names: []string{"N at " + tr.nested}, other: true},
				{label: "a repository nested in A, unclaimed file", write: "vendor/N/y.go"},
				{label: "one command into A and B, B's file claimed", shell: "touch src/mine.go " + filepath.Join(tr.b, "src/a.go"), deny: true, names: []string{"B at " + tr.b}, other: true},
			}...))
			// From a plain directory (a room without a store), an unbound
			// client session.
			tr.run(t, c, "stranger", sb.dir("tmp"), tr.intoB())
			// From the home directory and from a directory holding acc's
			// data: the latter is no room at all, and the hook no longer
			// fails open there.
			tr.run(t, c, "stranger", sb.home, tr.intoB())
			tr.run(t, c, "stranger", sb.base, tr.intoB())
		})
	}
	// In B, the session bound to the writing client is the writer: its own
	// claim does not block it, from whatever directory it writes.
	claude := clientByID(t, "claude")
	own := filepath.Join(tr.b, "src/own.go")
	for _, cwd := range []string{tr.a, sb.base} {
		tr.run(t, claude, "bowner", cwd, []roomCase{
			{label: "its own claim in B", write: own},
			{label: "its own claim in B by shell", shell: "echo x > " + own},
			{label: "the holder's claim in B", write: filepath.Join(tr.b, "src/a.go"), deny: true, names: []string{"holder (session "}, other: true},
		})
	}
	// Another client's session of the same id is not bowner's session.
	tr.run(t, clientByID(t, "gemini"), "bowner", tr.a, []roomCase{
		{label: "bowner's claim, another client", write: own, deny: true, names: []string{"bowner (session " + tr.bOwner.SessionID}, other: true},
	})
	tr.untouched(t)
}

// TestHookRoomsBound: one call is checked in at most core.MaxGuardRooms
// rooms; a call writing into more is denied, saying why and what to do.
func TestHookRoomsBound(t *testing.T) {
	sb := newSandbox(t)
	var targets []string
	for i := range core.MaxGuardRooms + 1 {
		repo := sb.newRepo(fmt.Sprintf("R%d", i))
		sb.attach(repo, "p", "cli")
		targets = append(targets, filepath.Join(repo, "f"))
	}
	c := clientByID(t, "claude")
	// From a directory in no room: every one of these rooms counts.
	r := sb.hook(hookOpts{}, c.shellPayload(t, "w", sb.base, "touch "+strings.Join(targets[:core.MaxGuardRooms], " ")), c.id, c.tool)
	if _, denied := c.denial(t, r); denied {
		t.Errorf("a call into %d rooms was denied:\n%s", core.MaxGuardRooms, r)
	}
	r = sb.hook(hookOpts{}, c.shellPayload(t, "w", sb.base, "touch "+strings.Join(targets, " ")), c.id, c.tool)
	reason, denied := c.denial(t, r)
	want := fmt.Sprintf("it writes into more than %d rooms and acc checks at most that many per call", core.MaxGuardRooms)
	if !denied || !strings.Contains(reason, want) || !strings.Contains(reason, "split it into smaller commands") {
		t.Errorf("a call into %d rooms: want a denial saying %q and what to do:\n%s", core.MaxGuardRooms+1, want, r)
	}
	for _, p := range targets {
		if fileExists(p) {
			t.Errorf("%s was created", p)
		}
	}
}

// TestHookFailOpenOnAnotherRoomsStore: when the store of the room a target
// lies in cannot be read, the pre-tool hook fails open as it does for the
// room of its own directory (one line on stderr naming the reason), and
// the file is left as it was.
func TestHookFailOpenOnAnotherRoomsStore(t *testing.T) {
	tr := newTwoRooms(t)
	sb := tr.sb
	path := sb.storePath(tr.bID)
	garbage := bytes.Repeat([]byte("this is not an SQLite database\n"), 256)
	for _, p := range []string{path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range hookClients {
		for _, cwd := range []string{tr.a, sb.base} {
			r := sb.hook(hookOpts{}, c.shellPayload(t, "writer", cwd, "echo x > "+filepath.Join(tr.b, "src/a.go")), c.id, c.tool)
			proceeds(t, r, c.allow, c.id+" from "+cwd)
			if !strings.Contains(r.stderr, protocol.ReasonStoreCorrupt) {
				t.Errorf("%s from %s: the diagnostic should name %s: %q", c.id, cwd, protocol.ReasonStoreCorrupt, r.stderr)
			}
		}
		// A's own claims are still judged before B is looked at.
		r := sb.hook(hookOpts{}, c.shellPayload(t, "writer", tr.a, "echo x > src/held.go"), c.id, c.tool)
		if _, denied := c.denial(t, r); !denied {
			t.Errorf("%s: a write into A's guarded file was not denied:\n%s", c.id, r)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, garbage) {
		t.Fatalf("the unreadable store was changed (%v)", err)
	}
	tr.untouched(t)
}
