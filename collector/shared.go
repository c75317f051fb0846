package collector

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// Several collectors on one database (a store.Shared, PostgreSQL):
//
//   - Ingest needs nothing more: the store keeps one event per envelope id
//     whichever collector commits it, and commits in seq order.
//   - The live stream of every collector is woken by the store's
//     notifications (Watch) as well as by its own commits; a stream reads
//     what is new from its own cursor, so it shows the events of every
//     collector and a notification lost in a reconnect only delays it.
//   - The session model is computed by one collector at a time, the holder
//     of the store's lease (Lead): it applies its own commits as they
//     commit, decoded (mark), and reads the others' from the log by seq as
//     they are announced (readTail), a bounded read per round; it writes
//     the model, the others serve what it wrote. When the holder ends
//     (SIGKILL included), another takes the lease, starts from the
//     sessions whose model is stale and the log's end, and goes on.
//
// A model read on a collector that does not hold the lease does not wait
// for events not yet applied: it answers what is stored, with its
// derived_seq.

// watch wakes the streams and the modeler on every notification of the
// store, until ctx ends.
func (s *Server) watch(ctx context.Context, sh store.Shared) {
	sh.Watch(ctx, func(modelSeq int64) {
		s.modeler.follow(modelSeq)
		s.hub.notify()
	})
}

// follow records a model write of the lease holder (modelSeq, 0 for
// events) and wakes the modeler to read the log.
func (m *modeler) follow(modelSeq int64) {
	m.mu.Lock()
	m.version = max(m.version, modelSeq)
	m.storedVersion = max(m.storedVersion, modelSeq) // announced once written
	m.mu.Unlock()
	m.poke()
}

// lead follows the log from its end as a standby, and computes and stores
// the model while this collector holds the lease, until ctx ends.
//
// A standby applies every event to its groups as the holder does, loading
// a group when it first meets it, and stores nothing. So when the lease
// comes to it (the holder ended, SIGKILL included) its groups are current:
// it stores, from memory, of the sessions whose stored model is stale, the
// rows the previous holder had not stored as its model has them (the
// session row and the rows that differ: onlyUnstored), and goes on with the events as
// they come; only a session whose group it does not hold is loaded from
// the store.
func (m *modeler) lead(ctx context.Context) {
	for !m.tailRead {
		err := m.readEnd(ctx)
		if err == nil {
			m.down.answered(m.log)
			break
		}
		m.down.fail(m.log, fmt.Errorf("cannot read the log's end: %w", err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	go m.waitLease(ctx)
	m.rounds(ctx)
}

// readEnd reads the log's end: this collector follows the log from there
// (tailRead). Its own commits up to it were committed before the start,
// read by no one.
func (m *modeler) readEnd(ctx context.Context) error {
	seq, err := m.st.LastSeq(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.tail = seq
	m.backlog = max(m.backlog-m.mine.dropTo(seq), 0)
	m.tailRead = true
	m.mu.Unlock()
	return nil
}

// waitLease waits for the lease and tells the run goroutine when it took
// it and when it lost it, until ctx ends.
func (m *modeler) waitLease(ctx context.Context) {
	for {
		lost, err := m.shared.Lead(ctx, func() {
			m.log.Info("standby: another collector on the database computes the session model; this one follows the events in memory and takes over when that one stops")
		})
		if err != nil {
			return // ctx ended
		}
		lctx, cancel := context.WithCancel(ctx)
		select {
		case m.leases <- lctx:
		case <-ctx.Done():
			cancel()
			return
		}
		select {
		case <-lost:
		case <-ctx.Done():
		}
		cancel()
		select {
		case m.leases <- nil:
		case <-ctx.Done():
			return
		}
		// The lease ends only with its connection (store.Shared.Lead): the
		// database stopped answering this collector, or went down for all
		// of them, so no other collector need be there to take it.
		m.log.Warn("lost the session model's lease: its connection to the database ended; the first collector to reach the database takes it over, this one included")
	}
}

// takeOver makes this collector the holder of lease: it stores the stale
// sessions, from its groups where it holds them (the rows the store may
// lack: groupState.restate), loading the others.
// It reports false when ctx ended first.
func (m *modeler) takeOver(ctx, lease context.Context) bool {
	m.mu.Lock()
	m.lease = lease
	m.version = max(m.version, time.Now().UnixMicro())
	m.mu.Unlock()
	m.markStale(ctx)
	m.mu.Lock()
	var held []string
	for _, id := range m.loads {
		// Only a session the group holds whole: of one it holds some
		// events of, the others are read from the store.
		if gs := m.groups.groups[m.keys[id]]; gs != nil && gs.whole[id] && gs.seq[id] > 0 {
			m.restate[id] = true
			held = append(held, id)
		}
	}
	loads := len(m.loads)
	m.mu.Unlock()
	// What the store's model of each reflects: of their rows, those that
	// changed after it are written (groupState.restate).
	stored, err := m.st.SessionModels(ctx, held)
	if err != nil {
		// As if none of them were stored: more is written, nothing
		// lacks.
		m.down.fail(m.log, fmt.Errorf("cannot read the stale sessions' models: %w", err))
	}
	for _, id := range held {
		key := m.keys[id]
		if m.restateFrom[key] == nil {
			m.restateFrom[key] = map[string]int64{}
		}
		m.restateFrom[key][id] = stored[id].Seq
	}
	m.log.Info("computing the session model for every collector on the database", "stale_sessions", loads, "restated_from_memory", len(held))
	return ctx.Err() == nil
}

// standDown makes this collector a standby again when it lost the lease:
// its groups stay (they hold what the log says), what readers waited for
// and what it had to store go, and so do the sessions it swept for stalls
// and counted active.
func (m *modeler) standDown() {
	m.mu.Lock()
	m.lease = nil
	m.loads = nil
	m.rederiving, m.rederiveStart = 0, time.Time{}
	clear(m.pending)
	clear(m.pendKeys)
	m.wakeReaders()
	m.mu.Unlock()
	clear(m.restate)
	clear(m.restateFrom)
	// The new holder notes what the sessions wait on, and sweeps them,
	// and counts them in its active gauges.
	m.stalls.forget()
	if m.perAgent != nil {
		m.perAgent.forgetActive()
	}
}

// readTail queues the events committed after the last one read, by every
// collector, in seq order, at most tailBudget of them (a standby, which
// applies in fewer rounds, standbyBudget): a round applies what
// it read before the next reads more, so that a log growing faster than one
// read empties it still moves the model on. In seq order, so that a
// session's model never claims (derived_seq) an event another collector
// committed before one applied. The holder's own commits are queued as
// mark kept them, decoded, and counted from their commit; the others' from
// their read. It reports whether more was left to read.
func (m *modeler) readTail(ctx context.Context) bool {
	read, budget := 0, m.tailBudget
	if m.standby() {
		budget *= standbyBudget / tailBudget // fewer, larger rounds
	}
	for {
		m.mu.Lock()
		tail := m.tail
		m.mu.Unlock()
		limit := min(store.MaxLimit, budget-read)
		if limit <= 0 {
			return true
		}
		page, err := m.st.Events(ctx, store.EventFilter{Cursor: store.EventCursor(tail), Limit: limit})
		if err != nil {
			if ctx.Err() == nil {
				m.down.fail(m.log, fmt.Errorf("cannot read the events to model after seq %d: %w", tail, err))
				m.errors.Inc()
			}
			return false
		}
		m.down.answered(m.log)
		read += len(page.Events)
		now := time.Now()
		m.mu.Lock()
		for _, e := range page.Events {
			m.tail = e.Seq
			if p, ok := m.mine.take(e.Seq); ok {
				m.queue = append(m.queue, p) // counted by mark
				continue
			}
			if e.SessionID == "" {
				continue
			}
			m.fromLog.Inc()
			m.queue = append(m.queue, pendingEvent{ev: e, arrived: now})
			m.backlog++
			if m.lease != nil {
				m.pending.add(e.SessionID) // reads wait on the holder only
			}
		}
		full := m.full()
		m.mu.Unlock()
		if page.Next == "" {
			return false
		}
		if full {
			return true // at the bound: the next rounds read the rest
		}
	}
}

// ownCommits are a collector's own commits past its read of the log, as
// mark kept them, in seq order: readTail, reading the log in seq order,
// meets them at the front. A queue rather than a map by seq: a burst
// keeps thousands, each a copy of its event, which a map rehashes as it
// grows.
type ownCommits struct {
	evs  []pendingEvent // in seq order from head on
	head int
}

// put keeps p. Commits are marked in the order they committed, but for
// two goroutines inserting at once: one marked after a later one goes in
// its place.
func (o *ownCommits) put(p pendingEvent) {
	i := len(o.evs)
	for i > o.head && o.evs[i-1].ev.Seq > p.ev.Seq {
		i--
	}
	o.evs = slices.Insert(o.evs, i, p)
}

// take returns the commit of seq when it is the first kept.
func (o *ownCommits) take(seq int64) (pendingEvent, bool) {
	if o.head == len(o.evs) || o.evs[o.head].ev.Seq != seq {
		return pendingEvent{}, false
	}
	p := o.evs[o.head]
	o.evs[o.head] = pendingEvent{} // its payload goes with the round
	o.head++
	o.compact()
	return p, true
}

// dropTo forgets the commits up to seq and returns how many it forgot.
func (o *ownCommits) dropTo(seq int64) int {
	n := 0
	for o.head < len(o.evs) && o.evs[o.head].ev.Seq <= seq {
		o.evs[o.head] = pendingEvent{}
		o.head, n = o.head+1, n+1
	}
	o.compact()
	return n
}

// len is how many commits are kept.
func (o *ownCommits) len() int { return len(o.evs) - o.head }

// compact reuses the room of the commits taken: all of it once none is
// left, else by moving the rest down once the taken are the larger part.
func (o *ownCommits) compact() {
	switch {
	case o.head == len(o.evs):
		o.evs, o.head = reuse(o.evs), 0
	case o.head > 1024 && o.head > len(o.evs)/2:
		n := copy(o.evs, o.evs[o.head:])
		clear(o.evs[n:])
		o.evs, o.head = o.evs[:n], 0
	}
}
