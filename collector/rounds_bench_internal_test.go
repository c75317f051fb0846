package collector

import (
	"context"
	"log/slog"
	"runtime/metrics"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// BenchmarkModelRounds measures the model's rounds per event as serve
// runs them on the model benchmark's session (internal/demo.Big, 100,000
// events, 50 subagents): the events POSTed 50 at a time, admitted as POST
// /v1/events admits them and inserted into a real SQLite store, then
// applied in rounds of 500 (a round every 100 ms at 5,000 events/s) by
// modeler.apply — the Group, the rows' documents, the Watch and the
// metrics per agent, PutModel in SQLite — with serve's defaults but a
// model cache that keeps the session. Only the rounds are counted:
// cpu-ns/event is the process's CPU time in them (the collections they
// cause included only as far as they run then), B/event and allocs/event
// what they allocate; the admission and the insert of each round's events
// come before its clock starts. store-cpu-ns/event is the part of the
// rounds' CPU spent in PutModel (the store's), model-cpu-ns/event the rest
// (the model and the collector's part of the rounds), and rows/event the
// rows the rounds hand to PutModel.
func BenchmarkModelRounds(b *testing.B) {
	const perPost, round = 50, 500
	bodies := modelBenchBodies(b, 100_000, perPost)
	pl := benchPipeline()
	ctx := context.Background()
	var total, inStore time.Duration
	var allocs, objects uint64
	events, rows := 0, uint64(0)
	for b.Loop() {
		db := sqlite.MustOpenDB(b)
		m := newModeler(db, slog.New(slog.DiscardHandler), newHub(), vm.NewSet(), DefaultDeriveWait, 4<<30, true, nil, nil, attribution.Thresholds{}.OrDefault(), newStalls())
		m.stop() // the benchmark runs the rounds
		m.st = timedPut{db, &inStore}
		var ready []pendingEvent
		for i := 0; i < len(bodies); {
			ready = ready[:0]
			for ; i < len(bodies) && len(ready) < round; i++ {
				evs := admitBody(b, &pl, bodies[i])
				if _, err := db.Insert(ctx, evs); err != nil {
					b.Fatal(err)
				}
				for _, e := range evs {
					ready = append(ready, pendingEvent{ev: e})
				}
			}
			a0, o0 := heapAllocs()
			t0 := cputime.Self()
			if _, _, err := m.apply(ctx, ready, nil, map[string]int64{}); err != nil {
				b.Fatal(err)
			}
			total += cputime.Self() - t0
			a1, o1 := heapAllocs()
			allocs, objects = allocs+a1-a0, objects+o1-o0
			events += len(ready)
		}
		rows += m.rows.Get()
		if n := m.rebuilds.Get(); n != 0 {
			b.Fatalf("%d rebuilds", n)
		}
		db.Close()
	}
	b.ReportMetric(float64(total)/float64(events), "cpu-ns/event")
	b.ReportMetric(float64(inStore)/float64(events), "store-cpu-ns/event")
	b.ReportMetric(float64(total-inStore)/float64(events), "model-cpu-ns/event")
	b.ReportMetric(float64(rows)/float64(events), "rows/event")
	b.ReportMetric(float64(allocs)/float64(events), "B/event")
	b.ReportMetric(float64(objects)/float64(events), "allocs/event")
}

// heapAllocs returns the bytes and objects allocated on the heap so far.
func heapAllocs() (bytes, objects uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// timedPut is a store whose PutModel adds the process's CPU time in it to
// *cpu.
type timedPut struct {
	*sqlite.DB
	cpu *time.Duration
}

func (s timedPut) PutModel(ctx context.Context, b store.ModelBatch) error {
	t0 := cputime.Self()
	defer func() { *s.cpu += cputime.Self() - t0 }()
	return s.DB.PutModel(ctx, b)
}
