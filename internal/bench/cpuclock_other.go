//go:build !linux

package bench

import "time"

// cpuClock is Linux's (cpuclock_linux.go): elsewhere procCPU reads /proc,
// where there is one.
func cpuClock(pid int) (time.Duration, bool) { return 0, false }
