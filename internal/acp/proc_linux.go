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

// signalGroup sends sig to the agent's whole process group: an agent run
// through a wrapper (npx, sh -c) is ended with the processes it started.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}
