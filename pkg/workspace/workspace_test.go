package workspace

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestDiscoverWorkspaceGitWorktrees(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	newRepo(t, repo)
	mustMkdir(t, filepath.Join(repo, "src", "deep"))
	wt := filepath.Join(base, "feature-wt")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	head := git(t, repo, "rev-parse", "HEAD")

	main := discover(t, filepath.Join(repo, "src", "deep"), nil)
	feat := discover(t, wt, nil)

	wantID := protocol.DerivedWorkspaceID(filepath.Join(repo, ".git"))
	if main.ID != wantID || feat.ID != wantID {
		t.Fatalf("ids = %s, %s; both worktrees must share %s", main.ID, feat.ID, wantID)
	}
	if main.Source != protocol.SourceGit || feat.Source != protocol.SourceGit {
		t.Fatalf("sources = %s, %s; want git", main.Source, feat.Source)
	}
	if main.CheckoutRoot() != repo || feat.CheckoutRoot() != wt {
		t.Fatalf("checkout roots = %s, %s; want %s, %s", main.CheckoutRoot(), feat.CheckoutRoot(), repo, wt)
	}
	if deref(main.Branch()) != "main" || deref(feat.Branch()) != "feature" {
		t.Fatalf("branches = %s, %s; want main, feature", deref(main.Branch()), deref(feat.Branch()))
	}
	if diff := cmp.Diff([]string{repo}, main.Roots); diff != "" {
		t.Errorf("main roots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{wt}, feat.Roots); diff != "" {
		t.Errorf("worktree roots (-want +got):\n%s", diff)
	}
	if main.Start != filepath.Join(repo, "src", "deep") {
		t.Errorf("Start = %s; want the start directory", main.Start)
	}
	if main.DisplayName != "repo" || feat.DisplayName != "feature-wt" {
		t.Errorf("display names = %q, %q", main.DisplayName, feat.DisplayName)
	}
	if deref(main.Git.Head) != head || deref(feat.Git.Head) != head {
		t.Errorf("heads = %s, %s; want %s", deref(main.Git.Head), deref(feat.Git.Head), head)
	}
	if main.Git.Remote != nil {
		t.Errorf("without Remote the origin is not asked for: %s", deref(main.Git.Remote))
	}
	if ws, err := Discover(context.Background(), DiscoverOptions{Cwd: repo, Getenv: envMap(nil), Remote: true}); err != nil || deref(ws.Git.Remote) != "https://example.invalid/repo.git" {
		t.Errorf("with Remote the origin is read: %+v %v", ws, err)
	}
	if main.Git.CommonDir != filepath.Join(repo, ".git") || feat.Git.CommonDir != main.Git.CommonDir {
		t.Errorf("common dirs = %s, %s", main.Git.CommonDir, feat.Git.CommonDir)
	}
	if main.ConfigPath != "" || main.Policy != DefaultPolicy() {
		t.Errorf("git workspace has config %q policy %+v", main.ConfigPath, main.Policy)
	}
}

func TestDiscoverWorkspaceGitStates(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)

	// Detached HEAD: no branch, a head.
	det := filepath.Join(base, "detached")
	newRepo(t, det)
	git(t, det, "checkout", "-q", "--detach")
	ws := discover(t, det, nil)
	if ws.Source != protocol.SourceGit || ws.Branch() != nil || ws.Git.Head == nil {
		t.Fatalf("detached: source %s branch %s head %s", ws.Source, deref(ws.Branch()), deref(ws.Git.Head))
	}

	// Before the first commit: a branch, no head, still git.
	unborn := filepath.Join(base, "unborn")
	mustMkdir(t, unborn)
	git(t, unborn, "init", "-q", "-b", "trunk")
	ws = discover(t, unborn, nil)
	if ws.Source != protocol.SourceGit || deref(ws.Branch()) != "trunk" || ws.Git.Head != nil || ws.Git.Remote != nil {
		t.Fatalf("unborn: source %s branch %s head %s remote %s", ws.Source, deref(ws.Branch()), deref(ws.Git.Head), deref(ws.Git.Remote))
	}
	if ws.ID != protocol.DerivedWorkspaceID(filepath.Join(unborn, ".git")) {
		t.Fatalf("unborn id %s", ws.ID)
	}

	// Inside the .git directory there is no work tree: a plain directory.
	ws = discover(t, filepath.Join(det, ".git"), nil)
	if ws.Source != protocol.SourceDirectory || ws.Git != nil {
		t.Fatalf("inside .git: source %s git %+v", ws.Source, ws.Git)
	}
}

func TestDiscoverWorkspaceClonesDiffer(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	origin := filepath.Join(base, "origin")
	newRepo(t, origin)
	git(t, base, "clone", "-q", origin, filepath.Join(base, "a"))
	git(t, base, "clone", "-q", origin, filepath.Join(base, "b"))
	a := discover(t, filepath.Join(base, "a"), nil)
	b := discover(t, filepath.Join(base, "b"), nil)
	if a.ID == b.ID {
		t.Fatalf("two clones share id %s", a.ID)
	}
	if a.Source != protocol.SourceGit || b.Source != protocol.SourceGit {
		t.Fatalf("sources %s %s", a.Source, b.Source)
	}
}

func TestDiscoverWorkspacePlainDirectory(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	dir := filepath.Join(base, "plain")
	mustMkdir(t, dir)
	link := filepath.Join(base, "link")
	mustSymlink(t, dir, link)

	for _, start := range []string{dir, link} {
		ws := discover(t, start, nil)
		want := &Workspace{
			ID: protocol.DerivedWorkspaceID(dir), Source: protocol.SourceDirectory, DisplayName: "plain",
			Roots: []string{dir}, Start: dir, Policy: DefaultPolicy(), RequiredAdapters: []string{},
		}
		if diff := cmp.Diff(want, ws); diff != "" {
			t.Fatalf("Discover(%s) (-want +got):\n%s", start, diff)
		}
		if ws.CheckoutRoot() != dir || ws.Branch() != nil {
			t.Fatalf("checkout %s branch %s", ws.CheckoutRoot(), deref(ws.Branch()))
		}
	}
	// A moved directory is a different workspace.
	moved := filepath.Join(base, "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if ws := discover(t, moved, nil); ws.ID == protocol.DerivedWorkspaceID(dir) {
		t.Fatal("a moved directory kept its id")
	}
}

func TestDiscoverWorkspaceStartRules(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	dir := filepath.Join(base, "d")
	mustMkdir(t, dir)
	file := filepath.Join(base, "f")
	mustWrite(t, file, "x")

	// ACC_WORKSPACE_ROOT replaces the working directory.
	ws := discover(t, base, map[string]string{"ACC_WORKSPACE_ROOT": dir})
	if ws.Start != dir || ws.ID != protocol.DerivedWorkspaceID(dir) {
		t.Fatalf("ACC_WORKSPACE_ROOT ignored: start %s", ws.Start)
	}
	// A relative Cwd is taken against the process working directory.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, dir)
	if err == nil {
		if ws := discover(t, rel, nil); ws.Start != dir {
			t.Fatalf("relative cwd: start %s", ws.Start)
		}
	}

	tests := []struct {
		name   string
		cwd    string
		env    map[string]string
		reason string
	}{
		{"relative ACC_WORKSPACE_ROOT", dir, map[string]string{"ACC_WORKSPACE_ROOT": "d"}, protocol.ReasonPathNotAbsolute},
		{"missing ACC_WORKSPACE_ROOT", dir, map[string]string{"ACC_WORKSPACE_ROOT": filepath.Join(base, "nope")}, protocol.ReasonWorkspaceUnresolvable},
		{"missing cwd", filepath.Join(base, "nope"), nil, protocol.ReasonWorkspaceUnresolvable},
		{"cwd is a file", file, nil, protocol.ReasonWorkspaceUnresolvable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Discover(context.Background(), DiscoverOptions{Cwd: tc.cwd, Getenv: envMap(tc.env)})
			if !protocol.IsReason(err, tc.reason) || protocol.CodeOf(err) != protocol.ExitUsage {
				t.Fatalf("err = %v; want %s exit 2", err, tc.reason)
			}
			assertOneLine(t, err)
		})
	}
}

// Not parallel: it sets process environment variables.
func TestDiscoverWorkspaceIgnoresGitEnvironment(t *testing.T) {
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	other := filepath.Join(base, "other")
	newRepo(t, repo)
	newRepo(t, other)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_CEILING_DIRECTORIES", base)
	ws := discover(t, repo, nil)
	if ws.ID != protocol.DerivedWorkspaceID(filepath.Join(repo, ".git")) || ws.CheckoutRoot() != repo {
		t.Fatalf("GIT_* redirected the probe: id %s checkout %s", ws.ID, ws.CheckoutRoot())
	}
}

func TestDiscoverWorkspaceConfigFromSubdirectory(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	newRepo(t, repo)
	mustMkdir(t, filepath.Join(repo, "packages", "a", "src"))
	mustMkdir(t, filepath.Join(repo, "docs"))
	mustWrite(t, filepath.Join(repo, ConfigFileName), `{
  "schemaVersion": 1,
  "workspaceId": "workspace_pinned",
  "displayName": "Pinned room",
  "roots": [".", "docs", "packages/a/..", "./docs/"],
  "policy": {"claimMode": "guarded", "contextBudgetBytes": 9000},
  "requiredAdapters": ["claude", "codex"],
  "extensions": {"team": {"owner": "x"}}
}
`)
	start := filepath.Join(repo, "packages", "a", "src")
	ws := discover(t, start, nil)
	want := &Workspace{
		ID: "workspace_pinned", Source: protocol.SourceConfig, DisplayName: "Pinned room",
		Roots:            []string{repo, filepath.Join(repo, "docs"), filepath.Join(repo, "packages")},
		Start:            start,
		ConfigPath:       filepath.Join(repo, ConfigFileName),
		Policy:           Policy{ClaimMode: "guarded", ContextBudgetBytes: 9000, OrphanGraceMs: DefaultOrphanGraceMs, MidTurn: "actionable", EndOfTurn: "actionable", EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds},
		RequiredAdapters: []string{"claude", "codex"},
		Git:              ws.Git,
	}
	if diff := cmp.Diff(want, ws); diff != "" {
		t.Fatalf("config workspace (-want +got):\n%s", diff)
	}
	// Git enrichment is kept for config workspaces.
	if ws.Git == nil || ws.CheckoutRoot() != repo || deref(ws.Branch()) != "main" {
		t.Fatalf("git enrichment lost: %+v", ws.Git)
	}

	// The nearest config wins; its display name defaults to its directory.
	inner := filepath.Join(repo, "packages", "a")
	mustWrite(t, filepath.Join(inner, ConfigFileName), `{"schemaVersion":1,"workspaceId":"inner.room"}`)
	ws = discover(t, start, nil)
	if ws.ID != "inner.room" || ws.DisplayName != "a" || ws.Policy != DefaultPolicy() ||
		ws.ConfigPath != filepath.Join(inner, ConfigFileName) {
		t.Fatalf("inner config: %+v", ws)
	}
	if diff := cmp.Diff([]string{inner}, ws.Roots); diff != "" {
		t.Fatalf("inner roots (-want +got):\n%s", diff)
	}
	if ws.CheckoutRoot() != repo {
		t.Fatalf("checkout root %s; want the git worktree root", ws.CheckoutRoot())
	}

	// An explicit config path, relative to Cwd, overrides the walk.
	ws, err := Discover(context.Background(), DiscoverOptions{Cwd: start, ConfigPath: "../../../" + ConfigFileName, Getenv: envMap(nil)})
	if err != nil || ws.ID != "workspace_pinned" {
		t.Fatalf("explicit config: %v %+v", err, ws)
	}
	_, err = Discover(context.Background(), DiscoverOptions{Cwd: start, ConfigPath: "missing.json", Getenv: envMap(nil)})
	if !protocol.IsReason(err, protocol.ReasonConfigInvalid) || protocol.CodeOf(err) != protocol.ExitData {
		t.Fatalf("missing explicit config: %v", err)
	}
	_, err = Discover(context.Background(), DiscoverOptions{Cwd: start, ConfigPath: "/nonexistent-dir/acc.workspace.json", Getenv: envMap(nil)})
	if !protocol.IsReason(err, protocol.ReasonWorkspaceUnresolvable) || protocol.CodeOf(err) != protocol.ExitUsage {
		t.Fatalf("explicit config in missing dir: %v", err)
	}
}

func TestDiscoverWorkspaceConfigWithoutGit(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	mustMkdir(t, filepath.Join(dir, "x"))
	mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,"workspaceId":"w1","roots":["x"]}`)
	ws := discover(t, dir, nil)
	if ws.Git != nil || ws.CheckoutRoot() != filepath.Join(dir, "x") || ws.DisplayName != filepath.Base(dir) {
		t.Fatalf("config without git: %+v", ws)
	}
}

// TestConfigFileRefusals covers the refusals that depend on the file itself
// rather than its JSON.
func TestConfigFileRefusals(t *testing.T) {
	t.Parallel()
	valid := `{"schemaVersion":1,"workspaceId":"w"}`
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		reason string
		code   protocol.ExitCode
		substr string
	}{
		{"symlinked config", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "real.json"), valid)
			mustSymlink(t, filepath.Join(dir, "real.json"), filepath.Join(dir, ConfigFileName))
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "cannot safely read"},
		{"dangling symlink", func(t *testing.T, dir string) {
			mustSymlink(t, filepath.Join(dir, "nowhere.json"), filepath.Join(dir, ConfigFileName))
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "cannot safely read"},
		{"directory", func(t *testing.T, dir string) {
			mustMkdir(t, filepath.Join(dir, ConfigFileName))
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "not a regular file"},
		{"fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, ConfigFileName), 0o644); err != nil {
				t.Fatal(err)
			}
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "not a regular file"},
		{"invalid json", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,`)
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "not valid JSON"},
		{"too large", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,"workspaceId":"w","extensions":{"x":"`+strings.Repeat("a", 1<<20)+`"}}`)
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "larger than 1 MiB"},
		{"missing root directory", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,"workspaceId":"w","roots":["gone"]}`)
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "roots[0]"},
		{"root is a file", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "file"), "x")
			mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,"workspaceId":"w","roots":[".","file"]}`)
		}, protocol.ReasonConfigInvalid, protocol.ExitData, "roots[1]"},
		{"unknown key", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, ConfigFileName), `{"schemaVersion":1,"workspaceId":"w","clam_mode":"x"}`)
		}, protocol.ReasonConfigUnknownKey, protocol.ExitData, `"clam_mode"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := realTempDir(t)
			sub := filepath.Join(dir, "sub")
			mustMkdir(t, sub)
			tc.setup(t, dir)
			done := make(chan error, 1)
			go func() {
				_, err := Discover(context.Background(), DiscoverOptions{Cwd: sub, Getenv: envMap(nil)})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Discover hung")
			}
			if !protocol.IsReason(err, tc.reason) || protocol.CodeOf(err) != tc.code {
				t.Fatalf("err = %v; want %s exit %d", err, tc.reason, tc.code)
			}
			if !strings.Contains(err.Error(), tc.substr) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("message %q lacks %q or the path", err.Error(), tc.substr)
			}
			assertOneLine(t, err)
		})
	}
}

func TestValidateConfigRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		raw    string
		reason string
		substr string
	}{
		{"empty", ``, protocol.ReasonConfigInvalid, "not valid JSON"},
		{"syntax", `{"schemaVersion": 1,}`, protocol.ReasonConfigInvalid, "not valid JSON"},
		{"trailing data", `{"schemaVersion":1,"workspaceId":"w"} {}`, protocol.ReasonConfigInvalid, "not valid JSON"},
		{"array", `[1]`, protocol.ReasonConfigInvalid, "one JSON object"},
		{"null", `null`, protocol.ReasonConfigInvalid, "one JSON object"},
		{"string", `"x"`, protocol.ReasonConfigInvalid, "one JSON object"},
		{"missing schemaVersion", `{"workspaceId":"w"}`, protocol.ReasonConfigInvalid, "schemaVersion is missing"},
		{"schemaVersion 2", `{"schemaVersion":2,"workspaceId":"w"}`, protocol.ReasonConfigInvalid, "unknown workspace config schemaVersion 2"},
		{"schemaVersion string", `{"schemaVersion":"1","workspaceId":"w"}`, protocol.ReasonConfigInvalid, "unknown workspace config schemaVersion"},
		{"schemaVersion null", `{"schemaVersion":null,"workspaceId":"w"}`, protocol.ReasonConfigInvalid, "unknown workspace config schemaVersion"},
		{"schemaVersion checked first", `{"schemaVersion":3,"sessions":[]}`, protocol.ReasonConfigInvalid, "schemaVersion"},
		{"runtime keys all named", `{"schemaVersion":1,"workspaceId":"w","tokens":1,"sessions":[],"credentials":{},"bogus":1}`, protocol.ReasonConfigInvalid, "must not carry runtime state: sessions, tokens, credentials;"},
		{"every runtime key", `{"schemaVersion":1,"sessions":0,"participants":0,"messages":0,"claims":0,"receipts":0,"intents":0,"events":0,"deliveryBindings":0,"tokens":0,"credentials":0}`, protocol.ReasonConfigInvalid, "sessions, participants, messages, claims, receipts, intents, events, deliveryBindings, tokens, credentials"},
		{"unknown key", `{"schemaVersion":1,"workspaceId":"w","clam_mode":"guarded"}`, protocol.ReasonConfigUnknownKey, `unknown workspace config key: "clam_mode"`},
		{"unknown keys", `{"schemaVersion":1,"workspaceId":"w","b":1,"a":2}`, protocol.ReasonConfigUnknownKey, `keys: "a", "b"`},
		{"key case matters", `{"schemaVersion":1,"WorkspaceId":"w"}`, protocol.ReasonConfigUnknownKey, `"WorkspaceId"`},
		{"missing workspaceId", `{"schemaVersion":1}`, protocol.ReasonConfigInvalid, "workspaceId is missing"},
		{"workspaceId not portable", `{"schemaVersion":1,"workspaceId":"has space"}`, protocol.ReasonConfigInvalid, "not a portable id"},
		{"workspaceId leading dot", `{"schemaVersion":1,"workspaceId":".w"}`, protocol.ReasonConfigInvalid, "not a portable id"},
		{"workspaceId number", `{"schemaVersion":1,"workspaceId":7}`, protocol.ReasonConfigInvalid, "not a portable id"},
		{"displayName number", `{"schemaVersion":1,"workspaceId":"w","displayName":3}`, protocol.ReasonConfigInvalid, "displayName must be a string"},
		{"displayName null", `{"schemaVersion":1,"workspaceId":"w","displayName":null}`, protocol.ReasonConfigInvalid, "displayName must be a string"},
		{"displayName newline", `{"schemaVersion":1,"workspaceId":"w","displayName":"a\nb"}`, protocol.ReasonConfigInvalid, "one line"},
		{"displayName empty", `{"schemaVersion":1,"workspaceId":"w","displayName":""}`, protocol.ReasonConfigInvalid, "one line"},
		{"roots empty array", `{"schemaVersion":1,"workspaceId":"w","roots":[]}`, protocol.ReasonConfigInvalid, "non-empty array"},
		{"roots string", `{"schemaVersion":1,"workspaceId":"w","roots":"."}`, protocol.ReasonConfigInvalid, "non-empty array"},
		{"roots null", `{"schemaVersion":1,"workspaceId":"w","roots":null}`, protocol.ReasonConfigInvalid, "non-empty array"},
		{"root not string", `{"schemaVersion":1,"workspaceId":"w","roots":[".",1]}`, protocol.ReasonConfigInvalid, "non-empty array"},
		{"root empty", `{"schemaVersion":1,"workspaceId":"w","roots":[""]}`, protocol.ReasonConfigInvalid, "roots[0] is empty"},
		{"root absolute", `{"schemaVersion":1,"workspaceId":"w","roots":["/etc"]}`, protocol.ReasonConfigInvalid, "is absolute"},
		{"root backslash absolute", `{"schemaVersion":1,"workspaceId":"w","roots":["\\\\server\\share"]}`, protocol.ReasonConfigInvalid, "is absolute"},
		{"root drive", `{"schemaVersion":1,"workspaceId":"w","roots":["C:\\src"]}`, protocol.ReasonConfigInvalid, "is absolute"},
		{"root drive slash", `{"schemaVersion":1,"workspaceId":"w","roots":[".","d:/src"]}`, protocol.ReasonConfigInvalid, "roots[1]"},
		{"root leading dotdot", `{"schemaVersion":1,"workspaceId":"w","roots":[".."]}`, protocol.ReasonConfigInvalid, "climbs above"},
		{"root escaping late", `{"schemaVersion":1,"workspaceId":"w","roots":["packages/../../x"]}`, protocol.ReasonConfigInvalid, "climbs above"},
		{"root escaping backslash", `{"schemaVersion":1,"workspaceId":"w","roots":["a\\..\\..\\x"]}`, protocol.ReasonConfigInvalid, "climbs above"},
		{"root control char", `{"schemaVersion":1,"workspaceId":"w","roots":["a\u0001"]}`, protocol.ReasonConfigInvalid, "control characters"},
		{"policy not object", `{"schemaVersion":1,"workspaceId":"w","policy":"guarded"}`, protocol.ReasonConfigInvalid, "policy must be an object"},
		{"policy null", `{"schemaVersion":1,"workspaceId":"w","policy":null}`, protocol.ReasonConfigInvalid, "policy must be an object"},
		{"policy unknown key", `{"schemaVersion":1,"workspaceId":"w","policy":{"clam_mode":"guarded"}}`, protocol.ReasonConfigUnknownKey, `"policy.clam_mode"`},
		{"claimMode bad", `{"schemaVersion":1,"workspaceId":"w","policy":{"claimMode":"strict"}}`, protocol.ReasonConfigInvalid, "policy.claimMode"},
		{"claimMode null", `{"schemaVersion":1,"workspaceId":"w","policy":{"claimMode":null}}`, protocol.ReasonConfigInvalid, "policy.claimMode"},
		{"budget zero", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":0}}`, protocol.ReasonConfigInvalid, "1 to 64000"},
		{"budget too big", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":64001}}`, protocol.ReasonConfigInvalid, "1 to 64000"},
		{"budget fraction", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":10.5}}`, protocol.ReasonConfigInvalid, "whole number"},
		{"budget string", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":"6000"}}`, protocol.ReasonConfigInvalid, "whole number"},
		{"budget null", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":null}}`, protocol.ReasonConfigInvalid, "whole number"},
		{"grace negative", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":-1}}`, protocol.ReasonConfigInvalid, "from 0 to 86400000"},
		{"grace too big", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":86400001}}`, protocol.ReasonConfigInvalid, "from 0 to 86400000"},
		{"grace fraction", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":0.5}}`, protocol.ReasonConfigInvalid, "whole number of milliseconds"},
		{"grace null", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":null}}`, protocol.ReasonConfigInvalid, "whole number of milliseconds"},
		{"grace string", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":"120s"}}`, protocol.ReasonConfigInvalid, "whole number of milliseconds"},
		{"midTurn unknown", `{"schemaVersion":1,"workspaceId":"w","policy":{"midTurn":"notes"}}`, protocol.ReasonConfigInvalid, `policy.midTurn "notes" must be "off", "actionable" or "all"`},
		{"midTurn null", `{"schemaVersion":1,"workspaceId":"w","policy":{"midTurn":null}}`, protocol.ReasonConfigInvalid, "policy.midTurn null must be"},
		{"endOfTurn all", `{"schemaVersion":1,"workspaceId":"w","policy":{"endOfTurn":"all"}}`, protocol.ReasonConfigInvalid, `policy.endOfTurn "all" must be "off" or "actionable"`},
		{"endOfTurn bool", `{"schemaVersion":1,"workspaceId":"w","policy":{"endOfTurn":false}}`, protocol.ReasonConfigInvalid, "policy.endOfTurn false must be"},
		{"holds too many", `{"schemaVersion":1,"workspaceId":"w","policy":{"endOfTurnMaxHolds":17}}`, protocol.ReasonConfigInvalid, "from 0 to 16"},
		{"holds fraction", `{"schemaVersion":1,"workspaceId":"w","policy":{"endOfTurnMaxHolds":1.5}}`, protocol.ReasonConfigInvalid, "from 0 to 16"},
		{"holds negative", `{"schemaVersion":1,"workspaceId":"w","policy":{"endOfTurnMaxHolds":-1}}`, protocol.ReasonConfigInvalid, "from 0 to 16"},
		{"policy key misspelt", `{"schemaVersion":1,"workspaceId":"w","policy":{"midturn":"off"}}`, protocol.ReasonConfigUnknownKey, "policy.midturn"},
		{"adapters not array", `{"schemaVersion":1,"workspaceId":"w","requiredAdapters":"claude"}`, protocol.ReasonConfigInvalid, "requiredAdapters must be an array"},
		{"adapters null", `{"schemaVersion":1,"workspaceId":"w","requiredAdapters":null}`, protocol.ReasonConfigInvalid, "requiredAdapters must be an array"},
		{"adapter not portable", `{"schemaVersion":1,"workspaceId":"w","requiredAdapters":["claude code"]}`, protocol.ReasonConfigInvalid, "requiredAdapters[0]"},
		{"extensions array", `{"schemaVersion":1,"workspaceId":"w","extensions":[]}`, protocol.ReasonConfigInvalid, "extensions must be a JSON object"},
		{"extensions null", `{"schemaVersion":1,"workspaceId":"w","extensions":null}`, protocol.ReasonConfigInvalid, "extensions must be a JSON object"},
		{"storeUrl number", `{"schemaVersion":1,"workspaceId":"w","storeUrl":5432}`, protocol.ReasonConfigInvalid, "storeUrl must be a string"},
		{"storeUrl null", `{"schemaVersion":1,"workspaceId":"w","storeUrl":null}`, protocol.ReasonConfigInvalid, "storeUrl must be a string"},
		{"storeUrl empty", `{"schemaVersion":1,"workspaceId":"w","storeUrl":""}`, protocol.ReasonConfigInvalid, "storeUrl is empty"},
		{"storeUrl sqlite", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"sqlite:///tmp/x.db"}`, protocol.ReasonConfigInvalid, "must start with postgres://"},
		{"storeUrl keywords", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"host=db user=acc"}`, protocol.ReasonConfigInvalid, "must start with postgres://"},
		{"storeUrl no host", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres:///acc"}`, protocol.ReasonConfigInvalid, "names no server"},
		{"storeUrl newline", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://db/acc\n"}`, protocol.ReasonConfigInvalid, "one line"},
		{"storeUrl bad escape", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://acc:s3cr%zz@db/acc"}`, protocol.ReasonConfigInvalid, "is not a URL"},
		{"storeUrl userinfo password", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://acc:s3cret@db.example:5432/acc"}`, protocol.ReasonStoreURLHasPassword, "PGPASSWORD, ~/.pgpass"},
		{"storeUrl empty password", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgresql://acc:@db.example/acc"}`, protocol.ReasonStoreURLHasPassword, "postgresql://acc@db.example/acc"},
		{"storeUrl sslpassword parameter", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://acc@db.example/acc?sslkey=/k&sslpassword=s3cret"}`, protocol.ReasonStoreURLHasPassword, "sslkey=%2Fk"},
		{"storeUrl password parameter", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://db.example/acc?sslmode=require&password=s3cret"}`, protocol.ReasonStoreURLHasPassword, "sslmode=require"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ValidateConfig([]byte(tc.raw))
			if err == nil {
				t.Fatalf("accepted %s as %+v", tc.raw, cfg)
			}
			if !protocol.IsReason(err, tc.reason) || protocol.CodeOf(err) != protocol.ExitData {
				t.Fatalf("err = %v (reason %s); want %s exit 4", err, protocol.AsError(err).Reason, tc.reason)
			}
			if !strings.Contains(err.Error(), tc.substr) {
				t.Fatalf("message %q lacks %q", err.Error(), tc.substr)
			}
			if strings.Contains(err.Error(), "s3cr") {
				t.Fatalf("message %q shows the password", err.Error())
			}
			if !strings.HasPrefix(err.Error(), ConfigFileName+": ") {
				t.Fatalf("message %q does not name the file", err.Error())
			}
			assertOneLine(t, err)
		})
	}
}

func TestValidateConfigAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want *Config
	}{
		{"minimal gets defaults", `{"schemaVersion":1,"workspaceId":"w"}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: DefaultPolicy(), RequiredAdapters: []string{}}},
		{"number spellings", `{"schemaVersion":1.0,"workspaceId":"w","policy":{"contextBudgetBytes":6.4e4}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "advisory", ContextBudgetBytes: 64000, OrphanGraceMs: DefaultOrphanGraceMs, MidTurn: "actionable", EndOfTurn: "actionable", EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds}, RequiredAdapters: []string{}}},
		{"grace bounds", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":86400000}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "advisory", ContextBudgetBytes: 6000, OrphanGraceMs: 86400000, MidTurn: "actionable", EndOfTurn: "actionable", EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds}, RequiredAdapters: []string{}}},
		{"turn delivery off", `{"schemaVersion":1,"workspaceId":"w","policy":{"midTurn":"off","endOfTurn":"off","endOfTurnMaxHolds":0}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "advisory", ContextBudgetBytes: 6000, OrphanGraceMs: DefaultOrphanGraceMs, MidTurn: "off", EndOfTurn: "off", EndOfTurnMaxHolds: 0}, RequiredAdapters: []string{}}},
		{"mid-turn all", `{"schemaVersion":1,"workspaceId":"w","policy":{"midTurn":"all","endOfTurnMaxHolds":16}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "advisory", ContextBudgetBytes: 6000, OrphanGraceMs: DefaultOrphanGraceMs, MidTurn: "all", EndOfTurn: "actionable", EndOfTurnMaxHolds: 16}, RequiredAdapters: []string{}}},
		{"grace zero", `{"schemaVersion":1,"workspaceId":"w","policy":{"orphanGraceMs":0}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "advisory", ContextBudgetBytes: 6000, OrphanGraceMs: 0, MidTurn: "actionable", EndOfTurn: "actionable", EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds}, RequiredAdapters: []string{}}},
		{"budget bounds", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":1,"claimMode":"guarded"}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: Policy{ClaimMode: "guarded", ContextBudgetBytes: 1, OrphanGraceMs: DefaultOrphanGraceMs, MidTurn: "actionable", EndOfTurn: "actionable", EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds}, RequiredAdapters: []string{}}},
		{"roots that stay inside", `{"schemaVersion":1,"workspaceId":"w","roots":["a/../b","./c/","a\\b","a/b/../..",".//d"]}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"a/../b", "./c/", `a\b`, "a/b/../..", ".//d"}, Policy: DefaultPolicy(), RequiredAdapters: []string{}}},
		{"store on PostgreSQL", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgres://acc@db.example:5432/acc?sslmode=verify-full"}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: DefaultPolicy(), RequiredAdapters: []string{},
				StoreURL: "postgres://acc@db.example:5432/acc?sslmode=verify-full"}},
		{"store through a service", `{"schemaVersion":1,"workspaceId":"w","storeUrl":"postgresql://?host=/run/postgresql&service=acc"}`,
			&Config{SchemaVersion: 1, WorkspaceID: "w", Roots: []string{"."}, Policy: DefaultPolicy(), RequiredAdapters: []string{},
				StoreURL: "postgresql://?host=/run/postgresql&service=acc"}},
		{"everything", `{"schemaVersion":1,"workspaceId":"workspace_x","displayName":"Room","roots":["."],"policy":{},"requiredAdapters":["claude","kimi"],"extensions":{"a":[1,2],"b":{"c":null}}}`,
			&Config{SchemaVersion: 1, WorkspaceID: "workspace_x", DisplayName: "Room", Roots: []string{"."}, Policy: DefaultPolicy(),
				RequiredAdapters: []string{"claude", "kimi"}, Extensions: map[string]json.RawMessage{"a": json.RawMessage(`[1,2]`), "b": json.RawMessage(`{"c":null}`)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ValidateConfig([]byte(tc.raw))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigNewRoundTrips(t *testing.T) {
	t.Parallel()
	cfg := NewConfig(protocol.DerivedWorkspaceID("/x"), "x")
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "schemaVersion": 1,
  "workspaceId": "workspace_` + protocol.DerivedWorkspaceID("/x")[len("workspace_"):] + `",
  "displayName": "x",
  "roots": [
    "."
  ],
  "policy": {
    "claimMode": "advisory",
    "contextBudgetBytes": 6000,
    "orphanGraceMs": 120000,
    "midTurn": "actionable",
    "endOfTurn": "actionable",
    "endOfTurnMaxHolds": 2
  },
  "requiredAdapters": []
}`
	if string(raw) != want {
		t.Fatalf("NewConfig renders\n%s\nwant\n%s", raw, want)
	}
	back, err := ValidateConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestConfigLoadAndFind(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	deep := filepath.Join(dir, "a", "b")
	mustMkdir(t, deep)
	if p, err := FindConfig(deep); err != nil || (p != "" && strings.HasPrefix(p, dir)) {
		t.Fatalf("FindConfig without config = %q, %v", p, err)
	}
	cfgPath := filepath.Join(dir, "a", ConfigFileName)
	mustWrite(t, cfgPath, `{"schemaVersion":1,"workspaceId":"w","policy":{"claimMode":"guarded"}}`)
	p, err := FindConfig(deep)
	if err != nil || p != cfgPath {
		t.Fatalf("FindConfig = %q, %v; want %q", p, err, cfgPath)
	}
	cfg, err := LoadConfig(p)
	if err != nil || cfg.Policy.ClaimMode != "guarded" || cfg.Policy.ContextBudgetBytes != DefaultContextBudgetBytes {
		t.Fatalf("LoadConfig = %+v, %v", cfg, err)
	}
	mustWrite(t, cfgPath, `{"schemaVersion":1,"workspaceId":"w","bogus":true}`)
	_, err = LoadConfig(cfgPath)
	if !protocol.IsReason(err, protocol.ReasonConfigUnknownKey) || !strings.HasPrefix(err.Error(), cfgPath+": ") {
		t.Fatalf("LoadConfig error %v does not start with the path", err)
	}
}

func FuzzValidateConfig(f *testing.F) {
	seeds := []string{
		``, `{}`, `null`, `[]`, `{"schemaVersion":1}`,
		`{"schemaVersion":1,"workspaceId":"w"}`,
		`{"schemaVersion":1,"workspaceId":"w","roots":["a/../..","x"]}`,
		`{"schemaVersion":1,"workspaceId":"w","roots":["a\\..\\b"],"policy":{"claimMode":"guarded","contextBudgetBytes":64000}}`,
		`{"schemaVersion":1,"workspaceId":"w","displayName":"n","requiredAdapters":["claude"],"extensions":{"k":{"n":[1,"2",null]}}}`,
		`{"schemaVersion":1,"workspaceId":"w","sessions":[],"zzz":1}`,
		`{"schemaVersion":1e0,"workspaceId":"w","policy":{"contextBudgetBytes":1e400}}`,
		`{"schemaVersion":1,"workspaceId":"w","displayName":"\u00e9\ud83d\ude00"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ValidateConfig(raw)
		if err != nil {
			if cfg != nil {
				t.Fatal("a config returned with an error")
			}
			pe := protocol.AsError(err)
			if pe.Code() != protocol.ExitData || (pe.Reason != protocol.ReasonConfigInvalid && pe.Reason != protocol.ReasonConfigUnknownKey) {
				t.Fatalf("refusal %v has reason %s exit %d; want a config reason, exit 4", err, pe.Reason, pe.Code())
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("multi-line message %q", err.Error())
			}
			return
		}
		// An accepted config obeys the schema and survives a round trip.
		if cfg.SchemaVersion != 1 || !protocol.IsPortableID(cfg.WorkspaceID) || len(cfg.Roots) == 0 ||
			(cfg.Policy.ClaimMode != "advisory" && cfg.Policy.ClaimMode != "guarded") ||
			cfg.Policy.ContextBudgetBytes < 1 || cfg.Policy.ContextBudgetBytes > 64000 {
			t.Fatalf("accepted config breaks the schema: %+v", cfg)
		}
		for _, r := range cfg.Roots {
			if checkConfigRoot(r) != "" {
				t.Fatalf("accepted bad root %q", r)
			}
		}
		again, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ValidateConfig(again)
		if err != nil {
			t.Fatalf("re-validating %s: %v", again, err)
		}
		if diff := cmp.Diff(cfg, back, cmp.Comparer(func(a, b json.RawMessage) bool {
			var x, y any
			return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
		})); diff != "" {
			t.Fatalf("round trip changed the config (-first +second):\n%s", diff)
		}
	})
}

func BenchmarkDiscoverWorkspace(b *testing.B) {
	base, _ := filepath.EvalSymlinks(b.TempDir())
	repo := filepath.Join(base, "repo")
	plain := filepath.Join(base, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@acc.invalid", "commit", "-q", "--allow-empty", "-m", "x").CombinedOutput(); err != nil {
		b.Fatalf("git commit: %v %s", err, out)
	}
	for _, dir := range []string{repo, plain} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			for b.Loop() {
				if _, err := Discover(context.Background(), DiscoverOptions{Cwd: dir, Getenv: envMap(nil)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestStoreURLEnv(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvStoreURL {
				return v
			}
			return ""
		}
	}
	for _, ok := range []string{"", "postgres://acc@db:5432/acc", "postgresql://acc:s3cret@db/acc?sslmode=require"} {
		got, err := StoreURLEnv(env(ok))
		if err != nil || got != ok {
			t.Errorf("StoreURLEnv(%q) = %q, %v; want it back", ok, got, err)
		}
	}
	for _, bad := range []string{"mysql://acc:s3cret@db/acc", "postgres://acc:s3cret@/", "postgres://acc:s3cr%zz@db/acc", "db.example"} {
		_, err := StoreURLEnv(env(bad))
		if !protocol.IsReason(err, protocol.ReasonEnvInvalid) || protocol.CodeOf(err) != protocol.ExitUsage {
			t.Fatalf("StoreURLEnv(%q) = %v; want env_invalid exit 2", bad, err)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr") || !strings.Contains(msg, EnvStoreURL) {
			t.Fatalf("message %q shows the password or does not name %s", msg, EnvStoreURL)
		}
	}
}
