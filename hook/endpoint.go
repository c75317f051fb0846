package hook

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Why not net/url and net/netip: the hook starts once per agent event, and
// net/url links net/netip, whose package init (unique.Make of its zone
// handles) alone measured ~37 µs per process; the hook without both measured
// ~60 µs faster per run. The URLs the hook can reach (http:// to an IP
// literal or localhost) are few enough to parse here. parseEndpoint accepts
// what url.Parse and netip.ParseAddr accepted, with the same address, Host
// header and base path (endpoint_test.go checks it against them), except
// user info and IPv6 zones, which it refuses.

// endpoint is a parsed collector URL the hook can reach directly.
type endpoint struct {
	addr     ipPort
	hostHdr  string // host[:port] as written, for the Host header
	basePath string // escaped, without trailing slashes
}

// errUnsupportedURL marks a collector URL the hook cannot POST to itself.
var errUnsupportedURL = errors.New("collector URL must be http:// with an IP address or localhost")

// parseEndpoint parses raw, an http:// URL (scheme in any case) whose host is
// localhost (127.0.0.1), an IPv4 literal or a bracketed IPv6 literal, with
// an optional port (80 when absent or empty) and base path; a query or
// fragment is ignored. Other schemes, host names, user info and IPv6 zones
// are refused with errUnsupportedURL; malformed URLs with a parse error.
func parseEndpoint(raw string) (endpoint, error) {
	rest, frag, _ := strings.Cut(raw, "#")
	if !validEscapes(frag) {
		return endpoint{}, badURL(raw, "invalid escape in the fragment")
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c < ' ' || c == 0x7f {
			return endpoint{}, badURL(raw, "control character")
		}
	}
	// url.Parse lowercased the scheme. Five bytes hold five runes only when
	// all are ASCII, so EqualFold cannot match a Unicode look-alike here.
	if len(rest) < len("http:") || !strings.EqualFold(rest[:len("http:")], "http:") {
		return endpoint{}, unsupportedURL(raw, "the scheme is not http")
	}
	rest, _, _ = strings.Cut(rest[len("http:"):], "?")
	if !strings.HasPrefix(rest, "//") {
		return endpoint{}, unsupportedURL(raw, "no host")
	}
	authority, path := rest[2:], ""
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority, path = authority[:i], authority[i:]
	}
	if strings.IndexByte(authority, '@') >= 0 {
		// Not quoted: the user info may hold a password.
		return endpoint{}, fmt.Errorf("%w (user info is not supported)", errUnsupportedURL)
	}

	var ep endpoint
	var port string // "" or ":" and digits
	if strings.HasPrefix(authority, "[") {
		end := strings.LastIndexByte(authority, ']')
		if end < 0 || strings.LastIndexByte(authority, '[') > 0 {
			return endpoint{}, badURL(raw, "invalid IPv6 literal")
		}
		host := authority[1:end]
		port = authority[end+1:]
		if strings.IndexByte(host, '%') >= 0 {
			return endpoint{}, unsupportedURL(raw, "IPv6 zones are not supported")
		}
		ip, ok := parseIPv6(host)
		if !ok {
			return endpoint{}, badURL(raw, "invalid IPv6 address")
		}
		ep.addr = ipFrom16(ip)
	} else {
		if strings.Count(authority, ":") > 1 {
			return endpoint{}, badURL(raw, "an IPv6 address must be in brackets")
		}
		host := authority
		if i := strings.IndexByte(authority, ':'); i >= 0 {
			host, port = authority[:i], authority[i:]
		}
		if host == "localhost" {
			ep.addr = ipPort{ip: v4InV6(127, 0, 0, 1), is4: true}
		} else if ip, ok := parseIPv4(host); ok {
			ep.addr = ipPort{ip: ip, is4: true}
		} else {
			return endpoint{}, unsupportedURL(raw, "the host is not an IP address or localhost")
		}
	}
	ep.addr.port = 80
	if port != "" {
		n, ok := parsePort(port[1:])
		if port[0] != ':' || !ok {
			return endpoint{}, fmt.Errorf("cannot parse port of collector URL %q: invalid port %q", raw, port)
		}
		ep.addr.port = n
	}
	ep.hostHdr = authority
	path, ok := escapedPath(path)
	if !ok {
		return endpoint{}, badURL(raw, "invalid escape in the path")
	}
	ep.basePath = trimSlash(path)
	return ep, nil
}

func badURL(raw, why string) error {
	return fmt.Errorf("cannot parse collector URL %q: %s", raw, why)
}

func unsupportedURL(raw, why string) error {
	return fmt.Errorf("%w (%s): %q", errUnsupportedURL, why, raw)
}

// parsePort parses decimal digits (leading zeros allowed) as a port.
func parsePort(s string) (uint16, bool) {
	if s == "" {
		return 80, true // "host:" is port 80 too
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > 0xffff {
			return 0, false
		}
	}
	return uint16(n), true
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// validEscapes reports whether every % in s starts a %XX escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// pathByte reports whether c stands unescaped in a path the way net/url
// writes one; pathByteAsIs adds the bytes it leaves alone when they are
// written so.
func pathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-_.~$&+,/:;=@", c) >= 0
}

func pathByteAsIs(c byte) bool {
	return pathByte(c) || strings.IndexByte("!'()*[]%", c) >= 0
}

// escapedPath returns the path p of a URL as url.URL.EscapedPath did: p as
// written when it is validly escaped, else p decoded and escaped again, so
// the request line never holds a space or a raw non-ASCII byte. ok is false
// when a % starts no %XX escape.
func escapedPath(p string) (escaped string, ok bool) {
	if !validEscapes(p) {
		return "", false
	}
	asIs := true
	for i := 0; i < len(p) && asIs; i++ {
		asIs = pathByteAsIs(p[i])
	}
	if asIs {
		return p, true
	}
	const upperhex = "0123456789ABCDEF"
	b := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' {
			c = unhex(p[i+1])<<4 | unhex(p[i+2])
			i += 2
		}
		if pathByte(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', upperhex[c>>4], upperhex[c&15])
		}
	}
	return string(b), true
}

// ipPort is an IP address and port as the hook connects to it: an IPv4 or
// IPv4-mapped IPv6 address is IPv4 (is4), held as ::ffff:a.b.c.d in ip.
type ipPort struct {
	ip   [16]byte
	is4  bool
	port uint16
}

func v4InV6(a, b, c, d byte) [16]byte {
	return [16]byte{10: 0xff, 11: 0xff, 12: a, 13: b, 14: c, 15: d}
}

// ipFrom16 unmaps an IPv4-mapped address to IPv4 as netip.Addr.Unmap does.
func ipFrom16(ip [16]byte) ipPort {
	return ipPort{ip: ip, is4: [12]byte(ip[:12]) == [12]byte{10: 0xff, 11: 0xff}}
}

// IsLoopback reports whether the address is in 127.0.0.0/8 or is ::1.
func (a ipPort) IsLoopback() bool {
	if a.is4 {
		return a.ip[12] == 127
	}
	return a.ip == [16]byte{15: 1}
}

// String returns the address as netip.AddrPort.String does:
// "1.2.3.4:80", or "[2001:db8::1]:80" in RFC 5952 form. The collector's
// listener writes its address in that form, and the hook compares them.
func (a ipPort) String() string {
	var buf [len("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")]byte
	b := buf[:0]
	if a.is4 {
		for i, v := range a.ip[12:] {
			if i > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(v), 10)
		}
	} else {
		b = append(b, '[')
		b = a.appendIPv6(b)
		b = append(b, ']')
	}
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(a.port), 10)
	return string(b)
}

// appendIPv6 writes the address in RFC 5952 form: lowercase hex without
// leading zeros, the longest run of two or more zero groups (the first of
// equals) written as "::".
func (a ipPort) appendIPv6(b []byte) []byte {
	group := func(i int) uint16 { return uint16(a.ip[2*i])<<8 | uint16(a.ip[2*i+1]) }
	zeroStart, zeroEnd := -1, -1
	for i := 0; i < 8; i++ {
		j := i
		for j < 8 && group(j) == 0 {
			j++
		}
		if j-i >= 2 && j-i > zeroEnd-zeroStart {
			zeroStart, zeroEnd = i, j
		}
	}
	for i := 0; i < 8; i++ {
		if i == zeroStart {
			b = append(b, ':', ':')
			i = zeroEnd
			if i == 8 {
				break
			}
		} else if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendUint(b, uint64(group(i)), 16)
	}
	return b
}

// parseIPv4 parses four decimal octets (0-255, no leading zeros) as
// netip.ParseAddr does, into the IPv4-mapped form.
func parseIPv4(s string) ([16]byte, bool) {
	var ip [16]byte
	if !parseIPv4Fields(s, (*[4]byte)(ip[12:])) {
		return ip, false
	}
	ip[10], ip[11] = 0xff, 0xff
	return ip, true
}

func parseIPv4Fields(s string, fields *[4]byte) bool {
	pos, val, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			if digits == 1 && val == 0 {
				return false // leading zero
			}
			val = val*10 + int(c-'0')
			digits++
			if val > 255 {
				return false
			}
		case c == '.':
			if digits == 0 || pos == 3 {
				return false
			}
			fields[pos] = byte(val)
			pos, val, digits = pos+1, 0, 0
		default:
			return false
		}
	}
	if pos != 3 || digits == 0 {
		return false
	}
	fields[3] = byte(val)
	return true
}

// parseIPv6 parses an IPv6 address without zone as netip.ParseAddr does:
// eight groups of one to four hex digits, one "::" standing for at least
// one zero group, and optionally an IPv4 address as the last 32 bits.
func parseIPv6(s string) ([16]byte, bool) {
	var ip [16]byte
	ellipsis := -1 // the byte of ip where "::" stands
	if strings.HasPrefix(s, "::") {
		ellipsis = 0
		s = s[2:]
		if s == "" {
			return ip, true
		}
	}
	i := 0
	for i < 16 {
		n, acc := 0, 0
		for ; n < len(s) && isHex(s[n]); n++ {
			if n == 4 {
				return ip, false
			}
			acc = acc<<4 | int(unhex(s[n]))
		}
		if n == 0 {
			return ip, false
		}
		if n < len(s) && s[n] == '.' {
			// An IPv4 tail: the rest of s, in the last four bytes.
			if ellipsis < 0 && i != 12 || i+4 > 16 {
				return ip, false
			}
			if !parseIPv4Fields(s, (*[4]byte)(ip[i:i+4])) {
				return ip, false
			}
			s = ""
			i += 4
			break
		}
		ip[i], ip[i+1] = byte(acc>>8), byte(acc)
		i += 2
		s = s[n:]
		if s == "" {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return ip, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return ip, false
			}
			ellipsis = i
			s = s[1:]
			if s == "" {
				break
			}
		}
	}
	if s != "" {
		return ip, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return ip, false
		}
		// Move the groups after "::" to the end and zero the gap.
		n := 16 - i
		copy(ip[ellipsis+n:], ip[ellipsis:i])
		clear(ip[ellipsis : ellipsis+n])
	} else if ellipsis >= 0 {
		return ip, false // "::" must stand for at least one zero group
	}
	return ip, true
}
