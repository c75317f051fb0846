package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"
)

// AgentMetricsOptions configure AgentMetrics. Zero values take the
// defaults.
type AgentMetricsOptions struct {
	// Events is the number of events of each run (default 50,000).
	Events int
	// Rounds is the number of runs with and without (default 3).
	Rounds int
}

// AgentMetrics measures what the metrics per agent cost: the ingest
// benchmark with them on and off, alternating in one process, each run
// waiting until the model has applied every event. It prints the medians
// side by side: ingest rate, time until modelled, and the model rounds'
// time per event, where the metrics are counted.
func AgentMetrics(ctx context.Context, w io.Writer, o AgentMetricsOptions) error {
	if o.Events <= 0 {
		o.Events = 50_000
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	type figures struct{ rate, modelled, roundUS, cpuUS []float64 }
	var on, off figures
	for r := range o.Rounds {
		// Alternate which goes first, so that neither always runs on a
		// warmer machine.
		for i := range 2 {
			noMetrics := (r+i)%2 == 1
			cpu0, err := processCPU()
			if err != nil {
				return err
			}
			res, err := Ingest(ctx, w, IngestOptions{Events: o.Events, WaitModel: true, NoAgentMetrics: noMetrics, Quiet: true})
			if err != nil {
				return err
			}
			cpu1, err := processCPU()
			if err != nil {
				return err
			}
			f := &on
			if noMetrics {
				f = &off
			}
			f.rate = append(f.rate, res.EventsPerSec)
			f.modelled = append(f.modelled, res.Modelled.Seconds())
			f.roundUS = append(f.roundUS, float64(res.ModelRoundTime.Microseconds())/float64(res.Events))
			f.cpuUS = append(f.cpuUS, float64((cpu1-cpu0).Microseconds())/float64(res.Events))
		}
	}
	fmt.Fprintf(w, "agent metrics: %d events per run, %d runs each way, medians (metrics on | off | on/off)\n", o.Events, o.Rounds)
	row := func(name, unit string, a, b []float64) {
		ma, mb := median(a), median(b)
		fmt.Fprintf(w, "  %-28s %10.1f | %10.1f %-9s | %.3f\n", name, ma, mb, unit, ma/mb)
	}
	row("ingest rate", "events/s", on.rate, off.rate)
	row("first request to modelled", "s", on.modelled, off.modelled)
	row("model rounds (wall)", "µs/event", on.roundUS, off.roundUS)
	row("CPU, collector and clients", "µs/event", on.cpuUS, off.cpuUS)
	fmt.Fprintf(w, "  runs (on): rate %v, CPU %v\n  runs (off): rate %v, CPU %v\n", rounded(on.rate), rounded(on.cpuUS), rounded(off.rate), rounded(off.cpuUS))
	return nil
}

// processCPU returns the user and system CPU time this process used so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("cannot read the CPU time: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func rounded(v []float64) []float64 {
	out := slices.Clone(v)
	for i, x := range out {
		out[i] = float64(int64(x + 0.5))
	}
	return out
}
