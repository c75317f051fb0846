package hook

import "syscall"

// dupOnto makes newfd a copy of oldfd, closing what newfd was, in one step,
// without close-on-exec (dup3 with no flags: dup2 is missing on some of
// Linux's architectures).
func dupOnto(oldfd, newfd int) error { return syscall.Dup3(oldfd, newfd, 0) }
