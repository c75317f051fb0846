package store_test

import (
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// BenchmarkFromEnvelope measures deriving a stored event from an envelope
// of the real corpus, which the collector does for every envelope it takes.
func BenchmarkFromEnvelope(b *testing.B) {
	var envs []event.Envelope
	size := 0
	for i, p := range storetest.Corpus(b) {
		envs = append(envs, storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
		size += len(p.JSON)
	}
	b.Run("FromEnvelope", func(b *testing.B) {
		b.SetBytes(int64(size / len(envs)))
		for i := 0; b.Loop(); i++ {
			if _, err := store.FromEnvelope(envs[i%len(envs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event.Decode", func(b *testing.B) {
		b.SetBytes(int64(size / len(envs)))
		for i := 0; b.Loop(); i++ {
			if _, err := event.Decode(envs[i%len(envs)].Payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}
