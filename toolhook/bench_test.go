package toolhook

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/internal/cputime"
)

// tenMatchers registers ten hooks of every matcher kind on tools other than
// the benchmarked "Read", or, with match, three of them on "Read".
func tenMatchers(b *testing.B, match bool) *Registry {
	var r Registry
	patterns := []string{"Bash", "Edit|Write", "mcp__.*", "^Web", "Task", "Grep, Glob", "Notebook.*", "process_refund", "Agent", "TodoWrite"}
	if match {
		patterns[0], patterns[3], patterns[9] = "Read", "*", "Re.*"
	}
	for i, p := range patterns {
		if err := r.Pre(p, func(context.Context, *Call) PreResult {
			return PreResult{Decision: decideEvery(i)}
		}); err != nil {
			b.Fatal(err)
		}
		if i%3 == 0 {
			r.Post(p, func(context.Context, *Call) PostResult { return PostResult{} })
		}
	}
	return &r
}

func decideEvery(i int) (d decision.Decision) {
	if i == 3 {
		d.Verdict = decision.Allow
	}
	return d
}

var sink any

func read(_ context.Context, in map[string]any) (any, error) { return in["file_path"], nil }

func BenchmarkCall(b *testing.B) {
	input := map[string]any{"file_path": "/etc/hosts"}
	ctx := SpawnAgent(WithTask(context.Background(), "t1"), "a1", "worker")
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			sink, _ = read(ctx, input)
		}
	})
	for _, match := range []bool{false, true} {
		x := &Executor{Registry: tenMatchers(b, match), Tools: map[string]Tool{"Read": read}}
		b.Run(fmt.Sprintf("10-matchers/matching=%v", match), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				sink, _ = x.Call(ctx, "Read", input)
			}
		})
	}
}

// reportCPU adds the process's CPU time per operation (user and system, the
// garbage collector's included) to the benchmark's figures: on a shared
// machine, wall time per operation also counts the time other programs
// held the cores.
func reportCPU(b *testing.B) func() {
	start := cputime.Self()
	return func() {
		b.ReportMetric(float64((cputime.Self()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
