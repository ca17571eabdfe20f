//go:build !linux

package acp

import (
	"os"
	"os/exec"
)

// setProcAttr leaves the agent in the relay's process group where Linux's
// parent-death signal is not available.
func setProcAttr(cmd *exec.Cmd) {}

// signalGroup sends sig to the agent.
func signalGroup(cmd *exec.Cmd, sig os.Signal) { _ = cmd.Process.Signal(sig) }
