package spool

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// follower runs Follow on s until the test ends, delivering through fail
// (nil: always accept) and collecting what was accepted and the backoffs
// Passed reported.
type follower struct {
	mu        sync.Mutex
	ids       []string
	retries   []time.Duration
	cancel    context.CancelFunc
	done      chan error
	failFirst int // deliveries to refuse before accepting
}

func follow(t *testing.T, s *Spool, o FollowOptions, failFirst int) *follower {
	f := &follower{done: make(chan error, 1), failFirst: failFirst}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	o.Passed = func(n int, err error, retryIn time.Duration) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil {
			f.retries = append(f.retries, retryIn)
		}
	}
	go func() {
		f.done <- s.Follow(ctx, o, func(records [][]byte) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.failFirst > 0 {
				f.failFirst--
				return errors.New("the receiver is down")
			}
			for _, r := range records {
				f.ids = append(f.ids, idOf(t, r))
			}
			return nil
		})
	}()
	t.Cleanup(func() { f.stop(t) })
	return f
}

// waitFor waits until the ids delivered are want.
func (f *follower) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		got := slices.Clone(f.ids)
		f.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %q, want %q", got, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (f *follower) stop(t *testing.T) {
	if f.cancel == nil {
		return
	}
	f.cancel()
	f.cancel = nil
	if err := <-f.done; err != nil {
		t.Errorf("Follow: %v", err)
	}
}

// TestFollowAttached: the consumer's loop follows the active segment in
// place, and when it stops it deletes the segment it delivered all of, so
// that the next consumer does not deliver it again.
func TestFollowAttached(t *testing.T) {
	s := attached(t)
	mustAppend(t, s, rec("a"))
	ino := inode(t, s.current)
	f := follow(t, s, FollowOptions{Interval: 10 * time.Millisecond, Coalesce: time.Millisecond}, 0)
	f.waitFor(t, "a")
	mustAppend(t, s, rec("b"), rec("c"))
	f.waitFor(t, "a", "b", "c")
	if inode(t, s.current) != ino || len(segmentsOf(t, s)) != 0 {
		t.Errorf("the consumer claimed the active segment: inode %d → %d, segments %q", ino, inode(t, s.current), segmentsOf(t, s))
	}
	f.stop(t)
	if st := mustStats(t, s); st.PendingBytes != 0 || st.Segments != 0 {
		t.Errorf("Stats after the consumer stopped = %+v, want nothing pending", st)
	}
	if got := tailIDs(t, s.Tail(), 0); len(got) != 0 {
		t.Errorf("the next consumer delivered %q again", got)
	}
}

// TestFollowNotAttached: without the consumer's lock, a pass claims what is
// pending as any drainer does.
func TestFollowNotAttached(t *testing.T) {
	s := mustOpen(t, Options{})
	mustAppend(t, s, rec("a"))
	ino := inode(t, s.current)
	f := follow(t, s, FollowOptions{Interval: 10 * time.Millisecond, Coalesce: time.Millisecond}, 0)
	f.waitFor(t, "a")
	f.stop(t)
	if inode(t, s.current) == ino {
		t.Error("the active segment was not claimed")
	}
	if st := mustStats(t, s); st.PendingBytes != 0 || st.Segments != 0 {
		t.Errorf("Stats after the drain = %+v, want nothing pending", st)
	}
}

// TestFollowBackoff: after failed passes the next come MinBackoff, then twice
// as long each time up to MaxBackoff, and what failed is delivered once the
// receiver takes it; without a backoff a failure is reported with none.
func TestFollowBackoff(t *testing.T) {
	s := attached(t)
	mustAppend(t, s, rec("a"))
	f := follow(t, s, FollowOptions{Interval: time.Hour, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}, 5)
	f.waitFor(t, "a")
	f.stop(t)
	want := []time.Duration{1, 2, 4, 4, 4}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(f.retries, want) {
		t.Errorf("backoffs %v, want %v", f.retries, want)
	}

	s = attached(t)
	mustAppend(t, s, rec("b"))
	f = follow(t, s, FollowOptions{Interval: time.Millisecond}, 2)
	f.waitFor(t, "b")
	f.stop(t)
	if !slices.Equal(f.retries, []time.Duration{0, 0}) {
		t.Errorf("backoffs without one %v, want [0 0]", f.retries)
	}
}

// TestFollowFlushAndFinal: a flush cuts a long coalescing wait short, its
// channel closed once the records appended before it are delivered; when
// ctx ends, a Final pass delivers what was appended meanwhile, so that the
// next consumer has nothing left.
func TestFollowFlushAndFinal(t *testing.T) {
	s := attached(t)
	flush := make(chan chan struct{})
	mustAppend(t, s, rec("a"))
	f := follow(t, s, FollowOptions{Interval: time.Hour, Coalesce: time.Hour, Flush: flush, Final: 10 * time.Second}, 0)
	f.waitFor(t, "a") // the first pass
	mustAppend(t, s, rec("b"))
	done := make(chan struct{})
	select {
	case flush <- done:
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not take the flush")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the flush was not answered")
	}
	f.mu.Lock()
	got := slices.Clone(f.ids)
	f.mu.Unlock()
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("delivered %q when the flush was answered, want [a b]", got)
	}

	mustAppend(t, s, rec("c")) // within the hour's coalescing wait
	f.stop(t)
	if !slices.Equal(f.ids, []string{"a", "b", "c"}) {
		t.Errorf("delivered %q by the stop, want [a b c]", f.ids)
	}
	if st := mustStats(t, s); st.PendingBytes != 0 || st.Segments != 0 {
		t.Errorf("Stats after the consumer stopped = %+v, want nothing pending", st)
	}
}
