package hook

import (
	"os/signal"
	"syscall"
)

// ignoreTermination keeps SIGTERM from ending the run. An agent may end a
// hook it started with SIGTERM: Claude Code does so to the hooks still
// running as it exits, its last turn's Stop or StopFailure hook among
// them, about a tenth of a second after starting it. Ended there, the run
// would lose the event it had read. Ignoring the signal, the run stores the
// event and ends as any run does, bounded by its budget and the last
// resort; what it may write on stdout then goes to no reader.
//
// Ignored rather than caught (signal.Notify): catching starts the runtime's
// signal goroutine, whose thread costs every run about 0.3 ms, a fifth of
// what the hook adds to a Go program's start (docs/benchmarks.md, Hook
// latency). SIGINT and SIGHUP keep their default: they come from a person
// at a terminal, who means the process to end now. What the hook starts
// (a collector, a forwarder) is a Go program, which installs its own
// handler for SIGTERM whatever it inherits.
func ignoreTermination() { signal.Ignore(syscall.SIGTERM) }
