package hooksock

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// ErrNoCollector is returned when no collector listens on the socket: none
// is attached to the home, or the one that was has died.
var ErrNoCollector = errors.New("no collector attached to this home")

// Call is a request on its way to the collector: Send returns it as soon as
// the request is sent, so the caller can work while the collector
// evaluates, and Wait reads the reply.
type Call struct {
	fd  int // -1 once closed, or when sending failed
	err error
}

// Send sends r to the collector listening at path and returns without
// waiting for the reply. Everything — connecting, sending, and later
// waiting — ends by deadline. A failure to send is reported by Wait.
func Send(path string, r Request, deadline time.Time) *Call {
	fd, err := send(path, r, deadline)
	return &Call{fd: fd, err: err}
}

func send(path string, r Request, deadline time.Time) (int, error) {
	if len(path) > maxPathLen {
		return -1, ErrNoCollector // such a collector cannot listen either
	}
	fd, err := sockio.Socket(syscall.AF_UNIX)
	if err != nil {
		return -1, err
	}
	fail := func(err error) (int, error) {
		syscall.Close(fd)
		return -1, err
	}
	if err := sockio.SetTimeouts(fd, time.Until(deadline)); err != nil {
		return fail(err)
	}
	err = sockio.RetryEINTR(func() error { return syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) })
	if err == syscall.ENOENT || err == syscall.ECONNREFUSED {
		return fail(ErrNoCollector)
	}
	if err != nil {
		return fail(fmt.Errorf("cannot connect to %s: %w", path, err))
	}
	if err := sockio.WriteAll(fd, AppendRequest(make([]byte, 0, len(magic)+len(r.ProjectPolicy)+len(r.Payload)+8), r)); err != nil {
		return fail(fmt.Errorf("cannot send to the collector: %w", err))
	}
	if err := syscall.Shutdown(fd, syscall.SHUT_WR); err != nil {
		return fail(fmt.Errorf("cannot send to the collector: %w", err))
	}
	return fd, nil
}

// Wait returns the collector's reply, or why there is none. Call it once.
func (c *Call) Wait() (Reply, error) {
	if c.err != nil {
		return Reply{}, c.err
	}
	defer c.Close()
	b, err := sockio.ReadAll(c.fd, maxReplyBytes)
	if err != nil {
		return Reply{}, fmt.Errorf("cannot read the collector's reply: %w", err)
	}
	if len(b) == 0 {
		return Reply{}, errors.New("the collector closed the connection without an answer")
	}
	return ParseReply(b)
}

// Close abandons the call if Wait was not called.
func (c *Call) Close() {
	if c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
}

// Ask is Send and Wait.
func Ask(path string, r Request, deadline time.Time) (Reply, error) {
	return Send(path, r, deadline).Wait()
}
