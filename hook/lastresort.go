package hook

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// Every step of a run is bounded by its budget on its own: stdin, the
// policy's answer, the post, the spool, the stale-context guard. The
// pipeline's reads of the files a payload names are bounded in size, and
// refuse what is not a regular file (regfile), but not in time: a file on a
// network or FUSE mount that stopped answering holds open(2) or read(2) for
// as long as the mount does, and so would a step that a future change
// leaves unbounded. The last resort covers those: a run still going at
// lastResortFactor times its budget is ended, exit 0 and nothing on
// stdout, as the hook rule wants of any failure. The factor leaves the
// bounded steps, which may end a little past the deadline (an append to
// the spool after a post that used the budget, a compaction's archive of
// a large transcript), the time to finish.
const lastResortFactor = 2

// lastResortLogWait is how long the last resort waits for its line in
// hook.log: the log is on disk too, and may be what hangs.
const lastResortLogWait = 100 * time.Millisecond

// exitProcess ends the process; tests replace it.
var exitProcess = os.Exit

// lastResort ends a run that outlives its bound (armLastResort).
type lastResort struct {
	t     *time.Timer
	limit time.Duration
	state atomic.Int32 // 0: running, 1: finished, 2: ended by the last resort
}

// armLastResort starts the last resort's timer for a run started at start.
// Until the run has read its payload the bound is the wait for it
// (Config.stdinWait, a bound of its own) and lastResortFactor budgets
// more; payloadRead bounds the rest of the run to lastResortFactor budgets
// from then. A timer costs the run nothing until it fires.
func (cfg Config) armLastResort(start time.Time) *lastResort {
	lr := &lastResort{limit: lastResortFactor * cfg.budget()}
	lr.t = time.AfterFunc(cfg.stdinWait()+lr.limit, func() {
		if !lr.state.CompareAndSwap(0, 2) {
			return
		}
		logged := make(chan struct{})
		go func() {
			defer close(logged)
			cfg.log(start, "", "", fmt.Errorf("the run outlived %v, %d times its budget, past its payload: ended without an answer", lr.limit, lastResortFactor))
		}()
		select {
		case <-logged:
		case <-time.After(lastResortLogWait):
		}
		exitProcess(0)
	})
	return lr
}

// payloadRead restarts the bound from now, the payload read: the rest of
// the run has lastResortFactor budgets. It does nothing once the last
// resort fired.
func (lr *lastResort) payloadRead() {
	if lr != nil && lr.state.Load() == 0 {
		lr.t.Reset(lr.limit)
	}
}

// disarm stops the last resort once the run has its result, and reports
// false when the last resort fired first: the process is ending, and the
// run must write nothing.
func (lr *lastResort) disarm() bool {
	lr.t.Stop()
	return lr.state.CompareAndSwap(0, 1)
}
