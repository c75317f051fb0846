//go:build unix

// Package cputime reads the CPU time a process has used, for benchmarks on
// a machine shared with other work: there the CPU time an operation costs
// tells what wall time does not.
package cputime

import (
	"syscall"
	"time"
)

// Self returns the user and system time the process has used so far.
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
