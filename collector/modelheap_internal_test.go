package collector

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/cputime"
)

// BenchmarkModelHeap measures the live heap the session model keeps per
// event: the session of the model benchmark (internal/demo.Big, 100,000
// events) POSTed in batches of 50 as the benchmark sends them, each body
// read, decoded and admitted as POST /v1/events does, and applied to a
// Group in rounds of 500 with a Watch following its changes, as the
// modeler does. live-B/event is what stays reachable, after a collection,
// once the bodies, batches and changes are dropped: what every later
// collection marks again; live-objects/event the objects it makes, each of
// which a collection finds and marks on its own. mark-ns/event is what a
// collection of it costs: the process's CPU time over a forced one (the
// median of five), per event kept. Whenever a collection comes, it costs
// about that much per event the collector's groups hold: what makes the
// slice of the model benchmark it lands in dearer than the next.
//
// With HW_BENCH_HEAP_PROFILE set to a file name, it writes there a heap
// profile taken while the group is live (go tool pprof -sample_index
// inuse_space): what the kept bytes are. go test's -memprofile cannot show
// it: it is written once the benchmark returns and the group is gone.
func BenchmarkModelHeap(b *testing.B) {
	const perPost, round = 50, 500
	profile := os.Getenv("HW_BENCH_HEAP_PROFILE")
	if profile != "" {
		// One sample per 4 KiB allocated rather than per 512 KiB: the
		// kept objects are small and many.
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 4096
	}
	bodies := modelBenchBodies(b, 100_000, perPost)
	pl := benchPipeline()
	var live, objects float64
	var marks []time.Duration
	n := 0
	for b.Loop() {
		before, objects0 := liveHeap()
		g := attribution.NewGroup()
		w := attribution.NewWatch(attribution.Thresholds{})
		var ready []applied
		for i, body := range bodies {
			evs := admitBody(b, &pl, body)
			for j := range evs {
				ready = append(ready, applied{*evs[j].Decoded, evs[j].Payload})
			}
			if len(ready) >= round || i == len(bodies)-1 {
				es := make([]event.Envelope, len(ready))
				ps := make([]*event.Payload, len(ready))
				for j, r := range ready {
					es[j], ps[j] = r.env, r.p
				}
				g.ApplyDecoded(es, ps)
				ch := g.Changes()
				for _, sc := range ch.Sessions {
					w.Apply(sc, ch.Reset || sc.Reset)
				}
				ready = ready[:0]
			}
		}
		n = g.Len()
		after, objects1 := liveHeap()
		live, objects = float64(after-before), float64(objects1-objects0)
		if profile != "" {
			writeHeapProfile(b, profile)
		}
		marks = marks[:0]
		for range 5 {
			t0 := cputime.Self()
			runtime.GC()
			marks = append(marks, cputime.Self()-t0)
		}
		runtime.KeepAlive(g)
		runtime.KeepAlive(w)
	}
	b.ReportMetric(live/float64(n), "live-B/event")
	b.ReportMetric(objects/float64(n), "live-objects/event")
	slices.Sort(marks)
	b.ReportMetric(float64(marks[len(marks)/2].Nanoseconds())/float64(n), "mark-ns/event")
}

// writeHeapProfile writes the heap profile as of the last collection to
// the file name.
func writeHeapProfile(b *testing.B, name string) {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// applied is an event as the modeler hands it to its group.
type applied struct {
	env event.Envelope
	p   *event.Payload
}

// liveHeap is the heap reachable after a collection: its bytes and its
// objects.
func liveHeap() (bytes, objects uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/objects:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}
