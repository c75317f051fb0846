// Package deadport holds loopback TCP ports on which every connection is
// refused, for tests and benchmarks of a client whose server is down.
//
// A port found free and closed again ("listen on :0, close, use the
// address") is not dead: any process may bind it next, and a test server of
// a parallel test that answers everything would then take the client's
// requests, silently. A port held here is bound but never listens: a
// connection gets ECONNREFUSED at once, and no other socket can bind the
// port until it is closed.
package deadport

import (
	"fmt"
	"syscall"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// Port is a held loopback port on which connections are refused.
type Port struct {
	fd   int
	addr string
}

// Open binds a TCP socket to a free port of 127.0.0.1 without listening on
// it. The socket does not set SO_REUSEADDR, so that no listener, with or
// without it, can bind the port while it is held.
func Open() (*Port, error) {
	fd, err := sockio.Socket(syscall.AF_INET) // not inherited by the processes a test starts
	if err != nil {
		return nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("cannot bind a loopback port: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("cannot read the bound port: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return nil, fmt.Errorf("bound to an unexpected address %v", sa)
	}
	return &Port{fd: fd, addr: fmt.Sprintf("127.0.0.1:%d", in4.Port)}, nil
}

// Addr is the port's host:port.
func (p *Port) Addr() string { return p.addr }

// URL is an http:// URL on the port.
func (p *Port) URL() string { return "http://" + p.addr }

// Close releases the port.
func (p *Port) Close() error { return syscall.Close(p.fd) }
