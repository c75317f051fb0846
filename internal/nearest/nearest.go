// Package nearest finds the name a mistyped word was meant to be: a
// subcommand, a flag, a policy file's key or event. Saying "did you mean
// X?" is worth more than the list of every name, and is only said when one
// name is near enough to be taken for what was meant.
package nearest

import (
	"iter"
	"strings"
)

// Name returns the one of cands that name is a slip of — two edits or
// fewer (a letter missing, extra, wrong, or two swapped), one for a name of
// four letters or fewer, letter case ignored — the first in alphabetical
// order when two are as near, or "" for none. A cand equal to name but for
// its case is nearest of all: "pretooluse" is "PreToolUse".
func Name(name string, cands iter.Seq[string]) string {
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	lower := strings.ToLower(name)
	best, bestD := "", limit+1
	for cand := range cands {
		if d := Distance(lower, strings.ToLower(cand)); d < bestD || d == bestD && cand < best {
			best, bestD = cand, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance between a and b: the
// insertions, deletions, substitutions and swaps of two neighbouring bytes
// that turn a into b. Words longer than 64 bytes are no slip of anything
// here, and are 64 apart.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
