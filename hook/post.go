package hook

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/sockio"
)

// Why raw sockets: the hook runs once per agent event and every tool call
// waits for it. Linking the net package makes a cgo-enabled build dynamically
// linked and starts the netpoller, which measured +1.2 to +1.4 ms per run here
// (half the whole budget); a blocking socket with kernel timeouts costs a few
// syscalls. So the hook speaks the two requests it needs, HTTP/1.1 POST with
// Connection: close (and, at a resume, an HTTP/1.0 GET), over a plain socket
// to an IP-literal or localhost collector. Any other URL (https, a DNS name) is refused by parseEndpoint:
// the envelope is spooled and the reason logged, so nothing is lost.

// StatusError is a collector's answer other than 2xx, with its HTTP status
// code. The SDK's forwarder (toolhook) returns it too, so that one rule
// (Permanent) tells what sending again cannot fix.
type StatusError struct{ Code int }

func (e StatusError) Error() string { return fmt.Sprintf("collector answered HTTP %d", e.Code) }

// post sends body as application/json to path on ep and returns the status
// code. Every step is bounded by deadline: connect and write by SO_SNDTIMEO,
// the reply by SO_RCVTIMEO, so a hung collector costs at most the budget.
func post(ep endpoint, path, token string, body []byte, deadline time.Time) (int, error) {
	fd, err := dial(ep, deadline)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	var req bytes.Buffer
	req.Grow(256 + len(body))
	req.WriteString("POST ")
	req.WriteString(ep.basePath + path)
	req.WriteString(" HTTP/1.1\r\nHost: ")
	req.WriteString(ep.hostHdr)
	req.WriteString("\r\nUser-Agent: hookwatch-hook\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ")
	req.WriteString(strconv.Itoa(len(body)))
	if token != "" {
		req.WriteString("\r\nAuthorization: Bearer ")
		req.WriteString(token)
	}
	req.WriteString("\r\n\r\n")
	req.Write(body)
	if err := sockio.WriteAll(fd, req.Bytes()); err != nil {
		return 0, fmt.Errorf("cannot send to collector: %w", err)
	}
	code, err := readStatus(fd)
	if err != nil {
		return 0, fmt.Errorf("cannot read collector reply: %w", err)
	}
	return code, nil
}

// get asks for path on ep and returns the status code and the body, which
// may hold at most max bytes. The request is HTTP/1.0, so that the reply
// is never chunked: its body is what comes before the connection closes.
// Bounded by deadline like post.
func get(ep endpoint, path, token string, max int, deadline time.Time) (int, []byte, error) {
	fd, err := dial(ep, deadline)
	if err != nil {
		return 0, nil, err
	}
	defer syscall.Close(fd)
	var req bytes.Buffer
	req.WriteString("GET ")
	req.WriteString(ep.basePath + path)
	req.WriteString(" HTTP/1.0\r\nHost: ")
	req.WriteString(ep.hostHdr)
	req.WriteString("\r\nUser-Agent: hookwatch-hook\r\nAccept: application/json")
	if token != "" {
		req.WriteString("\r\nAuthorization: Bearer ")
		req.WriteString(token)
	}
	req.WriteString("\r\n\r\n")
	if err := sockio.WriteAll(fd, req.Bytes()); err != nil {
		return 0, nil, fmt.Errorf("cannot send to collector: %w", err)
	}
	reply, err := sockio.ReadAll(fd, max+64<<10)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot read collector reply: %w", err)
	}
	line, _, _ := bytes.Cut(reply, []byte("\n"))
	code, err := parseStatusLine(bytes.TrimSuffix(line, []byte("\r")))
	if err != nil {
		return 0, nil, err
	}
	_, body, ok := bytes.Cut(reply, []byte("\r\n\r\n"))
	if !ok {
		return 0, nil, errors.New("cannot read collector reply: no end of headers")
	}
	if len(body) > max {
		return 0, nil, fmt.Errorf("collector reply over %d bytes", max)
	}
	return code, body, nil
}

// dial connects a blocking socket to ep, its timeouts set to deadline.
func dial(ep endpoint, deadline time.Time) (int, error) {
	family := syscall.AF_INET
	if !ep.addr.is4 {
		family = syscall.AF_INET6
	}
	fd, err := sockio.Socket(family)
	if err != nil {
		return -1, err
	}
	if err := sockio.SetTimeouts(fd, time.Until(deadline)); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	var sa syscall.Sockaddr
	if family == syscall.AF_INET {
		sa = &syscall.SockaddrInet4{Port: int(ep.addr.port), Addr: [4]byte(ep.addr.ip[12:])}
	} else {
		sa = &syscall.SockaddrInet6{Port: int(ep.addr.port), Addr: ep.addr.ip}
	}
	if err := sockio.RetryEINTR(func() error { return syscall.Connect(fd, sa) }); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("cannot connect to collector %s: %w", ep.addr, err)
	}
	return fd, nil
}

// readStatus reads until the end of the status line and returns its code.
// The rest of the reply is not needed: Connection: close ends it.
func readStatus(fd int) (int, error) {
	var buf [512]byte
	n := 0
	for {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if m == 0 {
			return 0, errors.New("connection closed before a status line")
		}
		n += m
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return parseStatusLine(buf[:i])
		}
		if n == len(buf) {
			return 0, errors.New("status line too long")
		}
	}
}

func parseStatusLine(line []byte) (int, error) {
	// "HTTP/1.1 200 OK"
	if !bytes.HasPrefix(line, []byte("HTTP/1.")) || len(line) < 12 || line[8] != ' ' {
		return 0, fmt.Errorf("not an HTTP status line: %q", line)
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status code in %q", line)
	}
	return code, nil
}
