package workspace

import (
	"fmt"
	"path/filepath"

	"github.com/acc-go/acc/pkg/protocol"
)

// Environment variables read by RuntimeEnv (docs/protocol.md#environment-variables; the
// data home and the workspace root have their constants beside their first
// readers: EnvDataHome, EnvWorkspaceRoot).
const (
	EnvConfigHome  = "ACC_CONFIG_HOME"
	EnvCacheHome   = "ACC_CACHE_HOME"
	EnvParticipant = "ACC_PARTICIPANT"
	EnvSession     = "ACC_SESSION"
	EnvGeneration  = "ACC_GENERATION"
)

// RuntimeEnv is acc's environment, read and validated once per command
// (docs/protocol.md#runtime-location-and-containment,
// docs/protocol.md#environment-variables). core.Open resolves it and keeps
// it on the Room.
type RuntimeEnv struct {
	// DataHome is the base directory holding acc/ (ResolveDataHome).
	DataHome string `json:"dataHome"`
	// ConfigHome and CacheHome are the bases of acc's user configuration and
	// cache: ACC_CONFIG_HOME / ACC_CACHE_HOME when set, else the platform
	// directories. Nothing reads or writes them yet; they are "" when the
	// platform default cannot be resolved (no HOME).
	ConfigHome string `json:"configHome"`
	CacheHome  string `json:"cacheHome"`
	// WorkspaceRoot is ACC_WORKSPACE_ROOT (absolute), or "".
	WorkspaceRoot string `json:"workspaceRoot,omitempty"`
	// Participant is ACC_PARTICIPANT sanitised into a participant id
	// (protocol.SanitiseParticipantID), or "" when the variable is unset.
	Participant string `json:"participant,omitempty"`

	// explicit records which bases came from an ACC_* variable; dataVar
	// names the variable the data home came from (ACC_DATA_HOME or
	// XDG_DATA_HOME), "" when it is the platform default under HOME.
	explicitConfig, explicitCache bool
	dataVar                       string
}

// ResolveRuntimeEnv reads and validates every path and name variable of
// docs/protocol.md#environment-variables. It reads only getenv (empty means unset) and
// creates nothing.
//
//   - ACC_DATA_HOME: see ResolveDataHome (absolute; platform default).
//   - ACC_CONFIG_HOME, ACC_CACHE_HOME: absolute when set. Unset, the platform
//     default applies: darwin ~/Library/Application Support and
//     ~/Library/Caches; elsewhere $XDG_CONFIG_HOME or ~/.config and
//     $XDG_CACHE_HOME or ~/.cache. A default that cannot be resolved (no
//     HOME, a relative XDG value) is left "" rather than refused, because
//     nothing uses these directories yet.
//   - ACC_WORKSPACE_ROOT: absolute when set.
//   - ACC_PARTICIPANT: when set, must keep at least one character after
//     sanitising.
//
// ACC_SESSION and ACC_GENERATION are checked by ResolveCaller, where the
// pair is used. Containment (no base inside the workspace) is checked by
// CheckContainment once the workspace is known.
//
// Errors (exit 2): path_not_absolute naming the variable, home_missing,
// env_invalid for an unusable ACC_PARTICIPANT.
func ResolveRuntimeEnv(goos string, getenv func(string) string) (*RuntimeEnv, error) {
	home, err := ResolveDataHome(goos, getenv)
	if err != nil {
		return nil, err
	}
	e := &RuntimeEnv{DataHome: home}
	switch {
	case getenv(EnvDataHome) != "":
		e.dataVar = EnvDataHome
	case goos != "darwin" && getenv(envXDGDataHome) != "":
		e.dataVar = envXDGDataHome
	}
	if e.ConfigHome, e.explicitConfig, err = resolveUserBase(goos, getenv, EnvConfigHome, configKind); err != nil {
		return nil, err
	}
	if e.CacheHome, e.explicitCache, err = resolveUserBase(goos, getenv, EnvCacheHome, cacheKind); err != nil {
		return nil, err
	}
	if e.WorkspaceRoot, err = WorkspaceRootEnv(getenv); err != nil {
		return nil, err
	}
	if v := getenv(EnvParticipant); v != "" {
		e.Participant = protocol.SanitiseParticipantID(v)
		if e.Participant == "" {
			return nil, protocol.Errorf(protocol.ReasonEnvInvalid,
				"ACC_PARTICIPANT %q leaves no usable participant id (letters, digits, . _ -); set it to a name such as reviewer, or unset it", clip(v)).
				With("variable", EnvParticipant)
		}
	}
	return e, nil
}

// WorkspaceRootEnv returns ACC_WORKSPACE_ROOT cleaned, or "" when it is
// unset. A relative value is path_not_absolute (exit 2).
func WorkspaceRootEnv(getenv func(string) string) (string, error) {
	v := getenv(EnvWorkspaceRoot)
	if v == "" {
		return "", nil
	}
	if !filepath.IsAbs(v) {
		return "", protocol.Errorf(protocol.ReasonPathNotAbsolute,
			"ACC_WORKSPACE_ROOT must be an absolute path, got %q; set it to an absolute directory or unset it", v).
			With("variable", EnvWorkspaceRoot)
	}
	return filepath.Clean(v), nil
}

// resolveUserBase resolves ACC_CONFIG_HOME or ACC_CACHE_HOME (variable),
// falling back to the platform directory of kind k (platformBase), or ""
// when that cannot be resolved.
func resolveUserBase(goos string, getenv func(string) string, variable string, k baseKind) (string, bool, error) {
	if v := getenv(variable); v != "" {
		if !filepath.IsAbs(v) {
			return "", false, protocol.Errorf(protocol.ReasonPathNotAbsolute,
				"%s must be an absolute path, got %q; set it to an absolute directory or unset it", variable, v).
				With("variable", variable)
		}
		return filepath.Clean(v), true, nil
	}
	home := getenv(envHome)
	if v := getenv(k.xdgVar); goos == "darwin" || v == "" || !filepath.IsAbs(v) {
		if home == "" || !filepath.IsAbs(home) {
			return "", false, nil
		}
	}
	dir, _ := platformBase(goos, getenv, home, k)
	return dir, false, nil
}

// CheckContainment refuses runtime state inside the workspace
// (docs/protocol.md#runtime-location-and-containment): the data home's acc directory,
// and the acc directories of ACC_CONFIG_HOME and ACC_CACHE_HOME when they
// are set, must not equal or lie inside any workspace root (for a Git
// workspace, any of its worktrees or its .git). Unset config and cache
// homes are not checked: nothing is written there yet. Nor may a root lie
// inside the data home's acc directory (docs/configuration.md#no-room-here):
// acc keeps its data apart from every room.
//
// Errors: runtime_inside_workspace (exit 2) naming the variable and both
// paths; for a root inside acc's data, details.rootInsideData is true.
func (e *RuntimeEnv) CheckContainment(ws *Workspace) error {
	roots := containmentRoots(ws)
	if err := CheckContainment(e.DataHome, roots); err != nil {
		return err
	}
	// The other way round: a workspace inside acc's data (a directory under
	// <data home>/acc, such as acc/workspaces) would have acc keep its data
	// — for acc/workspaces, this very store — inside the room.
	acc := canonicalPath(AccDir(e.DataHome))
	for _, root := range roots {
		if r := canonicalPath(root); PathWithin(r, acc) {
			return protocol.Errorf(protocol.ReasonRuntimeInsideWorkspace,
				"a workspace must not lie inside acc's data: workspace root %s lies inside acc's data directory %s; run acc inside a repository or project directory outside it",
				r, acc).With("dataDir", acc).With("root", r).With("rootInsideData", true)
		}
	}
	for _, area := range []struct {
		base, variable, what string
		explicit             bool
	}{
		{e.ConfigHome, EnvConfigHome, "config", e.explicitConfig},
		{e.CacheHome, EnvCacheHome, "cache", e.explicitCache},
	} {
		if !area.explicit {
			continue
		}
		if root, inside := withinAny(AccDir(area.base), roots); inside {
			return protocol.Errorf(protocol.ReasonRuntimeInsideWorkspace,
				"%s state must not live inside the workspace: %s puts %s inside workspace root %s; set %s to an absolute directory outside it, or unset it",
				area.what, area.variable, canonicalPath(AccDir(area.base)), root, area.variable).
				With("variable", area.variable).With("root", root).With("dataDir", canonicalPath(AccDir(area.base)))
		}
	}
	return nil
}

// withinAny reports the first root that p (absolute) equals or lies inside,
// compared as CheckContainment compares the data home.
func withinAny(p string, roots []string) (string, bool) {
	c := canonicalPath(p)
	for _, root := range roots {
		r := canonicalPath(root)
		if PathWithin(c, r) || sameFileAncestor(c, r) {
			return r, true
		}
	}
	return "", false
}

// NoRoom says which of acc's directories keeps a directory from being a
// room, worked out from a containment refusal (see WhyNoRoom).
type NoRoom struct {
	// Dir is acc's directory that lies inside the directory, or that the
	// directory lies inside.
	Dir string
	// Why says so: "acc keeps its data inside it (…)", "ACC_DATA_HOME puts
	// acc's data inside it (…)", "it lies inside acc's own data (…)".
	Why string
	// Move is the fix that moves acc's directory away ("set ACC_DATA_HOME
	// to an absolute directory outside …"), "" when no variable put it
	// there.
	Move string
}

// WhyNoRoom says which of acc's directories makes dir no room, from pe, the
// refusal CheckContainment gave for a workspace rooted at dir, and which
// variable to change when one put it there (docs/protocol.md#runtime-location-and-containment).
func (e *RuntimeEnv) WhyNoRoom(dir string, pe *protocol.Error) NoRoom {
	nr := NoRoom{}
	nr.Dir, _ = pe.Details["dataDir"].(string)
	if nr.Dir == "" {
		nr.Dir = canonicalPath(AccDir(e.DataHome))
	}
	if inside, _ := pe.Details["rootInsideData"].(bool); inside {
		nr.Why = fmt.Sprintf("it lies inside acc's own data (%s)", nr.Dir)
		return nr
	}
	variable, _ := pe.Details["variable"].(string)
	what := "data"
	switch variable {
	case EnvConfigHome:
		what = "configuration"
	case EnvCacheHome:
		what = "cache"
	case "":
		variable = e.dataVar
	}
	if variable == "" {
		nr.Why = fmt.Sprintf("acc keeps its data inside it (%s)", nr.Dir)
		return nr
	}
	// A variable put acc's directory there: moving it is the fix. Unsetting
	// ACC_CONFIG_HOME or ACC_CACHE_HOME is one too (the defaults are not
	// checked); an unset data home falls back to a default that may lie
	// there as well.
	nr.Why = fmt.Sprintf("%s puts acc's %s inside it (%s)", variable, what, nr.Dir)
	switch variable {
	case EnvDataHome:
		nr.Move = fmt.Sprintf("set ACC_DATA_HOME to an absolute directory outside %s", dir)
	case envXDGDataHome:
		nr.Move = fmt.Sprintf("set ACC_DATA_HOME (or XDG_DATA_HOME) to an absolute directory outside %s", dir)
	default:
		nr.Move = fmt.Sprintf("set %s to an absolute directory outside %s, or unset it", variable, dir)
	}
	return nr
}
