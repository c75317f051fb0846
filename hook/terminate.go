package hook

import (
	"os"
	"os/signal"
	"syscall"
)

// An agent may end a hook it started with SIGTERM: Claude Code does so to
// the hooks still running as it exits, its last turn's Stop or StopFailure
// hook among them, about a tenth of a second after starting it. Ended
// there, the run would lose the event it had read. So the run catches
// SIGTERM: it goes on storing the event, bounded as always by its budget
// and the last resort, then ends with exit code 0 and nothing on stdout,
// as the hook rule wants, since no one reads its answer any more. SIGINT
// and SIGHUP keep their default: they come from a person at a terminal,
// who means the process to end now.

// termination records whether the run was sent SIGTERM: the signal waits
// in its channel until the run asks.
type termination struct {
	signals chan os.Signal
}

// catchTermination starts catching SIGTERM for the rest of the run; stop
// ends it.
func catchTermination() termination {
	t := termination{signals: make(chan os.Signal, 1)}
	signal.Notify(t.signals, syscall.SIGTERM)
	return t
}

// caught reports whether SIGTERM came before now. It is asked once.
func (t termination) caught() bool {
	select {
	case <-t.signals:
		return true
	default:
		return false
	}
}

// stop restores SIGTERM's default.
func (t termination) stop() { signal.Stop(t.signals) }
