package spool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// mustOpen opens a spool in a fresh temporary directory.
func mustOpen(tb testing.TB, o Options) *Spool {
	tb.Helper()
	s, err := Open(filepath.Join(tb.TempDir(), "spool"), o)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// rec returns a small envelope-like record with the given id.
func rec(id string) []byte {
	return []byte(`{"id":"` + id + `","runtime":"claude-code","payload":{"hook_event_name":"PreToolUse"}}`)
}

func recs(ids ...string) [][]byte {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = rec(id)
	}
	return out
}

// idOf returns the id field of a record.
func idOf(tb testing.TB, r []byte) string {
	tb.Helper()
	var v struct{ ID string }
	if err := json.Unmarshal(r, &v); err != nil {
		tb.Fatalf("delivered record is not JSON: %q: %v", r, err)
	}
	return v.ID
}

// drainIDs drains s once and returns the ids delivered, batch by batch.
func drainIDs(tb testing.TB, s *Spool, max int) [][]string {
	tb.Helper()
	var batches [][]string
	n, err := s.Drain(context.Background(), max, func(records [][]byte) error {
		var ids []string
		for _, r := range records {
			ids = append(ids, idOf(tb, r))
		}
		batches = append(batches, ids)
		return nil
	})
	if err != nil {
		tb.Fatalf("Drain: %v", err)
	}
	total := 0
	for _, b := range batches {
		total += len(b)
	}
	if n != total {
		tb.Fatalf("Drain returned %d delivered, deliver saw %d", n, total)
	}
	return batches
}

func flat(batches [][]string) []string { return slices.Concat(batches...) }

func mustStats(tb testing.TB, s *Spool) Stats {
	tb.Helper()
	st, err := s.Stats()
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func mustAppend(tb testing.TB, s *Spool, records ...[]byte) {
	tb.Helper()
	if err := s.Append(records...); err != nil {
		tb.Fatalf("Append: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, recs("a", "b", "c")...)
	mustAppend(t, s, rec("d"))
	mustAppend(t, s) // no records: nothing written
	mustAppend(t, s, rec("e"))

	size := int64(0)
	for _, batch := range [][][]byte{recs("a", "b", "c"), recs("d"), recs("e")} {
		size += int64(len(frame(batch)))
	}
	if got, want := mustStats(t, s), (Stats{PendingBytes: size, Segments: 1}); got != want {
		t.Fatalf("Stats before drain = %+v, want %+v", got, want)
	}
	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if got, want := mustStats(t, s), (Stats{}); got != want {
		t.Fatalf("Stats after drain = %+v, want %+v", got, want)
	}
	if got := drainIDs(t, s, 0); got != nil {
		t.Fatalf("second drain delivered %q, want nothing", got)
	}
	// The spool keeps working after a drain.
	mustAppend(t, s, rec("f"))
	if got, want := flat(drainIDs(t, s, 0)), []string{"f"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

func TestDrainBatches(t *testing.T) {
	f := func(max, records int, want []int) {
		t.Helper()
		s := mustOpen(t, Options{})
		var all []string
		for i := range records {
			id := fmt.Sprint(i)
			all = append(all, id)
			mustAppend(t, s, rec(id))
		}
		batches := drainIDs(t, s, max)
		var sizes []int
		for _, b := range batches {
			sizes = append(sizes, len(b))
		}
		if !slices.Equal(sizes, want) {
			t.Fatalf("max %d, %d records: batch sizes %v, want %v", max, records, sizes, want)
		}
		if got := flat(batches); !slices.Equal(got, all) {
			t.Fatalf("max %d: delivered %q, want %q", max, got, all)
		}
	}
	f(1, 3, []int{1, 1, 1})
	f(2, 5, []int{2, 2, 1})
	f(5, 5, []int{5})
	f(10, 5, []int{5})
	f(0, 3, []int{3})  // DefaultBatch
	f(-1, 3, []int{3}) // DefaultBatch
	f(0, DefaultBatch+1, []int{DefaultBatch, 1})
	f(3, 0, nil)
}

var errCollectorDown = errors.New("collector down")

func TestDrainDeliverErrorKeepsEverything(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, recs("a", "b", "c", "d", "e")...)

	calls := 0
	n, err := s.Drain(context.Background(), 2, func(records [][]byte) error {
		calls++
		if calls == 2 {
			return errCollectorDown
		}
		return nil
	})
	if !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain error = %v, want %v", err, errCollectorDown)
	}
	if n != 2 {
		t.Fatalf("Drain delivered %d, want 2 (the batch before the failure)", n)
	}
	st := mustStats(t, s)
	if st.Segments != 1 || st.PendingBytes != int64(len(frame(recs("a", "b", "c", "d", "e")))) {
		t.Fatalf("Stats after failed drain = %+v, want the whole segment kept", st)
	}
	// New records go to a fresh active segment; the next drain delivers the
	// kept segment from its start (re-delivering a and b), then the new one.
	mustAppend(t, s, rec("f"))
	if got, want := flat(drainIDs(t, s, 2)), []string{"a", "b", "c", "d", "e", "f"}; !slices.Equal(got, want) {
		t.Fatalf("re-drain delivered %q, want %q", got, want)
	}
	if got, want := mustStats(t, s), (Stats{}); got != want {
		t.Fatalf("Stats after re-drain = %+v, want %+v", got, want)
	}
}

func TestDrainErrorOnLeftoverStopsBeforeActiveSegment(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	fail := func([][]byte) error { return errCollectorDown }
	if _, err := s.Drain(context.Background(), 0, fail); !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain error = %v", err)
	}
	mustAppend(t, s, rec("b"))
	if _, err := s.Drain(context.Background(), 0, fail); !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain error = %v", err)
	}
	// A failing collector must not split the spool into a segment per drain.
	if st := mustStats(t, s); st.Segments != 2 {
		t.Fatalf("Segments = %d, want 2 (the leftover and the active one)", st.Segments)
	}
	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

func TestDrainContextCancel(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, recs("a", "b", "c")...)

	ctx, cancel := context.WithCancel(context.Background())
	n, err := s.Drain(ctx, 1, func(records [][]byte) error {
		cancel() // the first batch is delivered, the next is not attempted
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("Drain = %d, %v; want 1, context.Canceled", n, err)
	}
	called := false
	if _, err := s.Drain(ctx, 1, func([][]byte) error { called = true; return nil }); !errors.Is(err, context.Canceled) || called {
		t.Fatalf("Drain with a done ctx = %v (deliver called: %v), want context.Canceled without delivering", err, called)
	}
	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("re-drain delivered %q, want %q", got, want)
	}
}

func TestDeliverMayKeepRecords(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, recs("a", "b", "c")...)
	var kept [][]byte
	if _, err := s.Drain(context.Background(), 1, func(records [][]byte) error {
		kept = append(kept, records...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := kept, recs("a", "b", "c"); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("kept records %q, want %q", got, want)
	}
}

// TestSegments reads each testdata/segments/<case>.jsonl as an active
// segment and compares what a drain delivers and counts with <case>.golden.
func TestSegments(t *testing.T) {
	paths, err := filepath.Glob("testdata/segments/*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no segment fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := mustOpen(t, Options{})
			if err := os.WriteFile(s.current, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if _, err := s.Drain(context.Background(), 2, func(records [][]byte) error {
				fmt.Fprintf(&out, "batch of %d\n", len(records))
				for _, r := range records {
					fmt.Fprintf(&out, "  %s\n", r)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			st := mustStats(t, s)
			fmt.Fprintf(&out, "corrupt %d, dropped %d, segments %d\n", st.Corrupt, st.Dropped, st.Segments)

			golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Fatalf("drain of %s:\n%s\nwant (%s):\n%s", path, out.String(), golden, want)
			}
		})
	}
}

// TestTornWriteDoesNotSwallowNextRecord simulates a writer killed mid-write
// (or a full disk): the next Append must still be delivered.
func TestTornWriteDoesNotSwallowNextRecord(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	full := frame(recs("torn"))
	f, err := os.OpenFile(s.current, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(full[:len(full)/2]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mustAppend(t, s, rec("b"))

	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if got := mustStats(t, s).Corrupt; got != 1 {
		t.Fatalf("Corrupt = %d, want 1", got)
	}
}

func TestCap(t *testing.T) {
	one := int64(len(frame(recs("0"))))
	s := mustOpen(t, Options{MaxBytes: 3 * one})
	for _, id := range []string{"0", "1", "2"} {
		mustAppend(t, s, rec(id))
	}
	f := func(records [][]byte, wantDropped int64) {
		t.Helper()
		if err := s.Append(records...); !errors.Is(err, ErrFull) {
			t.Fatalf("Append over the cap = %v, want ErrFull", err)
		}
		if got := mustStats(t, s).Dropped; got != wantDropped {
			t.Fatalf("Dropped = %d, want %d", got, wantDropped)
		}
	}
	f(recs("3"), 1)
	f(recs("4", "5"), 3) // all or nothing: both are dropped
	f(recs("6"), 4)
	if got := mustStats(t, s).PendingBytes; got != 3*one {
		t.Fatalf("PendingBytes = %d, want %d (refused records write nothing)", got, 3*one)
	}

	// A segment a failed drain left behind still counts against the cap,
	// although the active segment is empty.
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return errCollectorDown }); !errors.Is(err, errCollectorDown) {
		t.Fatalf("Drain error = %v", err)
	}
	f(recs("7"), 5)

	// Once delivered, there is room again; the drops stay counted.
	if got, want := flat(drainIDs(t, s, 0)), []string{"0", "1", "2"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	mustAppend(t, s, rec("8"))
	if got, want := mustStats(t, s), (Stats{PendingBytes: one, Segments: 1, Dropped: 5}); got != want {
		t.Fatalf("Stats = %+v, want %+v", got, want)
	}

	// The counter is durable: another Spool (another process) sees it.
	s2, err := Open(s.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustStats(t, s2).Dropped; got != 5 {
		t.Fatalf("Dropped seen by a new Spool = %d, want 5", got)
	}
}

// TestOffer: a record the spool refuses to a caller that can still deliver
// it another way is not lost, so it is not counted; Append's refusals are.
func TestOffer(t *testing.T) {
	one := int64(len(frame(recs("0"))))
	s := mustOpen(t, Options{MaxBytes: 2 * one})
	if err := s.Offer(rec("0")); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, rec("1"))
	for range 20 {
		if err := s.Offer(rec("x")); !errors.Is(err, ErrFull) {
			t.Fatalf("Offer over the cap = %v, want ErrFull", err)
		}
	}
	if err := s.Offer([]byte("a\nb")); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("Offer of an invalid record = %v", err)
	}
	if got, want := mustStats(t, s), (Stats{PendingBytes: 2 * one, Segments: 1}); got != want {
		t.Fatalf("after refused offers: Stats = %+v, want %+v", got, want)
	}
	if err := s.Append(rec("2")); !errors.Is(err, ErrFull) {
		t.Fatalf("Append over the cap = %v, want ErrFull", err)
	}
	if got := mustStats(t, s).Dropped; got != 1 {
		t.Fatalf("Dropped = %d after one refused Append, want 1", got)
	}
}

// TestAcknowledge: losses stay counted, and once acknowledged they are no
// longer unacknowledged until the next one.
func TestAcknowledge(t *testing.T) {
	s := mustOpen(t, Options{MaxBytes: 1})
	if got := mustStats(t, s).Unacknowledged(); got != 0 {
		t.Fatalf("Unacknowledged of a new spool = %d", got)
	}
	for range 3 {
		s.Append(rec("x"))
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), corruptName), []byte(".."), 0o600); err != nil {
		t.Fatal(err)
	}
	st := mustStats(t, s)
	if st.Dropped != 3 || st.Corrupt != 2 || st.Unacknowledged() != 5 {
		t.Fatalf("Stats = %+v, unacknowledged %d; want 3 dropped, 2 corrupt, 5 unacknowledged", st, st.Unacknowledged())
	}
	if st, err := s.Acknowledge(); err != nil || st.Acknowledged != 5 {
		t.Fatalf("Acknowledge = %+v, %v", st, err)
	}
	// Seen by another Spool (another process), twice (idempotent).
	s2, err := Open(s.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		st = mustStats(t, s2)
		if st.Dropped != 3 || st.Corrupt != 2 || st.Acknowledged != 5 || st.Unacknowledged() != 0 {
			t.Fatalf("after Acknowledge: Stats = %+v, unacknowledged %d", st, st.Unacknowledged())
		}
	}
	s.Append(rec("y"))
	if got := mustStats(t, s).Unacknowledged(); got != 1 {
		t.Fatalf("Unacknowledged after a new drop = %d, want 1", got)
	}
}

func TestUnlimited(t *testing.T) {
	s := mustOpen(t, Options{MaxBytes: -1})
	big := []byte(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	for range 3 {
		mustAppend(t, s, big)
	}
	if got := mustStats(t, s); got.Dropped != 0 || got.PendingBytes != 3*int64(len(big)+2) {
		t.Fatalf("Stats = %+v", got)
	}
	// Lines longer than the read buffer come back whole.
	n, err := s.Drain(context.Background(), 0, func(records [][]byte) error {
		for _, r := range records {
			if !bytes.Equal(r, big) {
				t.Fatalf("delivered a record of %d bytes, want the %d appended", len(r), len(big))
			}
		}
		return nil
	})
	if n != 3 || err != nil {
		t.Fatalf("Drain = %d, %v; want 3, nil", n, err)
	}
}

func TestReadSegmentOverlongLines(t *testing.T) {
	long := bytes.Repeat([]byte("x"), MaxRecordBytes+1)
	f := func(data []byte, want []string, wantCorrupt int64) {
		t.Helper()
		var got []string
		corrupt, err := readSegment(bytes.NewReader(data), func(rec []byte) error {
			got = append(got, string(rec))
			return nil
		})
		if err != nil || corrupt != wantCorrupt || !slices.Equal(got, want) {
			t.Fatalf("readSegment = %q, %d corrupt, %v; want %q, %d corrupt", got, corrupt, err, want, wantCorrupt)
		}
	}
	f(slices.Concat([]byte("1\n"), long, []byte("\n2\n")), []string{"1", "2"}, 1)
	f(slices.Concat([]byte("1\n"), long), []string{"1"}, 1)
	f(slices.Concat([]byte(`"`), long[:MaxRecordBytes-2], []byte("\"\n")), []string{`"` + string(long[:MaxRecordBytes-2]) + `"`}, 0)
}

func TestInvalidRecords(t *testing.T) {
	s := mustOpen(t, Options{})
	dropped := int64(0)
	f := func(records ...[]byte) {
		t.Helper()
		err := s.Append(records...)
		if !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("Append(%q) = %v, want ErrInvalidRecord", records, err)
		}
		dropped += int64(len(records))
		if got := mustStats(t, s); got.Dropped != dropped || got.PendingBytes != 0 {
			t.Fatalf("after Append(%q): Stats = %+v, want Dropped %d and nothing written", records, got, dropped)
		}
	}
	f([]byte{})
	f([]byte("{\"a\":\n1}"))
	f(rec("ok"), []byte("{\"a\":1}\n")) // one bad record refuses the whole Append
	f(make([]byte, MaxRecordBytes+1))
}

// TestNotJSONIsCorrupt: Append does not parse records, but a record that is
// not JSON is still accounted for, as corrupt.
func TestNotJSONIsCorrupt(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"), []byte(`{"a":`), []byte("not json"), rec("b"))
	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if got := mustStats(t, s); got.Corrupt != 2 || got.Dropped != 0 {
		t.Fatalf("Stats = %+v, want 2 corrupt", got)
	}
}

func TestUnwritten(t *testing.T) {
	buf := frame(recs("a", "b", "c"))
	one := len(rec("a")) + 1
	f := func(n, want int) {
		t.Helper()
		if got := unwritten(buf, n); got != want {
			t.Fatalf("unwritten(%d of %d) = %d, want %d", n, len(buf), got, want)
		}
	}
	f(0, 3)
	f(1, 3)
	f(1+one-1, 3) // a's '\n' not written
	f(1+one, 2)
	f(1+2*one+3, 1)
	f(len(buf)-1, 1)
	f(len(buf), 0)
}

// TestDrainWaitsForWriter holds a writer's validated shared lock across the
// drainer's claim: the drainer must wait for the writer's bytes, not delete
// the segment under it.
func TestDrainWaitsForWriter(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	fd, _, err := s.openCurrent() // validated, shared lock held
	if err != nil {
		t.Fatal(err)
	}

	type result struct {
		ids []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var ids []string
		_, err := s.Drain(context.Background(), 0, func(records [][]byte) error {
			for _, r := range records {
				var v struct{ ID string }
				json.Unmarshal(r, &v)
				ids = append(ids, v.ID)
			}
			return nil
		})
		done <- result{ids, err}
	}()
	waitForClaim(t, s)
	// The drainer renamed the segment; this writer validated before, so its
	// write still lands in the claimed segment and must be delivered.
	if _, err := writeOnce(fd, frame(recs("b"))); err != nil {
		t.Fatal(err)
	}
	closeFD(fd)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := []string{"a", "b"}; !slices.Equal(r.ids, want) {
		t.Fatalf("delivered %q, want %q", r.ids, want)
	}
}

// TestDrainCancelWhileWriterHoldsLock: a writer stopped with its lock held
// cannot hang a drain; the claimed segment is delivered by a later drain.
func TestDrainCancelWhileWriterHoldsLock(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	fd, _, err := s.openCurrent()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Drain(ctx, 0, func([][]byte) error { return nil })
		done <- err
	}()
	waitForClaim(t, s)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain = %v, want context.Canceled", err)
	}
	// New writers are not blocked by the stuck one.
	mustAppend(t, s, rec("c"))
	if _, err := writeOnce(fd, frame(recs("b"))); err != nil {
		t.Fatal(err)
	}
	closeFD(fd)
	if got, want := flat(drainIDs(t, s, 0)), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

// waitForClaim waits until a drainer has renamed the active segment.
func waitForClaim(t *testing.T, s *Spool) {
	t.Helper()
	for {
		names, err := s.segments()
		if err != nil {
			t.Fatal(err)
		}
		if len(names) > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLeftoverLockedIsSkipped: a segment another drainer holds is not
// delivered twice at once; the drain moves on to the active segment.
func TestLeftoverLockedIsSkipped(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return errCollectorDown }); !errors.Is(err, errCollectorDown) {
		t.Fatal(err)
	}
	names, err := s.segments()
	if err != nil || len(names) != 1 {
		t.Fatalf("segments = %q, %v; want one leftover", names, err)
	}
	other, err := os.Open(filepath.Join(s.Dir(), names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, rec("b"))
	if got, want := flat(drainIDs(t, s, 0)), []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q while the leftover was locked, want %q", got, want)
	}
	other.Close()
	if got, want := flat(drainIDs(t, s, 0)), []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q after the lock was released, want %q", got, want)
	}
}

func TestDirectoryRemovedAfterOpen(t *testing.T) {
	s := mustOpen(t, Options{})
	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, rec("a"))
	if got, want := flat(drainIDs(t, s, 0)), []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "spool")
	if _, err := Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Fatalf("spool directory mode %v, want no access for group and others", perm)
	}
}

func TestBacklogTracksClaimedSegments(t *testing.T) {
	s := mustOpen(t, Options{})
	if got := s.backlogBytes(); got != 0 {
		t.Fatalf("backlog of a new spool = %d, want 0", got)
	}
	mustAppend(t, s, recs("a", "b")...)
	size := int64(len(frame(recs("a", "b"))))
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return errCollectorDown }); !errors.Is(err, errCollectorDown) {
		t.Fatal(err)
	}
	if got := s.backlogBytes(); got != size {
		t.Fatalf("backlog after a failed drain = %d, want %d", got, size)
	}
	drainIDs(t, s, 0)
	if got := s.backlogBytes(); got != 0 {
		t.Fatalf("backlog after delivery = %d, want 0", got)
	}
}

// TestWriterRetriesOnClaimedSegment claims the active segment between a
// writer's open and its lock: the writer must notice and append to the new
// active segment, not to the claimed one (deleted after delivery, or owned by
// a drainer).
func TestWriterRetriesOnClaimedSegment(t *testing.T) {
	defer func() { testHookOpened = nil }()

	// The claimed segment is delivered and deleted before the writer locks:
	// writing to it would lose the record.
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	var first []string
	testHookOpened = func() {
		testHookOpened = nil
		first = flat(drainIDs(t, s, 0))
	}
	mustAppend(t, s, rec("b"))
	if want := []string{"a"}; !slices.Equal(first, want) {
		t.Fatalf("drain between open and lock delivered %q, want %q", first, want)
	}
	if got, want := flat(drainIDs(t, s, 0)), []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}

	// The claimed segment is still being delivered (exclusively locked) when
	// the writer locks: the writer must neither block nor write to it.
	s = mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	inDeliver, release := make(chan struct{}), make(chan struct{})
	done := make(chan []string, 1)
	testHookOpened = func() {
		testHookOpened = nil
		go func() {
			var ids []string
			s.Drain(context.Background(), 0, func(records [][]byte) error {
				for _, r := range records {
					ids = append(ids, idOf(t, r))
				}
				close(inDeliver)
				<-release
				return nil
			})
			done <- ids
		}()
		<-inDeliver
	}
	mustAppend(t, s, rec("b")) // would hang if it waited for the drainer's lock
	close(release)
	if got, want := <-done, []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("concurrent drain delivered %q, want %q", got, want)
	}
	if got, want := flat(drainIDs(t, s, 0)), []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

// TestDrainReadiesTheNextSegment: a drain that claims the active segment
// leaves an empty one in its place, which the next Append writes to rather
// than creating a file on the writer's time.
func TestDrainReadiesTheNextSegment(t *testing.T) {
	s := mustOpen(t, Options{})
	if err := s.Append([]byte(`{"id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Drain(context.Background(), 0, func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.current)
	if err != nil || before.Size() != 0 {
		t.Fatalf("after the drain, %s: %v, %v; want an empty file", s.current, before, err)
	}
	if st := mustStats(t, s); st.Segments != 0 || st.PendingBytes != 0 {
		t.Errorf("Stats counts the empty active segment: %+v", st)
	}
	if err := s.Append([]byte(`{"id":"b"}`)); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(s.current)
	if err != nil || !os.SameFile(before, after) || after.Size() == 0 {
		t.Errorf("Append did not write to the readied segment: %v", err)
	}
}
