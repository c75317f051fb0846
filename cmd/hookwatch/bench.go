package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/hookwatch/hookwatch/internal/bench"
)

func init() {
	register(command{
		name:    "bench",
		summary: "measure hook latency (with and without policies), ingest rate and query latency",
		run:     runBench,
	})
}

// runBench is `hookwatch bench [hook|ingest|query|all]`. It prints figures:
// medians and ratios measured side by side in one run, never pass/fail.
func runBench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", "bench [flags] [hook|policy|ingest|query|all]", stderr)
	repo := fs.String("repo", ".", "repository root to build the hook and floor binaries from (hook benchmark)")
	runs := fs.Int("runs", 200, "runs of each command per round (hook and policy benchmarks)")
	rounds := fs.Int("rounds", 1, "rounds of runs; verdicts use the median of the rounds' medians (hook and policy benchmarks)")
	events := fs.Int("events", 0, "events to ingest (ingest) or to hold in the database (query); 0 = the benchmark's default")
	db := fs.String("db", "", "database file for the query benchmark, reused when it already holds enough events")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	which := "all"
	if fs.NArg() > 0 { // the benchmark's name may come before its flags
		which = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("%w: one benchmark at a time, got %q", errUsage, append([]string{which}, fs.Args()...))
		}
	}
	run := map[string]func() error{
		"hook": func() error {
			return bench.Hook(ctx, stdout, bench.HookOptions{Repo: *repo, Runs: *runs, Rounds: *rounds})
		},
		"policy": func() error {
			return bench.Policy(ctx, stdout, bench.PolicyOptions{Repo: *repo, Runs: *runs, Rounds: *rounds})
		},
		"ingest": func() error {
			_, err := bench.Ingest(ctx, stdout, bench.IngestOptions{Events: *events})
			return err
		},
		"query": func() error {
			_, err := bench.Query(ctx, stdout, bench.QueryOptions{Path: *db, Events: *events})
			return err
		},
	}
	order := []string{"hook", "policy", "ingest", "query"}
	if which != "all" {
		if _, ok := run[which]; !ok {
			return fmt.Errorf("%w: unknown benchmark %q (want hook, policy, ingest, query or all)", errUsage, which)
		}
		order = []string{which}
	}
	fmt.Fprintf(stdout, "hookwatch %s benchmarks on %d CPUs (host %s)\n\n", version, numCPU(), hostName())
	for _, name := range order {
		if err := run[name](); err != nil {
			return fmt.Errorf("cannot run the %s benchmark: %w", name, err)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func hostName() string {
	h, _ := os.Hostname()
	return h
}

func numCPU() int { return runtime.NumCPU() }
