// Package regfile opens files whose names come from hostile input — a hook
// payload's file_path, transcript_path, agent_id — for reading, without
// ever blocking on what is not a regular file.
//
// os.Open of a FIFO blocks until a writer opens it; of some devices, until
// the device is ready, and opening a device at all may act on it (a tape
// rewinds, a watchdog arms, a terminal becomes the controlling one). A
// check of the file's type after os.Open comes too late, and a check
// before it (os.Stat) leaves a window in which the path can be swapped.
// Open checks before (so that a device is never opened), opens with
// O_NONBLOCK and O_NOCTTY (so that what was swapped in does not block or
// take the terminal), and checks again on the descriptor (fstat), which is
// the file that will be read.
//
// The descriptor stays in non-blocking mode: on a regular file of a disk
// file system the flag changes nothing, and a pseudo-file that honours it
// (some of /proc's) answers EAGAIN instead of waiting.
//
// The package links only what the lean hook already links (os, syscall):
// the hook opens payload paths on every Read and every subagent event.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is what Open fails with, wrapped, for a path that names
// anything but a regular file (after symbolic links): a directory, a FIFO,
// a socket, a device.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file at path for reading and returns it with its
// state as opened. It never blocks on the file's type: a path that is not
// a regular file, or that is swapped for something else while it is
// opened, fails with an error wrapping ErrNotRegular.
func Open(path string) (*os.File, fs.FileInfo, error) {
	// Stat first, so that a device or a FIFO is not even opened.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(path, fi)
	}
	// os.OpenFile adds O_CLOEXEC, and on Darwin keeps a FIFO or a regular
	// file out of kqueue.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(path, fi)
	}
	return f, fi, nil
}

func notRegular(path string, fi fs.FileInfo) error {
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, TypeName(fi.Mode()))}
}

// TypeName names the type of a file that is not a regular one in words,
// for an error: its mode's letters ("d---------") say little to whoever
// reads it.
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadHead returns up to limit bytes from the start of the regular file
// at path (Open): all of it when it holds no more. A file that grows while
// it is read is read up to limit.
func ReadHead(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit = max(limit, 0)
	// Sized by the file as opened (plus one byte, to see it end), so that a
	// small file costs a small buffer; a file that grew meanwhile, or a
	// pseudo-file that says it is empty, grows it up to limit.
	buf := make([]byte, 0, min(limit, fi.Size()+1))
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
