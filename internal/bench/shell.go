package bench

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/shell"
)

// TypicalCommand is a command of the size agents run most.
const TypicalCommand = `cd /home/dev/src/demo && go test ./... 2>&1 | tail -20`

// Script10K is a shell script of about 10 KB mixing what the analysis
// follows: functions, loops, command substitutions, pipelines, redirections.
//
//go:embed testdata/script10k.sh
var Script10K string

// ShellGoal is the target for the analysis of a typical command.
const ShellGoal = 20 * time.Microsecond

// Shell measures the analysis of shell commands (package shell): a typical
// command, which a policy on command.effect analyses on every Bash call,
// and a 10 KB script.
func Shell(ctx context.Context, w io.Writer) error {
	shell.Analyze("true", shell.Options{}) // build the program table once, as a long-lived process has
	rows := []struct {
		name string
		src  string
	}{{"typical command", TypicalCommand}, {"10 KB script", Script10K}}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "input\tbytes\tsteps\ttime/op\tCPU/op\tallocs/op\tbytes/op\t")
	var typical time.Duration
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := shell.Analyze(r.src, shell.Options{Dir: "/w"})
		if a.Unknown {
			return fmt.Errorf("the %s is not analysed: %s", r.name, a.Reason)
		}
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				shell.Analyze(r.src, shell.Options{Dir: "/w"})
			}
		})
		per := time.Duration(res.NsPerOp())
		// CPU time, which a busy machine inflates less than wall time:
		// the process's user and system time over as many runs.
		cpu0 := cputime.Self()
		for range res.N {
			shell.Analyze(r.src, shell.Options{Dir: "/w"})
		}
		cpu := (cputime.Self() - cpu0) / time.Duration(res.N)
		if i == 0 {
			typical = cpu
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%v\t%d\t%d\t\n", r.name, len(r.src), len(a.Steps), per, cpu, res.AllocsPerOp(), res.AllocedBytesPerOp())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "met"
	if typical > ShellGoal {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "goal: a typical command ≤ %v of CPU: %s (%v)\n", ShellGoal, verdict, typical)
	return nil
}
