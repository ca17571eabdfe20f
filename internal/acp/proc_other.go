//go:build !linux

package acp

import "os/exec"

// setProcAttr leaves the agent in the relay's process group where Linux's
// parent-death signal is not available.
func setProcAttr(cmd *exec.Cmd) {}
