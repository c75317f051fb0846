//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos)

package main

// isTerminalFD reports no terminal where there is no terminal driver to
// ask: progress bars and hints for a person are left out there.
func isTerminalFD(fd uintptr) bool { return false }
