package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// benchEvents derives n events from the real corpus, spread over sessions
// sessions, with fresh ids.
func benchEvents(b *testing.B, n, sessions int) []store.Event { return benchEventsT(b, n, sessions) }

func benchEventsT(b testing.TB, n, sessions int) []store.Event {
	corpus := storetest.Corpus(b)
	out := make([]store.Event, n)
	for i := range out {
		p := corpus[i%len(corpus)]
		payload := storetest.P("session_id", fmt.Sprintf("bench-%d", i%sessions))
		if dec, err := event.Decode(p.JSON); err == nil {
			dec.Raw["session_id"] = payload[len(`{"session_id":`) : len(payload)-1]
			payload, _ = dec.MarshalJSON()
		}
		out[i] = storetest.MustEvent(b, storetest.Envelope(p.Runtime, storetest.At(i), payload))
	}
	return out
}

// BenchmarkInsert measures batched inserts into a database on disk; the
// events/s figure is the one to compare with the ingest goal.
func BenchmarkInsert(b *testing.B) {
	for _, batch := range []int{1, 100, 500, 2000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := sqlite.MustOpenDB(b)
			templates := benchEvents(b, 5000, 50)
			ctx := context.Background()
			events := make([]store.Event, batch)
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range events {
					events[j] = fresh(templates[(i*batch+j)%len(templates)], i*batch+j)
				}
				cpu0 := cputime.Self()
				if _, err := db.Insert(ctx, events); err != nil {
					b.Fatal(err)
				}
				cpu += cputime.Self() - cpu0
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
			// CPU time, which the other work of a shared machine moves far
			// less than wall time; the background checkpoint is included.
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*batch), "cpu-µs/event")
		})
	}
}

// BenchmarkEventsFirstPage measures the first page of a session's events
// straight from the store (the HTTP figure is in internal/bench).
func BenchmarkEventsFirstPage(b *testing.B) {
	db := sqlite.MustOpenDB(b)
	ctx := context.Background()
	events := benchEvents(b, 100_000, 100)
	for i := 0; i < len(events); i += 1000 {
		if _, err := db.Insert(ctx, events[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	main := ""
	filters := map[string]store.EventFilter{
		"all":   {SessionID: "bench-7"},
		"agent": {SessionID: "bench-7", AgentID: &main},
		"tool":  {SessionID: "bench-7", Tool: "Bash"},
		"event": {SessionID: "bench-7", Event: "SessionEnd"},
	}
	for name, f := range filters {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p, err := db.Events(ctx, f)
				if err != nil || len(p.Events) == 0 {
					b.Fatal(err, len(p.Events))
				}
			}
		})
	}
}

// fresh returns a copy of e with a new id, written into the envelope too.
// Envelopes made by storetest.Envelope start with {"id":"<36 chars>".
func fresh(e store.Event, n int) store.Event {
	id := []byte(e.ID)
	copy(id[len(id)-12:], fmt.Sprintf("%012x", n))
	e.ID = string(id)
	env := append([]byte(nil), e.Envelope...)
	copy(env[len(`{"id":"`):], id)
	e.Envelope = env
	return e
}
