package install

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Version is a dotted version number: [2 1 197] for "2.1.197".
type Version []int

// The Claude Code versions from which settings features work.
var (
	// ExecFormSince is the first version that runs a command handler
	// with "args" without a shell (spec §1.9).
	ExecFormSince = Version{2, 1, 139}
	// HTTPSince is the first version with http handlers.
	HTTPSince = Version{2, 1, 63}
)

// ParseVersion reads the first dotted number in s ("2.1.197 (Claude
// Code)" gives [2 1 197]).
func ParseVersion(s string) (Version, error) {
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return nil, fmt.Errorf("cannot parse the version %q", s)
	}
	var v Version
	n, digits := 0, false
	for _, c := range s[i:] {
		switch {
		case c >= '0' && c <= '9':
			if n > 1e8 {
				return nil, fmt.Errorf("cannot parse the version %q", s)
			}
			n, digits = n*10+int(c-'0'), true
			continue
		case c == '.' && digits:
			v, n, digits = append(v, n), 0, false
			continue
		}
		break
	}
	if digits {
		v = append(v, n)
	}
	return v, nil
}

// Compare compares v and w part by part; missing parts count as 0.
func (v Version) Compare(w Version) int {
	for i := range max(len(v), len(w)) {
		var x, y int
		if i < len(v) {
			x = v[i]
		}
		if i < len(w) {
			y = w[i]
		}
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return 0
}

// Before reports whether v is older than w. An unknown (empty) version is
// not: nothing is known to be missing from it.
func (v Version) Before(w Version) bool { return len(v) > 0 && v.Compare(w) < 0 }

// String returns v dotted.
func (v Version) String() string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}
