package treewalk_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/internal/treewalk"
)

// mkfile writes an empty file at dir/rel, with its directories.
func mkfile(t *testing.T, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// files walks root and returns the regular files it names, relative to
// root, sorted.
func files(t *testing.T, root string) []string {
	t.Helper()
	var got []string
	err := treewalk.Walk(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%s): %v", root, err)
	}
	slices.Sort(got)
	return got
}

// TestWalkFollowsLinkedDirs: a directory of the tree that is a symlink
// (a project kept elsewhere) is walked through, its files named through
// the link; a link to a file is handed over as a link.
func TestWalkFollowsLinkedDirs(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	mkfile(t, root, "p1/a.jsonl")
	mkfile(t, dir, "elsewhere/p3/b.jsonl")
	mkfile(t, dir, "elsewhere/p3/s/subagents/c.jsonl")
	symlink(t, filepath.Join(dir, "elsewhere", "p3"), filepath.Join(root, "p3"))
	symlink(t, filepath.Join(dir, "elsewhere", "p3", "b.jsonl"), filepath.Join(root, "p1", "link.jsonl"))
	got := files(t, root)
	want := []string{"p1/a.jsonl", "p3/b.jsonl", "p3/s/subagents/c.jsonl"}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk named %q, want %q", got, want)
	}
	// The root itself may be a link.
	rootLink := filepath.Join(dir, "linked")
	symlink(t, root, rootLink)
	if got := files(t, rootLink); !slices.Equal(got, want) {
		t.Fatalf("Walk through a linked root named %q, want %q", got, want)
	}
}

// TestWalkLoopsAndTwice: a link to an ancestor (a loop) or to the tree's
// own root is not followed, and a directory reached twice — by its own
// name and through a link, or through two links — is walked once, by
// its own name when it has one in the tree.
func TestWalkLoopsAndTwice(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	mkfile(t, root, "p1/a.jsonl")
	mkfile(t, dir, "elsewhere/p3/b.jsonl")
	symlink(t, root, filepath.Join(root, "p1", "up"))                            // the root
	symlink(t, dir, filepath.Join(root, "top"))                                  // above the root
	symlink(t, filepath.Join(root, "p1"), filepath.Join(root, "a-p1"))           // in the tree, by its own name too
	symlink(t, filepath.Join(dir, "elsewhere", "p3"), filepath.Join(root, "p3")) // twice, from outside
	symlink(t, filepath.Join(dir, "elsewhere", "p3"), filepath.Join(root, "p4"))
	symlink(t, filepath.Join(dir, "elsewhere"), filepath.Join(dir, "elsewhere", "p3", "loop")) // a loop below a link
	got := files(t, root)
	want := []string{"p1/a.jsonl", "p3/b.jsonl"}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk named %q, want %q", got, want)
	}
}

// TestWalkRootErrors: a root that does not exist is fn's error, as
// WalkDir's, named by the path given.
func TestWalkRootErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	var named string
	err := treewalk.Walk(missing, func(p string, d fs.DirEntry, err error) error {
		named = p
		return err
	})
	if !os.IsNotExist(err) || named != missing {
		t.Fatalf("Walk(%s): %v, fn given %q", missing, err, named)
	}
}

// TestWalkSkipAll: SkipAll stops the walk, links included; a root that is
// a link to a file is handed over as a file.
func TestWalkSkipAll(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	mkfile(t, root, "p1/a.jsonl")
	mkfile(t, dir, "elsewhere/p3/b.jsonl")
	symlink(t, filepath.Join(dir, "elsewhere", "p3"), filepath.Join(root, "p3"))
	n := 0
	treewalk.Walk(root, func(p string, d fs.DirEntry, err error) error {
		if n++; d.Type().IsRegular() {
			return fs.SkipAll
		}
		return nil
	})
	if n != 3 {
		t.Fatalf("fn called %d times after SkipAll at the first file, want 3", n)
	}
	file := filepath.Join(dir, "file.jsonl")
	symlink(t, filepath.Join(root, "p1", "a.jsonl"), file)
	var named []string
	if err := treewalk.Walk(file, func(p string, d fs.DirEntry, err error) error {
		named = append(named, p)
		return err
	}); err != nil || !slices.Equal(named, []string{file}) {
		t.Fatalf("Walk(%s): %v, named %q", file, err, named)
	}
}

// TestWalkRelative: a root given as "." names what is below it without
// it, as WalkDir does, and still walks each directory once.
func TestWalkRelative(t *testing.T) {
	dir := t.TempDir()
	mkfile(t, dir, "ab/x.jsonl")
	mkfile(t, dir, "b/y.jsonl")
	mkfile(t, dir, "elsewhere/z.jsonl")
	symlink(t, filepath.Join(dir, "elsewhere"), filepath.Join(dir, "p3"))
	t.Chdir(dir)
	got := files(t, ".")
	want := []string{"ab/x.jsonl", "b/y.jsonl", "elsewhere/z.jsonl"}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk(.) named %q, want %q", got, want)
	}
}
