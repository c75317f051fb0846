// Package atomicfile replaces a file whole: a reader, and a crash, see the
// old content or the new one, never part of either. It is the one writer
// of such files: the home's private files (token, URL, CA, the policy,
// import and OTLP state), the settings install edits and the service unit.
// The spool's counters, symlinks renamed over (package spool), are read
// with one readlink and are not files of this kind.
//
// The package links only what the lean hook already links (os, io/fs,
// path/filepath).
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Options changes what Write does; the zero value is what a private file
// of the home wants.
type Options struct {
	// Perm is the new file's mode; 0 means 0600, for files that may name
	// the user's projects, hold a token or a URL.
	Perm fs.FileMode
	// NoSync leaves the new content to the kernel's write-back instead of
	// syncing it before the rename: for state written on every event,
	// where an fsync would cost more than losing the last write to a
	// crash of the machine. After such a crash the file may be the old
	// one, the new one, or (on some file systems) empty.
	NoSync bool
}

// Write replaces the file at path with data. It writes a temporary file
// of its own in path's directory (so that two writers at once cannot
// rename each other's away: the last one wins), gives it opt.Perm, syncs
// it unless opt.NoSync, and renames it over path. A reader sees the old
// file or the new one, whole; a crash of the process leaves the old file
// and, at worst, a temporary file named "."+base+".tmp-*" beside it; a
// crash of the machine leaves the old file or the new one (unless
// opt.NoSync). The directory is not synced: after a crash of the machine
// the rename itself may be undone, leaving the old file. The directory
// must exist. On any error the temporary file is removed, path is left as
// it was, and the error names what failed.
func Write(path string, data []byte, opt Options) error {
	perm := opt.Perm
	if perm == 0 {
		perm = 0o600
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		// Exactly perm, whatever the umask: Chmod ignores it.
		err = f.Chmod(perm)
	}
	if err == nil && !opt.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
