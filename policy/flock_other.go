//go:build !unix

package policy

import (
	"os"
	"time"
)

// lockFile is a no-op where flock does not exist: the in-process mutex still
// serialises one process, and concurrent hook processes may lose a count.
func lockFile(f *os.File, wait time.Duration) error { return nil }

func unlockFile(f *os.File) {}
