package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hookwatch/hookwatch/internal/lockfile"
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
	l, err := lockfile.Take(path, []byte(addr+"\n"+strconv.Itoa(os.Getpid())+"\n"))
	if errors.Is(err, lockfile.ErrHeld) {
		return nil, ErrAttached
	}
	if err != nil {
		return nil, fmt.Errorf("cannot attach to the spool with %s: %w", path, err)
	}
	s.attached.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.attached.Add(-1)
			_ = l.Release()
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
	desc, held := lockfile.Holder(filepath.Join(dir, consumerFile))
	if !held {
		return c, false
	}
	addr, rest, _ := bytes.Cut(desc, []byte{'\n'})
	c.Addr = string(bytes.TrimSpace(addr))
	pid, _, _ := bytes.Cut(rest, []byte{'\n'})
	c.PID, _ = strconv.Atoi(string(bytes.TrimSpace(pid)))
	return c, c.Addr != ""
}
