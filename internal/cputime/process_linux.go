package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// Process returns the CPU time of process pid so far, to the nanosecond:
// its CPU-time clock (clock_getcpuclockid(3): the scheduler's runtime of all
// its threads, those that exited included). /proc's utime and stime count
// in clock ticks (10 ms), coarser than what a collector spends on a
// session's hooks. ok is false where the clock cannot be read.
func Process(pid int) (d time.Duration, ok bool) {
	// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) of the kernel's
	// posix-timers.h.
	clock := int32(^pid)<<3 | 2
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
