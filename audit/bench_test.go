package audit_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hookwatch/hookwatch/event"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/store"
)

// BenchmarkWriteStored writes rounds of the real captures' events spread
// over many sessions, as the collector's audit goroutine does; sessions
// beyond the Writer's open files are closed and opened again.
func BenchmarkWriteStored(b *testing.B) {
	for _, sessions := range []int{10, 500} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			var events []store.Event
			for _, c := range loadCaptures(b) {
				for _, e := range c.events {
					// Decoded as the collector has it after a commit.
					d, err := store.FromEnvelope(mustEnvelope(b, e.Envelope))
					if err != nil {
						b.Fatal(err)
					}
					d.Seq = e.Seq
					events = append(events, d)
				}
			}
			w, err := audit.NewWriter(b.TempDir(), audit.WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			round := make([]store.Event, 500)
			b.ResetTimer()
			for i := 0; i < b.N; i += len(round) {
				for k := range round {
					round[k] = events[(i+k)%len(events)]
					round[k].SessionID = fmt.Sprintf("s-%d", (i+k)/7%sessions)
				}
				if _, _, err := w.WriteStored(round); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustEnvelope(tb testing.TB, raw []byte) event.Envelope {
	var env event.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		tb.Fatal(err)
	}
	return env
}
