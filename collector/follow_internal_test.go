package collector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFollowerLooks: a look hands every file it found grown to read in one
// call (the transcript follower makes it one import, one write of the
// state file); a file read reports as failed is handed over again at the
// next look though it did not change, alone; a file that grows is handed
// over again, one that does not is not.
func TestFollowerLooks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	for _, n := range []string{"a.jsonl", "b.jsonl", "c.jsonl", "skip.txt"} {
		write(n, "{}\n")
	}
	var mu sync.Mutex
	var looks [][]string
	f := &follower{
		dir: dir, interval: 10 * time.Millisecond, warn: func(string, ...any) {}, what: "test files",
		match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") },
		read: func(_ context.Context, files []grownFile) []string {
			var paths []string
			for _, g := range files {
				paths = append(paths, filepath.Base(g.path))
			}
			slices.Sort(paths)
			mu.Lock()
			defer mu.Unlock()
			looks = append(looks, paths)
			if len(looks) == 1 {
				return []string{filepath.Join(dir, "b.jsonl")}
			}
			return nil
		},
	}
	FollowForTest(t, f.run)
	waitLooks := func(n int) [][]string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := slices.Clone(looks)
			mu.Unlock()
			if len(got) >= n {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d looks read something, want %d: %q", len(got), n, got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	got := waitLooks(2)
	if !slices.Equal(got[0], []string{"a.jsonl", "b.jsonl", "c.jsonl"}) || !slices.Equal(got[1], []string{"b.jsonl"}) {
		t.Fatalf("looks read %q, want [a b c] in one, then the failed b alone", got)
	}
	write("c.jsonl", "{}\n")
	got = waitLooks(3)
	time.Sleep(50 * time.Millisecond) // looks that find nothing grown
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got[2], []string{"c.jsonl"}) || len(looks) != 3 {
		t.Fatalf("after c grew, looks read %q", looks)
	}
}

// TestFollowerThroughSymlink: a directory followed that is a symlink
// (~/.claude kept elsewhere and linked) is looked through, its files named
// by their paths through the link, which the client's hooks carry.
func TestFollowerThroughSymlink(t *testing.T) {
	target := t.TempDir()
	if err := os.MkdirAll(filepath.Join(target, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target, "p", "a.jsonl"), []byte("{}\n"), 0o600)
	dir := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 1)
	f := &follower{
		dir: dir, interval: 10 * time.Millisecond, warn: func(string, ...any) {}, what: "test files",
		match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") },
		read: func(_ context.Context, files []grownFile) []string {
			var paths []string
			for _, g := range files {
				paths = append(paths, g.path)
			}
			select {
			case got <- paths:
			default:
			}
			return nil
		},
	}
	FollowForTest(t, f.run)
	select {
	case paths := <-got:
		if want := filepath.Join(dir, "p", "a.jsonl"); !slices.Equal(paths, []string{want}) {
			t.Fatalf("the look read %q, want %q", paths, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no look read the file through the link")
	}
}

// TestFollowerLinkedProject: a project directory that is itself a
// symlink in the directory followed (kept elsewhere) is looked through,
// at the start and when it is linked later, and what is written below it
// is read, named through the link; a link to an ancestor is not followed.
func TestFollowerLinkedProject(t *testing.T) {
	elsewhere := t.TempDir()
	for _, p := range []string{"p3", "p4"} {
		if err := os.MkdirAll(filepath.Join(elsewhere, p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(elsewhere, p, "a.jsonl"), []byte("{}\n"), 0o600)
	}
	dir := t.TempDir()
	for l, to := range map[string]string{"p3": filepath.Join(elsewhere, "p3"), "up": dir} {
		if err := os.Symlink(to, filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 100)
	f := &follower{
		dir: dir, interval: 10 * time.Millisecond, warn: func(string, ...any) {}, what: "test files",
		match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") },
		read: func(_ context.Context, files []grownFile) []string {
			for _, g := range files {
				got <- fmt.Sprintf("%s %d", g.path, g.size)
			}
			return nil
		},
	}
	FollowForTest(t, f.run)
	want := func(path string, size int) {
		t.Helper()
		w := fmt.Sprintf("%s %d", path, size)
		for {
			select {
			case g := <-got:
				if g == w {
					return
				}
				if !strings.HasPrefix(g, filepath.Join(dir, "p")) || strings.Contains(g, "/up/") {
					t.Fatalf("a look read %s, want %s", g, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no look read %s", w)
			}
		}
	}
	want(filepath.Join(dir, "p3", "a.jsonl"), 3)
	appendTo := func(p string) {
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString("{}\n")
		fh.Close()
	}
	appendTo(filepath.Join(elsewhere, "p3", "a.jsonl"))
	want(filepath.Join(dir, "p3", "a.jsonl"), 6)
	if err := os.Symlink(filepath.Join(elsewhere, "p4"), filepath.Join(dir, "p4")); err != nil {
		t.Fatal(err)
	}
	want(filepath.Join(dir, "p4", "a.jsonl"), 3)
	appendTo(filepath.Join(elsewhere, "p4", "a.jsonl"))
	want(filepath.Join(dir, "p4", "a.jsonl"), 6)
}

// TestFollowerOldUnread: a file last written before since is left alone
// until it grows, unless its reader says it stopped short of its end (a
// session that went on while the collector was down, longer ago than
// since): that one is read at the first look.
func TestFollowerOldUnread(t *testing.T) {
	dir := t.TempDir()
	past := time.Now().Add(-72 * time.Hour)
	for _, n := range []string{"old.jsonl", "unread.jsonl", "new.jsonl"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("{}\n{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if n != "new.jsonl" {
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	looks := make(chan []string, 10)
	f := &follower{
		dir: dir, interval: 10 * time.Millisecond, since: time.Now().Add(-24 * time.Hour),
		warn: func(string, ...any) {}, what: "test files",
		match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") },
		unread: func(p string, size int64) bool {
			return filepath.Base(p) == "unread.jsonl" && size == 6
		},
		read: func(_ context.Context, files []grownFile) []string {
			var paths []string
			for _, g := range files {
				paths = append(paths, filepath.Base(g.path))
			}
			slices.Sort(paths)
			looks <- paths
			return nil
		},
	}
	FollowForTest(t, f.run)
	select {
	case got := <-looks:
		if !slices.Equal(got, []string{"new.jsonl", "unread.jsonl"}) {
			t.Fatalf("the first look read %q, want the new file and the old one left unread", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no look read anything")
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case got := <-looks:
		t.Fatalf("a later look read %q, with nothing grown", got)
	default:
	}
}
