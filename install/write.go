package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// commit writes after to r.Path (or removes the file), keeps the backup, and
// completes r. old is the current content; with dry nothing is touched.
func commit(r Result, old []byte, existed bool, after []byte, remove bool, backup string, needBackup, dry bool) (Result, error) {
	if remove {
		after = nil
	}
	r.Changed = remove || !existed || !bytes.Equal(old, after)
	hasBackup := false
	if _, err := os.Stat(backup); err == nil {
		hasBackup = true
	}
	if !r.Changed {
		r.Created = false
		if hasBackup {
			r.Backup = backup
		}
		return r, nil
	}
	from, to := r.Path, r.Path
	if !existed {
		from = "/dev/null"
	}
	if remove {
		to = "/dev/null"
	}
	r.Diff = unifiedDiff(from, to, old, after)
	r.Removed = remove
	switch {
	case r.Restored:
		// The backup goes away with the write below.
	case needBackup || hasBackup:
		r.Backup = backup
	}
	if dry {
		return r, nil
	}

	target, perm, err := writableTarget(r.Path, existed)
	if err != nil {
		return r, err
	}
	if needBackup {
		if err := writeAtomic(backup, old, perm); err != nil {
			return r, fmt.Errorf("cannot back up %s: %w", r.Path, err)
		}
	}
	if remove {
		if err := os.Remove(target); err != nil {
			return r, fmt.Errorf("cannot remove %s: %w", r.Path, err)
		}
	} else {
		if !existed {
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return r, fmt.Errorf("cannot write %s: %w", r.Path, err)
			}
		}
		if err := writeAtomic(target, after, perm); err != nil {
			return r, fmt.Errorf("cannot write %s: %w", r.Path, err)
		}
	}
	if r.Restored {
		if err := os.Remove(backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.Backup = backup
			r.Notes = append(r.Notes, fmt.Sprintf("cannot remove the backup %s: %v", backup, err))
		}
	}
	return r, nil
}

// writableTarget returns the file to write for path (the target of a
// symlink, so that a settings file managed by a dotfiles repository stays a
// link) and its permissions. A read-only file is refused: replacing it by
// rename would succeed behind the user's back.
func writableTarget(path string, existed bool) (string, fs.FileMode, error) {
	if !existed {
		return path, 0o644, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, fmt.Errorf("cannot resolve %s: %w", path, err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", 0, fmt.Errorf("cannot stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("cannot write %s: not a regular file", path)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return "", 0, fmt.Errorf("cannot write %s: the file is read-only (mode %v)", path, fi.Mode().Perm())
	}
	return target, fi.Mode().Perm(), nil
}

// writeAtomic replaces path with data through a temporary file and a rename,
// so that Claude Code, which watches its settings files, never reads half a
// file. perm is the mode of the file replaced, kept: a settings file is
// the user's, not a private file of the home.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	return atomicfile.Write(path, data, atomicfile.Options{Perm: perm})
}
