//go:build !linux

package cputime

import "time"

// Process is Linux's (process_linux.go): elsewhere the caller reads what
// the platform offers (/proc, where there is one).
func Process(pid int) (time.Duration, bool) { return 0, false }
