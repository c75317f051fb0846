// Package patherr words the errors of file operations for messages that
// name the file themselves.
package patherr

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// Strip returns err without its *fs.PathError wrapper (the operation and
// the path) when the wrapper names named or a path within it, for a
// message that names named already: "cannot read /x: no such file or
// directory", not "cannot read /x: stat /x: no such file or directory".
// A wrapper that names another path is kept, since that path is what the
// message lacks: the parent directory MkdirAll could not make, which is a
// file ("cannot create /a/b/c: mkdir /a: not a directory"). What a removed
// wrapper held is kept for errors.Is (fs.ErrNotExist still matches). An
// err without one is returned as it is.
func Strip(err error, named string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && within(pe.Path, named) {
		return pe.Err
	}
	return err
}

// within reports whether path is dir or a path inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}
