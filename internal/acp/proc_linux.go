package acp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the agent in its own process group, so a signal meant
// for the relay reaches the agent once (the relay forwards it), and asks
// the kernel to end the agent if the relay dies without reaping it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
