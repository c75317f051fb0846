package spool

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// envelope returns a real PreToolUse envelope of about 1.3 KiB.
func envelope(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile("testdata/envelope-pretooluse.json")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(data)
}

// BenchmarkAppend measures what the hook pays per event when the collector
// is down: a new Spool and one Append of one envelope, with the default cap.
func BenchmarkAppend(b *testing.B) {
	env := envelope(b)
	dir := b.TempDir()
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Append(env); err != nil {
			b.Fatal(err)
		}
		if i++; i%100000 == 0 {
			b.StopTimer()
			os.Remove(s.current) // stay far from the cap
			b.StartTimer()
		}
	}
}

// BenchmarkAppendSync is BenchmarkAppend with Options.Sync.
func BenchmarkAppendSync(b *testing.B) {
	env := envelope(b)
	s, err := Open(b.TempDir(), Options{Sync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(env)))
	for b.Loop() {
		if err := s.Append(env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDrain measures reading and deleting a segment of 1000 envelopes
// with a deliver that does nothing.
func BenchmarkDrain(b *testing.B) {
	env := envelope(b)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([][]byte, 1000)
	for i := range batch {
		batch[i] = env
	}
	b.SetBytes(int64(len(env) * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := s.Append(batch...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := s.Drain(context.Background(), 0, func([][]byte) error { return nil })
		if err != nil || n != len(batch) {
			b.Fatalf("Drain = %d, %v", n, err)
		}
	}
}

// BenchmarkDrainOne measures a trickle: one envelope appended, then drained
// on its own, as a collector drains the hooks of one agent's session.
func BenchmarkDrainOne(b *testing.B) {
	env := envelope(b)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(env); err != nil {
			b.Fatal(err)
		}
		n, err := s.Drain(context.Background(), 0, func([][]byte) error { return nil })
		if err != nil || n != 1 {
			b.Fatalf("Drain = %d, %v", n, err)
		}
	}
}
