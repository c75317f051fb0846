package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/store"
)

// Payload is one real hook payload of the repository's corpus.
type Payload = corpus.Payload

// Corpus returns every payload of the repository's corpus; see corpus.Load.
func Corpus(tb testing.TB) []Payload { return corpus.Load(tb) }

// baseTime is an arbitrary fixed instant so that tests are reproducible.
var baseTime = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// At returns the fixed test instant plus ms milliseconds.
func At(ms int) time.Time { return baseTime.Add(time.Duration(ms) * time.Millisecond) }

// Envelope wraps a payload as the hook would, with a fresh UUIDv7 id.
func Envelope(runtime string, at time.Time, payload []byte) event.Envelope {
	return event.Envelope{
		ID:               event.NewID(at),
		Runtime:          runtime,
		Kind:             event.KindHook,
		ReceivedAt:       at,
		Host:             "devbox",
		User:             "dev",
		HookwatchVersion: "0.1.0-test",
		Payload:          append(json.RawMessage(nil), payload...),
	}
}

// MustEvent is store.FromEnvelope that fails the test on error.
func MustEvent(tb testing.TB, env event.Envelope) store.Event {
	tb.Helper()
	e, err := store.FromEnvelope(env)
	if err != nil {
		tb.Fatalf("FromEnvelope(%s): %v", env.Payload, err)
	}
	return e
}

// CorpusEvents wraps every corpus payload in an envelope, one millisecond
// apart, and derives its event.
func CorpusEvents(tb testing.TB) []store.Event {
	tb.Helper()
	var out []store.Event
	for i, p := range Corpus(tb) {
		out = append(out, MustEvent(tb, Envelope(p.Runtime, At(i), p.JSON)))
	}
	return out
}

// CountEvents returns how many events s holds, paging through them all.
func CountEvents(tb testing.TB, s store.Store) int64 {
	tb.Helper()
	var n int64
	f := store.EventFilter{Limit: store.MaxLimit}
	for {
		page, err := s.Events(tb.Context(), f)
		if err != nil {
			tb.Fatal(err)
		}
		n += int64(len(page.Events))
		if page.Next == "" {
			return n
		}
		f.Cursor = page.Next
	}
}
