package spool

import (
	"context"
	"os"
	"syscall"
)

// Notify returns a Notifier of appends to the spool, until ctx ends, or
// nil where the platform offers no notification (the caller then polls).
// On Linux it watches the directory with inotify.
func (s *Spool) Notify(ctx context.Context) *Notifier {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	// Every Append ends by closing what it wrote, so IN_CLOSE_WRITE alone
	// marks each one; watching its write and create too woke the collector
	// up to three times per event, each wake-up paid inside the writer's
	// system call.
	if _, err := syscall.InotifyAddWatch(fd, s.dir, syscall.IN_CLOSE_WRITE); err != nil {
		syscall.Close(fd)
		return nil
	}
	out := make(chan struct{}, 1)
	n := &Notifier{
		C:   out,
		out: out,
		arm: make(chan struct{}, 1),
		fd:  fd,
		// A non-blocking fd in an os.File waits in the runtime's poller,
		// so Close wakes the reader when ctx ends.
		f:   os.NewFile(uintptr(fd), "inotify:"+s.dir),
		buf: make([]byte, 4096),
	}
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.closed = true
		n.f.Close()
	})
	go func() {
		buf := make([]byte, 4096)
		for {
			select {
			case <-n.arm:
			case <-ctx.Done():
				return
			}
			if _, err := n.f.Read(buf); err != nil {
				return
			}
			n.armed.Store(false)
			select {
			case out <- struct{}{}:
			default: // one pending wake-up is enough
			}
		}
	}()
	return n
}

// Discard drops the notifications of the appends made until now, read or
// not: the caller is about to look at the spool, and will find them. Only
// the notifications' reader (the caller of Arm) may call it.
func (n *Notifier) Discard() {
	select {
	case <-n.out:
	default:
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return // the descriptor may be another file's by now
	}
	for {
		// The descriptor is non-blocking: EAGAIN once the queue is empty.
		if k, err := syscall.Read(n.fd, n.buf); k <= 0 || err != nil {
			return
		}
	}
}
