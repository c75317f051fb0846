package hook

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	ok := func(raw, wantAddr, wantHost, wantPath string) {
		t.Helper()
		ep, err := parseEndpoint(raw)
		if err != nil {
			t.Fatalf("parseEndpoint(%q): %v", raw, err)
		}
		if got := ep.addr.String(); got != wantAddr {
			t.Errorf("parseEndpoint(%q) address %q, want %q", raw, got, wantAddr)
		}
		if ep.hostHdr != wantHost {
			t.Errorf("parseEndpoint(%q) Host %q, want %q", raw, ep.hostHdr, wantHost)
		}
		if ep.basePath != wantPath {
			t.Errorf("parseEndpoint(%q) base path %q, want %q", raw, ep.basePath, wantPath)
		}
	}
	// unsupported: the error wraps errUnsupportedURL (a URL the hook cannot
	// reach), else it is a malformed URL or port.
	refused := func(raw string, unsupported bool) {
		t.Helper()
		_, err := parseEndpoint(raw)
		if err == nil {
			t.Fatalf("parseEndpoint(%q) accepted it", raw)
		}
		if errors.Is(err, errUnsupportedURL) != unsupported {
			t.Errorf("parseEndpoint(%q): %v; want unsupported=%v", raw, err, unsupported)
		}
	}

	ok("http://127.0.0.1:7421", "127.0.0.1:7421", "127.0.0.1:7421", "")
	ok("http://127.0.0.1:7421/", "127.0.0.1:7421", "127.0.0.1:7421", "")
	ok("HTTP://127.0.0.1:7421/hookwatch//", "127.0.0.1:7421", "127.0.0.1:7421", "/hookwatch")
	ok("hTtP://localhost", "127.0.0.1:80", "localhost", "")
	ok("http://localhost:/x", "127.0.0.1:80", "localhost:", "/x")
	ok("http://10.0.0.1:0080/a%2Fb/?q=1#frag", "10.0.0.1:80", "10.0.0.1:0080", "/a%2Fb")
	ok("http://10.0.0.1?x=/y", "10.0.0.1:80", "10.0.0.1", "")
	ok("http://10.0.0.1/p?", "10.0.0.1:80", "10.0.0.1", "/p")
	ok("http://10.0.0.1/p#%41?x", "10.0.0.1:80", "10.0.0.1", "/p")
	ok("http://255.255.255.255:65535", "255.255.255.255:65535", "255.255.255.255:65535", "")
	ok("http://0.0.0.0:0", "0.0.0.0:0", "0.0.0.0:0", "") // port 0, as net/url took it
	ok("http://1.2.3.4:000000000000000000000008", "1.2.3.4:8", "1.2.3.4:000000000000000000000008", "")
	ok("http://[::1]:7421", "[::1]:7421", "[::1]:7421", "")
	ok("http://[::]", "[::]:80", "[::]", "")
	ok("http://[::]:", "[::]:80", "[::]:", "")
	ok("http://[2001:DB8:0:0:1:0:0:1]:8080", "[2001:db8::1:0:0:1]:8080", "[2001:DB8:0:0:1:0:0:1]:8080", "")
	ok("http://[2001:db8:0:0:0:0:2:1]", "[2001:db8::2:1]:80", "[2001:db8:0:0:0:0:2:1]", "")
	ok("http://[2001:db8:0:1:1:1:1:1]", "[2001:db8:0:1:1:1:1:1]:80", "[2001:db8:0:1:1:1:1:1]", "")
	ok("http://[1:0:0:2:0:0:0:3]", "[1:0:0:2::3]:80", "[1:0:0:2:0:0:0:3]", "")
	ok("http://[0000:0:0:0:0:0:0:0001]", "[::1]:80", "[0000:0:0:0:0:0:0:0001]", "")
	ok("http://[1::]", "[1::]:80", "[1::]", "")
	ok("http://[::ffff:192.0.2.1]:80", "192.0.2.1:80", "[::ffff:192.0.2.1]:80", "")
	ok("http://[::FFFF:c000:0201]", "192.0.2.1:80", "[::FFFF:c000:0201]", "")
	ok("http://[::192.0.2.1]", "[::c000:201]:80", "[::192.0.2.1]", "")
	ok("http://[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:102:304]:80", "[1:2:3:4:5:6:1.2.3.4]", "")
	// A path needing escapes is escaped as net/url did, decoding the rest.
	ok("http://127.0.0.1/a b/\xc3\xa9/", "127.0.0.1:80", "127.0.0.1", "/a%20b/%C3%A9")
	ok("http://127.0.0.1/a%41 b", "127.0.0.1:80", "127.0.0.1", "/aA%20b")
	ok("http://127.0.0.1/!$&'()*+,;=:@[]~", "127.0.0.1:80", "127.0.0.1", "/!$&'()*+,;=:@[]~")

	refused("", true)
	refused("127.0.0.1:7421", true)
	refused("https://127.0.0.1", true)
	refused("httpx://127.0.0.1", true)
	refused("http:127.0.0.1", true)
	refused("http:/127.0.0.1", true)
	refused("http:///x", true)
	refused("http://", true)
	refused("http://example.com", true)
	refused("http://LOCALHOST", true)
	refused("http://localhost.", true)
	refused("http://1.2.3.04", true)
	refused("http://1.2.3", true)
	refused("http://1.2.3.4.5", true)
	refused("http://256.1.1.1", true)
	refused("http://1..2.3", true)
	refused("http://%31.2.3.4", true)
	refused("http://[fe80::1%25eth0]:7421", true) // zones: see FuzzParseEndpoint
	refused("http://[::ffff:1.2.3.4%25eth0]", true)
	refused("http://user@127.0.0.1", true) // user info: see FuzzParseEndpoint
	refused("http://127.0.0.1:65536", false)
	refused("http://127.0.0.1:80:80", false)
	refused("http://127.0.0.1:x", false)
	refused("http://127.0.0.1:-1", false)
	refused("http://::1/", false)
	refused("http://[::1]x", false)
	refused("http://[::1]:80x", false)
	refused("http://[::1", false)
	refused("http://[]", false)
	refused("http://x[::1]", false)
	refused("http://[[::1]]", false)
	refused("http://[1.2.3.4]", false)
	refused("http://[::1:2:3:4:5:6:7:8]", false)
	refused("http://[1:2:3:4:5:6:7]", false)
	refused("http://[1:2:3:4:5:6:7:8:9]", false)
	refused("http://[1::2::3]", false)
	refused("http://[12345::]", false)
	refused("http://[::1.2.3.4.5]", false)
	refused("http://[::1.2.3.04]", false)
	refused("http://[1:2:3:4:5:6:7:1.2.3.4]", false)
	refused("http://[1:2:3:4:5:1.2.3.4]", false)
	refused("http://[:1::]", false)
	refused("http://[1:]", false)
	refused("http://127.0.0.1/%zz", false)
	refused("http://127.0.0.1/%4", false)
	refused("http://127.0.0.1/\x00", false)
	refused("http://127.0.0.1\n", false)
	refused("http://127.0.0.1/?\x7f", false)
	refused("http://127.0.0.1/#%", false)
}

func TestParseEndpointHidesPassword(t *testing.T) {
	_, err := parseEndpoint("http://user:s3cret@127.0.0.1:7421")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("got %v, want an error without the password", err)
	}
}

func TestIPPortIsLoopback(t *testing.T) {
	f := func(raw string, want bool) {
		t.Helper()
		ep, err := parseEndpoint(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ep.addr.IsLoopback(); got != want {
			t.Errorf("%q: IsLoopback() = %v, want %v", raw, got, want)
		}
	}
	f("http://127.0.0.1", true)
	f("http://127.255.0.9", true)
	f("http://localhost", true)
	f("http://[::1]", true)
	f("http://[::ffff:127.0.0.2]", true)
	f("http://128.0.0.1", false)
	f("http://[::]", false)
	f("http://[::2]", false)
	f("http://[1::1]", false)
	f("http://[::127.0.0.1]", false) // IPv4-compatible, not mapped
}

// refEndpoint is what the hook parsed from a collector URL when it used
// net/url and net/netip (the code below is that parser, kept as the
// reference parseEndpoint must agree with). It assumes the Go 1.26 default
// urlstrictcolons=1 that go.mod's go line selects.
type refEndpoint struct {
	addr     netip.AddrPort
	hostHdr  string
	basePath string
	// userInfo and zone mark what parseEndpoint refuses on purpose: user
	// info, which the old parser ignored (the Host header never carried it,
	// so a password in it only sat in the configuration), and IPv6 zones,
	// which the hook's sockaddr never carried either (a link-local address
	// without its interface is not the collector that was meant).
	userInfo bool
	zone     bool
}

func refParseEndpoint(raw string) (refEndpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return refEndpoint{}, err
	}
	if u.Scheme != "http" {
		return refEndpoint{}, errors.New("not http")
	}
	host := u.Hostname()
	port := uint16(80)
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return refEndpoint{}, err
		}
		port = uint16(n)
	}
	var ip netip.Addr
	if host == "localhost" {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	} else if ip, err = netip.ParseAddr(host); err != nil {
		return refEndpoint{}, err
	}
	return refEndpoint{
		addr:     netip.AddrPortFrom(ip.Unmap(), port),
		hostHdr:  u.Host,
		basePath: trimSlash(u.EscapedPath()),
		userInfo: u.User != nil,
		zone:     ip.Zone() != "" || strings.Contains(host, "%"), // Unmap drops a zone
	}, nil
}

// checkAgainstRef fails unless parseEndpoint and refParseEndpoint both
// refuse raw or both accept it with the same address, loopbackness, socket
// address, Host header and base path.
func checkAgainstRef(t *testing.T, raw string) {
	t.Helper()
	want, refErr := refParseEndpoint(raw)
	got, err := parseEndpoint(raw)
	if refErr == nil && (want.userInfo || want.zone) {
		// Refused on purpose (see refEndpoint): skipped, but refused.
		if !errors.Is(err, errUnsupportedURL) {
			t.Fatalf("parseEndpoint(%q) = %+v, %v; want it refused as unsupported (user info or zone)", raw, got, err)
		}
		return
	}
	if (err == nil) != (refErr == nil) {
		t.Fatalf("parseEndpoint(%q) error %v, but net/url+netip error %v", raw, err, refErr)
	}
	if err != nil {
		return
	}
	if g, w := got.addr.String(), want.addr.String(); g != w {
		t.Errorf("parseEndpoint(%q) address %q, net/url+netip %q", raw, g, w)
	}
	if g, w := got.addr.IsLoopback(), want.addr.Addr().IsLoopback(); g != w {
		t.Errorf("parseEndpoint(%q) IsLoopback %v, netip %v", raw, g, w)
	}
	if got.addr.is4 != want.addr.Addr().Is4() || got.addr.ip != want.addr.Addr().As16() || got.addr.port != want.addr.Port() {
		t.Errorf("parseEndpoint(%q) socket address %+v, netip %v", raw, got.addr, want.addr)
	}
	if got.hostHdr != want.hostHdr {
		t.Errorf("parseEndpoint(%q) Host %q, net/url %q", raw, got.hostHdr, want.hostHdr)
	}
	if got.basePath != want.basePath {
		t.Errorf("parseEndpoint(%q) base path %q, net/url %q", raw, got.basePath, want.basePath)
	}
}

// Pieces of collector URLs, valid and not, combined by
// TestParseEndpointMatchesNetURL and seeding FuzzParseEndpoint.
var (
	refSchemes = []string{"http://", "HTTP://", "Http://", "https://", "http:", "http:/", "http:///", "ftp://", "", "//", "http://u@", "http://u:p@", "http://@"}
	refHosts   = []string{
		"127.0.0.1", "localhost", "Localhost", "10.1.2.3", "0.0.0.0", "255.255.255.255", "256.0.0.1", "01.2.3.4",
		"1.2.3", "1.2.3.4.", ".1.2.3.4", "1..2.3", "1.2.3.4%25eth0", "example.com", "", "%31.2.3.4", "1.2.3.4\xff",
		"[::1]", "[::]", "[::0]", "[1::]", "[::1:2:3:4:5:6:7]", "[::1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7]",
		"[1:0:0:2:0:0:0:3]", "[0:0:1:0:0:1:0:0]", "[2001:DB8::A:b:C]", "[00001::]", "[1::2::3]", "[:1::]", "[1:]", "[1::2:]",
		"[::ffff:1.2.3.4]", "[::ffff:127.0.0.1]", "[::1.2.3.4]", "[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:7:1.2.3.4]",
		"[::1.2.3.4.5]", "[::1.2.3]", "[1:2:3:4:5:6:7::1.2.3.4]", "[1:2:3:4:5:6::1.2.3.4]", "[1:2:3:4:5::1.2.3.4]", "[::01.2.3.4]", "[::a.2.3.4]", "[1.2.3.4]", "[fe80::1%25eth0]", "[fe80::1%eth0]",
		"[::ffff:1.2.3.4%25en0]", "[::1%25]", "[::1", "::1", "::", "[]", "[::1]]", "x[::1]", "[[::1]]", "[::\xc3\xa9]",
	}
	refPorts = []string{"", ":", ":80", ":7421", ":0", ":65535", ":65536", ":0080", ":99999999999999999999", ":-1", ":x", ":80:80", "x"}
	refPaths = []string{"", "/", "//", "/api/", "/a%2Fb", "/a b", "/%zz", "/%4", "/\xc3\xa9", "/a%41 b", "/!$&'()*+,;=:@[]~", "/a\x00", "/\x7f"}
	refTails = []string{"", "?", "?q=1", "#f", "#%zz", "#\x01", "?\x01", "?x#y?z", "?/#/"}
)

func TestParseEndpointMatchesNetURL(t *testing.T) {
	n := 0
	for _, scheme := range refSchemes {
		for _, host := range refHosts {
			for _, port := range refPorts {
				for _, path := range refPaths {
					for _, tail := range refTails {
						checkAgainstRef(t, scheme+host+port+path+tail)
						n++
					}
				}
			}
		}
	}
	t.Logf("%d URLs agree", n)
}

// TestParseEndpointIPv6MatchesNetIP writes random IPv6 addresses, mostly
// zero groups so that runs of them compete for "::", in several forms.
func TestParseEndpointIPv6MatchesNetIP(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var groups [8]uint16
		for i := range groups {
			if r.IntN(3) > 0 {
				groups[i] = uint16(r.IntN(3) * r.IntN(1<<16))
			}
		}
		var ip [16]byte
		for i, g := range groups {
			ip[2*i], ip[2*i+1] = byte(g>>8), byte(g)
		}
		if r.IntN(8) == 0 {
			copy(ip[:12], []byte{10: 0xff, 11: 0xff})
		}
		a := netip.AddrFrom16(ip)
		full := make([]string, 8)
		for i := range full {
			full[i] = fmt.Sprintf("%x", uint16(ip[2*i])<<8|uint16(ip[2*i+1]))
		}
		v4tail := strings.Join(full[:6], ":") + ":" + netip.AddrFrom4([4]byte(ip[12:])).String()
		for _, s := range []string{
			a.String(),
			a.StringExpanded(),
			strings.ToUpper(a.StringExpanded()),
			strings.Join(full, ":"),
			v4tail,
		} {
			checkAgainstRef(t, "http://["+s+"]:"+strconv.Itoa(r.IntN(1<<16))+"/p")
		}
	}
}

func FuzzParseEndpoint(f *testing.F) {
	for _, host := range refHosts {
		f.Add("http://" + host + ":7421/api/")
	}
	for _, scheme := range refSchemes {
		f.Add(scheme + "127.0.0.1")
	}
	for _, port := range refPorts {
		f.Add("http://[::1]" + port)
	}
	for _, path := range refPaths {
		f.Add("http://localhost" + path)
	}
	for _, tail := range refTails {
		f.Add("http://127.0.0.1/x" + tail)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkAgainstRef(t, raw)
	})
}

// TestForwardable holds the forwarder's rule to what net/url reads of each
// URL (an http or https scheme and a host: the rule the forwarder had when it
// parsed with net/url), except a port above 65535, which net/url accepts and
// no forwarder can reach.
func TestForwardable(t *testing.T) {
	for _, raw := range []string{
		"https://hookwatch.example.com:8443/", "http://hookwatch.internal:7421", "HTTPS://10.0.0.5",
		"https://[2001:db8::1]:443/base", "https://[fe80::1%25eth0]/", "https://user:pw@host/",
		"http://127.0.0.1:7421", "https://h:/", "https://h?q=1", "https://h#f",
		"https://", "https:///path", "https://:8443", "https://user@", "https://h:port",
		"https://[]:80", "ftp://example.com", "https//x", "://x", "", "https://h\x7f", "https://h\n/",
		"https://h:99999",
	} {
		u, err := url.Parse(raw)
		want := err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Hostname() != ""
		if raw == "https://h:99999" {
			want = false
		}
		if got := Forwardable(raw); got != want {
			t.Errorf("Forwardable(%q) = %v, want %v", raw, got, want)
		}
	}
}

// TestCheckURL: what CheckURL says of a URL no collector can be reached at
// names the part that is wrong, shows what one looks like, and never
// repeats a password the URL holds.
func TestCheckURL(t *testing.T) {
	for raw, why := range map[string]string{
		"127.0.0.1:7421":            "it has no scheme",
		"not a url":                 "it has no scheme",
		"":                          "it is empty",
		"ftp://example.com":         "its scheme is not http or https",
		"http://localhost:99999":    `its port "99999" is not a number up to 65535`,
		"https://h:port/x":          `its port "port" is not a number up to 65535`,
		"http://:7421":              "it has no host",
		"https://u:s3cret@:8443/":   "it has no host",
		"http://127.0.0.1:7421\n/x": "it holds a control character",
		// The endpoint pasted for the URL, which hookwatch would post
		// below: told, with the URL to give instead.
		"http://127.0.0.1:7421/v1/events":              "it ends with /v1/events, which hookwatch adds itself: give the collector's own URL, http://127.0.0.1:7421",
		"https://u:s3cret@hw.example.com/v1/events/?x": "give the collector's own URL, https://hw.example.com",
		"https://hw.example.com/team/v1/events":        "give the collector's own URL, https://hw.example.com/team",
	} {
		err := CheckURL(raw)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "like "+DefaultURL) {
			t.Errorf("CheckURL(%q) = %v, want it to say %q and what a collector URL looks like", raw, err, why)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) repeats the password: %v", raw, err)
		}
	}
	for _, raw := range []string{DefaultURL, "https://hookwatch.example.com", "http://[::1]:7421/base", "https://u:pw@h:8443"} {
		if err := CheckURL(raw); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", raw, err)
		}
	}
}

// TestListenAddr: the address a collector at a URL attaches to a spool
// under, whether it serves plain HTTP or TLS: the port each scheme
// defaults to, localhost as 127.0.0.1; none for a host name or another
// scheme.
func TestListenAddr(t *testing.T) {
	for url, want := range map[string]string{
		"http://127.0.0.1:7421":         "127.0.0.1:7421",
		"HTTP://127.0.0.1:7421/":        "127.0.0.1:7421",
		"http://127.0.0.1":              "127.0.0.1:80",
		"https://127.0.0.1:8443":        "127.0.0.1:8443",
		"https://127.0.0.1":             "127.0.0.1:443",
		"https://127.0.0.1:/base":       "127.0.0.1:443",
		"https://localhost:8443/base":   "127.0.0.1:8443",
		"https://[::1]":                 "[::1]:443",
		"https://[::1]:8443":            "[::1]:8443",
		"https://hookwatch.example.com": "",
		"ftp://127.0.0.1:21":            "",
		"127.0.0.1:7421":                "",
	} {
		got, ok := ListenAddr(url)
		if got != want || ok != (want != "") {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", url, got, ok, want)
		}
	}
}
