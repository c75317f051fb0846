//go:build unix

package policy

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on f, retrying for at most wait (0:
// tried once): a hook must never hang on a stuck peer. It fails with
// errLocked when another process held it all that time.
func lockFile(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		if time.Now().After(deadline) {
			return errLocked
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
