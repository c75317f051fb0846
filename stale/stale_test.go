package stale_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/stale"
)

// TestTakeAndCheck: a state taken of a file compares equal until the file
// changes; a touch that keeps the content is no change (the hash says so),
// a rewrite of the same size is, so is a deletion; a file over the hash
// cap is judged by size and mtime.
func TestTakeAndCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	take := func(p string, wrote bool) stale.Recorded {
		t.Helper()
		st, err := stale.Take(p)
		if err != nil {
			t.Fatal(err)
		}
		return stale.Recorded{FileState: st, Wrote: wrote}
	}
	later := func(p string) {
		t.Helper()
		at := time.Now().Add(time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	same := write("same.go", "package same\n")
	touched := write("touched.go", "package touched\n")
	rewritten := write("rewritten.go", "package aaaa\n")
	grown := write("grown.go", "package grown\n")
	gone := write("gone.go", "package gone\n")
	big := write("big.bin", strings.Repeat("x", stale.HashMaxBytes+1))
	bigTouched := write("big-touched.bin", strings.Repeat("x", stale.HashMaxBytes+1))
	recs := []stale.Recorded{take(same, false), take(touched, false), take(rewritten, true), take(grown, false), take(gone, false), take(big, false), take(bigTouched, false)}
	if h := recs[0].Hash; !strings.HasPrefix(h, "fnv1a64:") || len(h) != len("fnv1a64:")+16 {
		t.Errorf("hash %q", h)
	}
	if recs[5].Hash != "" || recs[5].Size != stale.HashMaxBytes+1 {
		t.Errorf("a file over the cap: %+v", recs[5])
	}
	if got := stale.Check(recs, time.Time{}); len(got) != 0 {
		t.Fatalf("nothing changed yet: %+v", got)
	}
	later(touched)
	write("rewritten.go", "package bbbb\n")
	later(rewritten)
	write("grown.go", "package grown // and more\n")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	later(bigTouched)
	got := stale.Check(recs, time.Time{})
	want := []stale.Change{{Path: rewritten, Wrote: true}, {Path: grown}, {Path: gone, Deleted: true}, {Path: bigTouched}}
	if len(got) != len(want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := stale.Take(dir); err == nil {
		t.Error("Take of a directory succeeded")
	}
}

// TestDecide: the decision tree. No change says nothing; a few changed
// files read are named with the advice to re-read; many, or one the
// session wrote, or a deleted one, add the advice to start fresh. Names
// are capped and redacted.
func TestDecide(t *testing.T) {
	th := stale.Thresholds{MaxListed: 3, FreshAbove: 4}
	const fresh = "Consider starting a fresh session"
	f := func(changes []stale.Change, wantFresh bool, want, notWant []string) {
		t.Helper()
		d := th.Decide("claude-code", changes)
		if len(changes) == 0 {
			if !d.IsZero() {
				t.Fatalf("no change: %+v", d)
			}
			return
		}
		out, code := decision.Render(d)
		if code != 0 || !strings.Contains(string(out), `"hookEventName":"SessionStart"`) || !strings.Contains(string(out), `"additionalContext":"`+stale.ContextHeader) {
			t.Fatalf("rendered %s (exit %d)", out, code)
		}
		text := d.AdditionalContext[0]
		if strings.Contains(text, fresh) != wantFresh || th.Fresh(changes) != wantFresh {
			t.Errorf("fresh advice %v, want %v:\n%s", !wantFresh, wantFresh, text)
		}
		if !strings.Contains(text, "re-read them before relying on their earlier contents") {
			t.Errorf("no advice to re-read:\n%s", text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%q missing from:\n%s", w, text)
			}
		}
		for _, w := range notWant {
			if strings.Contains(text, w) {
				t.Errorf("%q in:\n%s", w, text)
			}
		}
	}
	f(nil, false, nil, nil)
	f([]stale.Change{{Path: "/p/a.go"}}, false, []string{"1 file this session read or wrote earlier has changed", "- /p/a.go (modified)\n"}, nil)
	f([]stale.Change{{Path: "/p/a.go"}, {Path: "/p/b.go"}}, false, []string{"2 files", "/p/a.go", "/p/b.go"}, nil)
	f([]stale.Change{{Path: "/p/a.go", Wrote: true}}, true, []string{"(modified; this session had edited it)", "edited itself were changed"}, nil)
	f([]stale.Change{{Path: "/p/a.go", Deleted: true}}, true, []string{"/p/a.go (deleted)", "were deleted"}, nil)
	many := []stale.Change{{Path: "/p/1"}, {Path: "/p/2"}, {Path: "/p/3"}, {Path: "/p/4"}, {Path: "/p/5"}}
	f(many, true, []string{"5 files", "/p/1", "/p/3", "… and 2 more", "Many files changed"}, []string{"/p/4", "/p/5"})
	f(many[:4], false, []string{"4 files", "… and 1 more"}, nil)
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	f([]stale.Change{{Path: "/p/" + secret + "/x.go"}}, false, []string{"[REDACTED"}, []string{secret})
}

func TestConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, warn := stale.ConfigFromEnv(env())
	if c.Off || c.Thresholds != stale.DefaultThresholds || len(warn) != 0 {
		t.Errorf("defaults: %+v %v", c, warn)
	}
	c, warn = stale.ConfigFromEnv(env("HOOKWATCH_STALE_GUARD", "off", "HOOKWATCH_STALE_MAX_LISTED", "5", "HOOKWATCH_STALE_FRESH_ABOVE", "many"))
	if !c.Off || c.MaxListed != 5 || c.FreshAbove != stale.DefaultThresholds.FreshAbove || len(warn) != 1 {
		t.Errorf("set: %+v %v", c, warn)
	}
}
