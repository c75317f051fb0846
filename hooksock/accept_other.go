//go:build !linux

package hooksock

import "syscall"

// maxPathLen is the longest socket path: sun_path holds 104 bytes with the
// terminating NUL on the BSDs and macOS.
const maxPathLen = 103

func accept(fd int) (int, error) {
	// No accept4: the collector starts no process while answering, so the
	// window before CloseOnExec is harmless.
	nfd, _, err := syscall.Accept(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	return nfd, err
}
