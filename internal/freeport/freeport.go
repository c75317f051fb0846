// Package freeport finds loopback TCP ports that nothing listens on, for a
// server a test or benchmark starts there next, and an address of this
// machine beyond loopback, for one meant to be reached as another
// machine's.
//
// A port the kernel hands out for ":0" is free again the moment the finder
// closes it, and the next ":0" listener anywhere on the machine (a server
// the same test starts, one of a parallel test) may be given it: the server
// meant for the port then fails to bind it, or, worse, a test that means the
// port to be down finds another server answering there. Where the kernel
// says which ports it hands out for ":0" (Linux), the ports here are drawn
// below that range, so no ":0" listener can take them.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// floor is the lowest port drawn: above the ports services are commonly
// configured on.
const floor = 20000

// Addr returns a loopback host:port nothing listens on now.
func Addr() (string, error) {
	addrs, err := Addrs(1)
	if err != nil {
		return "", err
	}
	return addrs[0], nil
}

// Port is Addr's port.
func Port() (int, error) {
	ports, err := Ports(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// Ports is Addrs' ports.
func Ports(n int) ([]int, error) {
	addrs, err := Addrs(n)
	if err != nil {
		return nil, err
	}
	ports := make([]int, n)
	for i, a := range addrs {
		_, p, _ := net.SplitHostPort(a)
		ports[i], _ = strconv.Atoi(p)
	}
	return ports, nil
}

// Addrs returns n distinct loopback host:ports nothing listens on now. Each
// is held until all are found, so that they differ.
func Addrs(n int) ([]string, error) {
	low, drawn := ephemeralLow()
	drawn = drawn && low > floor+100
	var addrs []string
	for range n {
		l, err := listen(drawn, low)
		if err != nil {
			return nil, err
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// listen binds a port drawn below low, or one the kernel picks when no draw
// is possible or 64 draws found none free.
func listen(drawn bool, low int) (net.Listener, error) {
	if drawn {
		for range 64 {
			port := floor + rand.IntN(low-floor)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// ephemeralLow is the first port of the kernel's range for ":0", where the
// system says it.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(f[0])
	return low, err == nil
}

// HostIPv4 returns an IPv4 address of this machine beyond loopback, for a
// server a test means to be reached as another machine's would be; false
// when the machine has none.
func HostIPv4() (net.IP, bool) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP, true
		}
	}
	return nil, false
}
