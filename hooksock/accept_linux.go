package hooksock

import "syscall"

// maxPathLen is the longest socket path: sun_path holds 108 bytes with the
// terminating NUL.
const maxPathLen = 107

func accept(fd int) (int, error) {
	nfd, _, err := syscall.Accept4(fd, syscall.SOCK_CLOEXEC)
	return nfd, err
}
