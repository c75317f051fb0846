package collector_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
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
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	for b.Loop() {
		if _, err := srv.PolicySignals(ctx, corpusMain); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
}
