package adapter

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Installer is implemented by an adapter that `acc install` can wire
// (docs/adapters.md#what-acc-install-writes; docs/decisions.md#9-installer-ownership).
// The plan is pure: the same
// environment gives the same plan, and nothing is read or written.
type Installer interface {
	Adapter
	// Binary is the command a person runs to start the client, looked up on
	// PATH to detect it and asked --version.
	Binary() string
	// ConfigDir is the client's user configuration directory under env.
	ConfigDir(env InstallEnv) string
	// InstallPlan lists every artifact acc writes for this client.
	InstallPlan(env InstallEnv) InstallPlan
}

// InstallEnv is what an install plan is computed from.
type InstallEnv struct {
	// Home is the user's home directory (or `acc install --home`).
	Home string
	// Getenv reads a client's configuration-directory override
	// (CLAUDE_CONFIG_DIR, CODEX_HOME, …); nil means none, as with --home.
	Getenv func(string) string
	// Shim is the absolute path of the hook shim every hook command runs.
	Shim string
	// MCPServer is the absolute path of acc-mcp (Grok registers it).
	MCPServer string
	// Skill is the instructions file taught to every client's agent
	// (Markdown with name/description front matter).
	Skill []byte
	// AccVersion is the running acc's version, stamped where a client
	// wants a version.
	AccVersion string
}

// Dir returns the override named by envVar when it is set (and Getenv is
// given), else Home joined with rel.
func (e InstallEnv) Dir(envVar, rel string) string {
	if e.Getenv != nil && envVar != "" {
		if v := e.Getenv(envVar); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	return filepath.Join(e.Home, rel)
}

// HookCommand is the command line a client runs for one of its hook
// events: the shim, by absolute path, through sh (so a lost execute bit
// does not matter), with the adapter id and the client's event name. When
// the shim is gone (the data home was removed) the command succeeds doing
// nothing: a missing shim must never block a client (dash exits 2 for a
// script it cannot open, which Claude Code takes as "block").
func (e InstallEnv) HookCommand(adapterID, event string) string {
	q := shellQuote(e.Shim)
	return "[ ! -f " + q + " ] || exec sh " + q + " " + adapterID + " " + event
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// InstallPlan is what acc writes for one client.
type InstallPlan struct {
	// Artifacts, in the order they are applied.
	Artifacts []Artifact
	// Notes tell the user what the client still needs (restart it; Codex:
	// trust the hooks).
	Notes []string
}

// ArtifactKind says how an artifact is written and undone.
type ArtifactKind string

const (
	// ArtifactFile is a whole file acc owns: created with Content, removed
	// on uninstall while its bytes still match.
	ArtifactFile ArtifactKind = "file"
	// ArtifactJSONEntry is one element acc appends to an array inside a
	// user's JSON file (a hook entry), found again by its value.
	ArtifactJSONEntry ArtifactKind = "json-entry"
	// ArtifactTOMLBlock is acc's managed block at the end of a user's TOML
	// file, between fixed marker lines.
	ArtifactTOMLBlock ArtifactKind = "toml-block"
)

// Artifact is one thing acc writes.
type Artifact struct {
	Kind ArtifactKind `json:"kind"`
	// Path is absolute.
	Path string `json:"path"`
	// Content is a file's bytes or a TOML block's body.
	Content []byte `json:"-"`
	// Pointer names the object keys that lead to the array a JSON entry is
	// appended to (["hooks", "PreToolUse"]).
	Pointer []string `json:"pointer,omitempty"`
	// Value is the JSON entry.
	Value json.RawMessage `json:"value,omitempty"`
	// Seed is the document a JSON entry's file starts as when acc creates
	// it ({} when empty).
	Seed json.RawMessage `json:"-"`
	// Identity names the member that identifies a JSON entry among its
	// siblings (Kimi's plugin "id"): an element with the same value that
	// acc did not write is in acc's way. "" means none.
	Identity string `json:"-"`
	// Executable marks a file that is run (mode 0755 instead of 0644).
	Executable bool `json:"-"`
}

// HookEntry is a client hook registration in the event → matcher group →
// handlers layout that Claude Code, Codex and Gemini CLI share.
type HookEntry struct {
	Matcher string
	Handler map[string]any
}

// JSONHookArtifacts builds one json-entry artifact per event for clients
// whose settings hold `hooks.<Event>` arrays of matcher groups. handler
// returns the handler object for an event; matcher returns "" for events
// that take none.
func JSONHookArtifacts(path string, events []string, matcher func(event string) string, handler func(event string) map[string]any) []Artifact {
	var out []Artifact
	for _, ev := range events {
		group := map[string]any{"hooks": []any{handler(ev)}}
		if m := matcher(ev); m != "" {
			group["matcher"] = m
		}
		b, err := json.Marshal(group)
		if err != nil {
			panic(err) // maps of strings and numbers always marshal
		}
		out = append(out, Artifact{Kind: ArtifactJSONEntry, Path: path, Pointer: []string{"hooks", ev}, Value: b})
	}
	return out
}

// ToolMatcher joins tool names into a matcher that selects exactly those
// tools ("Bash|Edit|Write"), sorted.
func ToolMatcher(tools ...string) string {
	s := slices.Clone(tools)
	slices.Sort(s)
	return strings.Join(slices.Compact(s), "|")
}

// GuardMatcher is the pre-tool matcher of a client whose matchers are
// regular expressions over the tool name (Claude Code, Codex, Gemini CLI
// and Kimi Code all test them so): exactly the tools named, and every MCP
// tool of naming n whose own name is one [MCPWriteTools] lists, whatever
// its server ("^(Bash|Write)$|^mcp__.+__(edit_file|write_file)$";
// docs/hooks.md#mcp-tools); a naming without a prefix (Grok's server__tool)
// selects such a tool after any server name. With the zero naming it selects
// the tools named only. The
// matcher is anchored, so it selects no other tool whose name holds one
// of these.
func GuardMatcher(n MCPNaming, tools ...string) string {
	m := "^(" + ToolMatcher(tools...) + ")$"
	if n.Sep == "" {
		return m
	}
	return m + "|^" + regexp.QuoteMeta(n.Prefix) + ".+" + regexp.QuoteMeta(n.Sep) + "(" + strings.Join(MCPWriteTools(), "|") + ")$"
}

// TOMLString is s as a TOML basic string: backslash and double quote
// escaped, control characters as \uXXXX.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
