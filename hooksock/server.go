package hooksock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// Handler answers one request. It runs on one of the Server's threads, so a
// slow handler delays the requests queued behind it; it must not panic
// (a panic is recovered and the hook gets no answer).
type Handler func(Request) Reply

// threads is how many requests a Server answers at once: parallel subagents
// ask together, and an answer takes well under a millisecond.
const threads = 4

// ioTimeout bounds reading a request and writing its reply, so a client that
// connects and stalls holds a thread no longer than the hook's default budget.
const ioTimeout = time.Second

// Server answers hooks on the socket. Its threads block in accept(2)
// themselves, each locked to its OS thread: a connection wakes the thread
// that answers it, where the net package's poller would wake one thread to
// hand the connection to another (~0.13 ms more per request on an idle
// collector, measured on the project's machine).
type Server struct {
	path    string
	fd      int
	closed  atomic.Bool
	started int
	wg      sync.WaitGroup
}

// Listen creates the socket at path, replacing a stale one: the caller must
// be the only collector for its home — attached to the home's spool — so a
// socket already there was left by one that died.
func Listen(path string) (*Server, error) {
	if len(path) > maxPathLen {
		return nil, fmt.Errorf("cannot listen on %s: a socket path has at most %d bytes, this one %d; a shorter HOOKWATCH_HOME fixes it", path, maxPathLen, len(path))
	}
	fd, err := sockio.Socket(syscall.AF_UNIX)
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (*Server, error) {
		syscall.Close(fd)
		return nil, fmt.Errorf("cannot %s %s: %w", what, path, err)
	}
	// Bound under a temporary name and restricted before it takes the
	// real one, so that no one else can connect in between, whatever the
	// umask; the rename also replaces a socket left by a collector that died.
	// Its name is no longer than FileName, so it fits wherever the socket does.
	tmp := filepath.Join(filepath.Dir(path), ".hs"+strconv.FormatInt(int64(os.Getpid()), 36))
	if len(tmp) > maxPathLen {
		tmp = path // a custom name shorter still: bind in place
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail("replace", err)
		}
	} else {
		_ = os.Remove(tmp) // left by an earlier process with our pid
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: tmp}); err != nil {
		return fail("bind", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fail("restrict", err)
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		os.Remove(tmp)
		return fail("listen on", err)
	}
	if tmp != path {
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fail("create", err)
		}
	}
	return &Server{path: path, fd: fd}, nil
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.path }

// Serve answers requests with handle until Close, logging with logf what a
// client got wrong or what failed (the client then decides without the
// collector). It returns at once; call it once.
func (s *Server) Serve(handle Handler, logf func(error)) {
	s.started = threads
	s.wg.Add(threads)
	for range threads {
		go s.acceptLoop(handle, logf)
	}
}

func (s *Server) acceptLoop(handle Handler, logf func(error)) {
	defer s.wg.Done()
	// Never unlocked: the thread ends with the goroutine.
	runtime.LockOSThread()
	for {
		fd, err := accept(s.fd)
		if s.closed.Load() {
			if err == nil {
				syscall.Close(fd)
			}
			return
		}
		switch {
		case err == nil:
			s.answer(fd, handle, logf)
		case err == syscall.EINTR || err == syscall.ECONNABORTED:
		case err == syscall.EMFILE || err == syscall.ENFILE || err == syscall.ENOBUFS || err == syscall.ENOMEM:
			logf(fmt.Errorf("hook socket: cannot accept a connection: %w", err))
			time.Sleep(50 * time.Millisecond) // until descriptors or memory come back
		default:
			logf(fmt.Errorf("hook socket: stopped accepting connections: %w", err))
			return
		}
	}
}

// answer serves one connection.
func (s *Server) answer(fd int, handle Handler, logf func(error)) {
	defer syscall.Close(fd)
	defer func() {
		if r := recover(); r != nil {
			logf(fmt.Errorf("hook socket: panic answering a hook: %v", r))
		}
	}()
	if err := sockio.SetTimeouts(fd, ioTimeout); err != nil {
		logf(fmt.Errorf("hook socket: %w", err))
		return
	}
	b, err := sockio.ReadAll(fd, MaxRequestBytes)
	if err != nil {
		logf(fmt.Errorf("hook socket: cannot read a request: %w", err))
		return
	}
	req, err := ParseRequest(b)
	if err != nil {
		logf(fmt.Errorf("hook socket: %w", err))
		return
	}
	r := handle(req)
	if err := sockio.WriteAll(fd, AppendReply(make([]byte, 0, 128+len(r.Audit)+len(r.Stdout)), r)); err != nil {
		logf(fmt.Errorf("hook socket: cannot send a reply: %w", err))
	}
}

// Close stops answering, waits for the answers under way, and removes the
// socket. Hooks that find no socket decide without the collector.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	// shutdown(2) wakes the threads blocked in accept(2) on Linux; where
	// it does not, a connection per thread wakes them.
	_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	for range s.started {
		if fd, err := sockio.Socket(syscall.AF_UNIX); err == nil {
			_ = syscall.Connect(fd, &syscall.SockaddrUnix{Name: s.path})
			syscall.Close(fd)
		}
	}
	s.wg.Wait()
	err := syscall.Close(s.fd)
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}
