package collector

import (
	"context"
	"errors"
	"time"

	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/store"
)

// Retention (Config.Retain, Config.RetainBytes) deletes whole sessions
// (events, summary and model rows, and their compaction archive) in the
// background: a pass at start and
// every pruneEvery, each in
// transactions of pruneBatch sessions with a pause between them, so that
// ingest, which shares the store's writer, waits for one small batch at
// most. On a shared store only the holder of the model lease prunes.
var pruneEvery = time.Minute // a variable for the tests

const (
	pruneBatch = 100
	prunePause = 20 * time.Millisecond
	// pruneMaxBatches bounds one pass: a size cap that deletes cannot
	// shrink its figure (pages still partly used) stops here, and the
	// next pass goes on.
	pruneMaxBatches = 10000
)

// retain prunes until ctx ends.
func (s *Server) retain(ctx context.Context, r store.Retention) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for first := true; ; first = false {
		s.prunePass(ctx, r)
		if !first {
			// Not at the start: what the spool holds, drained
			// meanwhile, may name a session an archive is of.
			s.pruneArchives(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prunePass deletes the sessions older than Retain, then the least
// recently active ones while the store is above RetainBytes.
func (s *Server) prunePass(ctx context.Context, r store.Retention) {
	if _, shared := s.store.(store.Shared); shared && !s.modeler.isLeading() {
		return
	}
	if s.cfg.Retain > 0 {
		s.prune(ctx, r, "age", func() (time.Time, bool) { return time.Now().Add(-s.cfg.Retain), true })
	}
	if sz, ok := s.store.(store.Sizer); ok && s.cfg.RetainBytes > 0 {
		s.prune(ctx, r, "size", func() (time.Time, bool) {
			used, err := sz.UsedBytes(ctx)
			if err != nil {
				s.log.Error("cannot read the database size", "err", err)
				return time.Time{}, false
			}
			// Every session is a candidate, the least recently active
			// first.
			return time.Now().Add(24 * time.Hour), used > s.cfg.RetainBytes
		})
	}
}

// pruneArchives deletes the compaction archive (Config.ArchiveDir) of the
// sessions retention deleted, on every collector, leading or not: the
// archive is this machine's. What is not stored and was last written
// before the retention's age (a day, under a size cap alone) is gone: an
// archive written since may belong to a session whose events are still on
// their way.
func (s *Server) pruneArchives(ctx context.Context) {
	if s.cfg.ArchiveDir == "" || (s.cfg.Retain <= 0 && s.cfg.RetainBytes <= 0) || ctx.Err() != nil {
		return
	}
	age := s.cfg.Retain
	if age <= 0 {
		age = 24 * time.Hour
	}
	sessions, bytes, err := ingest.PruneArchives(s.cfg.ArchiveDir, time.Now().Add(-age), func(id string) (bool, error) {
		_, err := s.store.Session(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("cannot prune the compaction archive", "dir", s.cfg.ArchiveDir, "err", err)
	}
	if sessions > 0 {
		s.log.Info("pruned the compaction archive", "sessions", sessions, "bytes", bytes)
	}
}

// prune deletes batches while due says so, and logs and counts what it
// deleted.
func (s *Server) prune(ctx context.Context, r store.Retention, reason string, due func() (time.Time, bool)) {
	var sessions, events int
	for range pruneMaxBatches {
		before, ok := due()
		if !ok || ctx.Err() != nil {
			break
		}
		n, e, err := r.PruneSessions(ctx, before, pruneBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("cannot prune", "reason", reason, "err", err)
			}
			break
		}
		sessions, events = sessions+n, events+e
		s.metrics.prunedSessions.Add(n)
		s.metrics.prunedEvents.Add(e)
		if n == 0 && e == 0 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(prunePause):
		}
	}
	if sessions > 0 || events > 0 {
		s.log.Info("pruned", "reason", reason, "sessions", sessions, "events", events)
	}
}

// isLeading reports whether this collector holds the model lease of a
// shared store.
func (m *modeler) isLeading() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease != nil
}
