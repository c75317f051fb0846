package sockio_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// TestSocketCloseOnExec: no program the process starts inherits a socket
// it opens.
func TestSocketCloseOnExec(t *testing.T) {
	for _, family := range []int{syscall.AF_UNIX, syscall.AF_INET, syscall.AF_INET6} {
		fd, err := sockio.Socket(family)
		if errors.Is(err, syscall.EAFNOSUPPORT) {
			continue // a machine without IPv6
		}
		if err != nil {
			t.Fatalf("family %d: %v", family, err)
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		syscall.Close(fd)
		if errno != 0 {
			t.Fatalf("family %d: fcntl: %v", family, errno)
		}
		if flags&syscall.FD_CLOEXEC == 0 {
			t.Errorf("family %d: the socket is inherited by the programs started (flags %#x)", family, flags)
		}
	}
}
