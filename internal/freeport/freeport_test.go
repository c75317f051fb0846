package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestOutsideEphemeral: no ":0" listener, in this process or another, can
// be handed a port found here while a test means it to be free; the ports
// of one call differ, and each can be listened on.
func TestOutsideEphemeral(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok {
		t.Skip("the kernel's ephemeral port range is not readable here")
	}
	seen := map[int]bool{}
	for range 5 {
		ports, err := Ports(4)
		if err != nil {
			t.Fatal(err)
		}
		one := map[int]bool{}
		for _, port := range ports {
			if port < floor || port >= low {
				t.Fatalf("port %d is inside the ephemeral range from %d or below %d", port, low, floor)
			}
			if one[port] {
				t.Fatalf("one call gave port %d twice: %v", port, ports)
			}
			one[port] = true
			seen[port] = true
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				t.Fatalf("port %d cannot be listened on: %v", port, err)
			}
			l.Close()
		}
	}
	if len(seen) < 15 {
		t.Errorf("20 draws gave %d ports: %v", len(seen), seen)
	}
}
