// Package treewalk walks a directory tree as filepath.WalkDir does, but
// through the directories of the tree that are symlinks: a project of
// Claude Code's kept elsewhere and linked into ~/.claude/projects, a
// day of Codex's sessions moved to another disk, or the whole directory
// linked from a dotfiles repository. Import and the collector's follower
// and watcher walk those trees through it, so that all of them see the
// same files by the same names.
package treewalk

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Walk calls fn for root and everything below it, as filepath.WalkDir
// does (fn's errors, SkipDir and SkipAll mean what they mean there), and
// also walks through every symlink to a directory it meets, root
// included: the link is handed to fn as a directory, and what is below
// it is named through the link — the paths the client writes and its
// hooks carry, not the target's. A link to anything else is handed over
// as WalkDir hands it (a symlink entry).
//
// Each directory is walked once, whatever the names it is reached by:
// the tree's own directories first, by their own names, then the linked
// ones not reached yet, each by the first link (in lexical order of the
// walk) to reach it. A link to the root, to one of the link's ancestors
// or the root's (a loop, or the whole disk above) is not followed.
func Walk(root string, fn fs.WalkDirFunc) error {
	top, err := realPath(root)
	if err != nil {
		top = filepath.Clean(root)
	}
	w := &walker{fn: fn, top: top, seen: map[string]bool{}}
	if err := w.walk(root, top, nil); err != nil {
		return err
	}
	// The links met are followed last, the tree's own directories all
	// seen by then; a link met below a link joins the queue.
	for len(w.links) > 0 && !w.stop {
		l := w.links[0]
		w.links = w.links[1:]
		if err := w.follow(l); err != nil {
			return err
		}
	}
	return nil
}

// walker is one Walk's state.
type walker struct {
	fn    fs.WalkDirFunc
	top   string          // the root's real path (realPath)
	seen  map[string]bool // the real paths of the directories walked
	links []link          // the links to directories met, to follow
	stop  bool            // fn returned SkipAll
}

// link is a symlink met in the walk: its path, the real path of the
// directory it is in.
type link struct {
	path, in string
}

// walk walks dir, whose real path is real, with WalkDir; d is dir's
// entry for a linked directory (nil for the root, which WalkDir reads
// itself).
func (w *walker) walk(dir, real string, d fs.DirEntry) error {
	base := filepath.Clean(dir)
	start := dir
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			// The trailing separator makes WalkDir go through the link.
			start = base + string(filepath.Separator)
		}
	}
	err := filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		r := real // p's real path, for a directory
		if p == start {
			p = dir
			if d != nil && e != nil {
				e = d
			}
		} else {
			r = filepath.Join(real, below(base, p))
		}
		if err != nil || e == nil {
			return w.call(p, e, err)
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if info, serr := os.Stat(p); serr == nil && info.IsDir() {
				w.links = append(w.links, link{p, filepath.Dir(r)})
				return nil
			}
			return w.call(p, e, nil)
		}
		if e.IsDir() {
			if w.seen[r] {
				return fs.SkipDir
			}
			w.seen[r] = true
		}
		return w.call(p, e, nil)
	})
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// call calls fn, and notes a SkipAll: no link is followed after it.
func (w *walker) call(p string, d fs.DirEntry, err error) error {
	err = w.fn(p, d, err)
	if err == fs.SkipAll {
		w.stop = true
	}
	return err
}

// follow walks the directory l links to, unless it was walked already
// or holds the link or the root.
func (w *walker) follow(l link) error {
	target, err := realPath(l.path)
	if err != nil || w.seen[target] || within(l.in, target) || within(w.top, target) {
		return nil
	}
	info, err := os.Stat(target)
	if err != nil {
		return nil // gone since
	}
	return w.walk(l.path, target, linkedDir{fs.FileInfoToDirEntry(info), filepath.Base(l.path)})
}

// linkedDir is the entry of a linked directory: the target's, named as
// the link is.
type linkedDir struct {
	fs.DirEntry
	name string
}

func (d linkedDir) Name() string { return d.name }

// realPath returns the absolute path of p with no symlink in it: the
// key of a directory, whatever the names it is reached by.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// below returns the path p names below base, relative to it: WalkDir
// names what is below "." without it.
func below(base, p string) string {
	if base == "." {
		return p
	}
	return strings.TrimPrefix(p[len(base):], string(filepath.Separator))
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}
