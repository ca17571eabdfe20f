package e2e

import (
	"path/filepath"
	"testing"
)

// mcpToolName is how the client names an MCP server's tool in its
// pre-tool payload (docs/hooks.md#mcp-tools): Gemini CLI as
// mcp_<server>_<tool>, the others as mcp__<server>__<tool> (Grok's form is
// not established; acc reads it as the others').
func (c hookClient) mcpToolName(server, tool string) string {
	if c.id == "gemini" {
		return "mcp_" + server + "_" + tool
	}
	return "mcp__" + server + "__" + tool
}

// mcpPayload is the client's pre-tool payload for an MCP tool call whose
// arguments are exactly input.
func (c hookClient) mcpPayload(t testing.TB, sid, cwd, server, tool string, input map[string]any) []byte {
	m := c.rewrite(c.mustFixture(t, c.tool), sid, cwd)
	m[c.toolKey] = c.mcpToolName(server, tool)
	m[c.inputKey] = input
	return encode(t, m)
}

// TestHookGuardMCPTools: through the built acc-hook and each client's own
// payload shape, an MCP filesystem server's write into a peer's guarded
// file (write_file, edit_file, move_file either way, by relative or
// absolute path) is denied with the reason naming the holder; its reads,
// its writes elsewhere, a dry-run edit, a tool that writes no file and
// acc's own tools pass.
func TestHookGuardMCPTools(t *testing.T) {
	g := newGuardRoom(t)
	abs := filepath.Join(g.repo, "src", "a.go")
	cases := []struct {
		label, server, tool string
		input               map[string]any
		deny                bool
	}{
		{"write_file on a guarded file", "filesystem", "write_file", map[string]any{"path": "src/a.go", "content": "x"}, true},
		{"write_file by absolute path", "filesystem", "write_file", map[string]any{"path": abs, "content": "x"}, true},
		{"edit_file on a guarded file", "filesystem", "edit_file", map[string]any{"path": "f", "edits": []any{map[string]any{"oldText": "original", "newText": "x"}}}, true},
		{"move_file onto a guarded file", "filesystem", "move_file", map[string]any{"source": "g", "destination": "src/a.go"}, true},
		{"move_file of a guarded file", "filesystem", "move_file", map[string]any{"source": "notes.txt", "destination": "moved.txt"}, true},
		{"edit_block of another server", "desktop-commander", "edit_block", map[string]any{"file_path": abs, "old_string": "a", "new_string": "b"}, true},
		{"read_file of a guarded file", "filesystem", "read_file", map[string]any{"path": "src/a.go"}, false},
		{"read_multiple_files", "filesystem", "read_multiple_files", map[string]any{"paths": []any{"src/a.go", "f"}}, false},
		{"edit_file dry run", "filesystem", "edit_file", map[string]any{"path": "src/a.go", "edits": []any{}, "dryRun": true}, false},
		{"write_file elsewhere", "filesystem", "write_file", map[string]any{"path": "g", "content": "x"}, false},
		{"move_file between unclaimed files", "filesystem", "move_file", map[string]any{"source": "g", "destination": "h"}, false},
		{"advisory claim", "filesystem", "write_file", map[string]any{"path": "adv.txt", "content": "x"}, false},
		{"a tool that writes no file", "github", "create_issue", map[string]any{"title": "src/a.go", "path": "src/a.go"}, false},
		{"acc's own claim", "acc", "acc_claim", map[string]any{"resource": "file:src/a.go"}, false},
		{"a shell command that removes a guarded file", "desktop-commander", "start_process", map[string]any{"command": "rm src/a.go", "timeout_ms": 1000}, true},
		{"an older shell tool's redirection", "desktop-commander", "execute_command", map[string]any{"command": "echo x > f"}, true},
		{"a shell command that reads a guarded file", "desktop-commander", "start_process", map[string]any{"command": "cat src/a.go"}, false},
	}
	for _, c := range hookClients {
		for _, tc := range cases {
			p := c.mcpPayload(t, "mcp-"+c.id, g.repo, tc.server, tc.tool, tc.input)
			g.check(t, c, hookOpts{}, p, tc.deny, "peer", c.mcpToolName(tc.server, tc.tool)+": "+tc.label)
		}
	}
	g.untouched(t)
}

// TestHookGuardMCPGeminiContext: Gemini CLI shortens a long MCP tool name;
// the server's own names in mcp_context still make the call a write.
func TestHookGuardMCPGeminiContext(t *testing.T) {
	g := newGuardRoom(t)
	c := clientByID(t, "gemini")
	m := c.rewrite(c.mustFixture(t, c.tool), "mcp-gemini", g.repo)
	m[c.toolKey] = "mcp_a_very_long_server_name_for_fi...rver_name_for_files_write_fi"
	m[c.inputKey] = map[string]any{"path": "src/a.go", "content": "x"}
	m["mcp_context"] = map[string]any{"server_name": "a_very_long_server_name_for_files", "tool_name": "write_file"}
	g.check(t, c, hookOpts{}, encode(t, m), true, "peer", "shortened write_file with mcp_context")
	m["mcp_context"] = map[string]any{"server_name": "a_very_long_server_name_for_files", "tool_name": "read_file"}
	g.check(t, c, hookOpts{}, encode(t, m), false, "peer", "shortened read_file with mcp_context")
}
