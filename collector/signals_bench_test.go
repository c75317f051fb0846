package collector_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// BenchmarkPolicySignals measures what a policy's question about the
// signals costs once the model is current: reading the 2.1.197 capture's
// main session (its agents and calls, from SQLite on disk) and the signals
// attribution reads from them. cpu-ns/op is the process's CPU time (user
// and system) per question, less sensitive than ns/op to a loaded machine.
func BenchmarkPolicySignals(b *testing.B) {
	db := sqlite.MustOpenDB(b)
	srv, err := collector.New(collector.Config{Store: db})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ctx := context.Background()
	if _, err := srv.Ingest(ctx, claudeCorpus(b)); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		agents, err := srv.PolicySignals(ctx, corpusMain)
		if err != nil {
			b.Fatal(err)
		}
		if len(agents) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the model never had the session's calls")
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := cputime.Self()
	for b.Loop() {
		if _, err := srv.PolicySignals(ctx, corpusMain); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Self()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkRoundSignals measures what reading a session's signals and the
// calls it waits on costs the model's rounds over a whole session of
// 100,000 events (internal/demo.Big, as the model benchmark sends), in
// rounds of 500 events (a round every 100 ms at 5,000 events/s): "none" is
// the Group alone; "full" reads Signals and Waiting over all of the
// session's calls after each round, as the collector did; "watch" keeps an
// attribution.Watch and reads the signals a round can have raised
// (Watch.Fresh) and Watch.Waiting. cpu-ns/event is the process's CPU per
// event, the Group's included; first-ns/event and last-ns/event are the
// first and the last tenth of the session.
func BenchmarkRoundSignals(b *testing.B) {
	envs := demo.Big(demo.BigSpec{SessionID: "bench-1-0", Start: time.Unix(1_780_000_000, 0), Events: 100_000, Agents: 50, Project: "bench-project-0", Seed: 1})
	const round = 500
	for _, mode := range []string{"none", "full", "watch"} {
		b.Run(mode, func(b *testing.B) {
			var total, first, last time.Duration
			for b.Loop() {
				g := attribution.NewGroup()
				watches := map[string]*attribution.Watch{}
				for i := 0; i < len(envs); i += round {
					t0 := cputime.Self()
					g.Apply(envs[i:min(i+round, len(envs))]...)
					ch := g.Changes()
					for _, sc := range ch.Sessions {
						id := sc.Session.SessionID
						switch mode {
						case "full":
							agents, calls := g.Agents(id), g.ToolCalls(id)
							attribution.Signals(agents, calls, attribution.Thresholds{})
							attribution.Waiting(sc.Session, agents, calls)
						case "watch":
							w := watches[id]
							if w == nil {
								w = attribution.NewWatch(attribution.Thresholds{})
								watches[id] = w
							}
							w.Apply(sc, ch.Reset || sc.Reset)
							w.Fresh()
							w.Waiting(sc.Session)
						}
					}
					d := cputime.Self() - t0
					total += d
					switch {
					case i < len(envs)/10:
						first += d
					case i >= len(envs)-len(envs)/10:
						last += d
					}
				}
			}
			n := float64(b.N * len(envs))
			b.ReportMetric(float64(total)/n, "cpu-ns/event")
			b.ReportMetric(float64(first)/n*10, "first-ns/event")
			b.ReportMetric(float64(last)/n*10, "last-ns/event")
		})
	}
}
