package spool

import (
	"context"
	"os"
	"syscall"
)

// Notify returns a channel that receives a value soon after records are
// appended to the spool (several appends may share one value), until ctx
// ends. ok is false where the platform offers no notification; the caller
// then polls. On Linux it watches the directory with inotify.
func (s *Spool) Notify(ctx context.Context) (ch <-chan struct{}, ok bool) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, false
	}
	// Every Append ends by closing what it wrote, so IN_CLOSE_WRITE alone
	// marks each one; watching its write and create too woke the collector
	// up to three times per event, each wake-up paid inside the writer's
	// system call.
	if _, err := syscall.InotifyAddWatch(fd, s.dir, syscall.IN_CLOSE_WRITE); err != nil {
		syscall.Close(fd)
		return nil, false
	}
	// A non-blocking fd in an os.File waits in the runtime's poller, so
	// Close wakes the reader when ctx ends.
	f := os.NewFile(uintptr(fd), "inotify:"+s.dir)
	out := make(chan struct{}, 1)
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case out <- struct{}{}:
			default: // one pending wake-up is enough
			}
		}
	}()
	return out, true
}
