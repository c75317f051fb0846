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
	// (package spool, the hook's own queue) and sent again from later.
	// "" keeps none: they are counted as dropped.
	SpoolDir string
	// QueueSize bounds the calls waiting to be sent (default 4096). A call
	// recorded while the queue is full is dropped and counted, never waited
	// for: the agent is not slowed by its collector.
	QueueSize int
	// BatchSize is how many envelopes one POST carries at most (default 256).
	BatchSize int
	// Privacy is applied to each call's input, output and error, as the
	// hook applies it to a payload. The zero value means
	// privacy.DefaultOptions().
	Privacy *privacy.Options
	// Client sends the batches (default: a client with a 5 s timeout).
	Client *http.Client
}

// Forwarder is a Recorder that sends every call to a hookwatch collector,
// so that an agent written in Go shows up there as Claude Code's sessions
// do, with its tree of agents. Each finished call becomes a PreToolUse and a
// PostToolUse (PostToolUseFailure when it failed) envelope of runtime
// event.RuntimeGoSDK; a sub-agent's calls carry its agent_id and agent_type
// and, in the envelope's Subagent meta, the tool_use_id of the call that
// spawned it and its depth, the linkage attribution reads first.
//
// Record never blocks: calls wait in a bounded queue and are sent in
// batches by one goroutine; a call that finds the queue full is dropped and
// counted (Dropped). Envelopes the collector cannot take now are appended to
// the spool, and the spool is drained after each batch the collector took.
// Call Close before the process ends. The envelopes are made in that
// goroutine, after Record returned: a program must not change a call's
// Input or Output (the maps and slices it passed in or returned) once the
// call is over.
type Forwarder struct {
	o       ForwardOptions
	privacy privacy.Options
	sp      *spool.Spool
	queue   chan *Call
	done    chan struct{}
	dropped atomic.Int64

	// closeMu orders Record's sends before Close's close of the queue.
	closeMu sync.RWMutex
	closed  bool

	mu  sync.Mutex
	err error
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
		o.BatchSize = 256
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 5 * time.Second}
	}
	f := &Forwarder{o: o, privacy: privacy.DefaultOptions(), queue: make(chan *Call, o.QueueSize), done: make(chan struct{})}
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
	go f.run()
	return f, nil
}

// Record queues c to be sent, or drops it when the queue is full or the
// Forwarder closed.
func (f *Forwarder) Record(c *Call) {
	f.closeMu.RLock()
	defer f.closeMu.RUnlock()
	if f.closed {
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- c:
	default:
		f.dropped.Add(1)
	}
}

// Dropped is how many calls were lost: recorded while the queue was full,
// or neither sent nor spooled.
func (f *Forwarder) Dropped() int64 { return f.dropped.Load() }

// Close sends or spools the queued calls, then stops the Forwarder. It
// returns the last delivery error, if the calls it concerned were lost.
// Calls recorded after Close are dropped.
func (f *Forwarder) Close() error {
	f.closeMu.Lock()
	if !f.closed {
		f.closed = true
		close(f.queue)
	}
	f.closeMu.Unlock()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *Forwarder) run() {
	defer close(f.done)
	// What an earlier run could not deliver goes first.
	f.drain()
	recs := make([][]byte, 0, f.o.BatchSize)
	for c := range f.queue {
		recs = append(recs, f.envelopes(c)...)
		// Take what else is queued now, up to a batch, without waiting.
	more:
		for len(recs) < f.o.BatchSize {
			select {
			case c, ok := <-f.queue:
				if !ok {
					break more
				}
				recs = append(recs, f.envelopes(c)...)
			default:
				break more
			}
		}
		f.deliver(recs)
		clear(recs)
		recs = recs[:0]
	}
}

// deliver posts recs, spools them when the collector cannot take them, and
// drains the spool once it could.
func (f *Forwarder) deliver(recs [][]byte) {
	err := f.post(recs)
	if err == nil {
		f.drain()
		return
	}
	if f.sp != nil && !refused(err) {
		serr := f.sp.Append(recs...)
		if serr == nil {
			return
		}
		err = fmt.Errorf("%v; and cannot spool: %w", err, serr)
	}
	f.lost(len(recs), err)
}

// drain sends what the spool holds, if anything; what the collector does
// not take stays spooled.
func (f *Forwarder) drain() {
	if f.sp == nil {
		return
	}
	if st, err := f.sp.Stats(); err != nil || st.PendingBytes == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = f.sp.Drain(ctx, 0, func(recs [][]byte) error {
		err := f.post(recs)
		if refused(err) {
			// Sent again it would be refused again, and wedge the spool.
			f.lost(len(recs), err)
			return nil
		}
		return err
	})
}

// lost counts n envelopes as dropped, for cause.
func (f *Forwarder) lost(n int, cause error) {
	f.dropped.Add(int64(n))
	f.mu.Lock()
	f.err = fmt.Errorf("cannot forward %d envelopes: %w", n, cause)
	f.mu.Unlock()
}

// statusError is a collector's answer other than 2xx.
type statusError struct{ code int }

func (e statusError) Error() string { return fmt.Sprintf("collector answered %d", e.code) }

// refused reports whether the collector refused a batch for what it is
// (hook.Refused).
func refused(err error) bool {
	var se statusError
	return errors.As(err, &se) && hook.Refused(se.code)
}

// post sends envelopes to the collector's POST /v1/events.
func (f *Forwarder) post(recs [][]byte) error {
	req, err := http.NewRequest(http.MethodPost, f.o.URL+"/v1/events", bytes.NewReader(hook.BatchBody(recs)))
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
		return statusError{resp.StatusCode}
	}
	return nil
}

// envelopes encodes a finished call as its PreToolUse and PostToolUse (or
// PostToolUseFailure) envelopes (payload.go).
func (f *Forwarder) envelopes(c *Call) [][]byte {
	m := membersOf(c, f.privacy, nil) // kept in the envelopes
	var meta *event.SubagentMeta
	if c.AgentID != "" {
		meta = &event.SubagentMeta{AgentType: c.AgentType, ToolUseID: c.ParentToolUseID, SpawnDepth: c.Depth}
	}
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
	out := [][]byte{enc(event.PreToolUse, c.Start)}
	if post := postEvent(c); post != "" {
		out = append(out, enc(post, c.Start.Add(c.Duration)))
	}
	return out
}
