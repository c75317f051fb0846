package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/store"
)

// IngestResult is what happened to a batch of envelopes.
type IngestResult struct {
	// Accepted is the number of envelopes stored by this batch.
	Accepted int `json:"accepted"`
	// Duplicates is the number of envelopes whose id was already stored
	// (or repeated within the batch): delivered before, not stored again.
	Duplicates int `json:"duplicates"`
}

// Ingest validates envelopes, applies the privacy rules (Config.Privacy) to
// their payloads and stores them through the server's writer, exactly like
// POST /v1/events: the batch is all or nothing, and Ingest returns once it
// is committed. An envelope without received_at, or with one more than
// MaxClockAhead ahead of the current time, gets the current time. A bad
// envelope fails the whole batch with a *BatchError. envs are modified in
// place.
//
// It is how code in the same process (the local spool drainer) stores
// events without HTTP. When ctx ends while waiting for the commit the
// events may still be stored; ingesting them again is safe, as ingest is
// idempotent by envelope id.
func (s *Server) Ingest(ctx context.Context, envs []event.Envelope) (IngestResult, error) {
	return s.ingest(ctx, envs, nil)
}

// ingest is Ingest of envelopes whose payloads' members sp holds where the
// batch's scan split them (nil: none).
func (s *Server) ingest(ctx context.Context, envs []event.Envelope, sp *splitPayloads) (IngestResult, error) {
	return s.commit(ctx, envs, admitAll(&s.pipeline, envs, sp))
}

// admitAll admits envs through pl, each payload from its members in sp
// when the scan split it, and returns the payloads' typed views, without
// their maps of members, which neither the store's fields nor the model
// read (ingest.Pipeline.AdmitSplit).
func admitAll(pl *ingest.Pipeline, envs []event.Envelope, sp *splitPayloads) []*event.Payload {
	decoded := make([]*event.Payload, len(envs))
	for i := range envs {
		ms, _ := sp.of(i)
		decoded[i] = pl.AdmitSplit(&envs[i], ms)
	}
	return decoded
}

// commit validates and stores envelopes that have been admitted; decoded,
// when not nil, holds the payloads admission decoded (nil where it could
// not), which are not read again: the store's fields and the model take
// them.
func (s *Server) commit(ctx context.Context, envs []event.Envelope, decoded []*event.Payload) (IngestResult, error) {
	if p, ok := principalOf(ctx); ok && p.User != "" {
		for i := range envs {
			envs[i].User = p.User
		}
	}
	events, err := toEvents(envs, decoded, time.Now())
	if err != nil {
		return IngestResult{}, err
	}
	owner := ""
	if p, ok := principalOf(ctx); ok {
		owner = p.User
	}
	if _, ok := s.store.(store.OwnedInserter); !ok {
		// A store that cannot check the owners as it inserts: check them
		// before (two users' first batches of one session may both pass).
		if err := s.claimSessions(ctx, events); err != nil {
			return IngestResult{}, err
		}
		owner = ""
	}
	return s.writer.submit(ctx, events, owner)
}

// toEvents validates and converts a batch; now fills a missing received_at
// and replaces one more than MaxClockAhead after it.
// decoded is as commit's.
func toEvents(envs []event.Envelope, decoded []*event.Payload, now time.Time) ([]store.Event, error) {
	events := make([]store.Event, len(envs))
	for i := range envs {
		env := envs[i]
		if env.ReceivedAt.IsZero() || env.ReceivedAt.After(now.Add(MaxClockAhead)) {
			// A time far ahead is a wrong clock's or a forged one: kept,
			// it would head the session lists and escape retention.
			env.ReceivedAt = now
		}
		var e store.Event
		var err error
		if decoded != nil && decoded[i] != nil {
			e, err = store.FromDecoded(env, decoded[i])
		} else {
			e, err = store.FromEnvelope(env)
		}
		if err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
		events[i] = e
	}
	return events, nil
}

// MaxClockAhead is how far ahead of the collector's clock an envelope's
// received_at may be: a later one is replaced by the time the collector
// takes it (toEvents).
const MaxClockAhead = time.Hour

// BatchError reports the envelope that made a batch invalid.
type BatchError struct {
	// Index is the position of the envelope in the batch.
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("envelope %d: %v", e.Index, e.Err) }

func (e *BatchError) Unwrap() error { return e.Err }

// commitReq is one batch waiting for the writer.
type commitReq struct {
	events []store.Event
	// owner is the user of the token that sent the events, "" for none:
	// they may go only into that user's sessions (store.OwnedInserter).
	owner string
	done  chan commitRes // buffered: the writer never blocks on a gone waiter
}

type commitRes struct {
	IngestResult
	err error
}

// writer owns every write to the store. Requests queue on a channel; the
// goroutine takes whatever has queued while the previous commit ran (up to
// maxEvents) and commits it in one Insert, so concurrent requests share the
// cost of a transaction without any request waiting on a timer.
type writer struct {
	store     store.Store
	maxEvents int
	metrics   *serverMetrics
	hub       *hub
	log       *slog.Logger
	// down logs failed commits once per outage of the store, not once
	// per request.
	down outage

	queue chan *commitReq
	// mu guards closing queue: submitters hold it shared while sending,
	// stop holds it exclusively to close.
	mu     sync.RWMutex
	closed bool
	exited chan struct{}
}

func newWriter(st store.Store, maxEvents int, m *serverMetrics, h *hub, log *slog.Logger) *writer {
	w := &writer{
		store:     st,
		maxEvents: maxEvents,
		metrics:   m,
		hub:       h,
		log:       log,
		down:      outage{text: &commitOutage},
		queue:     make(chan *commitReq, 256),
		exited:    make(chan struct{}),
	}
	go w.run()
	return w
}

// commitError is the error of a batch whose commit the store failed (not
// one it refused, as ErrForbidden), or whose owners it failed to read
// before (claimSessions): the writer's outage log says so once per outage
// of the store, so its callers need not log it again.
type commitError struct{ Err error }

func (e *commitError) Error() string { return e.Err.Error() }
func (e *commitError) Unwrap() error { return e.Err }

// submit queues events and waits for their commit. owner, when not "",
// is the user whose sessions alone they may write into: a batch writing
// into another user's is refused with ErrForbidden.
func (w *writer) submit(ctx context.Context, events []store.Event, owner string) (IngestResult, error) {
	if len(events) == 0 {
		return IngestResult{}, nil
	}
	req := &commitReq{events: events, owner: owner, done: make(chan commitRes, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return IngestResult{}, ErrClosed
	}
	select {
	case w.queue <- req:
	case <-ctx.Done():
		w.mu.RUnlock()
		return IngestResult{}, ctx.Err()
	}
	w.mu.RUnlock()
	select {
	case res := <-req.done:
		return res.IngestResult, res.err
	case <-ctx.Done():
		return IngestResult{}, ctx.Err()
	}
}

// stop refuses new batches, commits the queued ones and waits for the
// goroutine to exit.
func (w *writer) stop() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	<-w.exited
}

func (w *writer) run() {
	defer close(w.exited)
	var batch []*commitReq
	var events []store.Event
	for first := range w.queue {
		batch = append(batch[:0], first)
		n := len(first.events)
	gather:
		for n < w.maxEvents {
			select {
			case req, ok := <-w.queue:
				if !ok {
					break gather
				}
				batch = append(batch, req)
				n += len(req.events)
			default:
				break gather
			}
		}
		events = w.commit(batch, events[:0])
		clear(batch) // let the requests' memory go
		if cap(events) > 4*w.maxEvents {
			events = nil
		}
	}
}

// commit stores the events of batch and answers each request: in one
// Insert per owner, since the owner is checked in the inserting
// transaction. A round mixes owners only on a team server whose users
// send at once. buf is a reusable buffer, returned for the next round.
func (w *writer) commit(batch []*commitReq, buf []store.Event) []store.Event {
	same := true
	for _, req := range batch[1:] {
		same = same && req.owner == batch[0].owner
	}
	if same {
		return w.commitOwned(batch, batch[0].owner, buf)
	}
	byOwner := map[string][]*commitReq{}
	var owners []string
	for _, req := range batch {
		if _, ok := byOwner[req.owner]; !ok {
			owners = append(owners, req.owner)
		}
		byOwner[req.owner] = append(byOwner[req.owner], req)
	}
	for _, o := range owners {
		buf = w.commitOwned(byOwner[o], o, buf)
	}
	return buf
}

// commitOwned stores the events of batch, all sent by owner, in one
// Insert and answers each request. When a request writes into another
// user's session the store refuses the whole Insert: then each request is
// committed alone, so that only the offending one is refused.
func (w *writer) commitOwned(batch []*commitReq, owner string, buf []store.Event) []store.Event {
	// A lone request commits its own slice; several are copied into buf.
	events := buf
	if len(batch) == 1 {
		events = batch[0].events
	} else {
		for _, req := range batch {
			events = append(events, req.events...)
		}
	}
	start := time.Now()
	// A commit is not canceled by any one client going away: other
	// requests share it, and a half-done commit helps nobody.
	var inserted int
	var err error
	if owner != "" {
		inserted, err = w.store.(store.OwnedInserter).InsertOwned(context.Background(), owner, events)
	} else {
		inserted, err = w.store.Insert(context.Background(), events)
	}
	w.metrics.commitDuration.UpdateDuration(start)
	w.metrics.commitEvents.Update(float64(len(events)))
	if errors.Is(err, store.ErrNotOwner) {
		if len(batch) == 1 {
			batch[0].done <- commitRes{err: fmt.Errorf("%w: %v", ErrForbidden, err)}
			return buf[:0]
		}
		for _, req := range batch {
			buf = w.commitOwned([]*commitReq{req}, owner, buf)
		}
		return buf[:0]
	}
	if err != nil {
		w.down.fail(w.log, err)
		w.metrics.commitErrors.Inc()
		err = &commitError{err}
		for _, req := range batch {
			req.done <- commitRes{err: err}
		}
		return buf[:0]
	}
	w.down.answered(w.log)
	off := 0
	for _, req := range batch {
		var res commitRes
		for _, e := range events[off : off+len(req.events)] {
			if e.Seq != 0 {
				res.Accepted++
			}
		}
		res.Duplicates = len(req.events) - res.Accepted
		off += len(req.events)
		req.done <- res
	}
	w.metrics.ingested.Add(inserted)
	w.metrics.duplicates.Add(len(events) - inserted)
	if inserted > 0 {
		w.hub.notify()
	}
	if len(batch) == 1 {
		return buf[:0]
	}
	return events[:0]
}
