package nearest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	f := func(a, b string, want int) {
		t.Helper()
		if got := Distance(a, b); got != want {
			t.Errorf("Distance(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
	f("serve", "serve", 0)
	f("srve", "serve", 1)
	f("sreve", "serve", 1)
	f("servee", "serve", 1)
	f("sever", "serve", 2)
	f("xyzzy", "serve", 5)
	f("", "stop", 4)
	f("ca", "abc", 3)
}

func TestName(t *testing.T) {
	f := func(name string, cands []string, want string) {
		t.Helper()
		if got := Name(name, slices.Values(cands)); got != want {
			t.Errorf("Name(%q, %q) = %q, want %q", name, cands, got, want)
		}
	}
	f("srve", []string{"serve", "stop"}, "serve")
	f("whne", []string{"when", "events", "tool"}, "when")
	f("pretooluse", []string{"PostToolUse", "PreToolUse"}, "PreToolUse")
	f("PreTooluse", []string{"PostToolUse", "PreToolUse"}, "PreToolUse")
	f("xyzzy", []string{"serve", "stop"}, "")
	f("sop", []string{"stop", "top"}, "stop") // one edit each: the first in order
	f("abcd", []string{"abxy"}, "")           // a short name: one edit at most
}
