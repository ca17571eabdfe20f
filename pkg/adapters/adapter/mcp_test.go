package adapter

import (
	"slices"
	"testing"
)

func TestMCPSplit(t *testing.T) {
	cases := []struct {
		naming       MCPNaming
		name         string
		server, tool string
		ok           bool
	}{
		{MCPDoubleUnderscore, "mcp__filesystem__write_file", "filesystem", "write_file", true},
		{MCPDoubleUnderscore, "mcp__plugin_tools_fs__move_file", "plugin_tools_fs", "move_file", true},
		{MCPDoubleUnderscore, "mcp__a__b__write_file", "a__b", "write_file", true},
		{MCPDoubleUnderscore, "mcp__github__create_issue", "github", "create_issue", true},
		{MCPDoubleUnderscore, "mcp__github__pulls__list", "github", "pulls__list", true},
		{MCPDoubleUnderscore, "mcp__acc__acc_claim", "acc", "acc_claim", true},
		{MCPDoubleUnderscore, "mcp__filesystem", "", "", false},
		{MCPDoubleUnderscore, "mcp____write_file", "", "", false},
		{MCPDoubleUnderscore, "mcp__x__", "", "", false},
		{MCPDoubleUnderscore, "Write", "", "", false},
		{MCPDoubleUnderscore, "mcp_filesystem_write_file", "", "", false},
		{MCPSingleUnderscore, "mcp_filesystem_write_file", "filesystem", "write_file", true},
		{MCPSingleUnderscore, "mcp_my_fs_write_file", "my_fs", "write_file", true},
		{MCPSingleUnderscore, "mcp_my_fs_list_directory_with_sizes", "my_fs", "list_directory_with_sizes", true},
		{MCPSingleUnderscore, "mcp_github_create_issue", "github", "create_issue", true},
		{MCPSingleUnderscore, "mcp__write_file", "", "", false},
		{MCPSingleUnderscore, "mcp_write_file", "write", "file", true},
		{MCPSingleUnderscore, "run_shell_command", "", "", false},
		{MCPNaming{}, "mcp__filesystem__write_file", "", "", false},
	}
	for _, c := range cases {
		server, tool, ok := c.naming.Split(c.name)
		if server != c.server || tool != c.tool || ok != c.ok {
			t.Errorf("%+v.Split(%q) = %q, %q, %v; want %q, %q, %v", c.naming, c.name, server, tool, ok, c.server, c.tool, c.ok)
		}
	}
}

func TestMCPWriteTargets(t *testing.T) {
	cases := []struct {
		server, tool string
		input        map[string]any
		targets      []string
		write        bool
	}{
		{"filesystem", "write_file", map[string]any{"path": "src/a.go", "content": "x"}, []string{"src/a.go"}, true},
		{"fs", "write_file", map[string]any{"file_path": "/abs/a.go"}, []string{"/abs/a.go"}, true},
		{"filesystem", "edit_file", map[string]any{"path": "a.go", "dryRun": false}, []string{"a.go"}, true},
		{"filesystem", "edit_file", map[string]any{"path": "a.go", "dryRun": true}, nil, false},
		{"filesystem", "edit_file", map[string]any{"path": "a.go", "dryRun": "true"}, []string{"a.go"}, true},
		{"filesystem", "move_file", map[string]any{"source": "a.go", "destination": "b.go"}, []string{"a.go", "b.go"}, true},
		{"filesystem", "move_file", map[string]any{"source": "a.go", "destination": "a.go"}, []string{"a.go"}, true},
		{"filesystem", "create_directory", map[string]any{"path": "d"}, []string{"d"}, true},
		{"desktop-commander", "edit_block", map[string]any{"file_path": "a.go"}, []string{"a.go"}, true},
		{"editor", "str_replace_editor", map[string]any{"command": "str_replace", "path": "a.go"}, []string{"a.go"}, true},
		{"editor", "str_replace_editor", map[string]any{"command": "view", "path": "a.go"}, nil, false},
		{"editor", "str_replace_based_edit_tool", map[string]any{"command": "insert", "path": "a.go"}, []string{"a.go"}, true},
		{"x", "write_file", map[string]any{"path": []any{"a.go", 7, "b.go", ""}}, []string{"a.go", "b.go"}, true},
		{"x", "write_file", map[string]any{"path": 42}, nil, true},
		{"x", "write_file", nil, nil, true},
		{"filesystem", "read_file", map[string]any{"path": "a.go"}, nil, false},
		{"filesystem", "read_multiple_files", map[string]any{"paths": []any{"a.go"}}, nil, false},
		{"filesystem", "search_files", map[string]any{"path": "."}, nil, false},
		{"github", "create_or_update_file", map[string]any{"path": "a.go"}, nil, false},
		{"acc", "acc_claim", map[string]any{"path": "a.go"}, nil, false},
		{"acc", "write_file", map[string]any{"path": "a.go"}, nil, false},
		{"other", "acc_message", map[string]any{"path": "a.go"}, nil, false},
		{"filesystem", "Write_File", map[string]any{"path": "a.go"}, nil, false},
	}
	for _, c := range cases {
		targets, write := MCPWriteTargets(c.server, c.tool, c.input)
		if write != c.write || !slices.Equal(targets, c.targets) {
			t.Errorf("MCPWriteTargets(%q, %q, %v) = %q, %v; want %q, %v", c.server, c.tool, c.input, targets, write, c.targets, c.write)
		}
	}
}

func TestMCPWriteToolsListsTheTable(t *testing.T) {
	got := MCPWriteTools()
	if !slices.IsSorted(got) || len(got) != len(mcpWriteTools)+len(mcpShellTools) {
		t.Fatalf("MCPWriteTools() = %q", got)
	}
	for _, name := range got {
		if _, shell := MCPShellCommand("s", name, nil); shell {
			continue
		}
		if _, write := MCPWriteTargets("s", name, map[string]any{"path": "p", "file_path": "p", "source": "p", "destination": "p", "command": "create"}); !write {
			t.Errorf("%s is listed but not a write", name)
		}
		if slices.Contains(mcpReadTools, name) {
			t.Errorf("%s is both a read and a write tool", name)
		}
	}
}

func TestMCPShellCommand(t *testing.T) {
	for _, c := range []struct {
		server, tool string
		input        map[string]any
		command      string
		ok           bool
	}{
		{"desktop-commander", "start_process", map[string]any{"command": "rm a.go", "timeout_ms": 100}, "rm a.go", true},
		{"dc", "execute_command", map[string]any{"command": "echo x > f"}, "echo x > f", true},
		{"dc", "start_process", map[string]any{}, "", true},
		{"dc", "read_process_output", map[string]any{"pid": 1}, "", false},
		{"acc", "start_process", map[string]any{"command": "rm a.go"}, "", false},
		{"filesystem", "write_file", map[string]any{"command": "rm a.go"}, "", false},
	} {
		got, ok := MCPShellCommand(c.server, c.tool, c.input)
		if got != c.command || ok != c.ok {
			t.Errorf("MCPShellCommand(%q, %q) = %q, %v; want %q, %v", c.server, c.tool, got, ok, c.command, c.ok)
		}
	}
}
