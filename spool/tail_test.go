package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// tailIDs drains t once and returns the ids delivered.
func tailIDs(tb testing.TB, t *Tail, max int) []string {
	tb.Helper()
	var ids []string
	n, err := t.Drain(context.Background(), max, func(records [][]byte) error {
		for _, r := range records {
			ids = append(ids, idOf(tb, r))
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("Tail.Drain: %v", err)
	}
	if n != len(ids) {
		tb.Fatalf("Tail.Drain returned %d delivered, deliver saw %d", n, len(ids))
	}
	return ids
}

// attached opens a spool in a fresh directory with this process attached as
// its consumer, as the collector is.
func attached(tb testing.TB) *Spool {
	tb.Helper()
	s := mustOpen(tb, Options{})
	release, err := s.Attach("127.0.0.1:1")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(release)
	return s
}

func inode(tb testing.TB, path string) uint64 {
	tb.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		tb.Fatal(err)
	}
	return st.Ino
}

func segmentsOf(tb testing.TB, s *Spool) []string {
	tb.Helper()
	names, err := s.segments()
	if err != nil {
		tb.Fatal(err)
	}
	return names
}

// TestTailFollowsInPlace: a Tail delivers each record once, from the active
// segment itself — no claim, no new file — and Stats counts nothing it
// delivered as pending.
func TestTailFollowsInPlace(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	if got := tailIDs(t, tl, 0); len(got) != 0 {
		t.Fatalf("an empty spool delivered %q", got)
	}
	mustAppend(t, s, rec("a"))
	ino := inode(t, s.current)
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("delivered %q, want [a]", got)
	}
	mustAppend(t, s, rec("b"))
	mustAppend(t, s, rec("c"), rec("d"))
	if got := tailIDs(t, tl, 2); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("delivered %q, want [b c d]", got)
	}
	if got := tailIDs(t, tl, 0); len(got) != 0 {
		t.Fatalf("a second pass delivered %q again", got)
	}
	if inode(t, s.current) != ino || len(segmentsOf(t, s)) != 0 {
		t.Errorf("the Tail claimed the active segment: inode %d → %d, segments %q", ino, inode(t, s.current), segmentsOf(t, s))
	}
	if st := mustStats(t, s); st.PendingBytes != 0 || st.Segments != 0 || st.Corrupt != 0 {
		t.Errorf("Stats after the Tail delivered everything = %+v, want nothing pending", st)
	}
	mustAppend(t, s, rec("e"))
	if st := mustStats(t, s); st.PendingBytes != int64(len(rec("e"))+2) || st.Segments != 1 {
		t.Errorf("Stats with one record past the tail = %+v, want %d bytes in 1 segment", st, len(rec("e"))+2)
	}
}

// TestTailStatsWithoutConsumer: the tail file of a consumer that is gone is
// not believed, since its segment's inode may have been reused since.
func TestTailStatsWithoutConsumer(t *testing.T) {
	s := mustOpen(t, Options{})
	tl := s.Tail()
	defer tl.close()
	mustAppend(t, s, rec("a"))
	tailIDs(t, tl, 0)
	if st := mustStats(t, s); st.PendingBytes == 0 {
		t.Errorf("Stats believed the tail of no consumer: %+v", st)
	}
}

// TestTailWholeLinesOnly: a line whose write is still under way is left for
// the next pass, and a line torn for good is skipped and counted once the
// next Append ends it.
func TestTailWholeLinesOnly(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	write := func(b string) {
		t.Helper()
		f, err := os.OpenFile(s.current, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(b); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write("\n" + `{"id":"x","pay`)
	if got := tailIDs(t, tl, 0); len(got) != 0 {
		t.Fatalf("delivered %q from half a line", got)
	}
	write(`load":1}` + "\n")
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("delivered %q once the line was whole, want [x]", got)
	}
	write(`{"id":"torn`) // its writer died
	if got := tailIDs(t, tl, 0); len(got) != 0 || mustStats(t, s).Corrupt != 0 {
		t.Fatalf("delivered %q, corrupt %d from a torn line no Append ended yet", got, mustStats(t, s).Corrupt)
	}
	mustAppend(t, s, rec("y"))
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("delivered %q after the torn line, want [y]", got)
	}
	if c := mustStats(t, s).Corrupt; c != 1 {
		t.Errorf("corrupt = %d, want 1 (the torn line)", c)
	}
}

// TestTailRotates: past its size the active segment is claimed and deleted,
// and every record is still delivered exactly once, without a failure.
func TestTailRotates(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	tl.rotateAt = 300
	var want, got []string
	var largest int64
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('0'+i/26))
		want = append(want, id)
		mustAppend(t, s, rec(id))
		if i%3 == 0 {
			// A record appended between the pass and the claim is the
			// rotation's to deliver.
			got = append(got, tailIDs(t, tl, 0)...)
			if fi, err := os.Stat(s.current); err == nil {
				largest = max(largest, fi.Size())
			}
		}
	}
	got = append(got, tailIDs(t, tl, 0)...)
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if limit := tl.rotateAt + 3*int64(len(rec("a0"))+2); largest > limit {
		t.Errorf("the active segment grew to %d bytes, past %d: not rotated", largest, limit)
	}
	if segs := segmentsOf(t, s); len(segs) != 0 {
		t.Errorf("rotation left segments %q", segs)
	}
	if st := mustStats(t, s); st.PendingBytes != 0 {
		t.Errorf("Stats after everything was delivered = %+v", st)
	}
}

// TestTailAfterAnotherDrainer: a drainer that claims the active segment
// delivers what the Tail had not; the Tail goes on with the next segment from
// its start, and delivers nothing twice.
func TestTailAfterAnotherDrainer(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	mustAppend(t, s, rec("a"))
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("delivered %q, want [a]", got)
	}
	mustAppend(t, s, rec("b"))
	if got := flat(drainIDs(t, s, 0)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the other drainer delivered %q, want [a b] (a again: it claimed the whole segment)", got)
	}
	mustAppend(t, s, rec("c"))
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("the Tail then delivered %q, want [c]", got)
	}
}

// TestTailDeliversLeftovers: segments left by a drain that failed go first.
func TestTailDeliversLeftovers(t *testing.T) {
	s := attached(t)
	mustAppend(t, s, rec("a"))
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return errCollectorDown }); !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain = %v", err)
	}
	mustAppend(t, s, rec("b"))
	tl := s.Tail()
	defer tl.close()
	if got := tailIDs(t, tl, 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("delivered %q, want [a b]", got)
	}
	if segs := segmentsOf(t, s); len(segs) != 0 {
		t.Errorf("left segments %q", segs)
	}
}

// TestTailDeliverError: a batch deliver refuses is delivered again by the
// next pass, and the batches before it are not.
func TestTailDeliverError(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	mustAppend(t, s, recs("a", "b", "c", "d", "e")...)
	var got []string
	calls := 0
	_, err := tl.Drain(context.Background(), 2, func(records [][]byte) error {
		if calls++; calls == 2 {
			return errCollectorDown
		}
		for _, r := range records {
			got = append(got, idOf(t, r))
		}
		return nil
	})
	if !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain = %v, want the deliver error", err)
	}
	got = append(got, tailIDs(t, tl, 0)...)
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

// TestTailSettle: a consumer that settles its Tail before it stops leaves
// nothing for the next one to deliver again; one that does not (a crash)
// leaves the active segment, delivered again from its start.
func TestTailSettle(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	mustAppend(t, s, rec("a"))
	tailIDs(t, tl, 0)
	if err := tl.Settle(); err != nil {
		t.Fatal(err)
	}
	next := s.Tail()
	defer next.close()
	if got := tailIDs(t, next, 0); len(got) != 0 {
		t.Fatalf("after Settle the next Tail delivered %q again", got)
	}
	mustAppend(t, s, rec("b"))
	tailIDs(t, next, 0)
	next.close() // as a crash would: no Settle
	again := s.Tail()
	defer again.close()
	if got := tailIDs(t, again, 0); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after a crash the next Tail delivered %q, want [b] again", got)
	}
	if _, err := os.Stat(filepath.Join(s.dir, tailName)); err != nil {
		t.Errorf("no tail file: %v", err)
	}
}

// TestTailSettleLeavesNewRecords: records appended after the Tail's last
// pass are not settled away.
func TestTailSettleLeavesNewRecords(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	mustAppend(t, s, rec("a"))
	tailIDs(t, tl, 0)
	mustAppend(t, s, rec("b"))
	if err := tl.Settle(); err != nil {
		t.Fatal(err)
	}
	if got := flat(drainIDs(t, s, 0)); !slices.Contains(got, "b") {
		t.Fatalf("after Settle a drain delivered %q, want b among them", got)
	}
}

// BenchmarkTailOne is BenchmarkDrainOne for the consumer's Tail: one
// envelope appended, then delivered on its own.
func BenchmarkTailOne(b *testing.B) {
	env := envelope(b)
	s := attached(b)
	tl := s.Tail()
	defer tl.close()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(env); err != nil {
			b.Fatal(err)
		}
		n, err := tl.Drain(context.Background(), 0, func([][]byte) error { return nil })
		if err != nil || n != 1 {
			b.Fatalf("Drain = %d, %v", n, err)
		}
	}
}

// TestTailFindsLeftoverOfAnotherDrainer: a drainer that claims the followed
// segment and fails leaves it; the Tail, which looks for leftovers only now
// and then, looks again once it sees its segment claimed.
func TestTailFindsLeftoverOfAnotherDrainer(t *testing.T) {
	s := attached(t)
	tl := s.Tail()
	defer tl.close()
	mustAppend(t, s, rec("a"))
	tailIDs(t, tl, 0)
	mustAppend(t, s, rec("b"))
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return errCollectorDown }); !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain = %v", err)
	}
	mustAppend(t, s, rec("c"))
	got := tailIDs(t, tl, 0)
	got = append(got, tailIDs(t, tl, 0)...)
	for _, id := range []string{"b", "c"} {
		if !slices.Contains(got, id) {
			t.Errorf("two passes delivered %q, want %s among them", got, id)
		}
	}
	if segs := segmentsOf(t, s); len(segs) != 0 {
		t.Errorf("left segments %q", segs)
	}
}

func TestFormatTail(t *testing.T) {
	for _, v := range [][3]uint64{{0, 0, 0}, {2049, 1234567, 42}, {1<<64 - 1, 1<<64 - 1, 1<<63 - 1}} {
		dir := t.TempDir()
		b := formatTail(v[0], v[1], int64(v[2]))
		if len(b) != 63 || b[62] != '\n' {
			t.Fatalf("formatTail(%v) = %q, want 63 bytes ending in a newline", v, b)
		}
		if err := os.WriteFile(filepath.Join(dir, tailName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := tailOf(dir, v[0], v[1]); got != int64(v[2]) {
			t.Errorf("tailOf(formatTail(%v)) = %d", v, got)
		}
		if got := tailOf(dir, v[0], v[1]+1); got != 0 {
			t.Errorf("tailOf for another inode = %d, want 0", got)
		}
	}
}

// TestLastDelivered: a spool no consumer followed tells no delivery; one
// whose Tail delivered tells when.
func TestLastDelivered(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := LastDelivered(dir); ok {
		t.Fatalf("LastDelivered of a spool no consumer followed: %v", at)
	}
	if err := s.Append([]byte(`{"id":"1"}`)); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second) // file times may be coarser than the clock
	tail := s.Tail()
	defer tail.Settle()
	if n, err := tail.Drain(context.Background(), 0, func([][]byte) error { return nil }); n != 1 || err != nil {
		t.Fatalf("Drain: %d, %v", n, err)
	}
	if at, ok := LastDelivered(dir); !ok || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Fatalf("LastDelivered after a delivery: %v, %v", at, ok)
	}
}
