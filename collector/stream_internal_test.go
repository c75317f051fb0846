package collector

import (
	"testing"
	"time"
)

// TestCopyHold: a stream holds the records the model has yet to take for
// at most streamHold, then sends them, and a record that waits later gets
// a hold of its own.
func TestCopyHold(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	var h copyHold
	step := func(at time.Duration, pending, n, wantSend int, wantHold bool) {
		t.Helper()
		if send, hold := h.cut(pending, n, t0.Add(at)); send != wantSend || hold != wantHold {
			t.Fatalf("at %v, %d of %d taken: send %d, hold %v; want %d, %v", at, pending, n, send, hold, wantSend, wantHold)
		}
	}
	step(0, 5, 5, 5, false)                   // nothing waits
	step(10*time.Millisecond, 3, 5, 3, true)  // a record waits: held
	step(500*time.Millisecond, 3, 6, 3, true) // still within the hold
	step(streamHold+10*time.Millisecond, 3, 6, 6, false)
	// Sent unmarked once; a record that waits later is held again.
	step(streamHold+50*time.Millisecond, 2, 4, 2, true)
	step(streamHold+100*time.Millisecond, 4, 4, 4, false) // the model took it
	step(streamHold+200*time.Millisecond, 1, 2, 1, true)  // and the next waits anew
}
