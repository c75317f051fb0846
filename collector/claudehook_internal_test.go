package collector

import (
	"net/http"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
)

// TestHookHost: an http hook from another machine without a usable
// X-Hookwatch-Host is named by its address, never by the collector's host.
func TestHookHost(t *testing.T) {
	for _, c := range []struct{ remote, header, want string }{
		{"10.1.2.3:5555", "", "10.1.2.3"},
		{"[::ffff:10.1.2.3]:5555", "$HOOKWATCH_HOST", "10.1.2.3"},
		{"[2001:db8::7]:5555", "", "2001:db8::7"},
		{"10.1.2.3:5555", "dev-box", "dev-box"},
		{"127.0.0.1:5555", "", "collector-host"},
		{"[::1]:5555", "x\ny", "collector-host"},
	} {
		r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
		if c.header != "" {
			r.Header.Set(claudecode.HostHeader, c.header)
		}
		if got := hookHost(r, "collector-host"); got != c.want {
			t.Errorf("hookHost(from %s, header %q) = %q, want %q", c.remote, c.header, got, c.want)
		}
	}
}
