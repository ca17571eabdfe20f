// Package adapter is the contract every native-client adapter implements
// (docs/decisions.md#14-client-ids) and the pieces they share: the closed
// normalised hook event, the hook's output, capabilities proven by evidence,
// and the readers of write targets (shell commands, patches).
//
// # The contract
//
// An adapter turns one client's hook payload into an [Event]
// (docs/adapters.md#the-normalised-event) and renders acc's answers in the
// shape that client expects (docs/adapters.md#what-each-client-is-told): context to inject before a turn, a denial before a
// tool call, or nothing. It never performs I/O beyond parsing its input and
// never decides coordination rules; pkg/core does. Unknown events and
// payloads without a session id or cwd are refused, never guessed.
//
// # Capabilities
//
// A capability is true for a client version when a real capture proved it
// at that version or a lower one (docs/decisions.md#6-measured-capabilities), each capability on its
// own; unknown or older versions inherit nothing. Evidence lives in each
// adapter module as evidence/<version>.json (an [Evidence], read by
// [LoadEvidence]) beside evidence/<version>/ with the payloads and
// observations it rests on.
//
// # Write targets
//
// A file-writing tool names its target in the payload; the adapter puts
// it in [Event.Targets]. A shell tool's command stays in [Event.Shell] for
// the guard, which reads its targets with [ShellWriteTargets]
// (docs/decisions.md#7-shell-writes). Codex patches are read with [PatchTargets]. A call of an MCP
// server's file-writing tool (the filesystem server's write_file,
// edit_file, create_directory, move_file and a few others) is a write of
// the paths its arguments name, read with [MCPWriteTargets] once the
// client's tool name is split by its [MCPNaming]
// (docs/hooks.md#mcp-tools).
//
// The subpackage hookio holds what the adapters share to read payloads and
// print answers; adaptertest is the suite every adapter module runs.
package adapter

// Kind is a normalised event kind (docs/adapters.md#the-normalised-event).
type Kind string

// The event kinds acc handles; every other client event is Other.
const (
	SessionStart Kind = "sessionStart"
	SessionEnd   Kind = "sessionEnd"
	Heartbeat    Kind = "heartbeat"
	BeforeTurn   Kind = "beforeTurn"
	BeforeTool   Kind = "beforeTool"
	AfterTool    Kind = "afterTool"
	TurnEnd      Kind = "turnEnd"
	Other        Kind = "other"
)

// Event is one client hook call, normalised. Only these fields leave an
// adapter: never the transcript path, the prompt, tool output or file
// contents.
type Event struct {
	// Adapter is the client id (docs/decisions.md#14-client-ids).
	Adapter string `json:"adapter"`
	// Name is the client's own event name (PreToolUse, BeforeTool, …).
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// SessionID is the client's own session id; never empty.
	SessionID string `json:"sessionId"`
	// Cwd is the directory the payload states (not the hook process's).
	Cwd string `json:"cwd"`
	// Source says why a session started (startup, resume, compact, clear)
	// where the client reports it; "" otherwise.
	Source string `json:"source,omitempty"`
	// Model is the model name where the payload carries one.
	Model string `json:"model,omitempty"`
	// Tool is the client's tool name on tool events.
	Tool string `json:"tool,omitempty"`
	// Write is true when Tool is one of the client's file-writing tools,
	// or an MCP server's tool that writes files (MCPWriteTargets); Targets
	// then holds the paths it writes, as given (relative to Cwd or
	// absolute).
	Write   bool     `json:"write,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Shell is the command text when Tool is the client's shell tool. It
	// stays in memory for the guard and is never stored or echoed.
	Shell string `json:"-"`
	// ShellTool is true when Tool is the client's shell tool, whether or
	// not the payload carried its command (a payload acc-hook read only in
	// part carries none).
	ShellTool bool `json:"-"`
	// ShellUnreadable is true when Tool is the client's shell tool and the
	// payload carries its input, but not in a form acc can read a command
	// from: the input is not a JSON object, or its command is neither a
	// string nor a list of strings (Grok replaces an input over 128 KiB
	// with a cut-short string and still runs the whole command;
	// docs/hooks.md#commands-too-large-to-read). Shell is then "" and
	// the call is an unknown write.
	ShellUnreadable bool `json:"-"`
	// Prompt is the turn's prompt on a before-turn event, where the payload
	// carries one. Like Shell it stays in memory: the hook compares it with
	// the live frames of pending messages and never stores or echoes it.
	Prompt string `json:"-"`
	// EndReason is why a session ended, or why a turn ended (Grok's Stop
	// says end_turn for a turn and other reasons as the session closes),
	// where reported.
	EndReason string `json:"endReason,omitempty"`
	// StopHookActive is true on a turn-end event the client raised while
	// the agent was already working on because a stop hook held it (the
	// payload's stop_hook_active); acc never holds such a stop again
	// (docs/delivery.md#end-of-turn).
	StopHookActive bool `json:"stopHookActive,omitempty"`
}

// Output is what acc-hook prints and how it exits for one event.
type Output struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Capabilities are the hook capabilities proven for one client version
// (docs/decisions.md#6-measured-capabilities). Transport capabilities (live push) are separate and
// per platform.
type Capabilities struct {
	// Attach: SessionStart fires and acc can bind the client's session.
	Attach bool `json:"attach"`
	// NextTurn: context printed before a turn reaches the model's next request.
	NextTurn bool `json:"nextTurn"`
	// GuardFiles: a pre-tool denial stops the client's file-writing tools.
	GuardFiles bool `json:"guardFiles"`
	// GuardShell: a pre-tool denial stops the client's shell tool.
	GuardShell bool `json:"guardShell"`
	// SessionEnd: a session-end event fires when the client exits.
	SessionEnd bool `json:"sessionEnd"`
	// LivePush: a message written to the client's own channel makes an
	// idle session start a turn
	// (docs/delivery.md#live-push-waking-an-idle-session); absent from
	// records that do not prove it.
	LivePush bool `json:"livePush,omitempty"`
	// MidTurn: context printed by the post-tool hook reaches the model's
	// next request in the same turn (docs/delivery.md#mid-turn).
	MidTurn bool `json:"midTurn,omitempty"`
	// EndOfTurn: the turn-end hook's hold keeps the agent working once and
	// its model reads the reason (docs/delivery.md#end-of-turn).
	EndOfTurn bool `json:"endOfTurn,omitempty"`
}

// Guarded reports whether both file and shell writes are denied by the
// guard: only then may a session of this client count as guarded.
func (c Capabilities) Guarded() bool { return c.GuardFiles && c.GuardShell }

// Evidence is one recorded proof: which capabilities a real client of
// Version showed, by which test, when.
type Evidence struct {
	Version  string       `json:"version"`
	Proven   Capabilities `json:"proven"`
	Test     string       `json:"test"`
	Recorded string       `json:"recorded"`
	Note     string       `json:"note,omitempty"`
}

// Adapter is one native client.
type Adapter interface {
	// ID is the client id (docs/decisions.md#14-client-ids).
	ID() string
	// DisplayName is the product name.
	DisplayName() string
	// ClientCommand is the basename of the client's process, used to find
	// its pid among the hook's ancestors; "" when the client runs under
	// another name (node).
	ClientCommand() string
	// SessionEnvVars names environment variables in which the client exports
	// its own session id to child processes, if any.
	SessionEnvVars() []string
	// Events lists the client event names the adapter understands.
	Events() []string
	// Normalize reads one hook payload for the client event name. It refuses
	// (error) an unknown event, a payload that is not a JSON object, or one
	// without a session id or cwd.
	Normalize(event string, payload []byte) (*Event, error)
	// Inject renders context for the model. An adapter injects on
	// SessionStart and BeforeTurn unless its client is known to drop that
	// output (Kimi Code's SessionStart; Grok's SessionStart and
	// UserPromptSubmit, docs/adapters.md); an event on which the client is
	// not known to accept context, and an empty context, render as Allow.
	// The hook marks nothing offered when Inject renders as Allow.
	Inject(ev *Event, context string) Output
	// Deny renders a refusal of a tool call, with the reason the model sees
	// (a default reason when empty). Only a BeforeTool event can be denied;
	// any other renders as Allow.
	Deny(ev *Event, reason string) Output
	// Allow renders "proceed, nothing to add".
	Allow(ev *Event) Output
	// Hold renders "do not stop yet" on the client's stop event, with the
	// reason the model reads before it goes on (a default reason when
	// empty; docs/hooks.md#turn-delivery). Any other event, and a
	// client whose stop event cannot be held, renders as Allow.
	Hold(ev *Event, reason string) Output
	// Evidence lists the recorded proofs, lowest version first.
	Evidence() []Evidence
}

// ClientPIDNamer is implemented by an Adapter whose client names its own
// process in an environment variable its hooks inherit, for a client that
// ClientCommand cannot find because its process is a plain node (Qwen
// Code). acc-hook records that pid only when it is one of the hook's
// ancestors (core.ClientPIDNamed).
type ClientPIDNamer interface {
	// ClientPIDEnv is the variable's name; its value is a decimal pid.
	ClientPIDEnv() string
}

// ClientVersionNamer is implemented by an Adapter whose client puts its
// own version into an environment variable its hooks inherit (Kilo Code's
// KILOCODE_VERSION). acc-hook reads the version there before it looks on
// PATH: the program on PATH may be a launcher of another version, or a
// native binary too slow to answer --version within the hook's budget
// (kilo takes 2.5 s or more).
type ClientVersionNamer interface {
	// ClientVersionEnv is the variable's name; its value holds a dotted
	// version such as 7.7.9.
	ClientVersionEnv() string
}

// CapabilitiesFor returns what a's evidence proves for version. Each
// capability is true when some evidence recorded at a version not above
// version proves it: a capability holds from the lowest version a capture
// proved it, for every later version (docs/decisions.md#6-measured-capabilities), so a later capture
// that tested less never takes back what an earlier one proved. Versions
// compare numerically, dot by dot. An unknown, unparsable or older version
// gets nothing. The evidence returned is the newest record not above
// version (what doctor names as "proven at"); nil when nothing applies.
func CapabilitiesFor(a Adapter, version string) (Capabilities, *Evidence) {
	return ProvenFor(a.Evidence(), version)
}

// ProvenFor is CapabilitiesFor over a list of evidence records rather
// than an adapter's (the ACP relay's agent families keep their own).
func ProvenFor(all []Evidence, version string) (Capabilities, *Evidence) {
	if _, ok := parseVersion(version); !ok {
		return Capabilities{}, nil
	}
	var caps Capabilities
	var newest *Evidence
	for i := range all {
		e := &all[i]
		if _, ok := parseVersion(e.Version); !ok || compareVersions(e.Version, version) > 0 {
			continue
		}
		caps.Attach = caps.Attach || e.Proven.Attach
		caps.NextTurn = caps.NextTurn || e.Proven.NextTurn
		caps.GuardFiles = caps.GuardFiles || e.Proven.GuardFiles
		caps.GuardShell = caps.GuardShell || e.Proven.GuardShell
		caps.SessionEnd = caps.SessionEnd || e.Proven.SessionEnd
		caps.LivePush = caps.LivePush || e.Proven.LivePush
		caps.MidTurn = caps.MidTurn || e.Proven.MidTurn
		caps.EndOfTurn = caps.EndOfTurn || e.Proven.EndOfTurn
		if newest == nil || compareVersions(e.Version, newest.Version) > 0 {
			newest = e
		}
	}
	if newest == nil {
		return Capabilities{}, nil
	}
	out := *newest
	return caps, &out
}

// compareVersions compares dotted numeric versions ("2.1.332"); a version
// that does not parse sorts above every one that does.
func compareVersions(a, b string) int {
	pa, okA := parseVersion(a)
	pb, okB := parseVersion(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return 1
	case !okB:
		return -1
	}
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func parseVersion(v string) ([]int, bool) {
	if v == "" {
		return nil, false
	}
	var out []int
	n, digits := 0, 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == '.' {
			if digits == 0 {
				return nil, false
			}
			out = append(out, n)
			n, digits = 0, 0
			continue
		}
		c := v[i]
		if c < '0' || c > '9' || digits > 9 {
			return nil, false
		}
		n = n*10 + int(c-'0')
		digits++
	}
	return out, true
}
