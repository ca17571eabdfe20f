package adapter

import (
	"slices"
	"strings"
)

// MCPNaming is how a client names an MCP server's tool in its hook
// payloads: Prefix (possibly empty), the server name, Sep, the tool's own
// name (docs/hooks.md#mcp-tools). The zero value (no Sep) names no MCP
// tool.
type MCPNaming struct {
	Prefix, Sep string
}

// The forms the supported clients use (docs/hooks.md#mcp-tools).
var (
	// MCPDoubleUnderscore is mcp__<server>__<tool>: Claude Code, Codex
	// (since 0.124) and Kimi Code.
	MCPDoubleUnderscore = MCPNaming{Prefix: "mcp__", Sep: "__"}
	// MCPSingleUnderscore is mcp_<server>_<tool>: Gemini CLI (0.61).
	MCPSingleUnderscore = MCPNaming{Prefix: "mcp_", Sep: "_"}
	// MCPServerDoubleUnderscore is <server>__<tool>, with no prefix: Grok
	// (its hook payload names the resolved server__tool,
	// docs/adapters.md#grok).
	MCPServerDoubleUnderscore = MCPNaming{Sep: "__"}
	// MCPServerDash is <server>-<tool>, with no prefix: GitHub Copilot CLI
	// (1.0.102 names an MCP tool so both to its model and in its hook
	// payload, docs/adapters.md#github-copilot-cli).
	MCPServerDash = MCPNaming{Sep: "-"}
	// MCPServerUnderscore is <server>_<tool>, with no prefix: OpenCode and
	// Kilo (1.18.33 and 7.7.9 name an MCP tool so to the model and to a
	// plugin's tool.execute.before, docs/adapters.md#opencode).
	MCPServerUnderscore = MCPNaming{Sep: "_"}
	// MCPServerTripleUnderscore is <server>___<tool>, with no prefix:
	// Factory Droid (0.225.2 names an MCP tool so to its model and in its
	// hook payload, docs/adapters.md#factory-droid).
	MCPServerTripleUnderscore = MCPNaming{Sep: "___"}
)

// Split reads a tool name of this form into the server's name and the
// tool's own name; ok is false when name is not an MCP tool of this form.
// A server name may itself hold the separator (Gemini CLI keeps the
// underscores of "my_fs"), so a name that ends in Sep and a tool acc knows
// ([MCPWriteTools], the read tools of the same servers) is split there,
// leaving the rest as the server; any other name is split at the first
// Sep after the prefix, as the clients themselves read it. Both parts are
// non-empty when ok.
func (n MCPNaming) Split(name string) (server, tool string, ok bool) {
	if n.Sep == "" {
		return "", "", false
	}
	rest, found := strings.CutPrefix(name, n.Prefix)
	if !found {
		return "", "", false
	}
	best := ""
	for _, known := range knownMCPTools {
		if len(known) > len(best) && strings.HasSuffix(rest, n.Sep+known) && len(rest) > len(n.Sep)+len(known) {
			best = known
		}
	}
	if best != "" {
		return rest[:len(rest)-len(n.Sep)-len(best)], best, true
	}
	server, tool, found = strings.Cut(rest, n.Sep)
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// mcpWriteTool is one MCP tool known to write files: the input keys that
// name the paths it writes, and when it does not write after all.
type mcpWriteTool struct {
	keys []string
	// readOnly reports a call that writes nothing (a dry run, a view).
	readOnly func(input map[string]any) bool
}

// mcpWriteTools are the file-writing MCP tools acc recognises by their
// own name, whatever the server is called (docs/hooks.md#mcp-tools):
//
//   - the official filesystem server (@modelcontextprotocol/server-filesystem):
//     write_file {path}, edit_file {path} (not with dryRun true),
//     create_directory {path}, move_file {source, destination};
//   - Desktop Commander, which shares the filesystem server's write_file,
//     create_directory and move_file and adds edit_block {file_path};
//   - servers offering Anthropic's text editor tool under its names
//     str_replace_editor and str_replace_based_edit_tool {command, path},
//     a write unless command is "view".
//
// file_path is read beside path for write_file and edit_file, the key the
// clients' own edit tools use.
var mcpWriteTools = map[string]mcpWriteTool{
	"write_file":                  {keys: []string{"path", "file_path"}},
	"edit_file":                   {keys: []string{"path", "file_path"}, readOnly: dryRun},
	"create_directory":            {keys: []string{"path"}},
	"move_file":                   {keys: []string{"source", "destination"}},
	"edit_block":                  {keys: []string{"file_path"}},
	"str_replace_editor":          {keys: []string{"path"}, readOnly: viewCommand},
	"str_replace_based_edit_tool": {keys: []string{"path"}, readOnly: viewCommand},
}

// mcpShellTools are MCP tools known to run a shell command, with the input
// key holding it: Desktop Commander's start_process {command} and, in its
// older releases, execute_command {command}. Their command is read like the
// client's own shell tool's (docs/hooks.md#mcp-tools).
var mcpShellTools = map[string]string{
	"start_process":   "command",
	"execute_command": "command",
}

// MCPShellCommand reports whether a call of the MCP tool named tool on the
// server named server runs a shell command, and returns the command ("" when
// the input holds none). acc's own tools never do. input may be nil.
func MCPShellCommand(server, tool string, input map[string]any) (command string, ok bool) {
	if server == "acc" || strings.HasPrefix(tool, "acc_") {
		return "", false
	}
	key, ok := mcpShellTools[tool]
	if !ok {
		return "", false
	}
	command, _ = input[key].(string)
	return command, true
}

// mcpReadTools are the same servers' tools that only read; Split knows
// them so that a server name holding the separator splits right.
var mcpReadTools = []string{
	"read_file", "read_text_file", "read_media_file", "read_multiple_files",
	"list_directory", "list_directory_with_sizes", "directory_tree",
	"search_files", "search_code", "get_file_info", "list_allowed_directories",
}

// knownMCPTools is every tool name Split looks for at a name's end.
var knownMCPTools = func() []string {
	out := slices.Clone(mcpReadTools)
	for name := range mcpWriteTools {
		out = append(out, name)
	}
	for name := range mcpShellTools {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}()

func dryRun(input map[string]any) bool {
	v, _ := input["dryRun"].(bool)
	return v
}

func viewCommand(input map[string]any) bool {
	v, _ := input["command"].(string)
	return v == "view"
}

// MCPWriteTools lists the MCP tool names [MCPWriteTargets] treats as
// writes and those [MCPShellCommand] reads as a shell, sorted: what an
// install's hook matcher must select.
func MCPWriteTools() []string {
	out := make([]string, 0, len(mcpWriteTools)+len(mcpShellTools))
	for name := range mcpWriteTools {
		out = append(out, name)
	}
	for name := range mcpShellTools {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// MCPWriteTargets reports whether a call of the MCP tool named tool on the
// server named server writes files, and which: the paths under the tool's
// path keys, as given (relative to the session's cwd or absolute; a key
// holding a list gives each of its strings), without duplicates, in key
// order. The tool is recognised by its own name whatever the server is
// called (the table is mcpWriteTools; docs/hooks.md#mcp-tools); every
// other tool, the read tools of the same servers, and acc's own tools
// (server acc, or a tool named acc_…) are not writes. A recognised write
// whose input names no path gives write true and no targets. input may be
// nil.
func MCPWriteTargets(server, tool string, input map[string]any) (targets []string, write bool) {
	if server == "acc" || strings.HasPrefix(tool, "acc_") {
		return nil, false
	}
	w, ok := mcpWriteTools[tool]
	if !ok || (w.readOnly != nil && w.readOnly(input)) {
		return nil, false
	}
	add := func(p string) {
		if p != "" && !slices.Contains(targets, p) {
			targets = append(targets, p)
		}
	}
	for _, k := range w.keys {
		switch v := input[k].(type) {
		case string:
			add(v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					add(s)
				}
			}
		}
	}
	return targets, true
}
