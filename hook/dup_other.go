//go:build !linux

package hook

import "syscall"

// dupOnto makes newfd a copy of oldfd, closing what newfd was, in one step,
// without close-on-exec.
func dupOnto(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }
