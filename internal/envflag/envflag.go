// Package envflag reads the on/off switches hookwatch takes from the
// environment (HOOKWATCH_AUTOSTART, HOOKWATCH_ARCHIVE, HOOKWATCH_STALE_GUARD),
// one rule for all of them. It is linked into the lean hook: it has no
// dependency beyond strings and no work at init.
package envflag

import "strings"

// Off reports whether v, an environment variable's value, turns a switch
// off: 0, false, off or no, in any case, blanks around it ignored. Anything
// else, "" included, leaves the switch at its default, on.
func Off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return true
	}
	return false
}
