package collector

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/store"
)

// The continuous audit trail (Config.AuditDir). After each round of the
// modeler has stored the model's changes, the round's events and the calls
// the model reports finished for the first time go to the audit directory
// (package audit: one directory per session, hash-chained JSONL). The
// modeler only queues them: one goroutine writes, so that a slow or full
// disk holds up neither ingest nor the model. The queue is bounded in
// bytes; a round that does not fit, and lines that cannot be written, are
// counted on /metrics (hookwatch_audit_lines_lost_total) and logged, never
// retried — the store still has them, and `hookwatch export` writes them.
//
// Events the modeler applies by loading their session rather than in a
// round (committed while no collector with this directory ran: after a
// crash, or a stop whose last round ran out of time) are not in the
// continuous trail.

// auditQueueBytes bounds the envelope bytes waiting to be written, beyond
// the round being written and one more.
const auditQueueBytes = 64 << 20

// auditRound collects what one modeler round hands to the auditor.
type auditRound struct {
	outputs audit.Outputs
	// sessions are those the round's events belong to: the only ones
	// whose calls the round can have finished.
	sessions map[string]bool
	calls    []audit.ToolCall
}

func newAuditRound(ready []pendingEvent) *auditRound {
	r := &auditRound{outputs: audit.Outputs{}, sessions: map[string]bool{}}
	for i := range ready {
		r.outputs.Add(&ready[i].ev)
		r.sessions[ready[i].ev.SessionID] = true
	}
	return r
}

// call notes a call the model reported changed; a finished one of a
// session the round's events belong to goes to the trail (the Writer
// writes each call once). The calls of another session of a group the
// round loaded, which the model reports changed too, stay out with the
// events they came from (see above).
func (r *auditRound) call(c *attribution.ToolCall) {
	if r != nil && c.Finished() && r.sessions[c.SessionID] {
		r.calls = append(r.calls, audit.ToolCallOf(c, r.outputs[c.ToolUseID]))
	}
}

type auditJob struct {
	events []store.Event
	calls  []audit.ToolCall
	bytes  int
}

// auditor writes the queued rounds to the audit directory.
type auditor struct {
	w   *audit.Writer
	log *slog.Logger

	mu     sync.Mutex
	queue  []auditJob
	queued int
	closed bool
	wake   chan struct{}
	exited chan struct{}

	eventLines *metrics.Counter
	callLines  *metrics.Counter
	lostFull   *metrics.Counter
	lostWrite  *metrics.Counter
}

func newAuditor(dir string, maxFileBytes int64, log *slog.Logger, set *metrics.Set) (*auditor, error) {
	w, err := audit.NewWriter(dir, audit.WriterOptions{MaxFileBytes: maxFileBytes})
	if err != nil {
		return nil, err
	}
	a := &auditor{
		w: w, log: log,
		wake:       make(chan struct{}, 1),
		exited:     make(chan struct{}),
		eventLines: set.NewCounter(`hookwatch_audit_lines_written_total{file="events"}`),
		callLines:  set.NewCounter(`hookwatch_audit_lines_written_total{file="tool_calls"}`),
		lostFull:   set.NewCounter(`hookwatch_audit_lines_lost_total{reason="queue_full"}`),
		lostWrite:  set.NewCounter(`hookwatch_audit_lines_lost_total{reason="write_error"}`),
	}
	go a.run()
	return a, nil
}

// enqueue hands a round's events and finished calls to the writer
// goroutine without waiting. A nil auditor (no audit directory) does
// nothing.
func (a *auditor) enqueue(ready []pendingEvent, r *auditRound) {
	if a == nil || len(ready) == 0 && len(r.calls) == 0 {
		return
	}
	j := auditJob{events: make([]store.Event, len(ready)), calls: r.calls}
	for i := range ready {
		j.events[i] = ready[i].ev
		j.bytes += len(ready[i].ev.Envelope)
	}
	j.bytes += len(r.calls) * 1024
	a.mu.Lock()
	// A round larger than the bound alone is taken when nothing waits:
	// the model held it in memory already.
	if a.closed || a.queued > 0 && a.queued+j.bytes > auditQueueBytes {
		a.mu.Unlock()
		a.lostFull.Add(len(j.events) + len(j.calls))
		a.log.Warn("audit queue full: lines not written", "events", len(j.events), "tool_calls", len(j.calls))
		return
	}
	a.queue = append(a.queue, j)
	a.queued += j.bytes
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *auditor) run() {
	defer close(a.exited)
	for {
		a.mu.Lock()
		jobs, closed := a.queue, a.closed
		a.queue, a.queued = nil, 0
		a.mu.Unlock()
		for _, j := range jobs {
			a.write(j)
		}
		if closed && len(jobs) == 0 {
			return
		}
		if len(jobs) == 0 {
			<-a.wake
		}
	}
}

// write appends one round: its events session by session in the order
// applied, then its calls.
func (a *auditor) write(j auditJob) {
	n, failed, err := a.w.WriteStored(j.events)
	a.eventLines.Add(n)
	if failed > 0 {
		a.lostWrite.Add(failed)
		a.log.Warn("cannot write events to the audit trail", "lines", failed, "err", err)
	}
	n, failed, err = a.w.WriteCalls(j.calls)
	a.callLines.Add(n)
	if failed > 0 {
		a.lostWrite.Add(failed)
		a.log.Warn("cannot write tool calls to the audit trail", "lines", failed, "err", err)
	}
}

// stop writes what is queued and closes the files. Call it after the
// modeler has stopped.
func (a *auditor) stop() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	<-a.exited
	return a.w.Close()
}

// auditPruneMetrics count what pruneAudit deleted, the passes that failed
// in part, and when the last one failed in nothing: a prune that stopped
// happening shows as that time falling behind.
type auditPruneMetrics struct {
	sessions, segments, bytes, errors *metrics.Counter
	last                              atomic.Int64 // Unix seconds; 0 until a pass succeeds
}

// newAuditPruneMetrics registers the metrics of --audit-retain in set,
// before the first pass, so that /metrics has them from the start.
func newAuditPruneMetrics(set *metrics.Set) *auditPruneMetrics {
	m := &auditPruneMetrics{
		sessions: set.NewCounter(`hookwatch_audit_pruned_sessions_total`),
		segments: set.NewCounter(`hookwatch_audit_pruned_segments_total`),
		bytes:    set.NewCounter(`hookwatch_audit_pruned_bytes_total`),
		errors:   set.NewCounter(`hookwatch_audit_prune_errors_total`),
	}
	set.NewGauge(`hookwatch_audit_last_prune_timestamp_seconds`, func() float64 { return float64(m.last.Load()) })
	return m
}

// auditPruneEvery is how often Config.AuditRetain prunes the trail, after
// a first pass at start: a file ages by the day, not by the minute.
var auditPruneEvery = time.Hour

// pruneAudit deletes what of the audit trail was last written before
// Config.AuditRetain (audit.Writer.Prune) until ctx ends. Every collector
// prunes its own directory, leading a shared store or not: the trail is
// this machine's. The Writer's lock keeps a session's files from being
// written while they are pruned.
// Each pass is counted in m.
func (s *Server) pruneAudit(ctx context.Context, m *auditPruneMetrics) {
	t := time.NewTicker(auditPruneEvery)
	defer t.Stop()
	for {
		st, err := s.auditor.w.Prune(time.Now().Add(-s.cfg.AuditRetain))
		// Prune returns what it deleted with its errors.
		m.sessions.Add(st.Sessions)
		m.segments.Add(st.Segments)
		m.bytes.AddInt64(st.Bytes)
		if err == nil {
			m.last.Store(time.Now().Unix())
		} else if ctx.Err() == nil {
			m.errors.Inc()
			s.log.Error("cannot prune the audit trail", "dir", s.cfg.AuditDir, "err", err)
		}
		if st.Sessions > 0 || st.Segments > 0 {
			s.log.Info("pruned the audit trail", "dir", s.cfg.AuditDir, "sessions", st.Sessions, "segments", st.Segments, "bytes", st.Bytes)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
