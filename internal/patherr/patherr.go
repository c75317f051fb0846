// Package patherr words the errors of file operations for messages that
// name the file themselves.
package patherr

import (
	"errors"
	"io/fs"
)

// Strip returns err without its *fs.PathError wrapper (the operation and
// the path), for a message that names the path already: "cannot read
// /x: no such file or directory", not "cannot read /x: stat /x: no such
// file or directory". What the wrapper held is kept for errors.Is
// (fs.ErrNotExist still matches). An err without one is returned as it
// is.
func Strip(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
