package treewatch

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/hookwatch/hookwatch/internal/treewalk"
)

// mask is what is watched in each directory: a file written (appended
// to), created or moved in; a directory created or moved in.
const mask = syscall.IN_MODIFY | syscall.IN_CREATE | syscall.IN_MOVED_TO

// maxPending bounds the paths kept between two Takes: past it, the
// changes are reported as an overflow.
const maxPending = 1 << 16

// Watcher watches a directory tree until its context ends.
type Watcher struct {
	fd   int
	f    *os.File
	wake chan struct{}

	mu       sync.Mutex
	dirs     map[int32]string // watch descriptor → directory
	pending  map[string]bool
	overflow bool
}

// New watches every directory of the tree at root (which must exist) until
// ctx ends. It fails where inotify is not available or its limit on
// watches is reached.
func New(ctx context.Context, root string) (*Watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("cannot watch %s: %w", root, err)
	}
	w := &Watcher{fd: fd, wake: make(chan struct{}, 1), dirs: map[int32]string{}, pending: map[string]bool{}}
	if err := w.addTree(root); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// A non-blocking fd in an os.File waits in the runtime's poller, so
	// Close wakes the reader when ctx ends.
	w.f = os.NewFile(uintptr(fd), "inotify:"+root)
	go func() {
		<-ctx.Done()
		w.f.Close()
	}()
	go w.read()
	return w, nil
}

// Wake receives a value soon after something changed (several changes may
// share one); it is closed when the Watcher stops.
func (w *Watcher) Wake() <-chan struct{} { return w.wake }

// Take returns what changed since the last Take, and forgets it.
func (w *Watcher) Take() Changes {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := Changes{Overflow: w.overflow}
	for p := range w.pending {
		c.Paths = append(c.Paths, p)
	}
	clear(w.pending)
	w.overflow = false
	return c
}

// addTree watches dir and every directory below it, through those that
// are symlinks (treewalk): dir itself (~/.claude kept elsewhere and
// linked) or one below it (a project kept elsewhere). The paths reported
// keep the links' names. A directory watched already, by another name,
// keeps the name it was watched by.
func (w *Watcher) addTree(dir string) error {
	return treewalk.Walk(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // gone, or unreadable: passed over
		}
		if !d.IsDir() {
			return nil
		}
		wd, err := syscall.InotifyAddWatch(w.fd, p, mask)
		if err != nil {
			return fmt.Errorf("cannot watch %s: %w", p, err)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if had, ok := w.dirs[int32(wd)]; ok && had != p {
			return fs.SkipDir // its tree is watched under its first name
		}
		w.dirs[int32(wd)] = p
		return nil
	})
}

// read turns the kernel's events into pending paths until the fd closes.
func (w *Watcher) read() {
	defer close(w.wake)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		var newDirs, created []string
		w.mu.Lock()
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			// struct inotify_event: wd, mask, cookie, len, then len bytes
			// of name padded with NULs.
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			evMask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := buf[off+syscall.SizeofInotifyEvent : min(n, off+syscall.SizeofInotifyEvent+nameLen)]
			off += syscall.SizeofInotifyEvent + nameLen
			if evMask&syscall.IN_Q_OVERFLOW != 0 {
				w.overflow = true
				continue
			}
			dir, ok := w.dirs[wd]
			if evMask&syscall.IN_IGNORED != 0 {
				delete(w.dirs, wd) // the directory is gone
				continue
			}
			if !ok {
				continue
			}
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			p := filepath.Join(dir, string(name))
			switch {
			case evMask&syscall.IN_ISDIR != 0:
				newDirs = append(newDirs, p) // pending once watched
			case evMask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0:
				created = append(created, p) // a file, or a link to a directory
			default:
				w.add(p)
			}
		}
		w.mu.Unlock()
		// A symlink to a directory (a project kept elsewhere, linked in)
		// is watched through as a directory created.
		for _, p := range created {
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				newDirs = append(newDirs, p)
				continue
			}
			w.mu.Lock()
			w.add(p)
			w.mu.Unlock()
		}
		// A new directory is reported once it and its subdirectories are
		// watched: a walk of it then misses nothing.
		for _, d := range newDirs {
			err := w.addTree(d)
			w.mu.Lock()
			if err != nil {
				w.overflow = true // walk the whole tree, then
			}
			w.add(d)
			w.mu.Unlock()
		}
		select {
		case w.wake <- struct{}{}:
		default: // one pending wake-up is enough
		}
	}
}

// add makes p pending, or reports an overflow past maxPending; w.mu is
// held.
func (w *Watcher) add(p string) {
	if len(w.pending) < maxPending {
		w.pending[p] = true
	} else {
		w.overflow = true
	}
}
