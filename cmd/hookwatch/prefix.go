package main

import (
	"fmt"
	"strings"
)

// The start of an id names it where a whole one is long to type: the
// commands that take a session's id (export --session, sessions diff) or a
// token's (token revoke) take its first minPrefix characters or more, as
// the listings and comparisons print it, by the one rule here: the id that
// starts with them when there is one, refused naming them all when there
// are several.

// minPrefix is the shortest start of an id looked for: the 8 characters
// sessions diff and sessions print of a session's.
const minPrefix = 8

// isPrefix reports whether id is shorter than a whole session id but at
// least minPrefix long: the start of one, to look for.
func isPrefix(id string) bool { return len(id) >= minPrefix && len(id) < 36 }

// prefixed is the ids that start with prefix, in their order.
func prefixed(ids []string, prefix string) []string {
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			matches = append(matches, id)
		}
	}
	return matches
}

// pickPrefixed is the id of matches, the ids of things (what: "sessions",
// "tokens") that start with prefix: the one there is, prefix itself when
// there is none (for the caller to say it is not found), and a usage error
// naming them when there are several.
func pickPrefixed(what, prefix string, matches []string) (string, error) {
	switch len(matches) {
	case 0:
		return prefix, nil
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%w: %d %s start with %s: %s; give more of its id", errUsage, len(matches), what, prefix, strings.Join(matches, ", "))
}
