package hooksock

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// ErrNoCollector is returned by Ask when no collector listens on the socket:
// none is attached to the home, or the one that was has died.
var ErrNoCollector = errors.New("no collector attached to this home")

// Ask sends r to the collector listening at path and returns its reply.
// Everything — connecting, sending, waiting — ends by deadline.
func Ask(path string, r Request, deadline time.Time) (Reply, error) {
	if len(path) > maxPathLen {
		return Reply{}, ErrNoCollector // such a collector cannot listen either
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return Reply{}, fmt.Errorf("cannot open a socket: %w", err)
	}
	defer syscall.Close(fd)
	// Not SOCK_CLOEXEC, which macOS lacks: a hook starts no process while
	// the socket is open.
	syscall.CloseOnExec(fd)
	if err := sockio.SetTimeouts(fd, time.Until(deadline)); err != nil {
		return Reply{}, err
	}
	err = sockio.RetryEINTR(func() error { return syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) })
	if err == syscall.ENOENT || err == syscall.ECONNREFUSED {
		return Reply{}, ErrNoCollector
	}
	if err != nil {
		return Reply{}, fmt.Errorf("cannot connect to %s: %w", path, err)
	}
	if err := sockio.WriteAll(fd, AppendRequest(make([]byte, 0, len(magic)+len(r.ProjectPolicy)+len(r.Payload)+8), r)); err != nil {
		return Reply{}, fmt.Errorf("cannot send to the collector: %w", err)
	}
	if err := syscall.Shutdown(fd, syscall.SHUT_WR); err != nil {
		return Reply{}, fmt.Errorf("cannot send to the collector: %w", err)
	}
	b, err := sockio.ReadAll(fd, maxReplyBytes)
	if err != nil {
		return Reply{}, fmt.Errorf("cannot read the collector's reply: %w", err)
	}
	if len(b) == 0 {
		return Reply{}, errors.New("the collector closed the connection without an answer")
	}
	return ParseReply(b)
}
