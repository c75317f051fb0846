package collector

import (
	"context"
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
//     of the store's lease (Lead): it reads every event from the log as it
//     is committed (readTail), whichever collector committed it, and writes
//     the model; the others serve what it wrote. When the holder ends
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
	m.mu.Unlock()
	m.poke()
}

// lead waits for the model lease, computes the model while it holds it,
// and waits again when it loses it, until ctx ends.
func (m *modeler) lead(ctx context.Context) {
	for {
		lost, err := m.shared.Lead(ctx)
		if err != nil {
			return // ctx ended
		}
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-lost:
				cancel()
			case <-lctx.Done():
			}
		}()
		if m.startLeading(lctx) {
			m.log.Info("computing the session model for every collector on the database")
			m.rounds(lctx)
		}
		cancel()
		<-lost
		m.stopLeading()
		if ctx.Err() != nil {
			return
		}
		m.log.Warn("lost the session model's lease; another collector takes it over")
	}
}

// startLeading starts from the log's end and the sessions whose model is
// stale: what the previous holder had not applied. It reports false when
// ctx ended first.
func (m *modeler) startLeading(ctx context.Context) bool {
	for {
		seq, err := m.st.LastSeq(ctx)
		if err == nil {
			m.mu.Lock()
			m.tail, m.leading = seq, true
			m.version = max(m.version, time.Now().UnixMicro())
			m.mu.Unlock()
			break
		}
		m.log.Error("cannot read the log's end", "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
	m.markStale(ctx)
	return ctx.Err() == nil
}

// stopLeading forgets what the holder kept: another collector may write
// the model now, so the groups in memory may be behind the store.
func (m *modeler) stopLeading() {
	m.mu.Lock()
	m.leading = false
	m.queue, m.loads = nil, nil
	clear(m.pending)
	clear(m.pendKeys)
	m.backlog = 0
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	m.held = nil
	m.groups = newGroupCache(m.cacheBudget)
	m.noteCache()
	clear(m.keys)
}

// readTail queues the events committed after the last one read, by every
// collector.
func (m *modeler) readTail(ctx context.Context) {
	for {
		m.mu.Lock()
		tail := m.tail
		m.mu.Unlock()
		page, err := m.st.Events(ctx, store.EventFilter{Cursor: store.EventCursor(tail), Limit: store.MaxLimit})
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("cannot read the events to model", "after", tail, "err", err)
				m.errors.Inc()
			}
			return
		}
		now := time.Now()
		m.mu.Lock()
		for _, e := range page.Events {
			m.tail = e.Seq
			if e.SessionID == "" {
				continue
			}
			m.queue = append(m.queue, pendingEvent{ev: e, arrived: now})
			m.pending[e.SessionID]++
			m.backlog++
		}
		full := m.backlog >= m.maxBacklog
		m.mu.Unlock()
		if page.Next == "" || full {
			return // at the bound: the next rounds read the rest
		}
	}
}
