package core

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// claimWorld is a repository with a commit, a second worktree, a symlink to
// the checkout, and rooms opened from both worktrees on one data home.
type claimWorld struct {
	repo, wt, link, data string
	main, side           *Room
}

func newClaimWorld(t *testing.T) *claimWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &claimWorld{repo: filepath.Join(base, "repo"), wt: filepath.Join(base, "wt"), link: filepath.Join(base, "link"), data: filepath.Join(base, "data")}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for _, d := range []string{filepath.Join(w.repo, "src", "sub"), filepath.Join(w.repo, "docs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.repo, "src", "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main", w.repo)
	git("-C", w.repo, "add", "-A")
	git("-C", w.repo, "commit", "-q", "-m", "init")
	git("-C", w.repo, "worktree", "add", "-q", "-b", "side", w.wt)
	if err := os.Symlink(w.repo, w.link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ACC_DATA_HOME": w.data, "HOME": base}
	open := func(dir string) *Room {
		r, err := Open(context.Background(), OpenOptions{Cwd: dir, Getenv: func(k string) string { return env[k] }, GOOS: "linux"})
		if err != nil {
			t.Fatalf("open %s: %v", dir, err)
		}
		r.Probe = mapProbe{}
		t.Cleanup(func() { r.Close() })
		return r
	}
	w.main, w.side = open(w.repo), open(w.wt)
	if w.main.WS.ID != w.side.WS.ID {
		t.Fatal("worktrees must share a room")
	}
	return w
}

func TestCanonicalResourceGivesOneNamePerFile(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	for _, c := range []struct {
		room       *Room
		cwd, spell string
	}{
		{w.main, w.repo, "file:src/a.go"},
		{w.main, w.repo, "file:./src//a.go"},
		{w.main, w.repo, "file:src/x/../a.go"},
		{w.main, filepath.Join(w.repo, "src"), "file:a.go"},
		{w.main, filepath.Join(w.repo, "src", "sub"), "file:../a.go"},
		{w.main, filepath.Join(w.link, "src", "sub"), "file:../a.go"},
		{w.main, w.repo, "file:" + filepath.Join(w.link, "src", "a.go")},
		{w.side, w.wt, "file:src/a.go"},
		{w.side, filepath.Join(w.wt, "src"), "file:./a.go"},
	} {
		got, err := CanonicalResource(c.room.WS, c.spell, c.cwd)
		if err != nil || got != "file:src/a.go" {
			t.Errorf("%s from %s = %q, %v; want file:src/a.go", c.spell, c.cwd, got, err)
		}
	}
	for spell, want := range map[string]string{
		"file:src/**":                     "file:src/**",
		"file:./src/sub/../**":            "file:src/**",
		"file:src/new/not_yet.go":         "file:src/new/not_yet.go",
		"file:**":                         "file:**",
		"url:https://example.test/./a//b": "url:https://example.test/./a//b",
	} {
		if got, err := CanonicalResource(w.main.WS, spell, w.repo); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %s", spell, got, err, want)
		}
	}
	for spell, hint := range map[string]string{
		"file:src/":     "file:src/**",
		"file:src/*":    "file:src/**",
		"file:src/*.go": "file:src/**",
		"file:src":      "file:src/**",
	} {
		_, err := CanonicalResource(w.main.WS, spell, w.repo)
		wantReason(t, err, protocol.ReasonResourceSpelling, protocol.ExitUsage)
		if !strings.Contains(err.Error(), hint) {
			t.Errorf("refusal of %s must name %s: %v", spell, hint, err)
		}
	}
	for _, spell := range []string{"file:../outside.go", "file:/etc/passwd", "file:" + filepath.Join(w.wt, "..", "elsewhere")} {
		_, err := CanonicalResource(w.main.WS, spell, w.repo)
		wantReason(t, err, protocol.ReasonPathOutsideWorkspace, protocol.ExitUsage)
	}
	// A worktree nested inside the main checkout names its files from its own root.
	nested := filepath.Join(w.repo, "nested")
	cmd := exec.Command("git", "-C", w.repo, "worktree", "add", "-q", "-b", "nested", nested)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v %s", err, out)
	}
	if got, err := CanonicalResource(w.main.WS, "file:nested/src/a.go", w.repo); err != nil || got != "file:src/a.go" {
		t.Errorf("a file of a nested worktree = %q, %v; want file:src/a.go", got, err)
	}
	if got, err := CanonicalPath(w.main.WS, filepath.Join(w.link, "src"), w.repo); err != nil || got != "file:src/**" {
		t.Errorf("a directory target maps to its glob: %q %v", got, err)
	}
}

func TestClaimsConflictAcrossSpellingsAndWorktrees(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	attach := func(r *Room, p string) Caller {
		res, err := r.Attach(ctx, AttachInput{ParticipantID: p})
		if err != nil {
			t.Fatal(err)
		}
		return Caller{SessionID: res.SessionID, Generation: res.Generation}
	}
	a, b := attach(w.main, "codex"), attach(w.side, "claude")
	got, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:./src//a.go", Cwd: w.repo})
	if err != nil || got.Resource != "file:src/a.go" || got.Mode != protocol.ClaimExclusive || got.Enforcement != protocol.EnforcementAdvisory {
		t.Fatalf("claim: %+v %v", got, err)
	}
	fp, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx)
	for _, c := range []struct{ spell, cwd string }{
		{"file:src/a.go", w.wt}, {"file:a.go", filepath.Join(w.wt, "src")}, {"file:src/**", w.wt}, {"file:**", w.wt},
		{"file:../a.go", filepath.Join(w.link, "src", "sub")},
	} {
		_, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: c.spell, Cwd: c.cwd})
		wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
		if !strings.Contains(err.Error(), "codex") || protocol.AsError(err).Details["ownerParticipantId"] != "codex" {
			t.Fatalf("a conflict must name the holder: %v", err)
		}
	}
	if fp2, _ := w.main.Store.(*storage.SQLite).Fingerprint(ctx); fp2 != fp {
		t.Fatal("a refused claim changed the store")
	}
	// Segment-wise: src/ab.go is not inside a claim on src/a.
	if _, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:src/a.gox", Cwd: w.wt}); err != nil {
		t.Fatalf("file:src/a.gox does not overlap file:src/a.go: %v", err)
	}
	// Shared claims coexist; a shared and an exclusive conflict.
	if _, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:docs/**", Cwd: w.repo, Mode: "shared"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:docs/x.md", Cwd: w.wt, Mode: "shared"}); err != nil {
		t.Fatalf("shared claims must coexist: %v", err)
	}
	c := attach(w.main, "gemini")
	_, err = w.main.Claim(ctx, ClaimInput{Caller: c, Resource: "file:docs/y.md", Cwd: w.repo})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	// Renewal keeps the id and acquiredAt; release frees it for others.
	again, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo})
	if err != nil || !again.Renewed || again.ClaimID != got.ClaimID || again.AcquiredAt != got.AcquiredAt || again.Generation == got.Generation {
		t.Fatalf("renewal: %+v %v", again, err)
	}
	if _, err := w.main.Release(ctx, ReleaseInput{Caller: a, Resource: "file:src/a.go", Cwd: filepath.Join(w.repo, "docs", "..")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:src/a.go", Cwd: w.wt}); err != nil {
		t.Fatalf("after release the resource is free: %v", err)
	}
}

func TestLeaseExpiryRenewalAndAttention(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	clock := time.Now()
	for _, r := range []*Room{w.main, w.side} {
		r.Now = func() time.Time { return clock }
	}
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex", CadenceMs: 300_000})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	res, _ = w.side.Attach(ctx, AttachInput{ParticipantID: "claude", CadenceMs: 300_000})
	b := Caller{SessionID: res.SessionID, Generation: res.Generation}
	held, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo, LeaseSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	// B means to work on it: A's claim is contended, B's hint conflicts.
	if _, err := w.side.Work(ctx, IntentInput{Caller: b, Summary: "edit a", Hints: []string{"file:src/a.go"}, Cwd: w.wt}); err != nil {
		t.Fatal(err)
	}
	kinds := func(r *Room, c Caller) []string {
		st, err := r.Status(ctx, StatusQuery{Caller: &c})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, at := range st.Attention {
			out = append(out, at.Kind)
		}
		return out
	}
	if k := kinds(w.main, a); strings.Join(k, ",") != AttentionClaimContended {
		t.Fatalf("holder's attention %v, want claim_contended", k)
	}
	if k := kinds(w.side, b); strings.Join(k, ",") != AttentionClaimConflict {
		t.Fatalf("hinter's attention %v, want claim_conflict", k)
	}
	_, err = w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:src/a.go", Cwd: w.wt})
	wantReason(t, err, protocol.ReasonClaimConflict, protocol.ExitConflict)
	clock = clock.Add(61 * time.Second)
	if k := kinds(w.main, a); strings.Join(k, ",") != AttentionClaimExpired {
		t.Fatalf("after expiry the owner's attention is %v, want claim_expired", k)
	}
	st, _ := w.main.Status(ctx, StatusQuery{})
	if len(st.Claims) != 0 || st.Protection != "none" {
		t.Fatalf("an expired claim is not live: %+v", st)
	}
	// Renewal by id keeps the id; an expired claim no longer blocks.
	ren, err := w.main.RenewClaim(ctx, a, held.ClaimID, 60)
	if err != nil || ren.ClaimID != held.ClaimID {
		t.Fatalf("renew by id: %+v %v", ren, err)
	}
	_, err = w.side.RenewClaim(ctx, b, held.ClaimID, 60)
	wantReason(t, err, protocol.ReasonClaimNotOwner, protocol.ExitConflict)
	clock = clock.Add(61 * time.Second)
	if _, err := w.side.Claim(ctx, ClaimInput{Caller: b, Resource: "file:src/a.go", Cwd: w.wt}); err != nil {
		t.Fatalf("an expired claim must not block: %v", err)
	}
}

func TestReleaseRules(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex"})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	res, _ = w.side.Attach(ctx, AttachInput{ParticipantID: "claude"})
	b := Caller{SessionID: res.SessionID, Generation: res.Generation}
	held, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo, Enforcement: "guarded"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.main.Status(ctx, StatusQuery{})
	if st.Protection != protocol.EnforcementAdvisory {
		t.Fatalf("advisory sessions make the room advisory even with a guarded claim, got %s", st.Protection)
	}
	_, err = w.side.Release(ctx, ReleaseInput{Caller: b, ClaimID: held.ClaimID})
	wantReason(t, err, protocol.ReasonForceReleaseAuthority, protocol.ExitConflict)
	_, err = w.side.Release(ctx, ReleaseInput{Caller: b, Resource: "file:src/a.go", Cwd: w.wt})
	wantReason(t, err, protocol.ReasonForceReleaseAuthority, protocol.ExitConflict)
	_, err = w.side.Release(ctx, ReleaseInput{Caller: b, ClaimID: held.ClaimID, Authority: "human"})
	wantReason(t, err, protocol.ReasonInvalidInput, protocol.ExitData)
	_, err = w.main.Release(ctx, ReleaseInput{Caller: a, ClaimID: "claim_AAAAAAAAAAAAAAAAAAAAAA"})
	wantReason(t, err, protocol.ReasonClaimNotFound, protocol.ExitConflict)
	// Detach keeps claims; a forced release with authority removes them.
	if _, err := w.main.Detach(ctx, a); err != nil {
		t.Fatal(err)
	}
	if st, _ := w.side.Status(ctx, StatusQuery{}); len(st.Claims) != 1 {
		t.Fatal("detach must not release claims")
	}
	// Policy authority covers only a claim whose lease ran out: an agent's
	// --authority policy does not take a live claim.
	fp := func() string {
		f, err := w.side.Store.(*storage.SQLite).Fingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	before := fp()
	_, err = w.side.Release(ctx, ReleaseInput{Caller: b, ClaimID: held.ClaimID, Authority: "policy", Reason: "policy says so"})
	wantReason(t, err, protocol.ReasonForceReleaseAuthority, protocol.ExitConflict)
	if !strings.Contains(err.Error(), "policy authority releases only a claim whose lease has run out") {
		t.Fatalf("the refusal must say what policy covers: %v", err)
	}
	if fp() != before {
		t.Fatal("a refused policy release changed the store")
	}
	rel, err := w.side.Release(ctx, ReleaseInput{Caller: b, ClaimID: held.ClaimID, Authority: "human", Reason: "the owner left; the user said to take it"})
	if err != nil || !rel.Forced {
		t.Fatalf("forced release: %+v %v", rel, err)
	}
	var last protocol.Event
	_ = w.side.Store.View(ctx, func(tx storage.ReadTx) error {
		ev, _ := tx.Events(0, 1000)
		for _, e := range ev {
			if e.Type == protocol.EventClaimForceReleased {
				last = e // the holder's note is recorded after it
			}
		}
		return nil
	})
	if rel.ToldMessageID == "" {
		t.Fatalf("a forced release must tell the holder: %+v", rel)
	}
	if last.Type != protocol.EventClaimForceReleased || last.Payload["authority"] != "human" {
		t.Fatalf("forced release event: %+v", last)
	}
}

// TestPolicyReleasesOnlyAnExpiredClaim: --authority policy takes another
// session's claim once its lease has run out, and is recorded with that
// authority; a second before, it is refused
// (docs/concepts.md#forced-release).
func TestPolicyReleasesOnlyAnExpiredClaim(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	clock := time.Now()
	for _, r := range []*Room{w.main, w.side} {
		r.Now = func() time.Time { return clock }
	}
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex", CadenceMs: 300_000})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	res, _ = w.side.Attach(ctx, AttachInput{ParticipantID: "claude", CadenceMs: 300_000})
	b := Caller{SessionID: res.SessionID, Generation: res.Generation}
	held, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo, LeaseSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	in := ReleaseInput{Caller: b, ClaimID: held.ClaimID, Authority: "policy", Reason: "its lease ran out"}
	clock = clock.Add(59 * time.Second)
	_, err = w.side.Release(ctx, in)
	wantReason(t, err, protocol.ReasonForceReleaseAuthority, protocol.ExitConflict)
	clock = clock.Add(time.Second)
	rel, err := w.side.Release(ctx, in)
	if err != nil || !rel.Forced || rel.Authority == nil || *rel.Authority != "policy" {
		t.Fatalf("policy release of an expired claim: %+v %v", rel, err)
	}
	var last protocol.Event
	_ = w.side.Store.View(ctx, func(tx storage.ReadTx) error {
		ev, _ := tx.Events(0, 1000)
		for _, e := range ev {
			if e.Type == protocol.EventClaimForceReleased {
				last = e // the holder's note is recorded after it
			}
		}
		return nil
	})
	if rel.ToldMessageID == "" {
		t.Fatalf("a forced release must tell the holder: %+v", rel)
	}
	if last.Type != protocol.EventClaimForceReleased || last.Payload["authority"] != "policy" || last.Payload["reason"] != "its lease ran out" {
		t.Fatalf("policy release event: %+v", last)
	}
}

func TestPolicyClaimModeSetsTheDefaultEnforcement(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	w.main.WS.Policy.ClaimMode = protocol.EnforcementGuarded
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex"})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	got, err := w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:src/a.go", Cwd: w.repo})
	if err != nil || got.Enforcement != protocol.EnforcementGuarded {
		t.Fatalf("policy guarded: %+v %v", got, err)
	}
	got, err = w.main.Claim(ctx, ClaimInput{Caller: a, Resource: "file:docs/**", Cwd: w.repo, Enforcement: "advisory"})
	if err != nil || got.Enforcement != protocol.EnforcementAdvisory {
		t.Fatalf("an explicit enforcement wins over the policy: %+v %v", got, err)
	}
}

func TestIntentStaysEphemeralUntilMaterialised(t *testing.T) {
	t.Parallel()
	w := newClaimWorld(t)
	ctx := context.Background()
	res, _ := w.main.Attach(ctx, AttachInput{ParticipantID: "codex"})
	a := Caller{SessionID: res.SessionID, Generation: res.Generation}
	in, err := w.main.Work(ctx, IntentInput{Caller: a, Summary: "look around", Hints: []string{"file:./src//a.go"}, Cwd: w.repo})
	if err != nil || in.Mode != "edit" || in.State != "active" || len(in.ResourceHints) != 1 || in.ResourceHints[0] != "file:src/a.go" {
		t.Fatalf("intent: %+v %v", in, err)
	}
	if n, _ := w.main.Store.(*storage.SQLite).DurableRowCount(ctx); n != 0 {
		t.Fatalf("an intent of a lone session is ephemeral; %d durable rows", n)
	}
	_, err = w.main.Work(ctx, IntentInput{Caller: a, Summary: "x", Hints: []string{"file:src/*"}, Cwd: w.repo})
	wantReason(t, err, protocol.ReasonResourceSpelling, protocol.ExitUsage)
	w.side.Attach(ctx, AttachInput{ParticipantID: "claude"})
	var types []string
	_ = w.main.Store.View(ctx, func(tx storage.ReadTx) error {
		ev, _ := tx.Events(0, 100)
		for _, e := range ev {
			types = append(types, e.Type)
		}
		return nil
	})
	if strings.Join(types, ",") != "workspace.materialised,session.opened,session.opened,intent.published" {
		t.Fatalf("materialisation must carry the intent: %v", types)
	}
	if _, err := w.main.Work(ctx, IntentInput{Caller: a, Clear: true}); err != nil {
		t.Fatal(err)
	}
	st, _ := w.main.Status(ctx, StatusQuery{})
	for _, p := range st.Participants {
		if p.Intent != nil {
			t.Fatalf("a cleared intent is not shown: %+v", p)
		}
	}
}
