package collector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/privacy"
)

// BenchmarkBatchIngest measures POST /v1/events up to the writer, per
// event, on the batches the model benchmark sends: the session of
// internal/demo.Big (real payload shapes, 50 subagents) stamped as a hook
// stamps it, POSTed 50 envelopes at a time (one session at 5,000 events/s)
// or 16 (three sessions). Each op is one batch: its body read into a buffer
// of its own, decoded (decodeBatchBytes), admitted through the privacy
// rules (Pipeline.Admit) and converted to the store's events (toEvents), as
// handleEvents, Ingest and commit do before they hand the events to the
// writer. ns/event, B/event and allocs/event are per envelope; the insert
// and the model are measured elsewhere (store/sqlite, BenchmarkModelHeap).
func BenchmarkBatchIngest(b *testing.B) {
	envs := demo.Big(demo.BigSpec{SessionID: "bench-1-0", Start: time.Unix(1_780_000_000, 0), Events: 20_000, Agents: 50, Project: "bench-project-0", Seed: 1})
	pl := ingest.Pipeline{Origin: ingest.LocalOrigin("bench"), Privacy: privacy.DefaultOptions()}
	for _, perPost := range []int{50, 16} {
		var bodies [][]byte
		for i := 0; i < len(envs); i += perPost {
			body, err := json.Marshal(map[string]any{"envelopes": envs[i:min(i+perPost, len(envs))]})
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, body)
		}
		b.Run(fmt.Sprint(perPost), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			events := 0
			for i := 0; b.Loop(); i++ {
				body := bytes.Clone(bodies[i%len(bodies)]) // a body of its own, as readAll makes it
				batch, err := decodeBatchBytes(body)
				if err != nil {
					b.Fatal(err)
				}
				decoded := make([]*event.Payload, len(batch))
				for j := range batch {
					decoded[j] = pl.Admit(&batch[j])
				}
				if _, err := toEvents(batch, decoded, time.Now()); err != nil {
					b.Fatal(err)
				}
				events += len(batch)
			}
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(events), "B/event")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(events), "allocs/event")
		})
	}
}
