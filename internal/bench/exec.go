// Package bench holds hookwatch's benchmarks: programs that print figures
// (medians and ratios, side by side in one run), not timed tests.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"text/tabwriter"
	"time"
)

// Command is one program timed by RunInterleaved.
type Command struct {
	Name string
	Argv []string
	Env  []string // added to the environment
}

// Timing is the wall times of one command's runs.
type Timing struct {
	Name    string
	Samples []time.Duration
}

// Median returns the median sample.
func (t Timing) Median() time.Duration { return quantile(t.Samples, 0.5) }

// P95 returns the 95th percentile sample.
func (t Timing) P95() time.Duration { return quantile(t.Samples, 0.95) }

func quantile(s []time.Duration, q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c[int(q*float64(len(c)-1)+0.5)]
}

// Settle is the pause after each timed run. An agent's hooks are spaced by
// the tool calls and model turns between them; back to back, each run would
// also pay for the collector still storing the previous run's event on the
// same two cores, which measures throughput, not the latency an agent sees.
const Settle = 10 * time.Millisecond

// RunInterleaved runs every command runs times, round-robin, feeding stdin to
// each run and pausing Settle after it, so that machine noise hits all of
// them alike. A run that fails is an error: a benchmark of a broken program
// measures nothing.
func RunInterleaved(ctx context.Context, cmds []Command, stdin []byte, runs, warmup int) ([]Timing, error) {
	out := make([]Timing, len(cmds))
	for i, c := range cmds {
		out[i].Name = c.Name
	}
	for r := -warmup; r < runs; r++ {
		for i, c := range cmds {
			d, err := runOnce(ctx, c, stdin)
			if err != nil {
				return nil, err
			}
			if r >= 0 {
				out[i].Samples = append(out[i].Samples, d)
			}
			time.Sleep(Settle)
		}
	}
	return out, nil
}

func runOnce(ctx context.Context, c Command, stdin []byte) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("cannot run %s: %w: %s", c.Name, err, stderr.Bytes())
	}
	return d, nil
}

// RunRounds repeats RunInterleaved rounds times, printing each round's
// table to w — median, p95 and median over the first command's (the floor)
// — with the rows extra adds, and returns each command's median of the
// rounds' medians: a burst of load on the machine moves it less than any
// one round.
func RunRounds(ctx context.Context, w io.Writer, cmds []Command, stdin []byte, runs, warmup, rounds int, extra func(tw io.Writer, ts []Timing)) ([]time.Duration, error) {
	medians := make([][]time.Duration, len(cmds))
	for round := 1; round <= max(rounds, 1); round++ {
		ts, err := RunInterleaved(ctx, cmds, stdin, runs, warmup)
		if err != nil {
			return nil, err
		}
		if rounds > 1 {
			fmt.Fprintf(w, "round %d:\n", round)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "command\tmedian\tp95\tmedian / floor\t")
		for i, t := range ts {
			medians[i] = append(medians[i], t.Median())
			fmt.Fprintf(tw, "%s\t%v\t%v\t%.2f×\t\n", t.Name, t.Median().Round(time.Microsecond), t.P95().Round(time.Microsecond), ratio(t.Median(), ts[0].Median()))
		}
		if extra != nil {
			extra(tw, ts)
		}
		if err := tw.Flush(); err != nil {
			return nil, err
		}
	}
	m := make([]time.Duration, len(cmds))
	for i := range cmds {
		m[i] = quantile(medians[i], 0.5)
	}
	return m, nil
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
