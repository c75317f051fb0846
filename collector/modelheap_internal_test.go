package collector

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
)

// BenchmarkModelHeap measures the live heap the session model keeps per
// event: the session of the model benchmark (internal/demo.Big, 100,000
// events) POSTed in batches of 50 as the benchmark sends them, each body
// read, decoded and admitted as POST /v1/events does, and applied to a
// Group in rounds of 500 with a Watch following its changes, as the
// modeler does. live-B/event is what stays reachable, after a collection,
// once the bodies, batches and changes are dropped: what every later
// collection marks again. It is a measure of memory, not of time.
func BenchmarkModelHeap(b *testing.B) {
	const perPost, round = 50, 500
	bodies := modelBenchBodies(b, 100_000, perPost)
	pl := benchPipeline()
	var live float64
	n := 0
	for b.Loop() {
		before := liveHeap()
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
		live = float64(liveHeap() - before)
		runtime.KeepAlive(g)
		runtime.KeepAlive(w)
	}
	b.ReportMetric(live/float64(n), "live-B/event")
}

// applied is an event as the modeler hands it to its group.
type applied struct {
	env event.Envelope
	p   *event.Payload
}

// liveHeap is the heap reachable after a collection.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
