package deadport_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/deadport"
)

func TestRefusedAndHeld(t *testing.T) {
	p, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialling the held port: %v, want connection refused", err)
	}
	// Go's listeners set SO_REUSEADDR; they still must not get the port.
	if l, err := net.Listen("tcp", p.Addr()); err == nil {
		l.Close()
		t.Fatal("a listener could bind the held port")
	}
	if l, err := net.Listen("tcp", ":"+portOf(t, p.Addr())); err == nil {
		l.Close()
		t.Fatal("a wildcard listener could bind the held port")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", p.Addr())
	if err != nil {
		t.Fatalf("the released port cannot be bound: %v", err)
	}
	l.Close()
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
