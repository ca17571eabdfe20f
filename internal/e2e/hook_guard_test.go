package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guardRoom is a repository with a second worktree, files a peer holds
// guarded claims on, and one hooked Claude Code session that writes.
type guardRoom struct {
	sb       *sandbox
	repo, wt string
	peer     session // CLI session holding the guarded claims, in repo
	wtPeer   session // CLI session in the worktree
	writer   session // the hooked session whose writes are checked
	files    map[string]string
}

// guardedFiles are claimed by the peer with --enforcement guarded.
var guardedFiles = []string{"f", "a", "b", "notes.txt", "build.log", "src/parser.mjs", "src/a.go"}

func newGuardRoom(t *testing.T) *guardRoom {
	t.Helper()
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	g := &guardRoom{sb: sb, repo: repo, files: map[string]string{}}
	sb.dir("repo", "src")
	sb.dir("repo", "sub")
	for _, f := range append(append([]string{}, guardedFiles...), "adv.txt", "g", "mine.txt", "wtonly.txt") {
		content := "original " + f + "\n"
		if err := os.WriteFile(filepath.Join(repo, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		g.files[f] = content
	}
	sb.git(repo, "add", "-A")
	sb.git(repo, "commit", "-q", "-m", "files")
	g.wt = filepath.Join(sb.base, "wt")
	sb.git(repo, "worktree", "add", "-q", g.wt, "-b", "side")

	g.peer = sb.attach(repo, "peer", "cli")
	for _, f := range guardedFiles {
		sb.ok(repo, append([]string{"claim", "--resource", "file:" + f, "--enforcement", "guarded"}, g.peer.creds()...)...)
	}
	sb.ok(repo, append([]string{"claim", "--resource", "file:adv.txt", "--enforcement", "advisory"}, g.peer.creds()...)...)
	g.wtPeer = sb.attach(g.wt, "wtpeer", "cli")
	sb.ok(g.wt, append([]string{"claim", "--resource", "file:wtonly.txt", "--enforcement", "guarded"}, g.wtPeer.creds()...)...)
	g.writer = sb.hookSession(clientByID(t, "claude"), "writer", repo, "ACC_PARTICIPANT=writer")
	return g
}

// check runs one pre-tool payload and asserts the decision; a denial must
// name holder and the file: resource.
func (g *guardRoom) check(t *testing.T, c hookClient, o hookOpts, payload []byte, deny bool, holder, label string) {
	t.Helper()
	r := g.sb.hook(o, payload, c.id, c.tool)
	reason, denied := c.denial(t, r)
	switch {
	case denied != deny:
		t.Errorf("%s %s: denied=%v, want %v\n%s", c.id, label, denied, deny, r)
	case denied && (!strings.Contains(reason, holder+" (session ") || !strings.Contains(reason, "file:")):
		t.Errorf("%s %s: the reason should name the holder %s and the resource: %q", c.id, label, holder, reason)
	}
}

// untouched asserts every file still holds what the test wrote, in both
// worktrees.
func (g *guardRoom) untouched(t *testing.T) {
	t.Helper()
	for f, want := range g.files {
		for _, root := range []string{g.repo, g.wt} {
			if got, err := os.ReadFile(filepath.Join(root, f)); err != nil || string(got) != want {
				t.Errorf("%s changed: %q (%v)", filepath.Join(root, f), got, err)
			}
		}
	}
}

// TestHookGuardShellVectors runs the shell vectors the guard's reader is
// held to (docs/hooks.md#how-the-guard-reads-a-shell-command, with the cd
// rule of docs/decisions.md#7-shell-writes) through Claude Code's Bash tool
// and the built acc-hook: every vector that writes a claimed file is
// denied, every read and every write elsewhere passes.
func TestHookGuardShellVectors(t *testing.T) {
	g := newGuardRoom(t)
	c := clientByID(t, "claude")
	for _, v := range []struct {
		cmd  string
		deny bool
	}{
		{`printf '%s\n' '// via shell' >> src/parser.mjs`, true},
		{`echo x > notes.txt`, true},
		{`node build.mjs 2> build.log`, true},
		{`cat f`, false},
		{`grep -n parse f`, false},
		{`node --test f`, false},
		{`sed 's/a/b/' f`, false},
		{`node b.mjs < f`, false},
		{`wc -l < f`, false},
		{`node - <<< 'x'`, false},
		{`npm test > /dev/null`, false},
		{`npm test 2>&1`, false},
		{`npm test > /dev/null 2>&1`, false},
		{`sed -i '' 's/a/b/' f`, true},
		{`sed -i.bak -e 's/a/b/' f`, true},
		{`perl -i -pe 's/a/b/' f`, true},
		{`tee f`, true},
		{`tee -a f`, true},
		{`touch f`, true},
		{`truncate -s 0 f`, true},
		{`dd if=/dev/zero of=f`, true},
		{`rm f`, true},
		{`rm -rf f`, true},
		{`cp /tmp/new f`, true},
		{`mv a b`, true},
		{`mv a elsewhere.txt`, true},
		{`mv g b`, true},
		{`ln -sf /tmp/o f`, true},
		{`git restore f`, true},
		{`git checkout -- f`, true},
		{`git log -1 -- f`, false},
		{`git diff f`, false},
		{`npm test && printf x > f`, true},
		{`cd src; rm parser.mjs`, true},
		{`cat in | tee f`, true},
		{`echo 'a > b'`, false},
		{`echo "w > n"`, false},
		{`git commit -m 'move a > b'`, false},
		{"cat > f <<'EOF'\nline with > inside\nrm x\nEOF", true},
		{"cat > g <<'EOF'\necho x > f\nrm f\nEOF", false},
		{``, false},
		{`   `, false},
		{`python3 -c "open('f','w')"`, true}, // inline code naming a held file
		{`eval "$CMD"`, false},
		{`((`, false},
		{`'unterminated`, false},
		{`rm f && touch f`, true},
		// Writes to unclaimed files, and reads of claimed ones, pass.
		{`echo x > g`, false},
		{`cp f g`, false},
		{`cat f a b > g`, false},
		{`echo x > src/other.go`, false},
	} {
		g.check(t, c, hookOpts{}, c.shellPayload(t, "writer", g.repo, v.cmd), v.deny, "peer", "`"+v.cmd+"`")
	}
	g.untouched(t)
}

// issueCommands are the usual ways a shell writes a file, each onto the
// claimed file f, and the reads and elsewhere-writes that must pass.
var issueCommands = []struct {
	cmd  string
	deny bool
}{
	{`echo x > f`, true},
	{`printf x >> f`, true},
	{`sed -i s/a/b/ f`, true},
	{`tee f < /dev/null`, true},
	{`cat README | tee -a f`, true},
	{`mv f g`, true},
	{`mv g f`, true},
	{`cp g f`, true},
	{`cd sub && echo x > ../f`, true},
	{`cd src && echo x > a.go`, true},
	{`cat f`, false},
	{`grep -n original f`, false},
	{`cp f g`, false},
	{`echo x > g`, false},
}

// TestHookGuardEveryClientShell: the issue's shell writes through each
// client's own shell tool payload, in each client's deny shape.
func TestHookGuardEveryClientShell(t *testing.T) {
	g := newGuardRoom(t)
	for _, c := range hookClients {
		for _, v := range issueCommands {
			g.check(t, c, hookOpts{}, c.shellPayload(t, "shell-"+c.id, g.repo, v.cmd), v.deny, "peer", "`"+v.cmd+"`")
		}
		g.check(t, c, hookOpts{}, c.writePayload(t, "shell-"+c.id, g.repo, "f"), true, "peer", "write tool on f")
		g.check(t, c, hookOpts{}, c.writePayload(t, "shell-"+c.id, g.repo, "g"), false, "peer", "write tool on g")
	}
	g.untouched(t)
}

// TestHookGuardCodexPatches: apply_patch bodies (add, update, delete, both
// sides of a move) and a shell command carrying an apply_patch heredoc or
// a bare patch envelope, through Codex's payloads: exit 2 with the reason
// on stderr when a claimed file is written.
func TestHookGuardCodexPatches(t *testing.T) {
	g := newGuardRoom(t)
	c := clientByID(t, "codex")
	patch := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	for _, v := range []struct {
		label, body string
		deny        bool
	}{
		{"add", patch("*** Add File: f\n+x\n"), true},
		{"update", patch("*** Update File: src/a.go\n@@\n-package a\n+package b\n"), true},
		{"delete", patch("*** Delete File: notes.txt\n"), true},
		{"move source", patch("*** Update File: f\n*** Move to: moved.txt\n@@\n-a\n+b\n"), true},
		{"move destination", patch("*** Update File: g\n*** Move to: f\n@@\n-a\n+b\n"), true},
		{"second file", patch("*** Add File: new.txt\n+x\n*** Update File: ./src//a.go\n@@\n-a\n+b\n"), true},
		{"hunk text naming f", patch("*** Update File: g\n@@\n-*** Update File: f\n+> f\n"), false},
		{"unclaimed", patch("*** Add File: new.txt\n+x\n*** Update File: g\n@@\n-a\n+b\n"), false},
	} {
		g.check(t, c, hookOpts{}, c.patchPayload(t, "codex-w", g.repo, v.body), v.deny, "peer", "apply_patch "+v.label)
	}
	for _, v := range []struct {
		label, cmd string
		deny       bool
	}{
		{"heredoc", "apply_patch <<'EOF'\n" + patch("*** Update File: src/a.go\n@@\n-a\n+b\n") + "EOF\n", true},
		{"heredoc after cd", "cd src && apply_patch <<'EOF'\n" + patch("*** Update File: a.go\n@@\n-a\n+b\n") + "EOF\n", true},
		{"bare envelope", patch("*** Delete File: f\n"), true},
		{"heredoc unclaimed", "apply_patch <<'EOF'\n" + patch("*** Add File: new.txt\n+x\n") + "EOF\n", false},
	} {
		g.check(t, c, hookOpts{}, c.shellPayload(t, "codex-w", g.repo, v.cmd), v.deny, "peer", "shell "+v.label)
	}
	g.untouched(t)
}

// TestHookGuardBypassClasses: the spellings that once slipped past a
// guard are denied — the workspace through a symlink, a relative target
// while acc-hook runs elsewhere, a target spelled from a subdirectory, an
// absolute path into a sibling worktree — while writes that really go
// elsewhere pass.
func TestHookGuardBypassClasses(t *testing.T) {
	g := newGuardRoom(t)
	sb := g.sb
	claude, codex := clientByID(t, "claude"), clientByID(t, "codex")
	link := filepath.Join(sb.base, "repolink")
	if err := os.Symlink(g.repo, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(g.repo, "src"), filepath.Join(g.repo, "srclink")); err != nil {
		t.Fatal(err)
	}
	// A decoy directory where the hook process runs, holding its own
	// src/a.go: relative targets must not be read against it.
	decoy := sb.dir("decoy", "src")
	os.WriteFile(filepath.Join(decoy, "a.go"), []byte("decoy\n"), 0o644)
	decoy = filepath.Dir(decoy)
	inDecoy := hookOpts{dir: decoy}
	root := hookOpts{dir: "/"}
	for _, v := range []struct {
		label   string
		c       hookClient
		o       hookOpts
		payload []byte
		deny    bool
	}{
		// The workspace reached through a symlink.
		{"symlinked checkout, shell", claude, hookOpts{}, claude.shellPayload(t, "writer", link, "printf x >> src/a.go"), true},
		{"symlinked checkout, Edit absolute", claude, hookOpts{}, claude.writePayload(t, "writer", link, filepath.Join(link, "src/a.go")), true},
		{"symlinked checkout, Edit relative", claude, hookOpts{}, claude.writePayload(t, "writer", link, "src/a.go"), true},
		{"symlinked checkout, unclaimed", claude, hookOpts{}, claude.shellPayload(t, "writer", link, "echo x > src/other.go"), false},
		{"symlinked directory inside", claude, hookOpts{}, claude.shellPayload(t, "writer", g.repo, "echo x > srclink/a.go"), true},
		{"Edit through a symlinked directory", claude, hookOpts{}, claude.writePayload(t, "writer", g.repo, filepath.Join(g.repo, "srclink", "a.go")), true},
		// Relative targets while acc-hook runs somewhere else.
		{"Edit relative, hook in /", claude, root, claude.writePayload(t, "writer", g.repo, "src/a.go"), true},
		{"Edit relative, hook in a decoy", claude, inDecoy, claude.writePayload(t, "writer", g.repo, "src/a.go"), true},
		{"shell relative, hook in a decoy", claude, inDecoy, claude.shellPayload(t, "writer", g.repo, "echo x > src/a.go"), true},
		{"apply_patch relative, hook in /", codex, root, codex.patchPayload(t, "codex-w", g.repo, "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** End Patch\n"), true},
		{"payload cwd outside, hook in the repo", claude, hookOpts{dir: g.repo}, claude.writePayload(t, "writer", decoy, "src/a.go"), false},
		// Targets spelled from a subdirectory.
		{"Edit from src", claude, hookOpts{}, claude.writePayload(t, "writer", filepath.Join(g.repo, "src"), "a.go"), true},
		{"shell from src", claude, hookOpts{}, claude.shellPayload(t, "writer", filepath.Join(g.repo, "src"), "echo x > ./a.go"), true},
		{"shell from sub via ..", claude, hookOpts{}, claude.shellPayload(t, "writer", filepath.Join(g.repo, "sub"), "echo x > ../src//a.go"), true},
		{"Edit from sub via ..", claude, hookOpts{}, claude.writePayload(t, "writer", filepath.Join(g.repo, "sub"), "../sub/../f"), true},
		{"apply_patch from src", codex, hookOpts{}, codex.patchPayload(t, "codex-w", filepath.Join(g.repo, "src"), "*** Begin Patch\n*** Update File: a.go\n@@\n-a\n+b\n*** End Patch\n"), true},
		{"from src, unclaimed a.go elsewhere", claude, hookOpts{}, claude.writePayload(t, "writer", filepath.Join(g.repo, "sub"), "a.go"), false},
		// Sibling worktrees are one room: a claim covers the file in each.
		{"in the worktree, Edit relative", claude, hookOpts{}, claude.writePayload(t, "writer", g.wt, "src/a.go"), true},
		{"in the worktree, absolute into the main checkout", claude, hookOpts{}, claude.writePayload(t, "writer", g.wt, filepath.Join(g.repo, "src/a.go")), true},
		{"in the main checkout, absolute into the worktree", claude, hookOpts{}, claude.writePayload(t, "writer", g.repo, filepath.Join(g.wt, "src/a.go")), true},
		{"in the main checkout, shell into the worktree", claude, hookOpts{}, claude.shellPayload(t, "writer", g.repo, "cd ../wt && echo x > f"), true},
		{"apply_patch in the worktree", codex, hookOpts{}, codex.patchPayload(t, "codex-w", g.wt, "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"), true},
		{"in the worktree, unclaimed", claude, hookOpts{}, claude.writePayload(t, "writer", g.wt, "g"), false},
	} {
		g.check(t, v.c, v.o, v.payload, v.deny, "peer", v.label)
	}
	// A claim taken in the worktree covers the same file in the main
	// checkout.
	g.check(t, claude, hookOpts{}, claude.shellPayload(t, "writer", g.repo, "echo x > wtonly.txt"), true, "wtpeer", "worktree claim, main checkout write")
	g.check(t, claude, hookOpts{}, claude.writePayload(t, "writer", g.repo, filepath.Join(g.wt, "wtonly.txt")), true, "wtpeer", "worktree claim, absolute write")
	g.untouched(t)
	if b, _ := os.ReadFile(filepath.Join(decoy, "src", "a.go")); string(b) != "decoy\n" {
		t.Fatalf("the decoy changed: %q", b)
	}
}

// TestHookGuardHolderAndAdvisory: the holder of a guarded claim is never
// denied by it (another session is); advisory claims never deny; a client
// session that never attached is still guarded against others' claims.
func TestHookGuardHolderAndAdvisory(t *testing.T) {
	g := newGuardRoom(t)
	sb := g.sb
	claude, kimi := clientByID(t, "claude"), clientByID(t, "kimi")
	g.writer.dir = g.repo
	sb.ok(g.repo, append([]string{"claim", "--resource", "file:mine.txt", "--enforcement", "guarded"}, g.writer.creds()...)...)
	sb.hookSession(kimi, "other", g.repo, "ACC_PARTICIPANT=other")
	for _, v := range []struct {
		label   string
		c       hookClient
		payload []byte
		deny    bool
		holder  string
	}{
		{"holder, shell", claude, claude.shellPayload(t, "writer", g.repo, "echo x > mine.txt"), false, ""},
		{"holder, Edit", claude, claude.writePayload(t, "writer", g.repo, "mine.txt"), false, ""},
		{"holder, from the worktree", claude, claude.writePayload(t, "writer", g.wt, "mine.txt"), false, ""},
		{"another session, shell", kimi, kimi.shellPayload(t, "other", g.repo, "echo x > mine.txt"), true, "writer"},
		{"another session, Write", kimi, kimi.writePayload(t, "other", g.repo, filepath.Join(g.repo, "mine.txt")), true, "writer"},
		{"never attached", claude, claude.shellPayload(t, "stranger", g.repo, "echo x > mine.txt"), true, "writer"},
		{"never attached, peer's claim", claude, claude.shellPayload(t, "stranger", g.repo, "echo x > f"), true, "peer"},
		{"advisory, writer", claude, claude.shellPayload(t, "writer", g.repo, "echo x > adv.txt"), false, ""},
		{"advisory, other", kimi, kimi.writePayload(t, "other", g.repo, "adv.txt"), false, ""},
		{"advisory, never attached", claude, claude.shellPayload(t, "stranger", g.repo, "rm adv.txt"), false, ""},
	} {
		g.check(t, v.c, hookOpts{}, v.payload, v.deny, v.holder, v.label)
	}
	// Holding a claim of its own does not let the writer into the peer's.
	g.check(t, claude, hookOpts{}, claude.shellPayload(t, "writer", g.repo, "echo x > f"), true, "peer", "writer onto peer's f")
	g.untouched(t)
}
