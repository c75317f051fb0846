// Command bench runs hookwatch's benchmarks and prints their figures:
// medians and ratios measured side by side in one run, never pass/fail.
//
//	go run ./internal/cmd/bench [flags] [hook|policy|ingest|query|model|metrics|shell|abuse|import|otlp|session|trickle|team|export|pages|all]
//
// It lives here rather than in the hookwatch binary because the hook,
// policy, abuse, model, session and trickle benchmarks build the binaries they measure (and the floor program)
// from the repository with the Go toolchain: the shipped binary must not need
// one for any of its subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// errUsage marks an error caused by bad arguments: exit code 2.
var errUsage = errors.New("usage error")

// run is `bench [flags] [hook|policy|ingest|query|model|metrics|shell|abuse|import|otlp|session|trickle|team|export|pages|all]`.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./internal/cmd/bench [flags] [hook|policy|ingest|query|model|metrics|shell|abuse|import|otlp|session|trickle|team|export|pages|all]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	repo := fs.String("repo", ".", "repository root to build the binaries from (hook, policy, abuse, session and trickle benchmarks)")
	runs := fs.Int("runs", 200, "runs of each command per round (hook and policy benchmarks)")
	rounds := fs.Int("rounds", 1, "rounds of runs; verdicts use the median of the rounds' medians (hook and policy benchmarks; model: each slice's median over the rounds; session: default 5; trickle: default 3; metrics: runs each way, default 3; export: ingest runs with and without the audit directory, default 3)")
	events := fs.Int("events", 0, "events to ingest (ingest, metrics), to hold in the database (query) of each session (model) or of the exported session (export), hooks per round (trickle); 0 = the benchmark's default")
	sessions := fs.String("sessions", "1,3", "concurrent sessions of each run (model benchmark), comma-separated")
	via := fs.String("via", "spool,forward,post", "how the model benchmark hands its events to the collector, comma-separated: spool (each appended to the collector's spool, as hooks hand them over), forward (each appended to a spool per session that a forwarder per session posts from, as `hookwatch forward` on other machines) and post (POST /v1/events, in batches as the SDK gathers them)")
	rate := fs.Int("rate", 5000, "events per second sent in all (model benchmark; team: its failover run)")
	claude := fs.String("claude", "", "the Claude Code binary (session benchmark); default $HOOKWATCH_CLAUDE_BIN, else what scripts/install-claude.sh installs")
	developers := fs.Int("developers", 50, "simulated developers (team benchmark)")
	duration := fs.Duration("duration", time.Minute, "length of the failover run (team benchmark; its throughput runs take a quarter each)")
	teamRuns := fs.String("team-runs", "", "comma-separated runs of the team benchmark, of "+strings.Join(bench.TeamRuns, ",")+" (sqlite and postgres: the throughput runs side by side); default all")
	modelCache := fs.Int("model-cache-mb", 1536, "the collectors' --model-cache-mb (team benchmark): the groups of its developers' sessions; 0 = serve's default")
	db := fs.String("db", "", "database file for the query benchmark, reused when it already holds enough events")
	transcriptMB := fs.Int64("transcript-mb", 1000, "size of the generated transcript tree (import benchmark), in MB")
	importE2E := fs.Bool("e2e", false, "also run `hookwatch import` on the tree against a collector of its own (import benchmark)")
	payload := fs.String("payload", "", "hook payload the trickle benchmark's runs read, a JSON file (default: a PreToolUse of Claude Code 2.1.197, as the hook benchmark's)")
	variants := fs.String("variants", "", "comma-separated variants of the session benchmark to play besides none and true (the reference): "+strings.Join(bench.SessionVariants, ",")+"; default all")
	pagesMB := fs.Int("pages-mb", 4096, "memory the pages benchmark grows to, in MiB")
	warmMB := fs.Int("warm-mb", 4096, "memory written and given back right before each model run, in MiB, so that the collector grows into pages the machine used lately (a virtual machine's host may charge several times as much for the others: see the pages benchmark); 0 = none")
	cpuProfile := fs.String("cpuprofile", "", "write the CPU profile of the measured work to this file (import and ingest benchmarks; model: the collector's, from its start to its stop, of the last run)")
	parse := func(args []string) error {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return nil
	}
	if err := parse(args); err != nil {
		return err
	}
	which := "all"
	if fs.NArg() > 0 { // the benchmark's name may come before its flags
		which = fs.Arg(0)
		if err := parse(fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("%w: one benchmark at a time, got %q", errUsage, append([]string{which}, fs.Args()...))
		}
	}
	roundsSet := false // the session benchmark has its own default
	fs.Visit(func(f *flag.Flag) { roundsSet = roundsSet || f.Name == "rounds" })
	benchmarks := map[string]func() error{
		"hook": func() error {
			return bench.Hook(ctx, stdout, bench.HookOptions{Repo: *repo, Runs: *runs, Rounds: *rounds})
		},
		"policy": func() error {
			return bench.Policy(ctx, stdout, bench.PolicyOptions{Repo: *repo, Runs: *runs, Rounds: *rounds})
		},
		"ingest": func() error {
			// The model's figures too: how long after ingest it is
			// current, and the CPU of the whole.
			if *cpuProfile != "" {
				f, err := os.Create(*cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			_, err := bench.Ingest(ctx, stdout, bench.IngestOptions{Events: *events, WaitModel: true})
			return err
		},
		"model": func() error {
			o := bench.ModelOptions{Repo: *repo, Events: *events}
			for _, f := range strings.Split(*sessions, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n <= 0 {
					return fmt.Errorf("%w: -sessions takes counts such as 1,3, got %q", errUsage, *sessions)
				}
				o.Sessions = append(o.Sessions, n)
			}
			o.Rate = *rate
			ways, err := bench.ParseVia(*via)
			if err != nil {
				return fmt.Errorf("%w: -via: %v", errUsage, err)
			}
			o.Via = ways
			if *warmMB < 0 {
				return fmt.Errorf("%w: -warm-mb takes MiB, 0 or more, got %d", errUsage, *warmMB)
			}
			o.WarmMiB = *warmMB
			o.Rounds = *rounds
			if *cpuProfile != "" {
				// serve writes it: a path of its own, whatever its working directory.
				if o.CPUProfile, err = filepath.Abs(*cpuProfile); err != nil {
					return err
				}
			}
			_, err = bench.Model(ctx, stdout, o)
			return err
		},
		"query": func() error {
			_, err := bench.Query(ctx, stdout, bench.QueryOptions{Path: *db, Events: *events})
			return err
		},
		"shell": func() error {
			return bench.Shell(ctx, stdout)
		},
		"abuse": func() error {
			return bench.Abuse(ctx, stdout, bench.AbuseOptions{Repo: *repo})
		},
		"otlp": func() error {
			r := *rounds
			if !roundsSet {
				r = 0 // the benchmark's default
			}
			return bench.OTLP(ctx, stdout, bench.OTLPOptions{Events: *events, IngestEvents: *events, Rounds: r})
		},
		"metrics": func() error {
			r := *rounds
			if !roundsSet {
				r = 0 // the benchmark's default
			}
			return bench.AgentMetrics(ctx, stdout, bench.AgentMetricsOptions{Events: *events, Rounds: r})
		},
		"import": func() error {
			_, err := bench.Import(ctx, stdout, bench.ImportOptions{Repo: *repo, Bytes: *transcriptMB * 1e6, CPUProfile: *cpuProfile, EndToEnd: *importE2E})
			return err
		},
		"session": func() error {
			r := *rounds
			if !roundsSet {
				r = 0 // the benchmark's default
			}
			o := bench.SessionOptions{Repo: *repo, Claude: *claude, Rounds: r}
			var err error
			if o.Variants, err = someOf(*variants, bench.SessionVariants, "session variant"); err != nil {
				return err
			}
			return bench.Session(ctx, stdout, o)
		},
		"trickle": func() error {
			r := *rounds
			if !roundsSet {
				r = 0 // the benchmark's default
			}
			o := bench.TrickleOptions{Repo: *repo, Events: *events, Rounds: r}
			if *payload != "" {
				b, err := os.ReadFile(*payload)
				if err != nil {
					return fmt.Errorf("%w: -payload: %v", errUsage, err)
				}
				o.Payload = b
			}
			return bench.Trickle(ctx, stdout, o)
		},
		"export": func() error {
			r := *rounds
			if !roundsSet {
				r = 0 // the benchmark's default
			}
			return bench.Export(ctx, stdout, bench.ExportOptions{Repo: *repo, Events: *events, Rounds: r})
		},
		"team": func() error {
			o := bench.TeamOptions{Repo: *repo, Developers: *developers, Duration: *duration, Rate: *rate, ModelCacheMB: *modelCache}
			var err error
			if o.Runs, err = someOf(*teamRuns, bench.TeamRuns, "team run"); err != nil {
				return err
			}
			_, err = bench.Team(ctx, stdout, o)
			return err
		},
		"pages": func() error {
			return bench.Pages(ctx, stdout, bench.PagesOptions{MiB: *pagesMB})
		},
	}
	// team needs PostgreSQL's server, and pages gigabytes of memory: they
	// run only when named.
	order := []string{"hook", "policy", "ingest", "query", "model", "metrics", "shell", "abuse", "import", "otlp", "session", "trickle", "export"}
	if which != "all" {
		if _, ok := benchmarks[which]; !ok {
			return fmt.Errorf("%w: unknown benchmark %q (want hook, policy, ingest, query, model, metrics, shell, abuse, import, otlp, session, trickle, team, export, pages or all)", errUsage, which)
		}
		order = []string{which}
	}
	host, _ := os.Hostname()
	fmt.Fprintf(stdout, "hookwatch benchmarks on %d CPUs (host %s, %s)\n\n", runtime.NumCPU(), host, runtime.Version())
	for _, name := range order {
		if err := benchmarks[name](); err != nil {
			return fmt.Errorf("cannot run the %s benchmark: %w", name, err)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// someOf reads a comma-separated list of names of what (a flag's value),
// each of which must be one of allowed; none for an empty list.
func someOf(list string, allowed []string, what string) ([]string, error) {
	var names []string
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.Contains(allowed, v) {
			return nil, fmt.Errorf("%w: unknown %s %q (want some of %s)", errUsage, what, v, strings.Join(allowed, ","))
		}
		names = append(names, v)
	}
	return names, nil
}
