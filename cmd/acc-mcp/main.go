// Command acc-mcp is acc's MCP stdio server. It takes no arguments: its
// participant comes from ACC_MCP_PARTICIPANT and its workspace from
// ACC_MCP_WORKSPACE (docs/decisions.md#19-workspace-config).
package main

import (
	"os"

	"github.com/acc-go/acc/internal/mcpserver"
)

func main() { os.Exit(mcpserver.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
