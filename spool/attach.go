package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// consumerFile is the file a consumer holds locked, exclusively, for as
// long as it drains the spool continuously; its first line is the
// consumer's address (the collector's listen address), its second the
// consumer's process id.
const consumerFile = "consumer.lock"

// ErrAttached is returned by Attach when another consumer is attached.
var ErrAttached = errors.New("another consumer is attached to the spool")

// Attach declares the caller the spool's consumer, reachable at addr, until
// release is called or the process ends (the kernel drops the lock with the
// process, so a crashed consumer never looks attached). While attached, the
// consumer must drain what is appended promptly: writers that find it
// attached append instead of contacting it (see AttachedTo).
func (s *Spool) Attach(addr string) (release func(), err error) {
	path := filepath.Join(s.dir, consumerFile)
	fd, err := openFile(path, syscall.O_RDWR|syscall.O_CREAT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		closeFD(fd)
		if err == syscall.EWOULDBLOCK {
			return nil, ErrAttached
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	if err := syscall.Ftruncate(fd, 0); err != nil {
		closeFD(fd)
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if _, err := syscall.Pwrite(fd, []byte(addr+"\n"+strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		closeFD(fd)
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	s.attached.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.attached.Add(-1)
			_ = syscall.Ftruncate(fd, 0)
			closeFD(fd)
		})
	}, nil
}

// Attached reports whether the consumer's lock is held through s: whether
// an Attach on s has not been released yet. The consumer follows the spool
// with a Tail while it is.
func (s *Spool) Attached() bool { return s.attached.Load() > 0 }

// AttachedTo reports whether a consumer reachable at addr is attached to
// the spool in dir. It costs an open, a lock attempt and a read, so a hook
// can ask it on every event.
func AttachedTo(dir, addr string) bool {
	c, ok := consumer(dir)
	return ok && c.Addr == addr
}

// ConsumerInfo names the consumer attached to a spool.
type ConsumerInfo struct {
	// Addr is the address the consumer (a collector) listens on.
	Addr string
	// PID is its process id; 0 when the consumer did not write it.
	PID int
}

// Consumer returns the consumer attached to the spool in dir, if one is:
// the process that holds the lock, as it described itself.
func Consumer(dir string) (ConsumerInfo, bool) { return consumer(dir) }

func consumer(dir string) (ConsumerInfo, bool) {
	var c ConsumerInfo
	fd, err := openFile(filepath.Join(dir, consumerFile), syscall.O_RDONLY, 0)
	if err != nil {
		return c, false
	}
	defer closeFD(fd)
	if err := syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		return c, false // nobody holds it: no consumer
	}
	var buf [256]byte
	n, err := syscall.Pread(fd, buf[:], 0)
	if err != nil || n <= 0 {
		return c, false
	}
	addr, rest, _ := bytes.Cut(buf[:n], []byte{'\n'})
	c.Addr = string(bytes.TrimSpace(addr))
	pid, _, _ := bytes.Cut(rest, []byte{'\n'})
	c.PID, _ = strconv.Atoi(string(bytes.TrimSpace(pid)))
	return c, c.Addr != ""
}
