package collector

import (
	"context"
	"slices"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// A collector with a store of its own never makes a commit wait for the
// model. The events committed while the model's backlog (the events held in
// memory, each with its decoded payload) is at modelMaxBacklog are left in
// the store: mark notes only their seqs, as ranges (spill), and counts them
// as pending for the readers of their sessions; the rounds read them back
// from the log in seq order as the backlog has room (readSpill), decoding
// them again. A burst of any size then goes at the ingest's rate, and the
// memory the model holds stays bounded: the backlog, and a few ranges.
//
// Order: while any seq is noted, every event marked is noted too, even
// with room in the backlog: the spilled events are older than anything
// marked after the spill began, and queued in memory a later event of a
// session would be applied before its spilled predecessors (a rebuild of
// its group, and a derived_seq past an event not applied). The seqs are
// read back lowest first, so a session's model never reflects an event
// past one of its own still spilled.
//
// Concurrency: mark (the writer's goroutine) and readSpill (the run
// goroutine) meet under m.mu. An event committed and not marked yet when
// readSpill reads the log is not in the ranges: readSpill skips it, and
// mark then either notes it (the next read takes it: reads start at the
// lowest seq noted, not after the last read) or, once the ranges are
// empty, queues it in memory. readSpill takes only the events whose seq it
// finds in the ranges, and drops them from the ranges in the same critical
// section, so each is applied once.

// seqRange is the seqs lo..hi, all committed and noted for readSpill;
// at is when lo was marked (the lag of the range's events counts from it:
// an upper bound for the later ones).
type seqRange struct {
	lo, hi int64
	at     time.Time
}

// seqRanges is a set of seqs kept as ranges in ascending order. The
// writer commits in seq order, and mark notes every seq committed while
// spilling (those of events without a session too), so a burst's seqs
// extend the last range: the set costs a range per burst, not an entry
// per event, whatever the events.
type seqRanges struct {
	r []seqRange
	n int64 // seqs in the set
}

// add puts seq in the set, noted at at.
func (s *seqRanges) add(seq int64, at time.Time) {
	s.n++
	if n := len(s.r); n > 0 && s.r[n-1].hi+1 == seq {
		s.r[n-1].hi = seq
		return
	}
	if n := len(s.r); n == 0 || s.r[n-1].hi < seq {
		s.r = append(s.r, seqRange{lo: seq, hi: seq, at: at})
		return
	}
	// Out of order (not from the one writer): in its place, merged with
	// its neighbours when it touches them.
	i, _ := slices.BinarySearchFunc(s.r, seq, cmpRange)
	if i < len(s.r) && s.r[i].lo <= seq {
		s.n-- // in the set already
		return
	}
	s.r = slices.Insert(s.r, i, seqRange{lo: seq, hi: seq, at: at})
	if i+1 < len(s.r) && s.r[i+1].lo == seq+1 {
		s.r[i].hi, s.r[i].at = s.r[i+1].hi, minTime(at, s.r[i+1].at)
		s.r = slices.Delete(s.r, i+1, i+2)
	}
	if i > 0 && s.r[i-1].hi+1 == seq {
		s.r[i-1].hi, s.r[i-1].at = s.r[i].hi, minTime(s.r[i-1].at, s.r[i].at)
		s.r = slices.Delete(s.r, i, i+1)
	}
}

// cmpRange orders a range against a seq: 0 when it holds it.
func cmpRange(r seqRange, seq int64) int {
	switch {
	case r.hi < seq:
		return -1
	case r.lo > seq:
		return 1
	}
	return 0
}

// has reports whether seq is in the set, and when it was noted.
func (s *seqRanges) has(seq int64) (time.Time, bool) {
	i, found := slices.BinarySearchFunc(s.r, seq, cmpRange)
	if !found {
		return time.Time{}, false
	}
	return s.r[i].at, true
}

// dropTo removes every seq up to seq and returns how many it removed.
func (s *seqRanges) dropTo(seq int64) int64 {
	var n int64
	i := 0
	for ; i < len(s.r) && s.r[i].hi <= seq; i++ {
		n += s.r[i].hi - s.r[i].lo + 1
	}
	s.r = slices.Delete(s.r, 0, i)
	if len(s.r) > 0 && s.r[0].lo <= seq {
		n += seq - s.r[0].lo + 1
		s.r[0].lo = seq + 1
	}
	s.n -= n
	if len(s.r) == 0 {
		s.r = nil // a burst's room goes with it
	}
	return n
}

// first returns the lowest range, false when the set is empty.
func (s *seqRanges) first() (seqRange, bool) {
	if len(s.r) == 0 {
		return seqRange{}, false
	}
	return s.r[0], true
}

// spilling reports whether events wait in the log for readSpill. The
// caller holds m.mu.
func (m *modeler) spilling() bool { return m.spill.n > 0 }

// readSpill reads back from the log the spilled events the backlog has
// room for, lowest seq first, decoded, and returns them; it reports
// whether spilled events remain. They are counted in pending (by mark) and
// now in the backlog. On an error reading the log it returns what it read
// before: the rest stays noted for the next round.
func (m *modeler) readSpill(ctx context.Context) ([]pendingEvent, bool, error) {
	var out []pendingEvent
	for {
		m.mu.Lock()
		first, ok := m.spill.first()
		room, left := m.maxBacklog-m.backlog, m.spill.n
		// Every seq marked up to head was committed before the read
		// below began: one the read does not return was deleted since
		// (retention), not committed later.
		head := m.head
		m.mu.Unlock()
		if !ok {
			return out, false, nil
		}
		if room <= 0 {
			return out, true, nil
		}
		if out == nil {
			out = make([]pendingEvent, 0, min(int64(room), left)) // the round's, sized once
		}
		limit := int(min(int64(min(store.MaxLimit, room)), first.hi-first.lo+1))
		page, err := m.st.Events(ctx, store.EventFilter{Cursor: store.EventCursor(first.lo - 1), Limit: limit})
		if err != nil {
			return out, true, err
		}
		// What the read covers: up to its last event, or, when it came
		// short of its limit, everything committed before it began.
		covered := head
		if n := len(page.Events); n == limit {
			covered = page.Events[n-1].Seq
		} else if n > 0 {
			covered = max(covered, page.Events[n-1].Seq)
		}
		var taken []store.Event
		matched := 0
		m.mu.Lock()
		for _, e := range page.Events {
			if at, ok := m.spill.has(e.Seq); ok {
				matched++
				if e.SessionID == "" {
					continue // noted to keep the range whole (mark)
				}
				taken = append(taken, e)
				out = append(out, pendingEvent{arrived: at})
			}
		}
		m.backlog += len(taken)
		if gone := m.spill.dropTo(covered) - int64(matched); gone > 0 {
			// Deleted before they were read (retention): their sessions'
			// pending counts are recounted once nothing is pending but
			// the loads (recounted, here or as the rounds settle).
			m.recount = true
			m.recounted()
			m.log.Warn("events left for the model were deleted before it read them", "events", gone)
		}
		m.mu.Unlock()
		m.fromLog.Add(len(taken))
		// Decoded outside the lock: the writer marks meanwhile.
		base := len(out) - len(taken)
		for i := range taken {
			if err := store.Redecode(&taken[i]); err != nil {
				// Applied as a broken envelope is (envelope); its group
				// key unknown, pendKeys is recounted.
				m.mu.Lock()
				m.recount = true
				m.mu.Unlock()
			}
			out[base+i].ev = taken[i]
		}
	}
}
