//go:build aix || linux || solaris || zos

package main

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's settings on Linux and System V.
const ioctlReadTermios = unix.TCGETS
