// Package hookio holds what the five adapters share when they read a hook
// payload and write a hook's answer: a strict JSON object reader, a
// table-driven normaliser (each adapter describes its client in a [Spec];
// the rules of docs/adapters.md#the-normalised-event are applied once,
// here), and the
// few reply shapes the clients accept. Which shape a client gets is each
// adapter's decision, made and cited there.
package hookio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// Object is one decoded hook payload.
type Object map[string]any

// Parse decodes a payload that must be exactly one JSON object; numbers
// stay json.Number. Anything else (null, an array, a string, broken or
// trailing data) is refused.
func Parse(payload []byte) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, errors.New("payload is empty")
		}
		return nil, fmt.Errorf("payload is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("payload has data after its JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("payload is a JSON %s, not an object", kindOf(v))
	}
	return obj, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return "value"
}

// Str returns the string under the first of keys present in o. present is
// false when none is; err is set when the first present key holds another
// type.
func (o Object) Str(keys ...string) (value string, present bool, err error) {
	for _, k := range keys {
		v, ok := o[k]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", true, fmt.Errorf("%s is a %s, not a string", k, kindOf(v))
		}
		return s, true, nil
	}
	return "", false, nil
}

// Bool reports whether the first of keys present in o holds true; a
// missing key or a value of another type reads as false.
func (o Object) Bool(keys ...string) bool {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			b, _ := v.(bool)
			return b
		}
	}
	return false
}

// Prompt returns the prompt under the first of keys present in o: a
// string as it is, or an array of content parts ({"type":"text","text":…},
// the shape Kimi Code 2.1.0 sends, docs/adapters.md#kimi-code) as the text
// of its text parts joined by newlines, other parts (images) skipped. ok
// is false when no key is present, or the first present one holds anything
// else, or an array with a malformed part: then there is no prompt to read.
func (o Object) Prompt(keys ...string) (prompt string, ok bool) {
	for _, k := range keys {
		v, present := o[k]
		if !present {
			continue
		}
		switch v := v.(type) {
		case string:
			return v, true
		case []any:
			texts := make([]string, 0, len(v))
			for _, part := range v {
				m, isObj := part.(map[string]any)
				if !isObj {
					return "", false
				}
				if typ, _ := m["type"].(string); typ != "text" {
					continue
				}
				text, isStr := m["text"].(string)
				if !isStr {
					return "", false
				}
				texts = append(texts, text)
			}
			return strings.Join(texts, "\n"), true
		}
		return "", false
	}
	return "", false
}

// Has reports whether any of keys is present in o, whatever its value.
func (o Object) Has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := o[k]; ok {
			return true
		}
	}
	return false
}

// Obj returns the object under the first of keys present in o, or nil.
func (o Object) Obj(keys ...string) Object {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			m, _ := v.(map[string]any)
			return m
		}
	}
	return nil
}

// Spec describes one client's hooks for [Spec.Normalize]. Key lists name
// the payload keys a value may arrive under, in order of preference.
type Spec struct {
	// Adapter is the client id (docs/decisions.md#14-client-ids).
	Adapter string
	// Events lists the client's event names (what acc-hook is given) with
	// their kinds, in the client's documented order.
	Events []EventKind
	// PayloadEvents maps an event name as the payload spells it to the
	// client event name, where the two differ (Grok's snake_case values).
	PayloadEvents map[string]string

	EventKeys, SessionKeys, CwdKeys      []string
	ModelKeys, SourceKeys, EndReasonKeys []string
	ToolKeys, InputKeys                  []string
	// PromptKeys name the turn's prompt on before-turn events (Event.Prompt):
	// a string, or an array of content parts whose text parts are joined
	// (Prompt). The hook compares it with live frames and hold reasons.
	PromptKeys []string
	// StopActiveKeys name the boolean on turn-end events that says a stop
	// hook already kept this turn going (Event.StopHookActive).
	StopActiveKeys []string

	// FileTools maps a file-writing tool to the input keys holding the path
	// it writes; PatchTools a patch tool to the keys holding the patch
	// body; ShellTools the shell tool to the keys holding the command.
	FileTools, PatchTools, ShellTools map[string][]string
	// MCP is how the client names MCP servers' tools in its payloads;
	// such a tool that writes files (adapter.MCPWriteTargets) is a write
	// with the paths its input names. The zero value reads no MCP tools.
	MCP adapter.MCPNaming
	// MCPContextKeys name an object in the payload holding the call's
	// server_name and tool_name as the MCP server itself spells them
	// (Gemini CLI's mcp_context); when present it is read instead of
	// splitting the client's tool name, which the client may have changed
	// (characters replaced, long names shortened).
	MCPContextKeys []string
	// ShellPatches: a shell command that is itself a patch envelope, or
	// nothing but an apply_patch call carrying one (adapter.ShellPatch), is a
	// patch (docs/adapters.md#codex).
	ShellPatches bool
}

// EventKind pairs a client event name with its normalised kind.
type EventKind struct {
	Name string
	Kind adapter.Kind
}

// EventNames returns the client's event names in declared order.
func (s *Spec) EventNames() []string {
	out := make([]string, len(s.Events))
	for i, e := range s.Events {
		out[i] = e.Name
	}
	return out
}

func (s *Spec) kind(event string) (adapter.Kind, bool) {
	for _, e := range s.Events {
		if e.Name == event {
			return e.Kind, true
		}
	}
	return "", false
}

// Limits on what an adapter passes on; longer or control-laden values are
// refused (ids, cwd) or dropped (descriptive fields).
const (
	maxIDBytes    = 512
	maxPathBytes  = 4096
	maxShortBytes = 200
)

// Normalize turns one payload of the client event into an [adapter.Event]
// (docs/adapters.md#the-normalised-event). It refuses an unknown event; a payload that
// is not one JSON object; one whose event name disagrees with event; one
// without a session id (non-empty, at most 512 bytes, no control
// characters) or cwd (absolute, at most 4096 bytes, no NUL). Transcript
// paths, prompts, messages, tool output and file contents are never read.
func (s *Spec) Normalize(event string, payload []byte) (*adapter.Event, error) {
	kind, ok := s.kind(event)
	if !ok {
		return nil, fmt.Errorf("%s: unknown event %q", s.Adapter, event)
	}
	obj, err := Parse(payload)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.Adapter, event, err)
	}
	if named, present, err := obj.Str(s.EventKeys...); err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.Adapter, event, err)
	} else if present {
		if alias, ok := s.PayloadEvents[named]; ok {
			named = alias
		}
		if named != event {
			return nil, fmt.Errorf("%s: payload is for event %q, not %q", s.Adapter, clip(named), event)
		}
	}
	sid, _, err := obj.Str(s.SessionKeys...)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %s: session id: %w", s.Adapter, event, err)
	case sid == "":
		return nil, fmt.Errorf("%s %s: payload has no session id", s.Adapter, event)
	case len(sid) > maxIDBytes || hasControl(sid) || !utf8.ValidString(sid):
		return nil, fmt.Errorf("%s %s: session id is not a plain id", s.Adapter, event)
	}
	cwd, _, err := obj.Str(s.CwdKeys...)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %s: cwd: %w", s.Adapter, event, err)
	case cwd == "":
		return nil, fmt.Errorf("%s %s: payload has no cwd", s.Adapter, event)
	case !strings.HasPrefix(cwd, "/"):
		return nil, fmt.Errorf("%s %s: cwd is not an absolute path", s.Adapter, event)
	case len(cwd) > maxPathBytes || strings.ContainsRune(cwd, 0) || !utf8.ValidString(cwd):
		return nil, fmt.Errorf("%s %s: cwd is not a usable path", s.Adapter, event)
	}
	ev := &adapter.Event{
		Adapter:   s.Adapter,
		Name:      event,
		Kind:      kind,
		SessionID: sid,
		Cwd:       cwd,
		Model:     short(obj, s.ModelKeys),
	}
	switch kind {
	case adapter.SessionStart:
		ev.Source = short(obj, s.SourceKeys)
	case adapter.SessionEnd:
		ev.EndReason = short(obj, s.EndReasonKeys)
	case adapter.TurnEnd:
		ev.StopHookActive = obj.Bool(s.StopActiveKeys...)
		ev.EndReason = short(obj, s.EndReasonKeys)
	case adapter.BeforeTurn:
		if prompt, ok := obj.Prompt(s.PromptKeys...); ok && utf8.ValidString(prompt) {
			ev.Prompt = prompt
		}
	}
	s.tool(obj, ev)
	return ev, nil
}

// tool fills the tool fields: the tool's name, and for a writing tool the
// paths it writes, for the shell tool its command.
func (s *Spec) tool(obj Object, ev *adapter.Event) {
	name, _, err := obj.Str(s.ToolKeys...)
	if err != nil || name == "" || len(name) > maxShortBytes || hasControl(name) {
		return
	}
	ev.Tool = name
	input := obj.Obj(s.InputKeys...)
	if keys, ok := s.FileTools[name]; ok {
		ev.Write = true
		if p, _, err := input.Str(keys...); err == nil && p != "" {
			ev.Targets = []string{p}
		}
		return
	}
	if keys, ok := s.PatchTools[name]; ok {
		ev.Write = true
		body, _ := command(input, keys)
		ev.Targets = adapter.PatchTargets(body)
		return
	}
	if keys, ok := s.ShellTools[name]; ok {
		ev.ShellTool = true
		// Unreadable: an input that is there but is not an object, or a
		// command of another type than a string or a list of strings; no
		// input at all is a payload read only in part, which the caller
		// judges.
		cmd, ok := command(input, keys)
		ev.ShellUnreadable = !ok || (input == nil && obj.Has(s.InputKeys...))
		if !s.ShellPatches {
			// Only a client that applies patches itself needs the
			// command parsed here; the guard parses it once, later.
			ev.Shell = cmd
			return
		}
		if adapter.IsPatchEnvelope(cmd) {
			ev.Write = true
			ev.Targets = adapter.PatchTargets(cmd)
			return
		}
		if patch, ok := adapter.ShellPatch(cmd); ok {
			ev.Write = true
			ev.Targets = adapter.PatchTargets(patch)
			return
		}
		ev.Shell = cmd
		return
	}
	s.mcpTool(obj, name, input, ev)
}

// mcpTool marks a call of an MCP server's file-writing tool as a write,
// with the paths it names.
func (s *Spec) mcpTool(obj Object, name string, input Object, ev *adapter.Event) {
	if s.MCP.Sep == "" || !strings.HasPrefix(name, s.MCP.Prefix) {
		return
	}
	server, tool, ok := s.MCP.Split(name)
	if ctx := obj.Obj(s.MCPContextKeys...); ctx != nil {
		cs, _, err1 := ctx.Str("server_name")
		ct, _, err2 := ctx.Str("tool_name")
		if err1 == nil && err2 == nil && cs != "" && ct != "" {
			server, tool, ok = cs, ct, true
		}
	}
	if !ok {
		return
	}
	if targets, write := adapter.MCPWriteTargets(server, tool, input); write {
		ev.Write = true
		ev.Targets = targets
	}
	if cmd, ok := adapter.MCPShellCommand(server, tool, input); ok {
		ev.Shell, ev.ShellTool = cmd, true
	}
}

// command reads a command or patch under the first present key: a string,
// or an argv list (older Codex shell calls) rendered as one shell command
// line whose words are quoted, so the shell reader sees the same argv.
// command is the command under the first of keys present in input: a
// string as it is, a list of strings shell-quoted and joined. ok is false
// when that value is of any other type (a list holding a non-string
// included); an absent command is "" and ok.
func command(input Object, keys []string) (cmd string, ok bool) {
	for _, k := range keys {
		switch v := input[k].(type) {
		case string:
			return v, true
		case []any:
			words := make([]string, 0, len(v))
			for _, w := range v {
				s, ok := w.(string)
				if !ok {
					return "", false
				}
				words = append(words, shellQuote(s))
			}
			return strings.Join(words, " "), true
		case nil:
			continue
		default:
			return "", false
		}
	}
	return "", true
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// short reads an optional descriptive field; a value of another type, too
// long or with control characters is dropped, never passed on.
func short(obj Object, keys []string) string {
	v, _, err := obj.Str(keys...)
	if err != nil || len(v) > maxShortBytes || hasControl(v) || !utf8.ValidString(v) {
		return ""
	}
	return v
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

func clip(s string) string {
	if len(s) > 40 || hasControl(s) {
		return "…"
	}
	return s
}

// JSONLine encodes v as one line of JSON and a newline, without HTML
// escaping (docs/decisions.md#5-text-limits: our own encoding).
func JSONLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return b.Bytes()
}

// Allow is the answer "proceed, nothing to add" for every client: no
// output, exit 0.
func Allow() adapter.Output { return adapter.Output{} }

// AdditionalContext is the hookSpecificOutput context reply that Claude
// Code, Codex and Gemini CLI all accept (docs/adapters.md#claude-code,
// docs/adapters.md#codex, docs/adapters.md#gemini-cli: "What reaches the
// model"),
// on stdout, exit 0.
func AdditionalContext(event, text string) adapter.Output {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	return adapter.Output{Stdout: JSONLine(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{event, text}})}
}

// PermissionDeny is the hookSpecificOutput pre-tool denial (Claude Code's
// shape; Codex and Kimi accept it too), on stdout, exit 0.
func PermissionDeny(reason string) adapter.Output {
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	return adapter.Output{Stdout: JSONLine(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{"PreToolUse", "deny", Reason(reason)}})}
}

// DecisionDeny is the {"decision":"deny","reason":…} denial (Gemini CLI's
// own shape; Grok documents it), on stdout, exit 0.
func DecisionDeny(reason string) adapter.Output {
	return adapter.Output{Stdout: JSONLine(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"deny", Reason(reason)})}
}

// DecisionBlock is the {"decision":"block","reason":…} answer to a stop
// event (Claude Code Stop, Codex Stop, Gemini CLI AfterAgent, Grok Stop):
// the agent does not stop and its model reads the reason
// (docs/hooks.md#turn-delivery); on stdout, exit 0. A blank reason gets
// DefaultHoldReason.
func DecisionBlock(reason string) adapter.Output {
	if strings.TrimSpace(reason) == "" {
		reason = DefaultHoldReason
	}
	return adapter.Output{Stdout: JSONLine(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", reason})}
}

// DefaultHoldReason is the reason a hold gives when acc supplied none.
const DefaultHoldReason = "acc: a peer message is waiting for you; read it with `acc inbox` before you finish"

// ExitTwoDeny is the denial by exit code 2 with the reason on stderr and
// nothing on stdout. Control characters other than newline and tab are
// blanked, since the text is shown as is.
func ExitTwoDeny(reason string) adapter.Output {
	r := strings.Map(func(c rune) rune {
		if c == '\n' || c == '\t' || !unicode.IsControl(c) {
			return c
		}
		return ' '
	}, Reason(reason))
	return adapter.Output{Stderr: []byte(strings.TrimRight(r, "\n") + "\n"), ExitCode: 2}
}

// PluginContext is {"context":<text>}: the answer by which acc's own
// plugin and extension (OpenCode's and Kilo's jsplugin, Pi's acc.ts) add
// text to what the model reads next (docs/adapters.md#opencode).
func PluginContext(text string) adapter.Output {
	return adapter.Output{Stdout: JSONLine(map[string]string{"context": text})}
}

// PluginDeny is {"deny":<reason>}, the default reason when blank: the
// answer by which acc's own plugin and extension stop a tool call with the
// reason as its result (docs/adapters.md#opencode).
func PluginDeny(reason string) adapter.Output {
	return adapter.Output{Stdout: JSONLine(map[string]string{"deny": Reason(reason)})}
}

// DefaultReason is the reason a denial gives when acc supplied none (a
// client may refuse an empty one: Codex does, docs/adapters.md#codex).
const DefaultReason = "acc: this write is blocked by another session's guarded claim; run `acc status` to see who holds it"

// Reason returns reason, or DefaultReason when it is blank.
func Reason(reason string) string {
	if strings.TrimSpace(reason) == "" {
		return DefaultReason
	}
	return reason
}

// Has reports whether event is one of names.
func Has(names []string, event string) bool { return slices.Contains(names, event) }
