package collector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
)

// BenchmarkBatchIngest measures POST /v1/events up to the writer, per
// event, on the batches the model benchmark sends: the session of
// internal/demo.Big (real payload shapes, 50 subagents) stamped as a hook
// stamps it, POSTed 50 envelopes at a time (one session at 5,000 events/s)
// or 16 (three sessions). Each op is one batch: its body read into a buffer
// of its own, decoded (decodeBatchSplit), admitted through the privacy
// rules (admitAll) and converted to the store's events (toEvents), as
// handleEvents, Ingest and commit do before they hand the events to the
// writer. cpu-ns/event (the process's CPU time, the garbage collector's
// included: less sensitive to a loaded machine than the wall time of
// ns/op), B/event and allocs/event are per envelope; the insert and the
// model are measured elsewhere (store/sqlite, BenchmarkModelHeap).
func BenchmarkBatchIngest(b *testing.B) {
	pl := benchPipeline()
	for _, perPost := range []int{50, 16} {
		bodies := modelBenchBodies(b, 20_000, perPost)
		b.Run(fmt.Sprint(perPost), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := cputime.Self()
			events := 0
			for i := 0; b.Loop(); i++ {
				evs := admitBody(b, &pl, bodies[i%len(bodies)])
				events += len(evs)
			}
			cpu := cputime.Self() - cpu0
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(events), "B/event")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(events), "allocs/event")
		})
	}
}

// benchPipeline is the collector's pipeline, with the default privacy
// rules.
func benchPipeline() ingest.Pipeline {
	return ingest.Pipeline{Origin: ingest.LocalOrigin("bench"), Privacy: privacy.DefaultOptions()}
}

// modelBenchBodies returns the bodies the model benchmark POSTs for its
// first session (internal/demo.Big, 50 subagents) of about events events,
// perPost envelopes each.
func modelBenchBodies(b *testing.B, events, perPost int) [][]byte {
	envs := demo.Big(demo.BigSpec{SessionID: "bench-1-0", Start: time.Unix(1_780_000_000, 0), Events: events, Agents: 50, Project: "bench-project-0", Seed: 1})
	var bodies [][]byte
	for i := 0; i < len(envs); i += perPost {
		body, err := json.Marshal(map[string]any{"envelopes": envs[i:min(i+perPost, len(envs))]})
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	return bodies
}

// admitBody takes a body as POST /v1/events does up to the writer: read
// into a buffer of its own, decoded, admitted and converted to the store's
// events.
func admitBody(b *testing.B, pl *ingest.Pipeline, body []byte) []store.Event {
	sp := newSplitPayloads()
	defer sp.release()
	batch, err := decodeBatchSplit(bytes.Clone(body), sp)
	if err != nil {
		b.Fatal(err)
	}
	evs, err := toEvents(batch, admitAll(pl, batch, sp), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return evs
}
