package install

import (
	"testing"

	"github.com/hookwatch/hookwatch/internal/spooltest"
)

// TestCollectorOfAnotherHome: a collector is called another home's only on
// the evidence that it drains a spool which is not this home's, on this
// machine, for hooks that hold no team server's token. This home's spool is
// attached, as a collector attaches it, at 127.0.0.1:7421.
func TestCollectorOfAnotherHome(t *testing.T) {
	home := t.TempDir()
	spooltest.Attach(t, home, "127.0.0.1:7421")
	for _, tc := range []struct {
		name        string
		url         string
		drainsSpool bool
		team        bool
		want        bool
	}{
		{"another home's, on another port", "http://127.0.0.1:7422", true, false, true},
		{"another home's, IPv6 loopback", "http://[::1]:7421", true, false, true},
		{"another home's, localhost", "http://localhost:7422", true, false, true},
		{"this home's, named localhost as the hook reads it", "http://localhost:7421", true, false, false},
		{"this home's: it drains this home's spool", "http://127.0.0.1:7421", true, false, false},
		{"no spool reported: no home known", "http://127.0.0.1:7422", false, false, false},
		{"a team server's token: a tunnel to the team's", "http://127.0.0.1:7422", true, true, false},
		{"not on this machine", "http://10.0.0.5:7421", true, false, false},
		{"not a URL", "http://%zz", true, false, false},
	} {
		if got := CollectorOfAnotherHome(home, tc.url, tc.drainsSpool, tc.team); got != tc.want {
			t.Errorf("%s: CollectorOfAnotherHome(%q, drainsSpool %v, team %v) = %v, want %v", tc.name, tc.url, tc.drainsSpool, tc.team, got, tc.want)
		}
	}
}
