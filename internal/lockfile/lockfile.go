// Package lockfile keeps a file that says who holds it: an exclusive
// flock(2), taken without waiting and held until Release or the end of the
// process, on a file whose content describes the holder (its address, its
// process id). The kernel drops the lock with the process, so a holder
// that crashed never looks present; others read the description without
// taking anything (Holder).
//
// It is how a collector claims its database and attaches to the spool.
// It uses only package syscall, so the hook can link it.
package lockfile

import (
	"errors"
	"sync"
	"syscall"
)

// ErrHeld is in Take's error when another holds the lock.
var ErrHeld = errors.New("held by another")

// HeldError is Take's error when another holds the lock: Desc is what
// the holder wrote (nil when it could not be read).
type HeldError struct{ Desc []byte }

func (e *HeldError) Error() string { return ErrHeld.Error() }

func (e *HeldError) Unwrap() error { return ErrHeld }

// maxDesc bounds the description read back: a holder writes a line or two.
const maxDesc = 256

// Lock is a held lock file.
type Lock struct {
	fd   int
	once sync.Once
}

// Take locks the file at path, created with mode 0600 if need be,
// exclusively and without waiting, and makes desc its whole content. When
// another holds it the error is a *HeldError with the holder's
// description; any other error is the system's.
func Take(path string, desc []byte) (*Lock, error) {
	fd, err := open(path, syscall.O_RDWR|syscall.O_CREAT, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer syscall.Close(fd)
		if err == syscall.EWOULDBLOCK {
			return nil, &HeldError{Desc: read(fd)}
		}
		return nil, err
	}
	if err := syscall.Ftruncate(fd, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if _, err := syscall.Pwrite(fd, desc, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &Lock{fd: fd}, nil
}

// Release empties the file, then closes it, which drops the lock. Only
// the first call does anything.
func (l *Lock) Release() error {
	err := error(nil)
	l.once.Do(func() {
		_ = syscall.Ftruncate(l.fd, 0)
		err = syscall.Close(l.fd)
	})
	return err
}

// Holder returns the description the holder of the lock file at path
// wrote, and whether anyone holds it; it takes nothing (a shared lock,
// tried and dropped at once, tells). No file, an unreadable one or one
// nobody holds: not held.
func Holder(path string) (desc []byte, held bool) {
	fd, err := open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	if err := flock(fd, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = flock(fd, syscall.LOCK_UN)
		return nil, false
	} else if err != syscall.EWOULDBLOCK {
		return nil, false
	}
	return read(fd), true
}

// read returns the start of the file at fd, nil when it cannot be read.
func read(fd int) []byte {
	var buf [maxDesc]byte
	n, err := syscall.Pread(fd, buf[:], 0)
	if err != nil || n <= 0 {
		return nil
	}
	return append([]byte(nil), buf[:n]...)
}

// open and flock need no retry on EINTR: a lock file is a regular file,
// whose open is not interrupted, and every lock here is taken without
// waiting (LOCK_NB), so no signal can interrupt a wait.
func open(path string, mode int, perm uint32) (int, error) {
	return syscall.Open(path, mode|syscall.O_CLOEXEC, perm)
}

func flock(fd, how int) error { return syscall.Flock(fd, how) }
