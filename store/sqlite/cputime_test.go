//go:build unix

package sqlite_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system: on a
// machine shared with other work it tells what an operation costs where
// wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
