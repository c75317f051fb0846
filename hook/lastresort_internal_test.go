package hook

import (
	"os"
	"testing"
	"time"
)

// TestLastResort: a run that finishes in time disarms the last resort,
// which never ends the process; one that outlives twice its budget is
// ended with exit code 0, and the run, finishing after all, writes
// nothing.
func TestLastResort(t *testing.T) {
	exited := make(chan int, 1)
	exitProcess = func(code int) { exited <- code }
	t.Cleanup(func() { exitProcess = os.Exit })
	cfg := Config{Home: t.TempDir(), Budget: 20 * time.Millisecond}

	lr := cfg.armLastResort(time.Now())
	if !lr.disarm() {
		t.Fatal("a run that finished in time was ended")
	}
	select {
	case code := <-exited:
		t.Fatalf("the disarmed last resort exited with %d", code)
	case <-time.After(100 * time.Millisecond):
	}

	start := time.Now()
	lr = cfg.armLastResort(start)
	lr.payloadRead()
	select {
	case code := <-exited:
		if took := time.Since(start); code != 0 || took < lastResortFactor*cfg.Budget {
			t.Errorf("ended with %d after %v, want 0 after %v", code, took, lastResortFactor*cfg.Budget)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the last resort did not fire")
	}
	if lr.disarm() {
		t.Error("the run may still answer after the last resort ended it")
	}

	// Before its payload, a run has the wait for it too.
	start = time.Now()
	lr = cfg.armLastResort(start)
	select {
	case <-exited:
		if took, want := time.Since(start), cfg.stdinWait()+lastResortFactor*cfg.Budget; took < want {
			t.Errorf("a run waiting for its payload was ended after %v, want %v", took, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the last resort did not fire")
	}
	lr.disarm()
}
