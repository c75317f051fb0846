package bench

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

func TestSamplePayloads(t *testing.T) {
	ps := SamplePayloads()
	if len(ps) < 30 {
		t.Fatalf("%d sample payloads", len(ps))
	}
	for _, p := range ps {
		if _, err := event.Decode(p); err != nil {
			t.Fatalf("sample %.60q: %v", p, err)
		}
	}
}

// TestIngestSmall runs the ingest benchmark on a small scale: it must
// deliver every event and say so.
func TestIngestSmall(t *testing.T) {
	var out bytes.Buffer
	res, err := Ingest(context.Background(), &out, IngestOptions{Dir: t.TempDir(), Events: 1234, BatchSize: 100, Clients: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 1234 || res.Requests != 13 || res.EventsPerSec <= 0 || res.DBBytes == 0 {
		t.Fatalf("result %+v", res)
	}
	if !strings.HasPrefix(out.String(), "ingest: 1234 events in 13 requests of 100 from 3 clients") {
		t.Fatalf("output %q", out.String())
	}
}

// TestQuerySmall builds a small database, then reuses it.
func TestQuerySmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	o := QueryOptions{Path: path, Events: 3000, Sessions: 7, Samples: 5}
	var out bytes.Buffer
	res, err := Query(context.Background(), &out, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 3000 || res.Build == 0 || len(res.Timings) != 4 {
		t.Fatalf("result %+v", res)
	}
	for _, tm := range res.Timings {
		if tm.Median <= 0 || tm.AvgEvents == 0 {
			t.Errorf("timing %+v", tm)
		}
	}
	if res.Timings[0].AvgEvents != 100 {
		t.Errorf("first page holds %v events, want the default 100", res.Timings[0].AvgEvents)
	}
	out.Reset()
	res, err = Query(context.Background(), &out, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Build != 0 || strings.Contains(out.String(), "building") {
		t.Fatalf("the database was rebuilt: %s", out.String())
	}
}

// TestFigures runs the benchmarks at full size and prints their figures:
// HOOKWATCH_BENCH=1 (or =ingest, =query) go test -run Figures -v ./internal/bench/
// HOOKWATCH_BENCH_QUERY_DB keeps the query database between runs.
func TestFigures(t *testing.T) {
	which := os.Getenv("HOOKWATCH_BENCH")
	if which == "" {
		t.Skip("set HOOKWATCH_BENCH=1 to run the full-size benchmarks")
	}
	ctx := context.Background()
	if which != "query" {
		if _, err := Ingest(ctx, os.Stdout, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if which != "ingest" {
		if _, err := Query(ctx, os.Stdout, QueryOptions{Path: os.Getenv("HOOKWATCH_BENCH_QUERY_DB")}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestStoreSinks: the sinks StoreSinks builds get the collector's
// store, receive the model's changes and are stopped before the store
// closes: the OTLP push as serve wires it writes its sessions owed to the
// table, records them while in flight and clears them once delivered, all
// counted.
func TestIngestStoreSinks(t *testing.T) {
	sink := newDiscardReceiver()
	defer sink.Close()
	set := metrics.NewSet()
	counted := &countedDebts{}
	_, err := Ingest(context.Background(), io.Discard, IngestOptions{Dir: t.TempDir(), Events: 4000, WaitModel: true, Quiet: true,
		StoreSinks: func(db *sqlite.DB) []collector.ModelSink {
			counted.OTLPDebtStore = db
			return []collector.ModelSink{otlp.NewExporter(&otlp.Client{Endpoint: sink.URL},
				otlp.ExporterOptions{Metrics: set, Rows: db, Debts: counted, Owner: "bench"})}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	set.WritePrometheus(&b)
	if sent := metricSum(b.String(), "hookwatch_otlp_spans_sent_total "); sent == 0 {
		t.Fatalf("no span sent:\n%s", b.String())
	}
	c := counted.counts()
	// The beat is one distinct session; the benchmark's sessions are more.
	if c.oweWrites == 0 || c.distinct < 2 || c.cleared == 0 || c.reads == 0 || c.took <= 0 {
		t.Fatalf("the table's calls: %+v", c)
	}
}
