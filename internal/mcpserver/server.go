// Package mcpserver is acc-mcp, the MCP stdio server (reference/mcp-acp.md
// part A). This first version enforces the launch contract only: any
// command-line argument is refused with exit 2 naming the two variables. The
// tools and resources come with the MCP work.
package mcpserver

import (
	"fmt"
	"io"
)

// Main runs acc-mcp and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "acc-mcp: takes no arguments; set ACC_MCP_PARTICIPANT (default mcp) and ACC_MCP_WORKSPACE (an absolute directory) instead")
		return 2
	}
	fmt.Fprintln(stderr, "acc-mcp: the MCP tools are not available in this build yet")
	return 1
}
