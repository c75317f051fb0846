package cputime

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestProcess reads this process's clock: it counts the CPU spent on a
// busy loop, and agrees with Self, which reads the same time another way.
func TestProcess(t *testing.T) {
	before, ok := Process(os.Getpid())
	if !ok {
		t.Fatal("no CPU-time clock for this process")
	}
	for start := Self(); Self()-start < 30*time.Millisecond; {
	}
	after, _ := Process(os.Getpid())
	if spent := after - before; spent < 20*time.Millisecond {
		t.Errorf("the clock counted %v of a 30 ms busy loop", spent)
	}
	if self := Self(); after > self+50*time.Millisecond || self > after+50*time.Millisecond {
		t.Errorf("the clock says %v, getrusage %v", after, self)
	}
	// A child that exited and was reaped has no clock any more.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if d, ok := Process(cmd.Process.Pid); ok {
		t.Errorf("a clock (%v) for pid %d, which exited", d, cmd.Process.Pid)
	}
}
