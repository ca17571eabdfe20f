package install

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/probe"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

//go:embed skill.md
var skill []byte

// Skill is the instructions file every client's agent is given.
func Skill() []byte { return slices.Clone(skill) }

// Delivery policies (docs/delivery.md#live-push-waking-an-idle-session).
var DeliveryPolicies = []string{"off", "actionable", "all"}

// Env is where an installation happens and with which binaries.
type Env struct {
	// DataHome holds the record and the shim.
	DataHome string
	// Home is the user's home, or --home.
	Home string
	// HomeGiven: --home was passed, so client directory overrides in the
	// environment (CODEX_HOME, …) are ignored and everything stays under
	// Home.
	HomeGiven bool
	Getenv    func(string) string
	// LookPath finds a client's binary; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HookBinary and MCPBinary are the absolute paths of acc-hook (what
	// the shim runs) and acc-mcp (what Grok registers).
	HookBinary, MCPBinary string
	AccVersion            string
	// Adapters are the installable adapters, by id.
	Adapters map[string]adapter.Installer
	Now      func() time.Time
	// ProbeTimeout bounds one `<client> --version` (asked twice before
	// the version is unknown, internal/probe); 0 means probe.DefaultTimeout.
	ProbeTimeout time.Duration
}

// shimPath is the hook shim's stable absolute path: hooks keep pointing at
// it when acc-hook is upgraded or moved.
func (e *Env) shimPath() string { return filepath.Join(e.DataHome, "acc", "bin", "acc-hook-shim") }

func (e *Env) installEnv() adapter.InstallEnv {
	ie := adapter.InstallEnv{Home: e.Home, Shim: e.shimPath(), MCPServer: e.MCPBinary, Skill: skill, AccVersion: e.AccVersion}
	if !e.HomeGiven {
		ie.Getenv = e.Getenv
	}
	return ie
}

// shimScript is the shim: it runs acc-hook by the absolute path recorded
// at install time, else the one on PATH, and lets the client proceed
// (fail open: exit 0, nothing on stdout, one line on stderr) when neither
// exists.
func shimScript(hook string) []byte {
	return []byte(`#!/bin/sh
# Written by "acc install"; "acc uninstall" removes it. Every acc hook a
# client runs goes through this file, so upgrading or moving acc-hook never
# touches the clients' configuration: run "acc install" again instead.
hook=` + shellQuote(hook) + `
if [ ! -x "$hook" ]; then
  hook=$(command -v acc-hook 2>/dev/null) || hook=
fi
if [ -z "$hook" ]; then
  echo "acc: acc-hook is not installed; the client proceeds without acc (reinstall acc, then run: acc install)" >&2
  exit 0
fi
exec "$hook" "$@"
`)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// HomeArg is " --home DIR" (DIR absolute, quoted for a POSIX shell by
// core.ShellWord) when --home was given, else "": what a command acc names
// (in doctor, install and uninstall output) needs to act on the same
// clients' files.
func (e *Env) HomeArg() string {
	if !e.HomeGiven {
		return ""
	}
	return " --home " + core.ShellWord(e.Home)
}

// Detection is what acc found of one client, read-only
// (docs/configuration.md#acc-doctor).
type Detection struct {
	Adapter     string `json:"adapter"`
	DisplayName string `json:"displayName"`
	// Binary is the client's program on PATH ("" when not found).
	Binary string `json:"binary"`
	// Present: the program was found, or the configuration directory exists.
	Present bool `json:"present"`
	// Version is the client's version, "" when unknown; VersionLine is
	// the line it was read from.
	Version     string `json:"version"`
	VersionLine string `json:"versionLine,omitempty"`
	// VersionUnknown says why the version of a client found on PATH is
	// unknown (`claude --version` did not answer within 3000 ms; …); ""
	// otherwise.
	VersionUnknown string `json:"versionUnknown,omitempty"`
	ConfigDir      string `json:"configDir"`
	ConfigFound    bool   `json:"configFound"`
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?`)

// detect finds one client: its binary on PATH, its version from its npm
// package or else `<binary> --version` (each attempt bounded by
// ProbeTimeout, asked twice), its config directory.
func (e *Env) detect(ctx context.Context, a adapter.Installer) Detection {
	d := Detection{Adapter: a.ID(), DisplayName: a.DisplayName(), ConfigDir: a.ConfigDir(e.installEnv())}
	if st, err := os.Stat(d.ConfigDir); err == nil && st.IsDir() {
		d.ConfigFound = true
	}
	look := e.LookPath
	if look == nil {
		look = exec.LookPath
	}
	if bin, err := look(a.Binary()); err == nil {
		d.Binary = bin
		// An npm package says its version without running anything (and
		// running a client can leave files in the user's HOME).
		if v := clients.NPMVersionAt(bin); v != "" {
			d.Version, d.VersionLine = v, "npm package version "+v
			d.Present = true
			return d
		}
		timeout := e.ProbeTimeout
		if timeout == 0 {
			timeout = probe.DefaultTimeout
		}
		res := probe.Probe{Name: a.Binary(), Timeout: timeout, Pattern: versionRE,
			Command: func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, bin, "--version") }}.Run(ctx)
		d.Version, d.VersionLine, d.VersionUnknown = res.Version, res.Line, res.Unknown
	}
	d.Present = d.Binary != "" || d.ConfigFound
	return d
}

// detectAll detects the clients ids, all at once: each may take up to
// twice ProbeTimeout for its --version, and they are independent, so
// asking them together bounds the whole by about two bounds, however many
// clients there are (docs/configuration.md).
func (e *Env) detectAll(ctx context.Context, ids []string) map[string]Detection {
	dets := make([]Detection, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { dets[i] = e.detect(ctx, e.Adapters[id]) })
	}
	wg.Wait()
	out := make(map[string]Detection, len(ids))
	for i, id := range ids {
		out[id] = dets[i]
	}
	return out
}

// Options select what install and uninstall do.
type Options struct {
	// Adapters named with --adapter; empty means every detected client
	// (install) or every recorded one (uninstall).
	Adapters []string
	DryRun   bool
	// Delivery is the requested live-delivery policy ("" keeps the
	// recorded one, else off).
	Delivery string
	// MidTurn and EndOfTurn are the requested turn-delivery policies ("" keeps
	// the recorded one, else the room's decides; turn.go).
	MidTurn, EndOfTurn string
}

// Change is one thing install or uninstall did (or, dry, would do) to a path.
type Change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Op is create, update, unchanged, remove, kept (a person changed it;
	// left and reported) or missing (already gone).
	Op     string `json:"op"`
	Detail string `json:"detail,omitempty"`
}

// ClientReport is one client's part of a report.
type ClientReport struct {
	Detection
	// Action is install, reinstall, uninstall or skip.
	Action string `json:"action"`
	// Reason says why a client was skipped.
	Reason            string   `json:"reason,omitempty"`
	Changes           []Change `json:"changes"`
	Notes             []string `json:"notes"`
	DeliveryPolicy    string   `json:"deliveryPolicy,omitempty"`
	EffectiveDelivery string   `json:"effectiveDelivery,omitempty"`
	DeliveryReason    string   `json:"deliveryReason,omitempty"`
	// TurnDelivery is the client's delivery inside a busy turn: what is
	// recorded and proven, in words (turn.go).
	TurnDelivery *TurnDelivery `json:"turnDelivery,omitempty"`
}

// Report is the result of install or uninstall.
type Report struct {
	DryRun  bool           `json:"dryRun"`
	Record  string         `json:"record"`
	Shim    string         `json:"shim"`
	Clients []ClientReport `json:"clients"`
	// Shared are changes in acc's data home, which all clients share: the
	// directories (Kind "directory"), the install lock, the hook shim and
	// the record, in the order they are made (install) or removed
	// (uninstall).
	Shared []Change `json:"shared"`
}

// checkOptions refuses unknown adapters and policies and a home that is
// not a directory (exit 2), before anything is read.
func (e *Env) checkOptions(o Options) error {
	if err := e.checkAdapters(o.Adapters); err != nil {
		return err
	}
	if o.Delivery != "" && !slices.Contains(DeliveryPolicies, o.Delivery) {
		return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--delivery %q is not one of off, actionable, all", o.Delivery)
	}
	if err := checkTurnOptions(o); err != nil {
		return err
	}
	if st, err := os.Stat(e.Home); err != nil || !st.IsDir() {
		return protocol.Errorf(protocol.ReasonHomeNotDirectory, "home %s is not an existing directory; pass --home DIR naming one", e.Home).With("home", e.Home)
	}
	return nil
}

// checkAdapters refuses an id no adapter has (exit 2), suggesting the
// lower-case spelling, and pointing MCP-only clients at acc-mcp.
func (e *Env) checkAdapters(ids []string) error {
	for _, id := range ids {
		if _, ok := e.Adapters[id]; ok {
			continue
		}
		hint := "; a client that speaks MCP but has no adapter (Cursor, Windsurf, Claude Desktop, …) joins through acc-mcp instead (docs/mcp.md)"
		if _, ok := e.Adapters[strings.ToLower(id)]; ok {
			hint = fmt.Sprintf("; did you mean %s?", strings.ToLower(id))
		}
		return protocol.Errorf(protocol.ReasonUnknownAdapter, "no adapter is called %q; the adapters are %s%s", id, strings.Join(e.ids(), ", "), hint).With("adapter", id)
	}
	return nil
}

func (e *Env) ids() []string {
	var ids []string
	for id := range e.Adapters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// fileState is one client file being edited in memory.
type fileState struct {
	path string
	// real is where the bytes are written: path itself, or the file a
	// symlink at path points to (the link stays a link).
	real       string
	old        []byte
	existed    bool
	new        []byte // nil: remove the file
	executable bool
}

// readTarget reads a file acc is about to edit, refusing (exit 5, nothing
// written) what is in the way: a directory where a file goes, a file
// where a directory goes, a symlink to nothing or a loop, a read-only
// file (a person made it so; acc does not override that).
func readTarget(path string) (*fileState, error) {
	f := &fileState{path: path, real: path}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s is in the way: it is a file where acc needs a directory; move it, then run acc install again", dir).With("path", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, inTheWay(dir, err)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	lst, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, inTheWay(path, err)
	}
	if lst.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s is a symlink that leads nowhere (%v); fix or remove it, then run acc install again", path, err).With("path", path)
		}
		f.real = real
	}
	st, err := os.Stat(f.real)
	if err != nil {
		if gone(path, err) {
			return &fileState{path: path, real: path}, nil
		}
		return nil, inTheWay(path, err)
	}
	if st.IsDir() {
		return nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s is a directory where acc needs a file; move it, then run acc install again", path).With("path", path)
	}
	if st.Mode().Perm()&0o200 == 0 {
		return nil, protocol.Errorf(protocol.ReasonInstallConflict, "%s is read-only; acc does not change a file someone made read-only — make it writable, then run acc install again", path).With("path", path)
	}
	b, err := os.ReadFile(f.real)
	if err != nil {
		if gone(path, err) {
			return &fileState{path: path, real: path}, nil
		}
		return nil, inTheWay(path, err)
	}
	f.old, f.existed = b, true
	return f, nil
}

// gone reports whether err says a file that was just there is missing and
// path is gone too: another run (an uninstall) removed it meanwhile, so it
// is planned as absent. A symlink whose target is missing is not gone.
func gone(path string, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, lerr := os.Lstat(path)
	return errors.Is(lerr, fs.ErrNotExist)
}

// inTheWay turns a file-system error on path into a refusal naming it
// (exit 5) instead of an internal error.
func inTheWay(path string, err error) error {
	return protocol.Errorf(protocol.ReasonInstallConflict, "%s cannot be used (%v); fix it, then run the command again", path, err).With("path", path)
}

func (e *Env) now() string {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return now().UTC().Format("2006-01-02T15:04:05.000Z")
}

// marshalIndent lays a value out as acc writes a JSON file it creates:
// two-space indent, no HTML escaping, final newline.
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func readFile(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// missingDirs lists the directories above path that do not exist yet,
// outermost first.
func missingDirs(path string) []string {
	var out []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		out = append([]string{dir}, out...)
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return out
}

func invalidConfig(path, format string, err error) error {
	return protocol.Errorf(protocol.ReasonClientConfigInvalid, "%s is not valid %s (%v); acc left it untouched — fix it, then run the command again", path, format, err).With("path", path)
}

// unapply removes what a recorded installation wrote to a file's bytes,
// as far as it is still there unchanged. It returns the new bytes, whether
// the file should be deleted, and one change per artifact.
func unapply(path string, src []byte, existed bool, arts []RecordedArtifact, shim string) ([]byte, bool, []Change, error) {
	var changes []Change
	if !existed {
		for _, a := range arts {
			changes = append(changes, Change{Path: path, Kind: string(a.Kind), Op: "missing", Detail: "already gone"})
		}
		return nil, false, changes, nil
	}
	switch arts[0].Kind {
	case adapter.ArtifactFile:
		if sum(src) == arts[0].SHA256 {
			return nil, true, []Change{{Path: path, Kind: "file", Op: "remove"}}, nil
		}
		return src, false, []Change{{Path: path, Kind: "file", Op: "kept", Detail: "changed since acc wrote it; remove it by hand if you no longer want it"}}, nil
	case adapter.ArtifactTOMLBlock:
		regions := findBlocks(src)
		if len(regions) == 0 && runsShim(src, shim) {
			return src, false, []Change{{Path: path, Kind: "toml-block", Op: "kept", Detail: "acc's block markers are gone, but the file still runs acc-hook (" + shim + "): something rewrote it; remove those entries by hand"}}, nil
		}
		if len(regions) == 0 {
			return src, false, []Change{{Path: path, Kind: "toml-block", Op: "missing", Detail: "acc's block is no longer in the file"}}, nil
		}
		if len(regions) != 1 || !regions[0].closed || sum(regions[0].block) != arts[0].SHA256 {
			return src, false, []Change{{Path: path, Kind: "toml-block", Op: "kept", Detail: "acc's block was edited; remove it by hand if you no longer want it"}}, nil
		}
		out := stripBlocks(src, arts[0].Separator)
		return out, arts[0].CreatedFile && len(bytes.TrimSpace(out)) == 0, []Change{{Path: path, Kind: "toml-block", Op: "remove"}}, nil
	case adapter.ArtifactJSONEntry:
		doc, err := parseJSON(src)
		if err != nil {
			return nil, false, nil, invalidConfig(path, "JSON", err)
		}
		var created [][]string
		createdFile := false
		var seed []byte
		var original *string
		for _, a := range arts {
			created = append(created, a.CreatedContainers...)
			createdFile = createdFile || a.CreatedFile
			if a.Seed != nil {
				seed = a.Seed
			}
			if a.Original != nil {
				original = a.Original
			}
			found, err := doc.removeEntry(a.Pointer, a.Value)
			if err != nil {
				return nil, false, nil, invalidConfig(path, "JSON", err)
			}
			label := strings.Join(a.Pointer, ".")
			switch {
			case found:
				changes = append(changes, Change{Path: path, Kind: "json-entry", Op: "remove", Detail: label})
			default:
				n, _ := doc.accEntries(a.Pointer, a.Value, a.Identity)
				if n > 0 {
					changes = append(changes, Change{Path: path, Kind: "json-entry", Op: "kept", Detail: label + ": acc's entry was edited; remove it by hand if you no longer want it"})
				} else {
					changes = append(changes, Change{Path: path, Kind: "json-entry", Op: "missing", Detail: label + ": acc's entry is no longer there"})
				}
			}
		}
		if err := doc.prune(created); err != nil {
			return nil, false, nil, err
		}
		out := doc.bytes()
		del := false
		if seed == nil {
			seed = []byte("{}")
		}
		if original != nil && equalJSON(out, seed) {
			return []byte(*original), false, changes, nil // the user's blank file, as it was
		}
		if createdFile {
			del = equalJSON(out, seed)
		}
		return out, del, changes, nil
	}
	return nil, false, nil, fmt.Errorf("unknown artifact kind %q", arts[0].Kind)
}

// groupByPath keeps artifacts in order, grouped by file.
func groupByPath[T any](arts []T, path func(T) string) ([]string, map[string][]T) {
	var order []string
	by := map[string][]T{}
	for _, a := range arts {
		p := path(a)
		if _, ok := by[p]; !ok {
			order = append(order, p)
		}
		by[p] = append(by[p], a)
	}
	return order, by
}
