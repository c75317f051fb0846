package treewatch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/treewatch"
)

// TestWatch: a file appended to, a directory created, a file created in
// it, each named by the changes after a wake-up.
func TestWatch(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "p", "old.jsonl")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := treewatch.New(ctx, root)
	if errors.Is(err, treewatch.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := func(paths ...string) { t.Helper(); waitFor(t, w, paths...) }
	f, err := os.OpenFile(old, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("{}\n"))
	f.Close()
	want(old)
	sub := filepath.Join(root, "p", "s", "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	want(filepath.Join(root, "p", "s"))
	agent := filepath.Join(sub, "agent-a.jsonl")
	if err := os.WriteFile(agent, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file, or its directory when the file came before its watch:
	// a walk of the directory reported finds it.
	want(agent, sub)
	cancel()
	select {
	case _, ok := <-w.Wake():
		for ok {
			_, ok = <-w.Wake()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop with its context")
	}
}

// TestWatchThroughSymlink: a root that is a symlink to a directory is
// watched through, and a change named by its path through the link.
func TestWatchThroughSymlink(t *testing.T) {
	target := t.TempDir()
	old := filepath.Join(target, "p", "old.jsonl")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(target, root); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := treewatch.New(ctx, root)
	if errors.Is(err, treewatch.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(old, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("{}\n"))
	f.Close()
	waitFor(t, w, filepath.Join(root, "p", "old.jsonl"))
}

// TestWatchLinkedProject: a directory of the tree that is a symlink (a
// project kept elsewhere), there at the start or linked later, is
// watched through, and a change below it named through the link.
func TestWatchLinkedProject(t *testing.T) {
	elsewhere := t.TempDir()
	for _, p := range []string{"p3", "p4"} {
		if err := os.MkdirAll(filepath.Join(elsewhere, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(elsewhere, "p3"), filepath.Join(root, "p3")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := treewatch.New(ctx, root)
	if errors.Is(err, treewatch.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(elsewhere, "p3", "a.jsonl"), []byte("{}\n"), 0o600)
	waitFor(t, w, filepath.Join(root, "p3", "a.jsonl"))
	if err := os.Symlink(filepath.Join(elsewhere, "p4"), filepath.Join(root, "p4")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, filepath.Join(root, "p4"))
	os.WriteFile(filepath.Join(elsewhere, "p4", "b.jsonl"), []byte("{}\n"), 0o600)
	waitFor(t, w, filepath.Join(root, "p4", "b.jsonl"))
}

// waitFor waits until w reports a change of one of paths, failing the
// test after ten seconds.
func waitFor(t *testing.T, w *treewatch.Watcher, paths ...string) {
	t.Helper()
	var got []string
	deadline := time.After(10 * time.Second)
	for {
		for _, p := range w.Take().Paths {
			if !slices.Contains(got, p) {
				got = append(got, p)
			}
		}
		if slices.ContainsFunc(paths, func(p string) bool { return slices.Contains(got, p) }) {
			return
		}
		select {
		case <-w.Wake():
		case <-deadline:
			t.Fatalf("changes %q, want %q", got, paths)
		}
	}
}
