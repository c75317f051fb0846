package bench

import (
	"testing"
	"time"
)

func TestPairedRatio(t *testing.T) {
	runs := func(ms ...int) *sessionVariant {
		v := &sessionVariant{}
		for _, m := range ms {
			v.runs = append(v.runs, sessionRun{cpu: time.Duration(m) * time.Millisecond})
		}
		return v
	}
	cpu := func(r sessionRun) time.Duration { return r.cpu }
	// Round 2's client ran slow throughout; round 3's /bin/true added
	// nothing and is left out.
	none, truth, hw := runs(100, 300, 100), runs(200, 400, 100), runs(220, 430, 150)
	if got := pairedRatio(hw, none, truth, cpu); got != 1.3 {
		t.Errorf("pairedRatio = %v, want 1.3 (the upper median of 1.2 and 1.3)", got)
	}
}
