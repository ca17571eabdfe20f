package cli_test

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's settings.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
