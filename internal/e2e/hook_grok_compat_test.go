package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// Grok runs the hooks of ~/.claude/settings.json by default, with its own
// payload, its own hook environment and reading the answer its own way
// (docs/adapters.md#grok;
// docs/hooks.md#grok-running-claude-codes-hooks). These tests call the built
// acc-hook as Grok would call acc's Claude Code hooks.

// grokEnv is the environment Grok's hook runner gives a hook process for
// event (snake_case) of client session sid in repo.
func grokEnv(event, sid, repo string) []string {
	return []string{
		"GROK_HOOK_EVENT=" + event,
		// A hook of ~/.claude/settings.json, named as Grok names it.
		"GROK_HOOK_NAME=global/settings:" + event + "[0].hooks[0]",
		"GROK_SESSION_ID=" + sid,
		"GROK_WORKSPACE_ROOT=" + repo,
		"CLAUDE_PROJECT_DIR=" + repo,
	}
}

var grokEventName = map[string]string{"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use", "Stop": "stop"}

// grokRoom is a repository with a file a peer holds under a guarded claim.
func grokRoom(t *testing.T) (*sandbox, string, session) {
	t.Helper()
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	if err := os.WriteFile(filepath.Join(sb.dir("repo", "src"), "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	peer := sb.attach(repo, "peer", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, peer.creds()...)...)
	return sb, repo, peer
}

// harnesses counts the open sessions of the room by harness.
func harnesses(sb *sandbox, repo string) map[string]int {
	out := map[string]int{}
	for _, p := range sb.roomStatus(repo).Participants {
		if p.State == protocol.SessionOpen {
			out[p.Harness]++
		}
	}
	return out
}

// TestHookClaudeUnderGrokActsAsGrok: Grok's payloads at `acc-hook claude`
// from Grok's hook environment attach one session with harness grok and no
// Claude Code session, answer in Grok's shapes (nothing before a turn, a
// {"decision":"deny"} on a guarded write), and leave the file alone.
func TestHookClaudeUnderGrokActsAsGrok(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	g, claude := clientByID(t, "grok"), clientByID(t, "claude")
	sid := "0198c2a4-grok-under-claude"
	// A Claude Code whose guard is proven is on PATH: a call read as
	// Claude Code's would attach a guarded session.
	path := "PATH=" + fakeClientBin(t, "claude", "2.1.332 (Claude Code)") + ":" + os.Getenv("PATH")
	grokEnv := func(event, sid, repo string) []string { return append(grokEnv(event, sid, repo), path) }

	// A pre-tool call before any session start attaches nothing.
	pre := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, g.shellPayload(t, sid, repo, "cat src/a.go"), "claude", "PreToolUse")
	if pre.code != 0 || pre.stdout != "" || pre.stderr != "" {
		t.Fatalf("a Grok read at acc-hook claude: want exit 0 and nothing printed:\n%s", pre)
	}
	for _, ev := range []struct {
		event   string
		payload []byte
	}{
		{"SessionStart", g.startPayload(t, sid, repo)},
		{"UserPromptSubmit", g.turnPayload(t, sid, repo)},
		{"PreToolUse", g.shellPayload(t, sid, repo, "cat src/a.go")},
	} {
		r := sb.hook(hookOpts{env: grokEnv(grokEventName[ev.event], sid, repo)}, ev.payload, "claude", ev.event)
		// Grok gives no model SessionStart or UserPromptSubmit output and
		// reads an empty PreToolUse answer as proceed: Grok's Allow, not
		// Claude Code's {}.
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("%s at acc-hook claude under Grok: want exit 0 and nothing printed:\n%s", ev.event, r)
		}
		if s := sb.boundSession("claude", sid, repo); s.SessionID != "" {
			t.Fatalf("after %s a Claude Code session %s is bound", ev.event, s.SessionID)
		}
	}
	me := sb.boundSession("grok", sid, repo)
	if me.SessionID == "" {
		t.Fatal("no Grok session is bound")
	}
	if h := harnesses(sb, repo); h["grok"] != 1 || h["claude"] != 0 || h["cli"] != 1 {
		t.Fatalf("open sessions by harness: %v, want one grok beside the cli peer", h)
	}
	row := sb.roomStatus(repo).session(me.SessionID)
	if row == nil || row.ParticipantID != defaultParticipant("grok", sid) || row.Enforcement != protocol.EnforcementAdvisory {
		t.Fatalf("the Grok session is %+v, want participant %s, advisory", row, defaultParticipant("grok", sid))
	}

	// Writes into the peer's guarded claim are denied in the shape Grok
	// reads, naming the holder; the file is unchanged.
	for name, payload := range map[string][]byte{
		"shell":          g.shellPayload(t, sid, repo, "echo x > src/a.go"),
		"write":          g.writePayload(t, sid, repo, "src/a.go"),
		"search_replace": g.toolPayload(t, sid, repo, "search_replace", map[string]any{"file_path": "src/a.go", "old_string": "a", "new_string": "b"}),
	} {
		r := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, payload, "claude", "PreToolUse")
		reason, denied := g.denial(t, r)
		if !denied || !strings.Contains(reason, "peer") || !strings.Contains(reason, "file:src/a.go") {
			t.Fatalf("%s into the guarded claim at acc-hook claude under Grok: denied=%v reason %q\n%s", name, denied, reason, r)
		}
		if strings.Contains(r.stdout, "permissionDecision") {
			t.Fatalf("%s: Claude Code's denial shape, which Grok reads as allow:\n%s", name, r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "src", "a.go")); string(b) != "package a\n" {
		t.Fatalf("src/a.go changed: %q", b)
	}

	// The same Grok payload without Grok's hook environment is read as
	// Claude Code's, as before: refused (no session_id), Claude's proceed
	// answer, nothing attached.
	other := "grok-payload-no-env"
	for _, ev := range []string{"SessionStart", "PreToolUse"} {
		payload := g.startPayload(t, other, repo)
		if ev == "PreToolUse" {
			payload = g.writePayload(t, other, repo, "src/a.go")
		}
		r := sb.hook(hookOpts{}, payload, "claude", ev)
		if r.code != 0 || r.stdout != claude.allow || !strings.Contains(r.stderr, "invalid_input") {
			t.Fatalf("a Grok payload at acc-hook claude outside Grok (%s): want Claude's proceed answer and the refusal noted:\n%s", ev, r)
		}
	}
	if s := sb.boundSession("grok", other, repo); s.SessionID != "" {
		t.Fatal("a Grok payload outside Grok attached a Grok session")
	}

	// A Claude Code started from Grok's shell inherits GROK_SESSION_ID but
	// runs no Grok hook: still Claude Code.
	cl := "claude-from-grok-shell"
	r := sb.hook(hookOpts{env: []string{"GROK_SESSION_ID=" + sid, path}}, claude.startPayload(t, cl, repo), "claude", "SessionStart")
	if ctxt := claude.injected(t, r, "SessionStart"); !strings.HasPrefix(ctxt, "acc: --session ") {
		t.Fatalf("Claude Code with GROK_SESSION_ID only: want its owner line:\n%s", r)
	}
	cs := sb.boundSession("claude", cl, repo)
	if cs.SessionID == "" {
		t.Fatal("Claude Code with GROK_SESSION_ID only was not attached as Claude Code")
	}
	// The control for the advisory check above: the same PATH makes a
	// real Claude Code session guarded.
	if row := sb.roomStatus(repo).session(cs.SessionID); row == nil || row.Enforcement != protocol.EnforcementGuarded {
		t.Fatalf("Claude Code 2.1.332 attached as %+v, want guarded", row)
	}
	if h := harnesses(sb, repo); h["grok"] != 1 || h["claude"] != 1 {
		t.Fatalf("open sessions by harness: %v", h)
	}
}

// TestHookGrokBothInstalledAttachesOnce: with acc's Claude Code hooks and
// its Grok hook file both installed (`acc install --adapter claude
// --adapter grok`), Grok runs both for each event, its own first; the
// Claude Code one does nothing (exit 0, nothing printed, the store
// unchanged) and the session is attached once, as grok.
func TestHookGrokBothInstalledAttachesOnce(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	g := clientByID(t, "grok")
	if err := os.MkdirAll(filepath.Join(sb.home, ".grok"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb.ok(repo, "install", "--adapter", "claude", "--adapter", "grok")
	for _, f := range []string{".grok/hooks/acc.json", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(sb.home, f)); err != nil {
			t.Fatalf("acc install wrote no %s: %v", f, err)
		}
	}
	sid := "0198c2a4-grok-both"
	ws := sb.roomStatus(repo).WorkspaceID
	store := sb.openStore(ws)

	// The Claude Code entry alone (as if Grok ran it first) does nothing.
	r := sb.hook(hookOpts{env: grokEnv("session_start", sid, repo)}, g.startPayload(t, sid, repo), "claude", "SessionStart")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("the Claude Code SessionStart under Grok with acc's Grok hook installed: want nothing:\n%s", r)
	}
	if s := sb.boundSession("grok", sid, repo); s.SessionID != "" {
		t.Fatal("the Claude Code entry attached a session although acc's Grok hook runs this event")
	}

	for _, ev := range []struct {
		event   string
		payload []byte
	}{
		{"SessionStart", g.startPayload(t, sid, repo)},
		{"UserPromptSubmit", g.turnPayload(t, sid, repo)},
		{"PreToolUse", g.shellPayload(t, sid, repo, "cat src/a.go")},
	} {
		env := grokEnv(grokEventName[ev.event], sid, repo)
		own := sb.hook(hookOpts{env: env}, ev.payload, "grok", ev.event)
		if own.code != 0 || own.stdout != "" {
			t.Fatalf("acc-hook grok %s: want exit 0 and nothing printed:\n%s", ev.event, own)
		}
		events := len(readSnapshot(t, store).events)
		compat := sb.hook(hookOpts{env: env}, ev.payload, "claude", ev.event)
		if compat.code != 0 || compat.stdout != "" || compat.stderr != "" {
			t.Fatalf("acc-hook claude %s after acc-hook grok: want nothing:\n%s", ev.event, compat)
		}
		if n := len(readSnapshot(t, store).events); n != events {
			t.Fatalf("acc-hook claude %s after acc-hook grok recorded %d event(s)", ev.event, n-events)
		}
	}
	if h := harnesses(sb, repo); h["grok"] != 1 || h["claude"] != 0 {
		t.Fatalf("open sessions by harness: %v, want one grok", h)
	}
	// Grok's own entry denies the guarded write; Grok then ends the chain.
	deny := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, g.writePayload(t, sid, repo, "src/a.go"), "grok", "PreToolUse")
	if reason, denied := g.denial(t, deny); !denied || !strings.Contains(reason, "file:src/a.go") {
		t.Fatalf("acc-hook grok PreToolUse on the guarded file: denied=%v %q", denied, reason)
	}
}

// TestHookGrokStaleHookFileStillGuards: an acc Grok hook file written by an
// older acc registers PreToolUse with a matcher that leaves out
// hashline_edit, while acc's Claude Code matcher fires on it (Grok matches
// Claude Code's Write and Edit to it). The Claude Code entry must not defer
// to an entry that does not run for this tool: the write into the guarded
// claim is denied in Grok's shape and the file is unchanged.
func TestHookGrokStaleHookFileStillGuards(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	g := clientByID(t, "grok")
	if err := os.MkdirAll(filepath.Join(sb.home, ".grok"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb.ok(repo, "install", "--adapter", "grok")
	file := filepath.Join(sb.home, ".grok", "hooks", "acc.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// The exact-list matcher acc wrote before it knew hashline_edit.
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		doc.Hooks[ev][0]["matcher"] = "run_terminal_command|search_replace|write"
	}
	stale, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(file, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	sid := "0198c2a4-grok-stale"
	env := grokEnv("session_start", sid, repo)
	if r := sb.hook(hookOpts{env: env}, g.startPayload(t, sid, repo), "grok", "SessionStart"); r.code != 0 {
		t.Fatalf("acc-hook grok SessionStart:\n%s", r)
	}
	edit := g.toolPayload(t, sid, repo, "hashline_edit", map[string]any{"file_path": "src/a.go"})
	r := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, edit, "claude", "PreToolUse")
	if reason, denied := g.denial(t, r); !denied || !strings.Contains(reason, "file:src/a.go") {
		t.Fatalf("hashline_edit into the guarded claim at acc-hook claude, acc's Grok file not matching it: denied=%v %q\n%s", denied, reason, r)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "src", "a.go")); string(b) != "package a\n" {
		t.Fatalf("src/a.go changed: %q", b)
	}
	if h := harnesses(sb, repo); h["grok"] != 1 || h["claude"] != 0 {
		t.Fatalf("open sessions by harness: %v, want one grok", h)
	}
}

// TestHookClaudeUnderLeakedGrokEnv: a Claude Code started from inside one
// of Grok's hooks (a hook that asks another agent to review) inherits
// GROK_HOOK_EVENT and GROK_HOOK_NAME. Its own hooks get Claude Code's
// payload, which names neither Grok's event nor Grok's session: it is
// still Claude Code, attached as claude, and its guarded write is denied
// in Claude Code's shape.
func TestHookClaudeUnderLeakedGrokEnv(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	claude := clientByID(t, "claude")
	path := "PATH=" + fakeClientBin(t, "claude", "2.1.332 (Claude Code)") + ":" + os.Getenv("PATH")
	leaked := append(grokEnv("stop", "grok-parent-session", repo), path)
	sid := "claude-under-grok-hook"
	r := sb.hook(hookOpts{env: leaked}, claude.startPayload(t, sid, repo), "claude", "SessionStart")
	if ctxt := claude.injected(t, r, "SessionStart"); !strings.HasPrefix(ctxt, "acc: --session ") {
		t.Fatalf("Claude Code with Grok's hook variables inherited: want its owner line:\n%s", r)
	}
	if s := sb.boundSession("claude", sid, repo); s.SessionID == "" {
		t.Fatal("Claude Code with Grok's hook variables inherited was not attached as Claude Code")
	}
	leaked = append(grokEnv("pre_tool_use", "grok-parent-session", repo), path)
	w := sb.hook(hookOpts{env: leaked}, claude.writePayload(t, sid, repo, "src/a.go"), "claude", "PreToolUse")
	if reason, denied := claude.denial(t, w); !denied || !strings.Contains(reason, "file:src/a.go") {
		t.Fatalf("Claude Code's write into the guarded claim with Grok's variables inherited: denied=%v %q\n%s", denied, reason, w)
	}
	if h := harnesses(sb, repo); h["claude"] != 1 || h["grok"] != 0 {
		t.Fatalf("open sessions by harness: %v, want one claude", h)
	}
}

// TestHookGrokTruncatedWriteInput: Grok replaces a tool input over 128 KiB
// with a string (its serialized start plus " [truncated]") and sets
// toolInputTruncated, yet runs the tool with the whole input. acc cannot
// read which file such a write goes to, so in a room where a peer holds a
// guarded claim it is denied as an unknown write, the reason saying so.
func TestHookGrokTruncatedWriteInput(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	g := clientByID(t, "grok")
	sid := "0198c2a4-grok-truncated"
	if r := sb.hook(hookOpts{env: grokEnv("session_start", sid, repo)}, g.startPayload(t, sid, repo), "grok", "SessionStart"); r.code != 0 {
		t.Fatalf("acc-hook grok SessionStart:\n%s", r)
	}
	var p map[string]any
	if err := json.Unmarshal(g.writePayload(t, sid, repo, "src/a.go"), &p); err != nil {
		t.Fatal(err)
	}
	p["toolInput"] = `{"content":"` + strings.Repeat("x", 4096) + ` [truncated]`
	p["toolInputTruncated"] = true
	payload, _ := json.Marshal(p)
	r := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, payload, "grok", "PreToolUse")
	if reason, denied := g.denial(t, r); !denied || !strings.Contains(reason, "file:src/a.go") || !strings.Contains(reason, "cannot read which file write writes") {
		t.Fatalf("a write whose input Grok truncated, in a room with a guarded claim: denied=%v %q\n%s", denied, reason, r)
	}
}

// TestHookGrokTruncatedShellInput: Grok replaces a tool input over 128 KiB
// with a cut-short string and still runs the whole command, so a shell
// call whose command acc cannot read is an unknown write — denied beside a
// guarded claim, allowed where none is live, and an empty command string
// stays an ordinary (empty) command.
func TestHookGrokTruncatedShellInput(t *testing.T) {
	sb, repo, _ := grokRoom(t)
	g := clientByID(t, "grok")
	sid := "0198c2a4-grok-truncated-shell"
	if r := sb.hook(hookOpts{env: grokEnv("session_start", sid, repo)}, g.startPayload(t, sid, repo), "grok", "SessionStart"); r.code != 0 {
		t.Fatalf("acc-hook grok SessionStart:\n%s", r)
	}
	shell := func(input any) []byte {
		var p map[string]any
		if err := json.Unmarshal(g.shellPayload(t, sid, repo, "ls"), &p); err != nil {
			t.Fatal(err)
		}
		p["toolInput"] = input
		payload, _ := json.Marshal(p)
		return payload
	}
	for _, v := range []struct {
		label string
		input any
	}{
		{"cut-short string", `{"command":"cat big.txt > src/a.go; ` + strings.Repeat("x", 4096) + ` [truncated]`},
		{"command of another type", map[string]any{"command": 42}},
		{"list with a non-string", map[string]any{"command": []any{"sh", 7}}},
	} {
		r := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, shell(v.input), "grok", "PreToolUse")
		reason, denied := g.denial(t, r)
		if !denied || !strings.Contains(reason, "file:src/a.go") || !strings.Contains(reason, "cannot read the command run_terminal_command runs") {
			t.Errorf("%s: a shell call acc cannot read, in a room with a guarded claim: denied=%v %q\n%s", v.label, denied, reason, r)
		}
	}
	r := sb.hook(hookOpts{env: grokEnv("pre_tool_use", sid, repo)}, shell(map[string]any{"command": ""}), "grok", "PreToolUse")
	if _, denied := g.denial(t, r); denied || r.code != 0 {
		t.Errorf("an empty command string was refused:\n%s", r)
	}
}
