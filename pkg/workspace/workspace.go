package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/protocol"
)

// ConfigFileName is the workspace config file found by walking up from the
// start directory (docs/protocol.md#workspace-discovery).
const ConfigFileName = "acc.workspace.json"

// EnvWorkspaceRoot replaces the working directory as the start of workspace
// discovery when set (docs/protocol.md#environment-variables).
const EnvWorkspaceRoot = "ACC_WORKSPACE_ROOT"

// Workspace config defaults and limits (docs/protocol.md#configuration-file).
const (
	ConfigSchemaVersion       = 1
	ClaimModeAdvisory         = protocol.EnforcementAdvisory
	ClaimModeGuarded          = protocol.EnforcementGuarded
	DefaultContextBudgetBytes = 6000
	MaxContextBudgetBytes     = 64000
	// DefaultOrphanGraceMs and MaxOrphanGraceMs bound policy.orphanGraceMs
	// (milliseconds): 2 minutes by default, at most a day.
	DefaultOrphanGraceMs = 120_000
	MaxOrphanGraceMs     = 86_400_000
	// DefaultEndOfTurnMaxHolds and MaxEndOfTurnMaxHolds bound
	// policy.endOfTurnMaxHolds: how many times one turn may be held open.
	DefaultEndOfTurnMaxHolds = 2
	MaxEndOfTurnMaxHolds     = 16
	// maxConfigBytes bounds how much of a config file is read; a real one is
	// a few hundred bytes.
	maxConfigBytes = 1 << 20
)

// policyKeys are the keys policy takes.
var policyKeys = []string{"claimMode", "contextBudgetBytes", "orphanGraceMs", "midTurn", "endOfTurn", "endOfTurnMaxHolds"}

// Policy is the workspace policy of acc.workspace.json
// (docs/protocol.md#configuration-file;
// docs/decisions.md#19-workspace-config). ClaimMode is the default
// --enforcement of claims ("advisory" or "guarded"); ContextBudgetBytes is
// the ceiling, in UTF-8 bytes, of the context injected into a turn
// (1..64000); OrphanGraceMs is how long, in milliseconds (0..86400000), the claims of a session whose
// process is gone keep blocking after its last heartbeat
// (docs/configuration.md#fields; docs/concepts.md#when-a-holder-dies).
//
// MidTurn says which addressed messages a session's post-tool hook puts
// before its model in the middle of a turn ("off", "actionable" — the
// default: questions, requests, answers, decisions and addressed handoffs
// — or "all"); EndOfTurn whether a stopping agent that owes an answer is
// kept working once ("off" or "actionable", the default); and
// EndOfTurnMaxHolds how many times one turn may be held, 0..16 (default 2)
// (docs/delivery.md#mid-turn, docs/delivery.md#end-of-turn).
type Policy struct {
	ClaimMode          string `json:"claimMode"`
	ContextBudgetBytes int    `json:"contextBudgetBytes"`
	OrphanGraceMs      int    `json:"orphanGraceMs"`
	MidTurn            string `json:"midTurn"`
	EndOfTurn          string `json:"endOfTurn"`
	EndOfTurnMaxHolds  int    `json:"endOfTurnMaxHolds"`
}

// Turn delivery policies of policy.midTurn and policy.endOfTurn.
const (
	TurnDeliveryOff        = "off"
	TurnDeliveryActionable = "actionable"
	TurnDeliveryAll        = "all"
)

// DefaultPolicy returns the policy that applies when no config sets one:
// advisory claims, a 6000-byte context budget and a 2-minute orphan grace.
func DefaultPolicy() Policy {
	return Policy{ClaimMode: ClaimModeAdvisory, ContextBudgetBytes: DefaultContextBudgetBytes, OrphanGraceMs: DefaultOrphanGraceMs,
		MidTurn: TurnDeliveryActionable, EndOfTurn: TurnDeliveryActionable, EndOfTurnMaxHolds: DefaultEndOfTurnMaxHolds}
}

// OrphanGrace is OrphanGraceMs as a duration, clamped to 0..MaxOrphanGraceMs.
func (p Policy) OrphanGrace() time.Duration {
	return time.Duration(min(max(p.OrphanGraceMs, 0), MaxOrphanGraceMs)) * time.Millisecond
}

// Config is a validated acc.workspace.json with every default filled in
// (docs/protocol.md#configuration-file). Roots are as written in the file:
// relative to the directory holding it. DisplayName is "" when the file does not set one.
// Extensions keeps each value's JSON text untouched.
type Config struct {
	SchemaVersion    int      `json:"schemaVersion"`
	WorkspaceID      string   `json:"workspaceId"`
	DisplayName      string   `json:"displayName,omitempty"`
	Roots            []string `json:"roots"`
	Policy           Policy   `json:"policy"`
	RequiredAdapters []string `json:"requiredAdapters"`
	// StoreURL is the PostgreSQL server the room lives on, "" for SQLite
	// in each user's data home (docs/configuration.md#rooms-on-postgresql);
	// never with a password.
	StoreURL   string                     `json:"storeUrl,omitempty"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// NewConfig returns the config `acc config init` writes: the given id and
// display name, roots ["."], the default policy and no required adapters
// (docs/protocol.md#configuration-file).
func NewConfig(workspaceID, displayName string) *Config {
	return &Config{
		SchemaVersion:    ConfigSchemaVersion,
		WorkspaceID:      workspaceID,
		DisplayName:      displayName,
		Roots:            []string{"."},
		Policy:           DefaultPolicy(),
		RequiredAdapters: []string{},
	}
}

// GitInfo is what the Git probe learned about the start directory. CommonDir
// and WorktreeRoot are canonical absolute paths. Branch is nil on a detached
// HEAD, Head is nil before the first commit, Remote is nil when the
// repository has no "origin".
type GitInfo struct {
	CommonDir    string  `json:"commonDir"`
	WorktreeRoot string  `json:"worktreeRoot"`
	Branch       *string `json:"branch"`
	Head         *string `json:"head"`
	Remote       *string `json:"remote"`
}

// Workspace is the discovered room (docs/protocol.md#workspace-discovery).
type Workspace struct {
	// ID is the workspace id: the config's workspaceId, or derived from the
	// Git common directory or the start directory.
	ID string `json:"workspaceId"`
	// Source is protocol.SourceConfig, SourceGit or SourceDirectory.
	Source      string `json:"source"`
	DisplayName string `json:"displayName"`
	// Roots are canonical absolute directories, never empty.
	Roots []string `json:"roots"`
	// Start is the canonical start directory (the working directory, --cwd
	// or ACC_WORKSPACE_ROOT).
	Start string `json:"start"`
	// ConfigPath is the acc.workspace.json that governs the workspace, or ""
	// when none does.
	ConfigPath       string   `json:"configPath,omitempty"`
	Policy           Policy   `json:"policy"`
	RequiredAdapters []string `json:"requiredAdapters"`
	// Git is nil outside a Git work tree; it is kept for config workspaces.
	Git *GitInfo `json:"git,omitempty"`
	// StoreURL is the config's storeUrl (no password), "" when the room
	// is in SQLite or the workspace has no config.
	StoreURL string `json:"storeUrl,omitempty"`
}

// CheckoutRoot returns the directory a session of this workspace works in:
// the Git worktree root when the start directory is inside Git, else the
// first root (docs/protocol.md#workspace-discovery).
func (w *Workspace) CheckoutRoot() string {
	if w.Git != nil {
		return w.Git.WorktreeRoot
	}
	return w.Roots[0]
}

// Branch returns the checked-out Git branch, or nil outside Git or on a
// detached HEAD.
func (w *Workspace) Branch() *string {
	if w.Git == nil || w.Git.Branch == nil {
		return nil
	}
	b := *w.Git.Branch
	return &b
}

// DiscoverOptions are the inputs of Discover.
type DiscoverOptions struct {
	// Cwd is the directory discovery starts from; "" means the process
	// working directory; a relative value is taken against it.
	Cwd string
	// ConfigPath, when set, names the config to use instead of walking up
	// (--workspace); a relative value is taken against Cwd.
	ConfigPath string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Remote also asks Git for the origin URL (GitInfo.Remote). Nothing in
	// acc's rules needs it, so commands and hooks skip that extra process.
	Remote bool
}

// Discover finds the workspace that governs the start directory
// (docs/protocol.md#workspace-discovery; docs/decisions.md#15-storage-layout,
// docs/decisions.md#19-workspace-config).
//
// The start is o.Cwd, replaced by ACC_WORKSPACE_ROOT when that is set, and is
// resolved through symlinks. The workspace is then, in order of precedence:
//   - config: the first acc.workspace.json found walking up from the start
//     (or exactly o.ConfigPath). ID is its workspaceId, Roots its roots
//     resolved against the file's directory (canonical, duplicates dropped),
//     DisplayName its displayName or the base name of its directory.
//   - git: the start lies in a Git work tree. ID is derived from the
//     canonical Git common directory, so every worktree of one repository
//     shares the room; Roots is [worktree root]; DisplayName is the worktree
//     root's base name.
//   - directory: ID is derived from the start; Roots is [start].
//
// Git enrichment (Git) is probed from the start for every source, with all
// GIT_* environment variables removed; any Git failure means "not in Git".
// Discover does not check where the data home lies: callers run
// CheckContainment on Roots.
//
// Errors: path_not_absolute (exit 2) when ACC_WORKSPACE_ROOT is relative;
// workspace_unresolvable (exit 2) when the start or an explicit config path
// cannot be resolved; config_invalid (exit 4) when the config is a symlink,
// not a regular file, unreadable, not JSON, or breaks a rule of
// docs/protocol.md#configuration-file, and
// config_unknown_key (exit 4) for keys the schema does not have.
func Discover(ctx context.Context, o DiscoverOptions) (*Workspace, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd := o.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		wd, err := os.Getwd()
		if err != nil {
			return nil, protocol.Errorf(protocol.ReasonWorkspaceUnresolvable,
				"cannot resolve the working directory: %s; %s", errText(err),
				protocol.Step{Command: protocol.StepStartInDirectory}).Wrap(err)
		}
		cwd = filepath.Join(wd, cwd)
	}
	startIn := cwd
	if v := getenv(EnvWorkspaceRoot); v != "" {
		if !filepath.IsAbs(v) {
			return nil, protocol.Errorf(protocol.ReasonPathNotAbsolute,
				"ACC_WORKSPACE_ROOT must be an absolute path, got %q; set it to an absolute directory or unset it", v).
				With("variable", EnvWorkspaceRoot)
		}
		startIn = v
	}
	start, err := filepath.EvalSymlinks(startIn)
	if err == nil {
		var info os.FileInfo
		if info, err = os.Stat(start); err == nil && !info.IsDir() {
			err = syscall.ENOTDIR
		}
	}
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonWorkspaceUnresolvable,
			"cannot resolve the workspace root %s: %s; %s", startIn, errText(err),
			protocol.Step{Command: protocol.StepStartInDirectory, Args: map[string]string{"variable": EnvWorkspaceRoot}}).
			With("path", startIn).Wrap(err)
	}

	// The Git probe costs a process or two; run it while the config is read.
	probeCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	gitCh := make(chan *GitInfo, 1)
	go func() { gitCh <- probeGit(probeCtx, start, o.Remote) }()
	awaitGit := func() *GitInfo { return <-gitCh }

	cfgPath := ""
	if o.ConfigPath != "" {
		p := o.ConfigPath
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			cancel()
			awaitGit()
			return nil, protocol.Errorf(protocol.ReasonWorkspaceUnresolvable,
				"cannot resolve the directory of workspace config %s: %s; pass the path of an existing acc.workspace.json", p, errText(err)).
				With("file", p).Wrap(err)
		}
		cfgPath = filepath.Join(dir, filepath.Base(p))
	} else if cfgPath, err = FindConfig(start); err != nil {
		cancel()
		awaitGit()
		return nil, err
	}

	ws := &Workspace{Start: start, Policy: DefaultPolicy(), RequiredAdapters: []string{}}
	if cfgPath != "" {
		cfg, err := LoadConfig(cfgPath)
		if err == nil {
			err = ws.applyConfig(cfg, cfgPath)
		}
		if err != nil {
			cancel()
			awaitGit()
			return nil, err
		}
	}
	ws.Git = awaitGit()
	switch {
	case ws.Source == protocol.SourceConfig:
	case ws.Git != nil:
		ws.Source = protocol.SourceGit
		ws.ID = protocol.DerivedWorkspaceID(ws.Git.CommonDir)
		ws.Roots = []string{ws.Git.WorktreeRoot}
		ws.DisplayName = baseName(ws.Git.WorktreeRoot)
	default:
		ws.Source = protocol.SourceDirectory
		ws.ID = protocol.DerivedWorkspaceID(start)
		ws.Roots = []string{start}
		ws.DisplayName = baseName(start)
	}
	return ws, nil
}

// applyConfig makes w a config workspace: id, display name, canonical roots,
// policy and required adapters from cfg, which was read from path (whose
// directory is canonical). A backslash in a root is read as a separator, as
// the segment walk of ValidateConfig reads it.
func (w *Workspace) applyConfig(cfg *Config, path string) error {
	base := filepath.Dir(path)
	seen := map[string]bool{}
	for i, root := range cfg.Roots {
		p := filepath.Join(base, filepath.FromSlash(strings.ReplaceAll(root, `\`, "/")))
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			var info os.FileInfo
			if info, err = os.Stat(real); err == nil && !info.IsDir() {
				err = syscall.ENOTDIR
			}
		}
		if err != nil {
			return protocol.Errorf(protocol.ReasonConfigInvalid,
				"%s: roots[%d] %q is not an existing directory (%s); create it or fix roots", path, i, root, errText(err)).
				With("file", path).With("field", fmt.Sprintf("roots[%d]", i)).Wrap(err)
		}
		if !seen[real] {
			seen[real] = true
			w.Roots = append(w.Roots, real)
		}
	}
	w.ID = cfg.WorkspaceID
	w.Source = protocol.SourceConfig
	w.ConfigPath = path
	w.DisplayName = cfg.DisplayName
	if w.DisplayName == "" {
		w.DisplayName = baseName(base)
	}
	w.Policy = cfg.Policy
	w.RequiredAdapters = append([]string{}, cfg.RequiredAdapters...)
	w.StoreURL = cfg.StoreURL
	return nil
}

// FindConfig walks up from dir (a canonical absolute directory) to the
// filesystem root and returns the first acc.workspace.json it meets, or ""
// when there is none (docs/protocol.md#workspace-discovery, step 3). Anything at that name
// counts, symlinks and directories included, so LoadConfig can refuse it
// rather than let an ancestor's config govern silently. It never fails today;
// the error is reserved for a check that cannot be completed.
func FindConfig(dir string) (string, error) {
	for d := dir; ; {
		p := filepath.Join(d, ConfigFileName)
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}

// LoadConfig reads and validates one acc.workspace.json
// (docs/protocol.md#configuration-file). The file is opened without following a final
// symlink and without blocking, must be a regular file of at most 1 MiB, and
// is decoded from the opened handle only.
//
// Errors (exit 4 unless noted): config_invalid when the file is a symlink
// ("cannot safely read"), not a regular file, missing, unreadable, too large,
// not JSON, or breaks a rule; config_unknown_key for unknown keys. Every
// message starts with path.
func LoadConfig(path string) (*Config, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
				"cannot safely read the workspace config %s: it is a symbolic link; replace it with a regular file", path).
				With("file", path).Wrap(err)
		case errors.Is(err, os.ErrNotExist):
			return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
				"cannot read the workspace config %s: it does not exist; name an existing acc.workspace.json, or leave %s out to search upwards", path, protocol.Field("workspace")).
				With("file", path).Wrap(err)
		default:
			return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
				"cannot read the workspace config %s: %s; make it a readable regular file", path, errText(err)).
				With("file", path).Wrap(err)
		}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
			"cannot read the workspace config %s: %s; make it a readable regular file", path, errText(err)).
			With("file", path).Wrap(err)
	}
	if !info.Mode().IsRegular() {
		return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
			"cannot safely read the workspace config %s: it is not a regular file; replace it with a regular file", path).
			With("file", path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
			"cannot read the workspace config %s: %s; make it a readable regular file", path, errText(err)).
			With("file", path).Wrap(err)
	}
	if len(raw) > maxConfigBytes {
		return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
			"%s is larger than 1 MiB; a workspace config holds a few settings, so rewrite it by hand", path).
			With("file", path)
	}
	cfg, err := validateConfig(raw, path)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// runtimeStateKeys are refused in a config by name
// (docs/protocol.md#configuration-file, rule 3), in this order.
var runtimeStateKeys = []string{"sessions", "participants", "messages", "claims", "receipts",
	"intents", "events", "deliveryBindings", "tokens", "credentials"}

var configKeys = map[string]bool{"schemaVersion": true, "workspaceId": true, "displayName": true,
	"roots": true, "policy": true, "requiredAdapters": true, "storeUrl": true, "extensions": true}

// ValidateConfig validates the bytes of an acc.workspace.json against the
// schema of docs/protocol.md#configuration-file and returns the config with defaults
// filled in. It performs no I/O; messages name the file "acc.workspace.json".
//
// Rules, checked in this order: one JSON object; schemaVersion is 1;
// runtime-state keys (sessions, participants, messages, claims, receipts,
// intents, events, deliveryBindings, tokens, credentials) are refused, all
// of them named; any other unknown key is refused by name; workspaceId is a
// portable id; displayName, when present, is one line of 1..500 characters;
// roots is a non-empty array of non-empty relative paths that never climb
// above the file's directory (a segment walk over "/" and "\"); policy holds
// only claimMode (advisory|guarded), contextBudgetBytes (integer
// 1..64000), orphanGraceMs (integer 0..86400000), midTurn
// (off|actionable|all), endOfTurn (off|actionable) and endOfTurnMaxHolds
// (integer 0..16); requiredAdapters is an array of portable ids; storeUrl,
// when present, is a postgres:// URL without a password (ParseStoreURL);
// extensions is an object.
//
// Errors (exit 4): config_unknown_key for unknown keys (top level or inside
// policy); store_url_has_password for a storeUrl carrying a password;
// config_invalid for everything else.
func ValidateConfig(raw []byte) (*Config, error) { return validateConfig(raw, ConfigFileName) }

func validateConfig(raw []byte, name string) (*Config, error) {
	bad := func(field, format string, args ...any) error {
		e := protocol.Errorf(protocol.ReasonConfigInvalid, "%s: %s", name, fmt.Sprintf(format, args...)).With("file", name)
		if field != "" {
			e = e.With("field", field)
		}
		return e
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, bad("", "not valid JSON (%s at byte %d); fix the syntax", syn.Error(), syn.Offset)
		case err != nil && !json.Valid(raw):
			return nil, bad("", "not valid JSON (%s); fix the syntax", err.Error())
		default:
			return nil, bad("", "must hold one JSON object; put the settings inside { }")
		}
	}

	// Rule 2: schemaVersion.
	sv, ok := top["schemaVersion"]
	if !ok {
		return nil, bad("schemaVersion", "schemaVersion is missing; add \"schemaVersion\": 1")
	}
	var svNum float64
	if json.Unmarshal(sv, &svNum) != nil || svNum != ConfigSchemaVersion {
		return nil, bad("schemaVersion", "unknown workspace config schemaVersion %s; this acc reads \"schemaVersion\": 1", clip(string(sv)))
	}

	// Rules 3 and 4: runtime state, then unknown keys.
	var runtimeKeys []string
	for _, k := range runtimeStateKeys {
		if _, ok := top[k]; ok {
			runtimeKeys = append(runtimeKeys, k)
		}
	}
	if len(runtimeKeys) > 0 {
		return nil, protocol.Errorf(protocol.ReasonConfigInvalid,
			"%s: must not carry runtime state: %s; remove them, acc keeps runtime state in its data home",
			name, strings.Join(runtimeKeys, ", ")).With("file", name).With("keys", runtimeKeys)
	}
	var unknown []string
	for k := range top {
		if !configKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		word := "key"
		if len(unknown) > 1 {
			word = "keys"
		}
		return nil, protocol.Errorf(protocol.ReasonConfigUnknownKey,
			"%s: unknown workspace config %s: %s; remove it or move custom data under \"extensions\"",
			name, word, quoteList(unknown)).With("file", name).With("keys", unknown)
	}

	cfg := NewConfig("", "")

	// workspaceId.
	idRaw, ok := top["workspaceId"]
	if !ok {
		return nil, bad("workspaceId", "workspaceId is missing; add one such as %q (any portable id that no other room on this machine uses)", "workspace_myproject")
	}
	if json.Unmarshal(idRaw, &cfg.WorkspaceID) != nil || !protocol.IsPortableID(cfg.WorkspaceID) {
		return nil, bad("workspaceId", "workspaceId %s is not a portable id (1-200 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit); pick one that is", clip(string(idRaw)))
	}

	// displayName.
	if v, ok := top["displayName"]; ok {
		if json.Unmarshal(v, &cfg.DisplayName) != nil || isNull(v) {
			return nil, bad("displayName", "displayName must be a string; quote it or remove it")
		}
		if protocol.CheckLine("displayName", cfg.DisplayName, protocol.MaxLineText) != nil {
			return nil, bad("displayName", "displayName must be one line of 1-%d characters without control characters; shorten or fix it", protocol.MaxLineText)
		}
	}

	// roots.
	if v, ok := top["roots"]; ok {
		var roots []string
		if json.Unmarshal(v, &roots) != nil || isNull(v) || len(roots) == 0 {
			return nil, bad("roots", "roots must be a non-empty array of directory names relative to the config file; use [\".\"] for its own directory")
		}
		for i, r := range roots {
			if err := checkConfigRoot(r); err != "" {
				return nil, bad(fmt.Sprintf("roots[%d]", i), "roots[%d] %s", i, err)
			}
		}
		cfg.Roots = roots
	}

	// policy.
	if v, ok := top["policy"]; ok {
		var pol map[string]json.RawMessage
		if json.Unmarshal(v, &pol) != nil || pol == nil {
			return nil, bad("policy", "policy must be an object such as {\"claimMode\": \"advisory\", \"contextBudgetBytes\": 6000}")
		}
		var extra []string
		for k := range pol {
			if !slices.Contains(policyKeys, k) {
				extra = append(extra, "policy."+k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return nil, protocol.Errorf(protocol.ReasonConfigUnknownKey,
				"%s: unknown workspace config key %s; policy only takes claimMode, contextBudgetBytes, orphanGraceMs, midTurn, endOfTurn and endOfTurnMaxHolds",
				name, quoteList(extra)).With("file", name).With("keys", extra)
		}
		if m, ok := pol["claimMode"]; ok {
			if json.Unmarshal(m, &cfg.Policy.ClaimMode) != nil || isNull(m) ||
				(cfg.Policy.ClaimMode != ClaimModeAdvisory && cfg.Policy.ClaimMode != ClaimModeGuarded) {
				return nil, bad("policy.claimMode", "policy.claimMode %s must be \"advisory\" or \"guarded\"", clip(string(m)))
			}
		}
		if b, ok := pol["contextBudgetBytes"]; ok {
			var f float64
			if json.Unmarshal(b, &f) != nil || f != math.Trunc(f) || f < 1 || f > MaxContextBudgetBytes {
				return nil, bad("policy.contextBudgetBytes", "policy.contextBudgetBytes %s must be a whole number from 1 to %d", clip(string(b)), MaxContextBudgetBytes)
			}
			cfg.Policy.ContextBudgetBytes = int(f)
		}
		if g, ok := pol["orphanGraceMs"]; ok {
			var f float64
			if json.Unmarshal(g, &f) != nil || isNull(g) || f != math.Trunc(f) || f < 0 || f > MaxOrphanGraceMs {
				return nil, bad("policy.orphanGraceMs", "policy.orphanGraceMs %s must be a whole number of milliseconds from 0 to %d (a day)", clip(string(g)), MaxOrphanGraceMs)
			}
			cfg.Policy.OrphanGraceMs = int(f)
		}
		if m, ok := pol["midTurn"]; ok {
			if json.Unmarshal(m, &cfg.Policy.MidTurn) != nil || isNull(m) ||
				!slices.Contains([]string{TurnDeliveryOff, TurnDeliveryActionable, TurnDeliveryAll}, cfg.Policy.MidTurn) {
				return nil, bad("policy.midTurn", "policy.midTurn %s must be \"off\", \"actionable\" or \"all\"", clip(string(m)))
			}
		}
		if m, ok := pol["endOfTurn"]; ok {
			if json.Unmarshal(m, &cfg.Policy.EndOfTurn) != nil || isNull(m) ||
				!slices.Contains([]string{TurnDeliveryOff, TurnDeliveryActionable}, cfg.Policy.EndOfTurn) {
				return nil, bad("policy.endOfTurn", "policy.endOfTurn %s must be \"off\" or \"actionable\"", clip(string(m)))
			}
		}
		if h, ok := pol["endOfTurnMaxHolds"]; ok {
			var f float64
			if json.Unmarshal(h, &f) != nil || isNull(h) || f != math.Trunc(f) || f < 0 || f > MaxEndOfTurnMaxHolds {
				return nil, bad("policy.endOfTurnMaxHolds", "policy.endOfTurnMaxHolds %s must be a whole number from 0 to %d", clip(string(h)), MaxEndOfTurnMaxHolds)
			}
			cfg.Policy.EndOfTurnMaxHolds = int(f)
		}
	}

	// requiredAdapters.
	if v, ok := top["requiredAdapters"]; ok {
		var ids []string
		if json.Unmarshal(v, &ids) != nil || isNull(v) {
			return nil, bad("requiredAdapters", "requiredAdapters must be an array of adapter ids such as [\"claude\", \"codex\"]")
		}
		for i, id := range ids {
			if !protocol.IsPortableID(id) {
				return nil, bad(fmt.Sprintf("requiredAdapters[%d]", i), "requiredAdapters[%d] %q is not a portable id; use a client id such as \"claude\"", i, clip(id))
			}
		}
		cfg.RequiredAdapters = ids
	}

	// storeUrl.
	if v, ok := top["storeUrl"]; ok {
		if json.Unmarshal(v, &cfg.StoreURL) != nil || isNull(v) {
			return nil, bad("storeUrl", "storeUrl must be a string such as \"postgres://acc@db.example:5432/acc\"")
		}
		if err := checkConfigStoreURL(cfg.StoreURL, name); err != nil {
			return nil, err
		}
	}

	// extensions.
	if v, ok := top["extensions"]; ok {
		var ext map[string]json.RawMessage
		if json.Unmarshal(v, &ext) != nil || ext == nil {
			return nil, bad("extensions", "extensions must be a JSON object; wrap custom data in { }")
		}
		cfg.Extensions = ext
	}
	return cfg, nil
}

// checkConfigRoot applies rule 6 of docs/protocol.md#configuration-file to
// one root and returns what is wrong with it ("" when nothing is).
func checkConfigRoot(r string) string {
	if strings.TrimSpace(r) == "" {
		return "is empty; use \".\" for the directory holding the config"
	}
	if protocol.CheckPath("root", r) != nil {
		return fmt.Sprintf("%q must be a path of at most %d bytes without control characters; fix it", clip(r), protocol.MaxPathBytes)
	}
	if r[0] == '/' || r[0] == '\\' || (len(r) >= 3 && r[1] == ':' && (r[2] == '/' || r[2] == '\\') &&
		(r[0] >= 'A' && r[0] <= 'Z' || r[0] >= 'a' && r[0] <= 'z')) {
		return fmt.Sprintf("%q is absolute; write it relative to the directory holding the config", clip(r))
	}
	depth := 0
	for _, seg := range strings.FieldsFunc(r, func(c rune) bool { return c == '/' || c == '\\' }) {
		switch seg {
		case ".":
		case "..":
			depth--
			if depth < 0 {
				return fmt.Sprintf("%q climbs above the directory holding the config; keep roots inside it", clip(r))
			}
		default:
			depth++
		}
	}
	return ""
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// clip shortens s for an error message so one bad value cannot flood it.
func clip(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", clip(k))
	}
	return strings.Join(q, ", ")
}

// errText returns the operating system's words for err without the path
// that os errors repeat.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

func baseName(p string) string {
	b := filepath.Base(p)
	if b == "." || b == "" {
		return p
	}
	return b
}

// GitEnv is the process environment without any GIT_* variable, so a hook
// running inside a client's git operation cannot redirect a Git probe.
func GitEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}

// RunGit runs git -C dir with args and env (see GitEnv) within ctx and
// returns what it printed on standard output; err is the process's failure.
func RunGit(ctx context.Context, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

// probeGit learns the Git facts of dir (docs/protocol.md#workspace-discovery,
// step 4). The
// common case costs one rev-parse (run beside `remote get-url origin` when
// withRemote):
//
//	git rev-parse --path-format=absolute --git-common-dir --show-toplevel HEAD --symbolic-full-name HEAD
//
// prints the common directory, the worktree root, the HEAD commit and
// "refs/heads/<branch>" (or "HEAD" when detached). Before the first commit
// that rev-parse fails after printing the two paths; only then are the paths
// and the branch asked for separately. It returns nil when dir is not in a
// Git work tree or Git cannot answer.
func probeGit(ctx context.Context, dir string, withRemote bool) *GitInfo {
	if !withRemote {
		if g, ok := GitFromFiles(dir); ok {
			return g
		}
	}
	env := GitEnv()
	var remote string
	var wg sync.WaitGroup
	if withRemote {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := RunGit(ctx, env, dir, "remote", "get-url", "origin"); err == nil {
				remote = strings.TrimSpace(out)
			}
		}()
	}
	out, err := RunGit(ctx, env, dir, "rev-parse", "--path-format=absolute",
		"--git-common-dir", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD")
	var common, top, head, sym string
	switch {
	case err == nil:
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 4 {
			wg.Wait()
			return nil
		}
		common, top, head, sym = lines[0], lines[1], lines[2], lines[3]
	case out == "" || ctx.Err() != nil:
		// Not a repository (nothing printed), or cancelled.
		wg.Wait()
		return nil
	default:
		// Printed something, then failed: most likely an unborn HEAD.
		out, err = RunGit(ctx, env, dir, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if err != nil || len(lines) != 2 {
			wg.Wait()
			return nil
		}
		common, top = lines[0], lines[1]
		if ref, err := RunGit(ctx, env, dir, "symbolic-ref", "-q", "HEAD"); err == nil {
			sym = strings.TrimSpace(ref)
		}
	}
	wg.Wait()
	commonReal, err1 := filepath.EvalSymlinks(common)
	topReal, err2 := filepath.EvalSymlinks(top)
	if err1 != nil || err2 != nil || !filepath.IsAbs(commonReal) || !filepath.IsAbs(topReal) {
		return nil
	}
	g := &GitInfo{CommonDir: commonReal, WorktreeRoot: topReal}
	if b, ok := strings.CutPrefix(sym, "refs/heads/"); ok && b != "" {
		g.Branch = &b
	}
	if head != "" {
		g.Head = &head
	}
	if remote != "" {
		g.Remote = &remote
	}
	return g
}
