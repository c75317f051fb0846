package toolhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/spool"
)

// ForwardOptions configure a Forwarder.
type ForwardOptions struct {
	// URL is the collector's base URL (http://127.0.0.1:4318); Token its
	// bearer token, if it wants one.
	URL   string
	Token string
	// SpoolDir is where envelopes the collector could not take are kept
	// (package spool, the hook's own queue) and sent again from later, and
	// where the ones it refused for what they are go, in rejected.jsonl,
	// as the hook keeps them (hook.Reject). "" keeps none: they are
	// counted as dropped.
	SpoolDir string
	// QueueSize bounds the calls waiting to be sent (default 4096). A call
	// recorded while the queue is full is dropped and counted, never waited
	// for: the agent is not slowed by its collector.
	QueueSize int
	// BatchSize is how many envelopes one POST carries at most (default
	// DefaultBatchSize).
	BatchSize int
	// Linger is how long a batch waits for more envelopes after its first
	// before it is sent, unless it fills first (default
	// spool.DefaultCoalesce, as the hooks' forwarder gathers: a request
	// costs the collector more than the few envelopes a single call
	// makes); negative sends what is queued at once. Close sends at once.
	Linger time.Duration
	// MaxBatchBytes is how large one POST's body may be (default
	// DefaultMaxBatchBytes), measured as a collector measures a body
	// against its bound (collector.Config.MaxBodyBytes), so that a
	// collector whose bound is at least this takes every batch. An
	// envelope larger than that is sent alone.
	MaxBatchBytes int
	// RetryAfter is how long, after a delivery failed, batches go straight
	// to the spool before the collector is tried again (default 5 s): a
	// collector that hangs costs one timeout, not one per batch.
	RetryAfter time.Duration
	// Privacy is applied to each call's input, output and error, as the
	// hook applies it to a payload. The zero value means
	// privacy.DefaultOptions().
	Privacy *privacy.Options
	// Client sends the batches (default: a client with a 5 s timeout).
	Client *http.Client
}

// DefaultBatchSize is the default ForwardOptions.BatchSize.
const DefaultBatchSize = 256

// DefaultMaxBatchBytes is the default ForwardOptions.MaxBatchBytes: a
// quarter of the body a collector takes by default
// (collector.DefaultMaxBodyBytes, 32 MiB).
const DefaultMaxBatchBytes = 8 << 20

// CloseTimeout bounds Close: the time it gives the collector to take the
// queued calls before it spools them.
const CloseTimeout = 10 * time.Second

// Forwarder is a Recorder that sends every call to a hookwatch collector,
// so that an agent written in Go shows up there as Claude Code's sessions
// do, with its tree of agents. Each finished call becomes a PreToolUse and a
// PostToolUse (PostToolUseFailure when it failed) envelope of runtime
// event.RuntimeGoSDK; a sub-agent's calls carry its agent_id and agent_type
// and, in the envelope's Subagent meta, the tool_use_id of the call that
// spawned it and its depth, the linkage attribution reads first.
//
// Record never blocks: calls wait in a bounded queue and are sent in batches
// (BatchSize envelopes, MaxBatchBytes, gathered for Linger) by one
// goroutine; a call that finds the queue full is dropped and counted
// (Dropped). Envelopes the collector cannot take now are appended to the
// spool; after such a failure the next batches go to the spool without
// waiting on the collector, for RetryAfter, and the spool is drained after
// each batch the collector took. A batch the collector finds too large (413)
// is split and sent again; one it refuses for what it is is sent again one
// envelope at a time, as the hook does (hook.SendEach): the envelopes it
// takes are delivered, and only those it refuses on their own are kept in
// the spool directory's rejected.jsonl, as the hook keeps them: nothing is
// dropped silently. Call Close (or CloseContext) before the process ends.
// The envelopes are made in that goroutine, after Record returned: a program
// must not change a call's Input or Output (the maps and slices it passed in
// or returned) once the call is over.
//
// Tool calls, the starts and stops of sub-agents (AgentEvent: a
// SubagentStart when SpawnAgent starts one, a SubagentStop when the call
// it was spawned in ends) and the end of sessions (Executor.EndSession, a
// SessionEnd envelope) are forwarded, each queued after what was recorded
// before it: no SessionStart. The collector shows a forwarded session and
// its agents as it shows Claude Code's, attributed to the project of their
// cwd (Executor.Dir): a sub-agent started and stopped when those events
// say, the session ended when Executor.EndSession ends it, not when the
// Forwarder closes.
type Forwarder struct {
	o       ForwardOptions
	privacy privacy.Options
	sp      *spool.Spool
	queue   chan queued
	done    chan struct{}
	dropped atomic.Int64

	// ctx is the requests'; cancelled when CloseContext runs out of time,
	// after which everything left is spooled.
	ctx    context.Context
	cancel context.CancelFunc

	// closeMu orders Record's sends before Close's close of the queue.
	closeMu sync.RWMutex
	closed  bool

	// retryAt and downErr belong to the sending goroutine: until retryAt,
	// the collector is not tried; downErr is why.
	retryAt time.Time
	downErr error

	mu  sync.Mutex
	err error
}

// queued is what waits to be sent: a finished call, a session's end, or a
// sub-agent's start or stop.
type queued struct {
	call  *Call
	end   *SessionEnd
	agent *AgentEvent
}

// NewForwarder returns a running Forwarder.
func NewForwarder(o ForwardOptions) (*Forwarder, error) {
	if o.URL == "" {
		return nil, errors.New("cannot forward calls: no collector URL")
	}
	o.URL = strings.TrimSuffix(o.URL, "/")
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if o.Linger == 0 {
		o.Linger = spool.DefaultCoalesce
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 5 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 5 * time.Second}
	}
	f := &Forwarder{o: o, privacy: privacy.DefaultOptions(), queue: make(chan queued, o.QueueSize), done: make(chan struct{})}
	if o.Privacy != nil {
		f.privacy = *o.Privacy
	}
	if o.SpoolDir != "" {
		sp, err := spool.Open(o.SpoolDir, spool.Options{})
		if err != nil {
			return nil, fmt.Errorf("cannot open spool: %w", err)
		}
		f.sp = sp
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f, nil
}

// Record queues c to be sent, or drops it when the queue is full or the
// Forwarder closed.
func (f *Forwarder) Record(c *Call) { f.enqueue(queued{call: c}) }

// RecordEnd queues the end of a session to be sent, after the calls queued
// before it, or drops it as Record drops a call. Executor.EndSession calls
// it.
func (f *Forwarder) RecordEnd(e *SessionEnd) { f.enqueue(queued{end: e}) }

// RecordAgent queues a sub-agent's start or stop to be sent, in order with
// the calls, or drops it as Record drops a call. The Executor calls it.
func (f *Forwarder) RecordAgent(e *AgentEvent) { f.enqueue(queued{agent: e}) }

func (f *Forwarder) enqueue(q queued) {
	f.closeMu.RLock()
	defer f.closeMu.RUnlock()
	if f.closed {
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- q:
	default:
		f.dropped.Add(1)
	}
}

// Dropped is how many calls and session ends were lost, recorded while
// the queue was full or after Close, and how many envelopes were neither
// sent nor spooled (nor kept as rejected).
func (f *Forwarder) Dropped() int64 { return f.dropped.Load() }

// Close is CloseContext with a bound of CloseTimeout.
func (f *Forwarder) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	return f.CloseContext(ctx)
}

// CloseContext sends or spools the queued calls, then stops the Forwarder.
// When ctx ends first, the request under way is abandoned and what is left
// is spooled (without a spool, dropped); CloseContext then returns once
// that is done, which waits on the disk only. It returns the last delivery
// error, if the calls it concerned were lost or rejected. Calls recorded
// after Close are dropped. Close ends no session: call Executor.EndSession
// for those that are over before closing.
func (f *Forwarder) CloseContext(ctx context.Context) error {
	f.closeMu.Lock()
	if !f.closed {
		f.closed = true
		close(f.queue)
	}
	f.closeMu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		f.cancel()
		<-f.done
	}
	f.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *Forwarder) run() {
	defer close(f.done)
	// What an earlier run could not deliver goes first.
	f.drain()
	recs := make([][]byte, 0, f.o.BatchSize)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		if len(recs) == 0 {
			q, ok := <-f.queue
			if !ok {
				return
			}
			recs = f.envelopes(recs, q)
		}
		// Take what else is queued until a batch is full or has waited
		// Linger since it began. The envelopes past a full batch start the
		// next one.
		var expired <-chan time.Time
		if f.o.Linger > 0 {
			linger.Reset(f.o.Linger)
			expired = linger.C
		}
		n := f.fit(recs)
	more:
		for n == len(recs) && n < f.o.BatchSize {
			var q queued
			var ok bool
			if expired == nil {
				select {
				case q, ok = <-f.queue:
				default:
					break more
				}
			} else {
				select {
				case q, ok = <-f.queue:
				case <-expired:
					break more
				}
			}
			if !ok {
				break more
			}
			recs = f.envelopes(recs, q)
			n = f.fit(recs)
		}
		linger.Stop()
		f.deliver(recs[:n])
		rest := copy(recs, recs[n:])
		clear(recs[rest:])
		recs = recs[:rest]
	}
}

// fit is how many of recs, at least one, one POST carries: BatchSize
// envelopes at most, in a body of MaxBatchBytes at most, as the collector
// measures it (hook.BatchFit). run gathers batches and drain splits the
// spool's by this one measure.
func (f *Forwarder) fit(recs [][]byte) int {
	return hook.BatchFit(recs, f.o.BatchSize, f.o.MaxBatchBytes)
}

// deliver posts recs, a batch that fits, and spools what the collector
// cannot take; once the batch went through, it drains the spool. After a
// failure, it spools without trying the collector until RetryAfter passed.
func (f *Forwarder) deliver(recs [][]byte) {
	if f.ctx.Err() != nil || time.Now().Before(f.retryAt) {
		why := f.downErr
		if f.ctx.Err() != nil {
			why = errors.New("closing: out of time")
		}
		f.keep(recs, why)
		return
	}
	// The refused envelopes are not among those left: they are kept aside
	// whether or not the rest went through.
	var refused refusals
	left, err := f.send(recs, refused.add)
	f.reject(refused.recs, refused.why)
	if err != nil {
		f.retryAt, f.downErr = time.Now().Add(f.o.RetryAfter), err
		f.keep(left, err)
		return
	}
	f.drain()
}

// refusals gathers the envelopes the collector refused on their own, to
// be kept aside together (Forwarder.reject), with the last refusal.
type refusals struct {
	recs [][]byte
	why  error
}

func (r *refusals) add(rec []byte, why error) { r.recs, r.why = append(r.recs, rec), why }

// send posts recs (a batch that fits) and returns those not delivered,
// with the transient error that kept them. A batch the collector finds too
// large is split in halves and sent again. A batch it refuses for what it
// is is sent again one envelope at a time (hook.SendEach, as the hook
// drains its spool): the envelopes it takes are delivered, and those it
// refuses on their own go to refuse, not among those returned.
func (f *Forwarder) send(recs [][]byte, refuse func(rec []byte, refusal error)) (left [][]byte, err error) {
	err = f.post(recs)
	switch {
	case err == nil:
		return nil, nil
	case !hook.Permanent(err):
		return recs, err
	case len(recs) == 1:
		refuse(recs[0], err)
		return nil, nil
	case tooLarge(err):
		h := len(recs) / 2
		if left, err := f.send(recs[:h], refuse); err != nil {
			return append(left, recs[h:]...), err
		}
		return f.send(recs[h:], refuse)
	}
	return hook.SendEach(recs, f.post, refuse)
}

// keep spools recs, which the collector could not take for cause.
func (f *Forwarder) keep(recs [][]byte, cause error) {
	if len(recs) == 0 {
		return
	}
	if f.sp == nil {
		f.lost(len(recs), cause)
		return
	}
	if err := f.sp.Append(recs...); err != nil {
		f.lost(len(recs), fmt.Errorf("%v; and cannot spool: %w", cause, err))
	}
}

// reject keeps envelopes the collector refused for what they are in the
// spool directory's rejected.jsonl, as the hook does (hook.Reject):
// sending them again can never succeed, and nothing is dropped silently.
func (f *Forwarder) reject(recs [][]byte, cause error) {
	if len(recs) == 0 {
		return
	}
	if f.o.SpoolDir == "" {
		f.lost(len(recs), cause)
		return
	}
	err := hook.Reject(f.o.SpoolDir, recs, cause)
	if errors.Is(err, hook.ErrNotKept) {
		f.lost(len(recs), err)
		return
	}
	f.mu.Lock()
	f.err = fmt.Errorf("%d envelopes: %w", len(recs), err)
	f.mu.Unlock()
}

// drain sends what the spool holds, if anything and if the collector is
// not known to be down; what the collector does not take stays spooled.
func (f *Forwarder) drain() {
	if f.sp == nil || time.Now().Before(f.retryAt) {
		return
	}
	if st, err := f.sp.Stats(); err != nil || st.PendingBytes == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	_, _ = f.sp.Drain(ctx, f.o.BatchSize, func(recs [][]byte) error {
		// The refused envelopes are kept aside once the whole batch is
		// settled (hook.SendSpooled): until then they stay spooled with it.
		var refused refusals
		err := hook.SendSpooled(recs, func(recs [][]byte, refuse func([]byte, error)) error {
			for len(recs) > 0 {
				n := f.fit(recs)
				if _, err := f.send(recs[:n], refuse); err != nil {
					return err
				}
				recs = recs[n:]
			}
			return nil
		}, refused.add)
		if err != nil {
			// The batch stays spooled, delivered or not (the
			// collector dedups by envelope id).
			f.retryAt, f.downErr = time.Now().Add(f.o.RetryAfter), err
			return err
		}
		f.reject(refused.recs, refused.why)
		return nil
	})
}

// lost counts n envelopes as dropped, for cause.
func (f *Forwarder) lost(n int, cause error) {
	f.dropped.Add(int64(n))
	f.mu.Lock()
	f.err = fmt.Errorf("cannot forward %d envelopes: %w", n, cause)
	f.mu.Unlock()
}

// tooLarge reports whether the collector refused a batch for its size.
func tooLarge(err error) bool {
	var se hook.StatusError
	return errors.As(err, &se) && se.Code == http.StatusRequestEntityTooLarge
}

// post sends envelopes to the collector's POST /v1/events.
func (f *Forwarder) post(recs [][]byte) error {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, f.o.URL+"/v1/events", bytes.NewReader(hook.BatchBody(recs)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if f.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.o.Token)
	}
	resp, err := f.o.Client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return hook.StatusError{Code: resp.StatusCode}
	}
	return nil
}

// envelopes appends the envelopes of q to recs: a session's end as its
// SessionEnd, a sub-agent's start or stop as its SubagentStart or
// SubagentStop, a finished call as its PreToolUse and PostToolUse (or
// PostToolUseFailure) (payload.go).
func (f *Forwarder) envelopes(recs [][]byte, q queued) [][]byte {
	if e := q.end; e != nil {
		env := event.Envelope{
			ID: event.NewID(e.At), Runtime: event.RuntimeGoSDK, Kind: event.KindHook, ReceivedAt: e.At.UTC(),
			Payload: appendEndPayload(nil, e),
		}
		return append(recs, env.AppendJSON(nil))
	}
	if e := q.agent; e != nil {
		env := event.Envelope{
			ID: event.NewID(e.At), Runtime: event.RuntimeGoSDK, Kind: event.KindHook, ReceivedAt: e.At.UTC(),
			Subagent: subagentMeta(e.AgentID, e.AgentType, e.ParentToolUseID, e.Depth),
			Payload:  appendAgentPayload(nil, e),
		}
		return append(recs, env.AppendJSON(nil))
	}
	c := q.call
	m := membersOf(c, f.privacy, nil) // kept in the envelopes
	meta := subagentMeta(c.AgentID, c.AgentType, c.ParentToolUseID, c.Depth)
	enc := func(name string, at time.Time) []byte {
		e := event.Envelope{
			ID: event.NewID(at), Runtime: event.RuntimeGoSDK, Kind: event.KindHook, ReceivedAt: at.UTC(),
			Subagent: meta, Payload: appendPayload(make([]byte, 0, payloadSize(c, &m)), c, name, &m),
		}
		if name == event.PreToolUse {
			e.Decision = m.decision
		}
		return e.AppendJSON(nil)
	}
	recs = append(recs, enc(event.PreToolUse, c.Start))
	if post := postEvent(c); post != "" {
		recs = append(recs, enc(post, c.Start.Add(c.Duration)))
	}
	return recs
}

// subagentMeta is the Subagent meta of a sub-agent's envelopes: the call
// that spawned it and its depth, the linkage attribution reads first; nil
// for the main agent's.
func subagentMeta(agentID, agentType, parentToolUseID string, depth int) *event.SubagentMeta {
	if agentID == "" {
		return nil
	}
	return &event.SubagentMeta{AgentType: agentType, ToolUseID: parentToolUseID, SpawnDepth: depth}
}

var (
	_ SessionRecorder = (*Forwarder)(nil)
	_ AgentRecorder   = (*Forwarder)(nil)
)
