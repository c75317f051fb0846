// Package spooltest attaches a consumer to a home's spool for the tests of
// what looks at it from the outside (the hook, the forwarder, install's
// checks): a real spool, attached as a local collector attaches it.
package spooltest

import (
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/spool"
)

// Attach opens the spool of home ($HOOKWATCH_HOME/spool) and attaches to it
// as its consumer at addr, failing the test if it cannot. The consumer is
// released by release, or when the test ends (release may be called
// before: the test's cleanup then does nothing).
func Attach(tb testing.TB, home, addr string) (sp *spool.Spool, release func()) {
	tb.Helper()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	release, err = sp.Attach(addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(release)
	return sp, release
}
