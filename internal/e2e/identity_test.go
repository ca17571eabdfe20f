package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// refusal checks that res is acc's --json refusal with exit code and
// reason, and returns its message.
func (sb *sandbox) refusal(res result, code int, reason string) string {
	sb.t.Helper()
	if res.code != code {
		sb.t.Fatalf("expected exit %d (%s), got:\n%s", code, reason, res)
	}
	env := sb.parseEnvelope(res)
	if env.OK || env.Error == nil || env.Error.Code != code || env.Error.Details["reasonCode"] != reason {
		sb.t.Fatalf("expected a %s refusal envelope, got:\n%s", reason, res)
	}
	return env.Error.Message
}

// TestSessionAloneWithBindingProof: through the built binaries, a session
// id taken from a deny reason does not act as the holder. `acc release
// --session <holder>` and `acc message --session <holder>` without the
// generation are exit 2 generation_required and change nothing, also with
// the peer's own client session id in the environment; with the holder's
// client session id in the environment (CLAUDE_CODE_SESSION_ID, as Claude
// Code exports it to the commands it runs), matching the binding its
// SessionStart hook made, --session alone is the holder's own and acts.
func TestSessionAloneWithBindingProof(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	holder := sb.hookSession(claude, "client-holder", repo)
	sb.hookSession(claude, "client-writer", repo)
	bob := sb.attach(repo, "bob", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, holder.creds()...)...)

	// The deny reason the writer's guard gives names the holder's session.
	deny, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool))
	if !denied || !strings.Contains(deny, holder.SessionID) || strings.Contains(deny, holder.Generation) {
		t.Fatalf("expected a deny naming session %s and never its generation, got %q", holder.SessionID, deny)
	}

	fp := sb.fingerprint(bob.WorkspaceID)
	for _, env := range [][]string{nil, {"CLAUDE_CODE_SESSION_ID=client-writer"}} {
		msg := sb.refusal(sb.runEnv(repo, env, "release", "--json", "--session", holder.SessionID, "--resource", "file:src/a.go"), 2, protocol.ReasonGenerationRequired)
		want := "--session " + holder.SessionID + " needs its --generation: a session id is public"
		if !strings.Contains(msg, want) || !strings.Contains(msg, "acc attach") || strings.Contains(msg, holder.Generation) {
			t.Fatalf("release refusal: want %q and where the pair is, never the generation; got %q", want, msg)
		}
		msg = sb.refusal(sb.runEnv(repo, env, "message", "--json", "--session", holder.SessionID, "--to", "bob", "--subject", "in its name", "--body", "b"), 2, protocol.ReasonGenerationRequired)
		if !strings.Contains(msg, want) {
			t.Fatalf("message refusal: want %q, got %q", want, msg)
		}
		// The text form says the same on one stderr line.
		res := sb.runEnv(repo, env, "release", "--session", holder.SessionID, "--resource", "file:src/a.go")
		if res.code != 2 || res.stdout != "" || strings.Count(res.stderr, "\n") != 1 || !strings.HasPrefix(res.stderr, "acc: "+want) {
			t.Fatalf("text refusal: want exit 2 and one line starting %q, got:\n%s", "acc: "+want, res)
		}
	}
	if got := sb.fingerprint(bob.WorkspaceID); got != fp {
		t.Fatal("a refused bare --session changed the store")
	}
	// The guard still holds: the claim is there.
	if _, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool)); !denied {
		t.Fatal("the holder's guarded claim must still deny the writer")
	}

	// The holder's own client: its session id in the environment proves it.
	proof := []string{"CLAUDE_CODE_SESSION_ID=client-holder"}
	var sent struct {
		Message protocol.Message `json:"message"`
	}
	res := sb.runEnv(repo, proof, "message", "--json", "--session", holder.SessionID, "--to", "bob", "--subject", "mine", "--body", "b")
	if res.code != 0 {
		t.Fatalf("--session with the binding's proof must act, got:\n%s", res)
	}
	if err := json.Unmarshal(sb.parseEnvelope(res).Data, &sent); err != nil || sent.Message.FromSessionID != holder.SessionID {
		t.Fatalf("the message must be the holder's: %+v %v", sent.Message, err)
	}
	var rel struct {
		Forced bool `json:"forced"`
	}
	res = sb.runEnv(repo, proof, "release", "--json", "--session", holder.SessionID, "--resource", "file:src/a.go")
	if res.code != 0 {
		t.Fatalf("the holder's own release must act, got:\n%s", res)
	}
	if err := json.Unmarshal(sb.parseEnvelope(res).Data, &rel); err != nil || rel.Forced {
		t.Fatalf("the holder's release is its own, not forced: %+v %v", rel, err)
	}
}

// TestForcedReleaseNeedsAPerson: --authority human through the built acc
// is refused from pipes (exit 2 authority_needs_a_person, the message
// telling an agent to ask its human, the store unchanged) and accepted on
// a terminal, where the release is recorded as claim.force_released with
// authority human. --authority policy on the live claim is refused from
// the terminal too: policy covers only a claim whose lease ran out.
func TestForcedReleaseNeedsAPerson(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	bob := sb.attach(repo, "bob", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, alice.creds()...)...)
	fp := sb.fingerprint(alice.WorkspaceID)

	args := append([]string{"release", "--json", "--resource", "file:src/a.go", "--authority", "human", "--reason", "the user said so"}, bob.creds()...)
	msg := sb.refusal(sb.run(repo, args...), 2, protocol.ReasonAuthorityNeedsPerson)
	for _, want := range []string{"--authority human needs a person", "ask your human to run `acc release --resource file:src/a.go --authority human --reason …` in their terminal"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the refusal must say %q, got %q", want, msg)
		}
	}
	policy := append([]string{"release", "--json", "--resource", "file:src/a.go", "--authority", "policy", "--reason", "policy"}, bob.creds()...)
	msg = sb.refusal(sb.run(repo, policy...), 5, protocol.ReasonForceReleaseAuthority)
	if !strings.Contains(msg, "policy authority releases only a claim whose lease has run out") {
		t.Fatalf("the policy refusal must say what policy covers, got %q", msg)
	}
	out, code := inPty(t, sb, repo, nil, policy...)
	if code != 5 || !strings.Contains(out, "force_release_authority") {
		t.Fatalf("policy on a live claim is refused on a terminal too: exit %d\n%s", code, out)
	}
	if got := sb.fingerprint(alice.WorkspaceID); got != fp {
		t.Fatal("a refused forced release changed the store")
	}

	out, code = inPty(t, sb, repo, nil, args...)
	if code != 0 || !strings.Contains(out, `"forced": true`) || !strings.Contains(out, `"authority": "human"`) {
		t.Fatalf("a person at a terminal may force the release: exit %d\n%s", code, out)
	}
	st := sb.openStore(alice.WorkspaceID)
	defer st.Close()
	ctx, cancel := withTimeout()
	defer cancel()
	var forced []protocol.Event
	if err := st.View(ctx, func(tx storage.ReadTx) error {
		evs, err := tx.Events(0, 1<<20)
		for _, e := range evs {
			if e.Type == protocol.EventClaimForceReleased {
				forced = append(forced, e)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(forced) != 1 || forced[0].Payload["authority"] != "human" || forced[0].Payload["reason"] != "the user said so" || forced[0].ActorSessionID != bob.SessionID {
		t.Fatalf("expected one claim.force_released by bob with authority human and the reason, got %+v", forced)
	}
	// The holder is told, in its inbox, by the session that forced it.
	alice.dir = repo
	in := sb.inbox(alice)
	if len(in.Items) != 1 || in.Items[0].Message.FromParticipantID != "bob" ||
		in.Items[0].Message.Subject != "released your claim on file:src/a.go by force" || !strings.Contains(out, in.Items[0].Message.MessageID) {
		t.Fatalf("alice's inbox should hold bob's note naming the forced release (its id in bob's output):\n%+v\n%s", in, out)
	}
}

// TestForcedReleaseNotFromAnAgentsTerminal: a terminal an agent opens for
// itself (script, unbuffer, a pty library) passes the terminal test, so
// --authority human is refused too when an agent client's recorded,
// running process is an ancestor of the acc process: exit 2
// authority_needs_a_person naming that client, the store unchanged. Here
// the test process stands for the agent's client (a claude session
// attached with its pid) and starts acc on a pty.
func TestForcedReleaseNotFromAnAgentsTerminal(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	alice := sb.attach(repo, "alice", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, alice.creds()...)...)
	var agent session
	sb.jsonOK(&agent, repo, "attach", "--participant", "agent", "--harness", "claude", "--pid", strconv.Itoa(os.Getpid()))
	fp := sb.fingerprint(alice.WorkspaceID)

	args := append([]string{"release", "--json", "--resource", "file:src/a.go", "--authority", "human", "--reason", "blocked"}, agent.creds()...)
	out, code := inPty(t, sb, repo, nil, args...)
	if code != 2 || !strings.Contains(out, protocol.ReasonAuthorityNeedsPerson) ||
		!strings.Contains(out, fmt.Sprintf("runs under the client of agent (claude, process %d)", os.Getpid())) ||
		!strings.Contains(out, "ask your human to run `acc release --resource file:src/a.go --authority human --reason …` in a terminal of their own") {
		t.Fatalf("--authority human from a pty under an agent's client: exit %d\n%s", code, out)
	}
	if got := sb.fingerprint(alice.WorkspaceID); got != fp {
		t.Fatal("a refused forced release changed the store")
	}
	// Once that client's session is gone, the same terminal is a person's.
	sb.ok(repo, append([]string{"detach"}, agent.creds()...)...)
	bob := sb.attach(repo, "bob", "cli")
	args = append([]string{"release", "--json", "--resource", "file:src/a.go", "--authority", "human", "--reason", "blocked"}, bob.creds()...)
	if out, code := inPty(t, sb, repo, nil, args...); code != 0 || !strings.Contains(out, `"authority": "human"`) {
		t.Fatalf("a terminal under no agent's client may force the release: exit %d\n%s", code, out)
	}
}

// TestNoGenerationReachesAPeer: a hooked Claude Code session (the holder)
// claims, works, sends and is asked; then everything a peer can read —
// the writer's deny reason and turn context, status, sync (delta, full,
// history), inbox, work, claim and release refusals, wait, doctor, text and
// --json, and acc-mcp's resources and acc_status — is scanned for the
// holder's generation: none carries it. The holder's own turn context
// does (its trusted line), which shows the scan can fail.
func TestNoGenerationReachesAPeer(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	claude := clientByID(t, "claude")
	holder := sb.hookSession(claude, "client-holder", repo)
	writer := sb.hookSession(claude, "client-writer", repo)
	writer.ParticipantID = defaultParticipant("claude", "client-writer")
	bob := sb.attach(repo, "bob", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	sb.ok(repo, append([]string{"work", "--summary", "parser", "--hint", "file:src/a.go"}, holder.creds()...)...)
	sb.ok(repo, append([]string{"message", "--to", writer.ParticipantID, "--to", "bob", "--type", "question", "--subject", "port?", "--body", "8080?"}, holder.creds()...)...)
	ask := sb.sendAs(writer, "--to", "bob", "--type", "question", "--subject", "who?", "--body", "b")

	seen := map[string]string{}
	look := func(label, text string) { seen[label] = text }
	// the holder's own context carries its pair: the scan must find it there
	own, _ := sb.turn(claude, "client-holder", repo)
	if !strings.Contains(own, holder.Generation) {
		t.Fatalf("the holder's own turn context must carry its pair:\n%s", own)
	}
	deny, denied := claude.denial(t, sb.hook(hookOpts{dir: repo}, claude.writePayload(t, "client-writer", repo, "src/a.go"), "claude", claude.tool))
	if !denied {
		t.Fatal("the writer's edit of the holder's guarded file must be denied")
	}
	look("deny reason", deny)
	ctxt, _ := sb.turn(claude, "client-writer", repo)
	look("writer turn context", ctxt)
	for _, as := range []session{writer, bob} {
		for _, args := range [][]string{
			{"status"}, {"status", "--all"}, {"sync"}, {"sync", "--scope", "full"}, {"sync", "--scope", "history"},
			{"inbox"}, {"work", "--summary", "x", "--hint", "file:src/a.go"}, {"claim", "--resource", "file:src/a.go"},
			{"release", "--resource", "file:src/a.go"}, {"wait", "--released", "file:src/a.go", "--timeout", "50ms"},
		} {
			for _, json := range []bool{false, true} {
				a := append([]string{}, args...)
				if json {
					a = append(a, "--json")
				}
				res := sb.as(as, a...)
				look(as.ParticipantID+" "+strings.Join(a, " "), res.stdout+res.stderr)
			}
		}
	}
	for _, args := range [][]string{{"status"}, {"sync", "--scope", "full"}, {"sync", "--scope", "history"}, {"doctor"}} {
		for _, a := range [][]string{args, append(append([]string{}, args...), "--json")} {
			res := sb.run(repo, a...)
			look("public "+strings.Join(a, " "), res.stdout+res.stderr)
		}
	}
	res := sb.as(bob, "inbox", "--json", "--message", ask)
	look("bob inbox --message", res.stdout+res.stderr)

	m := sb.startMCP("carol", repo)
	for _, uri := range []string{"acc://snapshot", "acc://roster", "acc://inbox"} {
		look("mcp "+uri, string(m.call("resources/read", map[string]any{"uri": uri})))
	}
	for _, tool := range []string{"acc_status", "acc_inbox"} {
		look("mcp "+tool, string(m.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})))
	}

	for label, text := range seen {
		if strings.Contains(text, holder.Generation) {
			t.Errorf("%s shows the holder's generation:\n%s", label, clip(text, 2000))
		}
		if label == "deny reason" && !strings.Contains(text, holder.SessionID) {
			t.Errorf("the deny reason should name the holder's session (so the test looks at the right text):\n%s", text)
		}
	}
	if len(seen) < 40 {
		t.Fatalf("expected to scan at least 40 outputs, scanned %d", len(seen))
	}
	if !strings.Contains(seen["bob status --json"], holder.SessionID) {
		t.Fatalf("status should list the holder's session:\n%s", seen["bob status --json"])
	}
}

// TestNoFallThroughToAnotherSession: automatic resolution's second and
// third steps (the one live session of this worktree, the one live
// session) go by where a command runs, and a worktree path is public. An
// agent whose client runs the command (this test process stands for the
// client: a codex session records its pid) does not become the holder by
// running acc in the holder's worktree (`--cwd`, or `cd` there): exit 2
// caller_identity_unresolved naming the agent's own session, the store
// unchanged, the guarded claim still held. Run by no agent's client, the
// same command in that worktree acts as its one live session, as before.
func TestNoFallThroughToAnotherSession(t *testing.T) {
	sb := newSandbox(t)
	repo := sb.newRepo("repo")
	wt := filepath.Join(sb.base, "wt")
	sb.git(repo, "worktree", "add", "-q", wt, "-b", "side")
	holder := sb.attach(repo, "holder", "cli")
	sb.ok(repo, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded"}, holder.creds()...)...)
	var agent session
	sb.jsonOK(&agent, wt, "attach", "--participant", "agent", "--harness", "codex", "--pid", strconv.Itoa(os.Getpid()))
	fp := sb.fingerprint(holder.WorkspaceID)

	for _, args := range [][]string{
		{"--cwd", repo, "release", "--json", "--resource", "file:src/a.go"},
		{"--cwd", repo, "message", "--json", "--to", "agent", "--subject", "s", "--body", "b"},
	} {
		res := sb.run(wt, args...)
		env := sb.parseEnvelope(res)
		if res.code != 2 || env.Error == nil || env.Error.Details["reasonCode"] != protocol.ReasonCallerIdentityUnresolved ||
			!strings.Contains(env.Error.Message, "runs under the client of agent (codex session "+agent.SessionID+")") ||
			!strings.Contains(env.Error.Message, "will not act as the session "+holder.SessionID) ||
			strings.Contains(res.stdout+res.stderr, holder.Generation) {
			t.Fatalf("an agent's command in the holder's worktree must not act as the holder:\n%s", res)
		}
		if got := sb.fingerprint(holder.WorkspaceID); got != fp {
			t.Fatalf("%v changed the store", args)
		}
	}
	// With the agent's session gone, the one live session of the worktree
	// is the caller again.
	sb.ok(wt, append([]string{"detach"}, agent.creds()...)...)
	sb.ok(repo, "release", "--resource", "file:src/a.go")
}
