package workspace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestPlanConfigInitRendersTheExactFile(t *testing.T) {
	dir := filepath.Join(realTempDir(t), "my-project")
	mustMkdir(t, dir)
	plan, err := PlanConfigInit(dir)
	if err != nil {
		t.Fatal(err)
	}
	if plan.File != filepath.Join(dir, ConfigFileName) {
		t.Fatalf("file = %s", plan.File)
	}
	id := plan.Config.WorkspaceID
	if !protocol.IsGeneratedID(protocol.KindWorkspace, id) {
		t.Fatalf("workspace id %q is not workspace_ + 22 base64url characters", id)
	}
	want := `{
  "schemaVersion": 1,
  "workspaceId": "` + id + `",
  "displayName": "my-project",
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
}
`
	if string(plan.Preview) != want {
		t.Fatalf("preview:\n%s\nwant:\n%s", plan.Preview, want)
	}
	if _, err := os.Stat(plan.File); !os.IsNotExist(err) {
		t.Fatal("planning wrote the file")
	}
	if err := plan.Write(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(plan.File)
	if err != nil || string(got) != want {
		t.Fatalf("written bytes differ from the preview: %v\n%s", err, got)
	}
	info, _ := os.Stat(plan.File)
	if perm := info.Mode().Perm(); perm&^0o644 != 0 || perm&0o600 != 0o600 {
		t.Fatalf("mode %v", info.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	// What init writes, validate accepts, and discovery uses.
	res, err := ValidateConfigAt(dir, "")
	if err != nil || !res.Present || *res.File != plan.File {
		t.Fatalf("validate: %+v %v", res, err)
	}
	if ws := discover(t, dir, nil); ws.ID != id || ws.Source != protocol.SourceConfig || ws.DisplayName != "my-project" {
		t.Fatalf("discover: %+v", ws)
	}

	// Two plans never share an id.
	other := filepath.Join(realTempDir(t), "my-project")
	mustMkdir(t, other)
	p2, err := PlanConfigInit(other)
	if err != nil || p2.Config.WorkspaceID == id {
		t.Fatalf("second plan: %v %v", p2, err)
	}
}

func TestPlanConfigInitNeverOverwrites(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, ConfigFileName)
	for _, mk := range []func(){
		func() { mustWrite(t, file, "{}\n") },
		func() { mustSymlink(t, "/nonexistent", file) },
		func() { mustMkdir(t, file) },
	} {
		mk()
		_, err := PlanConfigInit(dir)
		wantReason(t, err, protocol.ReasonConfigExists, protocol.ExitConflict)
		assertOneLine(t, err)
		os.RemoveAll(file)
	}

	// A plan whose file appears before it is written is refused, and the
	// newcomer's bytes stay.
	plan, err := PlanConfigInit(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, file, "mine\n")
	wantReason(t, plan.Write(), protocol.ReasonConfigExists, protocol.ExitConflict)
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Fatalf("overwritten: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := plan.writeExclusive(); !protocol.IsReason(err, protocol.ReasonConfigExists) {
		t.Fatalf("fallback write over an existing file: %v", err)
	}
}

func TestConfigInitRacesHaveOneWinner(t *testing.T) {
	dir := realTempDir(t)
	const n = 8
	plans := make([]*ConfigInitPlan, n)
	for i := range plans {
		p, err := PlanConfigInit(dir)
		if err != nil {
			t.Fatal(err)
		}
		plans[i] = p
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range plans {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = plans[i].Write() }()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("two writers won: %d and %d", winner, i)
		case err == nil:
			winner = i
		default:
			wantReason(t, err, protocol.ReasonConfigExists, protocol.ExitConflict)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	got, _ := os.ReadFile(filepath.Join(dir, ConfigFileName))
	if string(got) != string(plans[winner].Preview) {
		t.Fatalf("file holds %q, want the winner's bytes", got)
	}
}

func TestPlanConfigInitRefusals(t *testing.T) {
	base := realTempDir(t)
	_, err := PlanConfigInit(filepath.Join(base, "missing"))
	wantReason(t, err, protocol.ReasonWorkspaceUnresolvable, protocol.ExitUsage)
	mustWrite(t, filepath.Join(base, "file"), "x")
	_, err = PlanConfigInit(filepath.Join(base, "file"))
	wantReason(t, err, protocol.ReasonWorkspaceUnresolvable, protocol.ExitUsage)

	// A directory that refuses new files: read-only by mode, or, for root
	// (whom modes do not stop), /proc, which refuses them to everyone.
	ro := filepath.Join(base, "ro")
	mustMkdir(t, ro)
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ro, 0o755)
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/proc/self"); err != nil {
			t.Skip("running as root without /proc: no directory refuses a new file")
		}
		ro = "/proc"
	}
	plan, err := PlanConfigInit(ro)
	if err != nil {
		t.Fatal(err)
	}
	err = plan.Write()
	wantReason(t, err, protocol.ReasonDirectoryUnwritable, protocol.ExitUsage)
	assertOneLine(t, err)
	if _, err := os.Lstat(plan.File); !os.IsNotExist(err) {
		t.Fatalf("a refused write left %s", plan.File)
	}
}

func TestValidateConfigAtWalksUpAndNamesTheFile(t *testing.T) {
	base := realTempDir(t)
	root := filepath.Join(base, "proj")
	sub := filepath.Join(root, "a", "b")
	mustMkdir(t, sub)

	res, err := ValidateConfigAt(sub, "")
	if err != nil || res.Present || res.File != nil || !res.Valid {
		t.Fatalf("no config: %+v %v", res, err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"file":null`) || !strings.Contains(string(b), `"contextBudgetBytes":6000`) {
		t.Fatalf("defaults: %s", b)
	}

	cfgFile := filepath.Join(root, ConfigFileName)
	mustWrite(t, cfgFile, `{"schemaVersion":1,"workspaceId":"workspace_x","roots":["."],"policy":{"claimMode":"guarded"},"requiredAdapters":["claude"]}`)
	res, err = ValidateConfigAt(sub, "")
	if err != nil || !res.Present || *res.File != cfgFile {
		t.Fatalf("walk up: %+v %v", res, err)
	}
	cfg := res.Config.(*Config)
	if cfg.Policy.ClaimMode != ClaimModeGuarded || cfg.Policy.ContextBudgetBytes != DefaultContextBudgetBytes || cfg.RequiredAdapters[0] != "claude" {
		t.Fatalf("config: %+v", cfg)
	}

	// --workspace names a file exactly, relative to the selected directory.
	other := filepath.Join(base, "other.json")
	mustWrite(t, other, `{"schemaVersion":1,"workspaceId":"workspace_y","roots":["proj"]}`)
	res, err = ValidateConfigAt(sub, "../../../other.json")
	if err != nil || *res.File != other || res.Config.(*Config).WorkspaceID != "workspace_y" {
		t.Fatalf("explicit: %+v %v", res, err)
	}
}

func TestValidateConfigAtRefusesByName(t *testing.T) {
	for _, tc := range []struct {
		name, body, reason, mention string
	}{
		{"unknown key", `{"schemaVersion":1,"workspaceId":"w","clam_mode":"guarded"}`, protocol.ReasonConfigUnknownKey, "clam_mode"},
		{"unknown policy key", `{"schemaVersion":1,"workspaceId":"w","policy":{"mode":"x"}}`, protocol.ReasonConfigUnknownKey, "policy.mode"},
		{"runtime keys", `{"schemaVersion":1,"workspaceId":"w","sessions":[],"tokens":{}}`, protocol.ReasonConfigInvalid, "sessions, tokens"},
		{"absolute root", `{"schemaVersion":1,"workspaceId":"w","roots":["/etc"]}`, protocol.ReasonConfigInvalid, "roots[0]"},
		{"escaping root", `{"schemaVersion":1,"workspaceId":"w","roots":[".","a/../../x"]}`, protocol.ReasonConfigInvalid, "roots[1]"},
		{"missing root", `{"schemaVersion":1,"workspaceId":"w","roots":["nope"]}`, protocol.ReasonConfigInvalid, "roots[0]"},
		{"budget zero", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":0}}`, protocol.ReasonConfigInvalid, "contextBudgetBytes"},
		{"budget too big", `{"schemaVersion":1,"workspaceId":"w","policy":{"contextBudgetBytes":64001}}`, protocol.ReasonConfigInvalid, "contextBudgetBytes"},
		{"claim mode", `{"schemaVersion":1,"workspaceId":"w","policy":{"claimMode":"strict"}}`, protocol.ReasonConfigInvalid, "claimMode"},
		{"schema version", `{"schemaVersion":2,"workspaceId":"w"}`, protocol.ReasonConfigInvalid, "schemaVersion"},
		{"adapter id", `{"schemaVersion":1,"workspaceId":"w","requiredAdapters":["no way"]}`, protocol.ReasonConfigInvalid, "requiredAdapters[0]"},
		{"not json", `{"schemaVersion":1,`, protocol.ReasonConfigInvalid, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realTempDir(t)
			file := filepath.Join(dir, ConfigFileName)
			mustWrite(t, file, tc.body)
			_, err := ValidateConfigAt(dir, "")
			wantReason(t, err, tc.reason, protocol.ExitData)
			assertOneLine(t, err)
			if !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), file) {
				t.Fatalf("message does not name %q and the file: %s", tc.mention, err)
			}
		})
	}

	t.Run("symlinked config", func(t *testing.T) {
		dir := realTempDir(t)
		real := filepath.Join(dir, "real.json")
		mustWrite(t, real, `{"schemaVersion":1,"workspaceId":"w"}`)
		sub := filepath.Join(dir, "sub")
		mustMkdir(t, sub)
		mustSymlink(t, real, filepath.Join(dir, ConfigFileName))
		_, err := ValidateConfigAt(sub, "")
		wantReason(t, err, protocol.ReasonConfigInvalid, protocol.ExitData)
		if !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("message: %s", err)
		}
	})
}
