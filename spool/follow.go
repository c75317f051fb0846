package spool

import (
	"context"
	"time"
)

// DefaultCoalesce is how long a consumer that delivers to a collector
// gathers after a wake-up before it passes (FollowOptions.Coalesce): the
// collector's own drainer, a forwarder, the SDK's sender. So the hooks of
// an agent's turn — its parallel tool calls' PreToolUse and PostToolUse,
// the batch's PostToolBatch, parallel subagents — share one pass, one
// commit and one round of the model. In a session the hooks trickle, one
// every few to tens of milliseconds, and what a pass costs the collector
// (its wake-ups, during which the runtime's monitor thread polls every
// 20 µs; a SQLite transaction for the events and one for the model's rows;
// a request, when the pass is a POST) is more than the events it stores:
// at 50 ms a trickle cost the collector ~0.7 ms of CPU per event, at
// 250 ms ~0.4; three busy sessions forwarded at 20 ms cost it ~70 µs per
// event, at 250 ms ~45 (docs/benchmarks.md, "What hooks cost a session"
// and "The session model"). What it delays is only what is shown live.
const DefaultCoalesce = 250 * time.Millisecond

// FollowOptions configures Follow.
type FollowOptions struct {
	// Interval is how often the spool is looked at without a wake-up.
	Interval time.Duration
	// Coalesce is how long a pass waits after a wake-up, so that the
	// appends of a burst (parallel subagents) share one batch.
	Coalesce time.Duration
	// Batch is the most records handed to deliver at once (DefaultBatch if
	// not positive).
	Batch int
	// MinBackoff and MaxBackoff, when set, space the passes after a failed
	// one: MinBackoff, then twice as long each time up to MaxBackoff,
	// whatever is appended meanwhile, until a pass succeeds. Zero: the next
	// pass comes as usual, at the next wake-up or Interval.
	MinBackoff, MaxBackoff time.Duration
	// Passed, when set, is told after each pass that delivered records or
	// failed (not one ended by ctx): how many it delivered, its error, and
	// the backoff before the next pass (0 when none).
	Passed func(delivered int, err error, retryIn time.Duration)
	// Flush, when set, takes requests for a pass now, cutting a Coalesce
	// wait (or a backoff) short: Follow closes each channel it receives after a pass that
	// began after receiving it, or when it returns.
	Flush <-chan chan struct{}
	// Final, when positive, has Follow make one last pass when ctx ends,
	// bounded by Final, so that what was appended until then is delivered
	// now rather than by the next consumer (deliver must still work then).
	Final time.Duration
}

// Follow is the drain loop of the spool's consumer, the process holding
// Attach's lock (a collector, a forwarder): it delivers what is spooled at
// once, then whenever the spool is written to (Notify, where the platform
// tells) and at least every o.Interval, until ctx ends. deliver has Drain's
// contract.
//
// While s holds the consumer's lock, Follow follows the active segment in
// place (Tail): hooks append one by one, and a claim creates files each time.
// Otherwise (another consumer attached, or none yet) each pass claims what is
// pending, as any drainer does, rather than deliver it twice. When ctx ends
// it settles the Tail, so that the next consumer does not deliver again what
// this one did, and returns that error.
func (s *Spool) Follow(ctx context.Context, o FollowOptions, deliver func(records [][]byte) error) error {
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	notify := s.Notify(ctx) // nil where unsupported: the ticker alone then
	var wake <-chan struct{}
	if notify != nil {
		wake = notify.C
	}
	tail := s.Tail()
	var asked []chan struct{} // flushes the next pass answers
	// ask records a flush request: the next pass begins after it.
	ask := func(done chan struct{}) { asked = append(asked, done) }
	// answer tells the flushes asked that a pass has run.
	answer := func() {
		for _, done := range asked {
			close(done)
		}
		asked = asked[:0]
	}
	defer answer()
	settle := func() error {
		if o.Final > 0 {
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Final)
			n, err := s.followOnce(final, tail, o.Batch, deliver)
			cancel()
			if o.Passed != nil && (n > 0 || err != nil) {
				o.Passed(n, err, 0)
			}
		}
		return tail.Settle()
	}
	coalesce := time.NewTimer(o.Coalesce)
	coalesce.Stop()
	var backoff time.Duration
	for {
		for more := o.Flush != nil; more; {
			select {
			case done := <-o.Flush:
				ask(done)
			default:
				more = false
			}
		}
		if notify != nil {
			// What was appended until now, this pass finds: the
			// notifications of it would only wake the next wait.
			notify.Discard()
		}
		n, err := s.followOnce(ctx, tail, o.Batch, deliver)
		if ctx.Err() != nil {
			return settle()
		}
		answer()
		wait := wake
		if err != nil && o.MinBackoff > 0 {
			// The receiver cannot take the batch now: it stays spooled;
			// wait longer each time, whatever the hooks append meanwhile.
			backoff = min(max(2*backoff, o.MinBackoff), max(o.MaxBackoff, o.MinBackoff))
			wait = nil
			t.Reset(backoff)
		} else if backoff > 0 {
			backoff = 0
			t.Reset(o.Interval)
		}
		if o.Passed != nil && (n > 0 || err != nil) {
			o.Passed(n, err, backoff)
		}
		if wait != nil {
			// Told of the next append only: not of those while
			// coalescing, nor while passing (see Notifier).
			notify.Arm()
		}
		select {
		case <-ctx.Done():
			return settle()
		case <-t.C:
		case done := <-o.Flush:
			ask(done)
		case <-wait:
			coalesce.Reset(o.Coalesce)
			select {
			case <-ctx.Done():
				return settle()
			case <-coalesce.C:
			case done := <-o.Flush:
				ask(done)
				coalesce.Stop()
			}
		}
	}
}

// followOnce is one pass of Follow.
func (s *Spool) followOnce(ctx context.Context, tail *Tail, max int, deliver func([][]byte) error) (int, error) {
	if s.Attached() {
		return tail.Drain(ctx, max, deliver)
	}
	if err := tail.Settle(); err != nil {
		return 0, err
	}
	st, err := s.Stats()
	if err != nil || st.PendingBytes == 0 {
		return 0, err
	}
	return s.Drain(ctx, max, deliver)
}
