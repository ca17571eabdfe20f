package adapter

import (
	"regexp"
	"testing"
)

func TestGuardMatcher(t *testing.T) {
	cases := []struct {
		naming MCPNaming
		want   string
		match  []string
		miss   []string
	}{
		{MCPDoubleUnderscore, "^(Bash|Edit|Write)$|^mcp__.+__(create_directory|edit_block|edit_file|execute_command|move_file|start_process|str_replace_based_edit_tool|str_replace_editor|write_file)$",
			[]string{"Bash", "Edit", "Write", "mcp__filesystem__write_file", "mcp__plugin_x_fs__move_file", "mcp__a__b__edit_file", "mcp__desktop-commander__start_process"},
			[]string{"Read", "BashOutput", "NotebookEdit", "mcp__filesystem__read_file", "mcp__filesystem__write_file2", "mcp____write_file", "mcp_fs_write_file", "xmcp__fs__write_file"}},
		{MCPSingleUnderscore, "^(Bash|Edit|Write)$|^mcp_.+_(create_directory|edit_block|edit_file|execute_command|move_file|start_process|str_replace_based_edit_tool|str_replace_editor|write_file)$",
			[]string{"Write", "mcp_filesystem_write_file", "mcp_my_fs_create_directory"},
			[]string{"mcp_filesystem_read_file", "mcp__write_file", "run_shell_command"}},
		{MCPNaming{}, "^(Bash|Edit|Write)$", []string{"Bash"}, []string{"mcp__fs__write_file"}},
	}
	for _, c := range cases {
		got := GuardMatcher(c.naming, "Write", "Bash", "Edit", "Bash")
		if got != c.want {
			t.Errorf("GuardMatcher(%+v) = %q, want %q", c.naming, got, c.want)
			continue
		}
		re := regexp.MustCompile(got)
		for _, name := range c.match {
			if !re.MatchString(name) {
				t.Errorf("%q does not select %q", got, name)
			}
		}
		for _, name := range c.miss {
			if re.MatchString(name) {
				t.Errorf("%q selects %q", got, name)
			}
		}
	}
}
