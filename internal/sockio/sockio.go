// Package sockio is blocking socket I/O on raw file descriptors, bounded by
// kernel timeouts (SO_RCVTIMEO, SO_SNDTIMEO) instead of the net package's
// poller.
//
// Why: the hook starts once per agent event, and linking net starts the
// netpoller and, in a cgo build, makes the binary dynamic (over 1 ms per run
// measured); the collector's side of the hook socket avoids the poller's
// hand-off of a woken connection between threads (~0.13 ms per request on an
// idle process, measured). See docs/benchmarks.md.
package sockio

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Socket opens a stream socket of family (syscall.AF_UNIX, AF_INET,
// AF_INET6) that no program the process starts inherits. SOCK_CLOEXEC is
// not on every system (macOS lacks it), so the flag is set after, under
// syscall.ForkLock, as package os/exec forks under it: no process started
// in between holds the socket.
func Socket(family int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, fmt.Errorf("cannot open a socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}

// SetTimeouts bounds every later send and receive on fd by d. A d under a
// millisecond is an error: nothing useful fits in it.
func SetTimeouts(fd int, d time.Duration) error {
	if d < time.Millisecond {
		return errors.New("no time left in the budget")
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("cannot set send timeout: %w", err)
	}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("cannot set receive timeout: %w", err)
	}
	return nil
}

// RetryEINTR calls f until it returns something other than EINTR.
func RetryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// WriteAll writes all of b to fd.
func WriteAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// ErrTooLarge is returned by ReadAll when the peer sends more than allowed.
var ErrTooLarge = errors.New("more data than allowed")

// ReadAll reads from fd until the peer ends its side of the connection and
// returns what it read, or ErrTooLarge past max bytes. A timeout surfaces as
// EAGAIN.
func ReadAll(fd int, max int) ([]byte, error) {
	buf := make([]byte, 0, 4<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) > max {
			return nil, ErrTooLarge
		}
	}
}
