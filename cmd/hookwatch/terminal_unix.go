//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package main

import "golang.org/x/sys/unix"

// isTerminalFD reports whether fd is a terminal: whether the terminal
// driver answers for it. A character device is not enough: /dev/null is
// one, and a script or a service runs commands with stdin there.
func isTerminalFD(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlReadTermios)
	return err == nil
}
