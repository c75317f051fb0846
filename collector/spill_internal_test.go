package collector

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSeqRanges: the set of spilled seqs against a plain set, under
// contiguous adds (a burst), gaps, adds out of order and drops; a burst
// costs one range however long.
func TestSeqRanges(t *testing.T) {
	var s seqRanges
	at := time.Unix(1, 0)
	for seq := int64(1); seq <= 10_000_000; seq++ {
		s.add(seq, at)
	}
	if len(s.r) != 1 || s.n != 10_000_000 {
		t.Fatalf("a burst of 10M seqs: %d ranges, %d seqs", len(s.r), s.n)
	}
	if n := s.dropTo(10_000_000); n != 10_000_000 || s.n != 0 || s.r != nil {
		t.Fatalf("dropped %d, left %d in %v", n, s.n, s.r)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	want := map[int64]time.Time{}
	s = seqRanges{}
	next := int64(1)
	for range 20_000 {
		switch k := rng.IntN(20); {
		case k < 14: // the writer's next seq
			at := time.Unix(next, 0)
			s.add(next, at)
			want[next] = at
			next++
		case k < 16: // a seq not marked (no session)
			next++
		case k < 18: // out of order, maybe marked already
			if next > 1 {
				seq := 1 + rng.Int64N(next-1)
				at := time.Unix(seq, 0)
				s.add(seq, at)
				if _, ok := want[seq]; !ok {
					want[seq] = at
				}
			}
		default: // a read back up to some seq
			to := rng.Int64N(next + 1)
			n := int64(0)
			for seq := range want {
				if seq <= to {
					delete(want, seq)
					n++
				}
			}
			if got := s.dropTo(to); got != n {
				t.Fatalf("dropTo(%d) removed %d, want %d", to, got, n)
			}
		}
		if s.n != int64(len(want)) {
			t.Fatalf("%d seqs counted, want %d", s.n, len(want))
		}
	}
	for seq := int64(0); seq <= next; seq++ {
		at, ok := s.has(seq)
		w, wok := want[seq]
		if ok != wok || ok && at.After(w) {
			t.Fatalf("has(%d) = %v %v, want %v %v", seq, at, ok, w, wok)
		}
	}
	if !slices.IsSortedFunc(s.r, func(a, b seqRange) int { return int(a.lo - b.lo) }) {
		t.Fatalf("ranges out of order: %v", s.r)
	}
	for i := 1; i < len(s.r); i++ {
		if s.r[i-1].hi+1 >= s.r[i].lo {
			t.Fatalf("ranges %v and %v touch", s.r[i-1], s.r[i])
		}
	}
	if f, ok := s.first(); ok != (len(want) > 0) || ok && f != s.r[0] {
		t.Fatalf("first: %v %v", f, ok)
	}
}
