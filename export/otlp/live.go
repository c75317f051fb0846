package otlp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// Exporter defaults.
const (
	DefaultBatchSpans    = 512
	DefaultFlushInterval = time.Second
	DefaultMaxQueueSpans = 64 << 10
	DefaultIdleFlush     = 15 * time.Minute
	DefaultMaxTracked    = 1 << 20
	DefaultMaxOwed       = 64 << 10
	DefaultResendSpans   = 4 * DefaultBatchSpans
	DefaultProbeInterval = 10 * time.Second
)

// ExporterOptions configure an Exporter; zero values take the defaults.
type ExporterOptions struct {
	// BatchSpans is the most spans one request carries; FlushInterval how
	// long a span waits for a batch to fill.
	BatchSpans    int
	FlushInterval time.Duration
	// MaxQueueSpans bounds the spans waiting to be sent: beyond it new
	// spans are dropped and counted, never waited for.
	MaxQueueSpans int
	// IdleFlush is how long a session may go without a change before its
	// agents still running (and calls without an outcome) are sent as they
	// stand, and the session forgotten.
	IdleFlush time.Duration
	// MaxTracked bounds the spans remembered as sent, over every session;
	// beyond it the least recently changed sessions are flushed and
	// forgotten.
	MaxTracked int
	// Rows is the store of the model's rows, whose sessions the spans are
	// of: the spans the receiver was not given (owed) are sent again from
	// them (ExportSession) once it takes spans. Nil: not sent again.
	Rows store.ModelStore
	// Debts keeps the sessions owed across restarts, where every
	// collector on the database reads them (nil: in memory only), as
	// Owner's: a name the same collector takes again when it restarts,
	// unique on the database ("": a name of its own, random, so that
	// what it owed at a kill is paid only once its beat is stale). MaxOwed bounds them (beyond
	// it a session is not owed, its loss only counted).
	Debts   store.OTLPDebtStore
	Owner   string
	MaxOwed int
	// ResendSpans is about how many spans are sent again per
	// FlushInterval (a session goes whole), so that a receiver back after
	// long is not sent all it missed at once.
	ResendSpans int
	// ProbeInterval is how often, while sessions are owed and the
	// receiver did not take the latest request, it is asked (a request of
	// no spans) whether it takes spans again.
	ProbeInterval time.Duration
	// Metrics receives the exporter's counters (nil: none registered).
	Metrics *metrics.Set
	Logger  *slog.Logger
}

// Exporter sends the spans of the session model's changes to a receiver as
// they become final: a tool call once it has an outcome, a subagent once it
// stopped (and the call that spawned it is known), a compaction once it
// ended, the main agent's span of a run once the run ended (SessionEnd, or
// a resume began the next). What is still open when
// its session goes idle, or when the Exporter stops, is sent as it stands.
// A span already sent is sent again only when it ends later than before
// (one sent as it stood when its session went idle, that went on), or
// carries other token usage (an agent's, read from its transcript after
// its span went out).
//
// Offer never blocks on the network: spans wait in a bounded queue that one
// goroutine sends in batches, with retries; what does not fit, or cannot be
// sent, is counted, and its session owed: with Rows, the session's spans
// are sent again from the model's rows once the receiver takes spans, paced
// (ResendSpans), the sessions owed kept in Debts across restarts, where
// the other collectors on the database read them too: each sends what the
// others owe, so that a collector that stopped for good owes nothing.
type Exporter struct {
	client *Client
	opt    ExporterOptions
	log    *slog.Logger
	seed   maphash.Seed

	mu       sync.Mutex
	sessions map[string]*tracked
	nTracked int
	queue    []batchItem
	queued   int
	wake     chan struct{}
	stopping bool

	done     chan struct{}
	stopOnce sync.Once
	// sendCtx ends the send under way when Stop's deadline passed.
	sendCtx    context.Context
	cancelSend context.CancelFunc

	// failing is set while the latest batch (or Check) was not
	// accepted; target is where batches go, for the log.
	failing atomic.Bool
	target  string

	// debts are the sessions owed (nil without Rows); lastProbe when
	// the receiver was last asked whether it is back; lastRead when
	// Debts was last read for what the other collectors owe.
	debts      *debts
	lastProbe  time.Time
	lastRead   time.Time
	readOnce   bool // Debts was read once: own records are in memory
	warnedFull bool
	// readFailing and writeFailing are set while reading or writing
	// Debts fails, so that it is said once.
	readFailing, writeFailing bool
	// saveWake wakes the goroutine that writes the debts, as soon as a
	// session is added: the sender may be waiting out retries. writeMu
	// keeps a write from replacing a newer one; saverDone ends it.
	saveWake  chan struct{}
	saverDone chan struct{}
	saverEnd  sync.WaitGroup
	writeMu   sync.Mutex

	sent, dropped, failed, rejected *metrics.Counter
	resent                          *metrics.Counter
	requests, requestErrors         *metrics.Counter
	sendTime                        *metrics.Histogram
}

// tracked is what the Exporter remembers of a session.
type tracked struct {
	summary *attribution.Session
	// sent maps a span (kind and id, hashed) to what it was sent with.
	sent    map[uint64]sentSpan
	open    map[string]*attribution.Agent    // agents not sent yet, by id
	pending map[string]*attribution.ToolCall // calls without an outcome
	changed time.Time
}

// sentSpan is what a span was sent with: its end, and a hash of the
// token usage it carried (usageSum).
type sentSpan struct {
	end, usage uint64
}

// batchItem is one session's spans waiting to be sent.
type batchItem struct {
	session string
	res     *resourcepb.Resource
	spans   []*tracepb.Span
}

// NewExporter returns an Exporter sending with c, and starts its goroutine;
// Stop ends it.
func NewExporter(c *Client, opt ExporterOptions) *Exporter {
	if opt.BatchSpans <= 0 {
		opt.BatchSpans = DefaultBatchSpans
	}
	if opt.FlushInterval <= 0 {
		opt.FlushInterval = DefaultFlushInterval
	}
	if opt.MaxQueueSpans <= 0 {
		opt.MaxQueueSpans = DefaultMaxQueueSpans
	}
	if opt.IdleFlush <= 0 {
		opt.IdleFlush = DefaultIdleFlush
	}
	if opt.MaxTracked <= 0 {
		opt.MaxTracked = DefaultMaxTracked
	}
	if opt.MaxOwed <= 0 {
		opt.MaxOwed = DefaultMaxOwed
	}
	if opt.ResendSpans <= 0 {
		opt.ResendSpans = DefaultResendSpans
	}
	if opt.ProbeInterval <= 0 {
		opt.ProbeInterval = DefaultProbeInterval
	}
	set := opt.Metrics
	if set == nil {
		set = metrics.NewSet()
	}
	e := &Exporter{
		client: c, opt: opt, log: opt.Logger, seed: maphash.MakeSeed(),
		sessions: map[string]*tracked{},
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		sent:     set.NewCounter(`hookwatch_otlp_spans_sent_total`),
		// What is lost, by why: the queue was full; the receiver could
		// not be reached (or kept refusing) through every retry; the
		// receiver refused the spans for what they are.
		dropped:       set.NewCounter(`hookwatch_otlp_spans_dropped_total{reason="queue_full"}`),
		failed:        set.NewCounter(`hookwatch_otlp_spans_dropped_total{reason="send_failed"}`),
		rejected:      set.NewCounter(`hookwatch_otlp_spans_dropped_total{reason="rejected"}`),
		requests:      set.NewCounter(`hookwatch_otlp_requests_total`),
		requestErrors: set.NewCounter(`hookwatch_otlp_request_errors_total`),
		sendTime:      set.NewHistogram(`hookwatch_otlp_send_duration_seconds`),
		resent:        set.NewCounter(`hookwatch_otlp_spans_resent_total`),
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if opt.Owner == "" {
		var b [8]byte
		rand.Read(b[:])
		e.opt.Owner = hex.EncodeToString(b[:])
	}
	if opt.Rows != nil {
		e.debts = newDebts(opt.MaxOwed, opt.Debts != nil)
		if opt.Debts != nil {
			// What this collector, before a restart, and the others on
			// the database owe: owed from the start.
			ctx, cancel := context.WithTimeout(context.Background(), debtWriteTimeout)
			e.read(ctx)
			cancel()
			e.lastRead = time.Now()
		}
		set.NewGauge(`hookwatch_otlp_sessions_owed`, func() float64 {
			e.mu.Lock()
			defer e.mu.Unlock()
			return float64(len(e.debts.owed))
		})
	}
	e.target, _ = c.URL()
	e.sendCtx, e.cancelSend = context.WithCancel(context.Background())
	set.NewGauge(`hookwatch_otlp_queue_spans`, func() float64 {
		e.mu.Lock()
		defer e.mu.Unlock()
		return float64(e.queued)
	})
	go e.run()
	if e.debts != nil && opt.Debts != nil {
		e.saveWake, e.saverDone = make(chan struct{}, 1), make(chan struct{})
		e.saverEnd.Add(1)
		go e.saver()
	}
	return e
}

// Check tells whether the receiver takes spans (Client.Check), without
// sending any: for a caller to say at start what is wrong with the
// endpoint. After a failed Check, the first batch the receiver takes is
// logged as its recovery, as after a batch lost.
func (e *Exporter) Check(ctx context.Context) error {
	err := e.client.Check(ctx)
	if err != nil {
		e.failing.Store(true)
	}
	return err
}

// Offer takes one round of the model's changes (attribution.Group.Changes
// of the groups a round applied) and queues the spans that became final.
// It does not block on the network.
func (e *Exporter) Offer(changes []attribution.SessionChanges) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return
	}
	for _, sc := range changes {
		if sc.Session == nil {
			continue
		}
		t := e.track(sc.Session.SessionID)
		t.summary, t.changed = sc.Session, now
		var out []*tracepb.Span
		for _, c := range sc.ToolCalls {
			if !c.Finished() {
				t.pending[c.ToolUseID] = c
				continue
			}
			delete(t.pending, c.ToolUseID)
			out = e.once(t, out, 'c', c.ToolUseID, CallSpan(t.summary, c))
		}
		for _, a := range sc.Agents {
			t.open[a.AgentID] = a
		}
		for id, a := range t.open {
			if id == "" {
				out = e.main(t, out, a, false)
				continue // a later run may come
			}
			if agentFinal(t.summary, a) {
				out = e.once(t, out, 'a', id, AgentSpan(t.summary, a))
				delete(t.open, id)
			}
		}
		for i := range t.summary.Compactions {
			c := &t.summary.Compactions[i]
			if c.EndedAt != nil {
				sp := CompactionSpan(t.summary, c)
				out = e.once(t, out, 'k', string(sp.SpanId), sp)
			}
		}
		e.enqueue(t.summary, out)
	}
	e.evict()
}

// main appends the main agent's spans that ended (all of them with all
// set): one per run, or one for the session when it has no runs.
func (e *Exporter) main(t *tracked, out []*tracepb.Span, a *attribution.Agent, all bool) []*tracepb.Span {
	s := t.summary
	if len(s.Runs) == 0 {
		if all || s.EndedAt != nil {
			out = e.once(t, out, 'a', "", AgentSpan(s, a))
		}
		return out
	}
	for i := range s.Runs {
		if _, done := runEnd(s, a, i); done || all {
			out = e.once(t, out, 'r', strconv.FormatInt(s.Runs[i].StartedAt.UnixNano(), 10), RunSpan(s, a, i))
		}
	}
	return out
}

// agentFinal reports whether a subagent's span can be sent for good: once
// it stopped and the call that spawned it is known (the client may name it
// only in that call's result, which comes after the agent stopped), or its
// session ended.
func agentFinal(s *attribution.Session, a *attribution.Agent) bool {
	if a.StoppedAt == nil {
		return false
	}
	return a.SpawnToolUseID != "" || a.Role == attribution.RoleCompaction || s.EndedAt != nil
}

func (e *Exporter) track(id string) *tracked {
	t := e.sessions[id]
	if t == nil {
		t = &tracked{sent: map[uint64]sentSpan{}, open: map[string]*attribution.Agent{}, pending: map[string]*attribution.ToolCall{}}
		e.sessions[id] = t
	}
	return t
}

// once appends sp to out unless a span of that kind and id was sent with
// the same end or a later one, and the same token usage: an agent's usage
// is read from its transcript, often after its span went out at its end,
// and the span is sent again with it, with the same id.
func (e *Exporter) once(t *tracked, out []*tracepb.Span, kind byte, id string, sp *tracepb.Span) []*tracepb.Span {
	var h maphash.Hash
	h.SetSeed(e.seed)
	h.WriteByte(kind)
	h.WriteString(id)
	k := h.Sum64()
	now := sentSpan{end: sp.EndTimeUnixNano, usage: e.usageSum(sp)}
	was, seen := t.sent[k]
	if seen && was.end >= now.end && was.usage == now.usage {
		return out
	}
	if !seen {
		e.nTracked++
	}
	t.sent[k] = now
	return append(out, sp)
}

// usageSum hashes the token usage a span carries (its attributes
// isUsageAttr names, in the order AgentSpan gives them); 0 for none.
func (e *Exporter) usageSum(sp *tracepb.Span) uint64 {
	var h maphash.Hash
	found := false
	for _, kv := range sp.Attributes {
		if !isUsageAttr(kv.Key) {
			continue
		}
		if !found {
			h.SetSeed(e.seed)
			found = true
		}
		h.WriteString(kv.Key)
		h.WriteByte(0)
		writeValue(&h, kv.Value)
	}
	if !found {
		return 0
	}
	return h.Sum64()
}

// writeValue writes an attribute's value to h, each kind apart.
func writeValue(h *maphash.Hash, v *commonpb.AnyValue) {
	var b [8]byte
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		h.WriteByte('s')
		h.WriteString(x.StringValue)
		h.WriteByte(0)
	case *commonpb.AnyValue_IntValue:
		h.WriteByte('i')
		binary.LittleEndian.PutUint64(b[:], uint64(x.IntValue))
		h.Write(b[:])
	case *commonpb.AnyValue_DoubleValue:
		h.WriteByte('d')
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x.DoubleValue))
		h.Write(b[:])
	case *commonpb.AnyValue_ArrayValue:
		h.WriteByte('a')
		for _, y := range x.ArrayValue.GetValues() {
			writeValue(h, y)
		}
		h.WriteByte(0)
	default:
		h.WriteByte('?')
	}
}

// enqueue queues a session's spans, dropping (and counting) what does not
// fit. The caller holds e.mu.
func (e *Exporter) enqueue(s *attribution.Session, spans []*tracepb.Span) {
	if len(spans) == 0 {
		return
	}
	if room := e.opt.MaxQueueSpans - e.queued; len(spans) > room {
		e.dropped.Add(len(spans) - max(room, 0))
		e.owe(s.SessionID)
		spans = spans[:max(room, 0)]
		if len(spans) == 0 {
			return
		}
	}
	e.queue = append(e.queue, batchItem{session: s.SessionID, res: Resource(s), spans: spans})
	e.queued += len(spans)
	if e.debts != nil {
		e.debts.queue(s.SessionID, time.Now())
		e.wakeSaver()
	}
	if e.queued >= e.opt.BatchSpans {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// flushSession queues what is open in a session as it stands. The caller
// holds e.mu.
func (e *Exporter) flushSession(t *tracked) {
	if t.summary == nil {
		return
	}
	var out []*tracepb.Span
	for id, a := range t.open {
		if id == "" {
			out = e.main(t, out, a, true)
			continue
		}
		out = e.once(t, out, 'a', id, AgentSpan(t.summary, a))
	}
	for id, c := range t.pending {
		out = e.once(t, out, 'c', id, CallSpan(t.summary, c))
	}
	clear(t.open)
	clear(t.pending)
	e.enqueue(t.summary, out)
}

// forget flushes a session and drops what is remembered of it. The caller
// holds e.mu.
func (e *Exporter) forget(id string, t *tracked) {
	e.flushSession(t)
	e.nTracked -= len(t.sent)
	delete(e.sessions, id)
}

// evict forgets the least recently changed sessions while more spans than
// MaxTracked are remembered. The caller holds e.mu.
func (e *Exporter) evict() {
	for e.nTracked > e.opt.MaxTracked && len(e.sessions) > 1 {
		var oldID string
		var old *tracked
		for id, t := range e.sessions {
			if old == nil || t.changed.Before(old.changed) {
				oldID, old = id, t
			}
		}
		e.forget(oldID, old)
	}
}

// idle forgets the sessions unchanged for IdleFlush.
func (e *Exporter) idle(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, t := range e.sessions {
		if now.Sub(t.changed) >= e.opt.IdleFlush {
			e.forget(id, t)
		}
	}
}

// take removes up to BatchSpans spans from the queue (at least one item),
// and returns them with the session of each item.
func (e *Exporter) take() ([]*tracepb.ResourceSpans, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*tracepb.ResourceSpans
	var sessions []string
	n := 0
	for len(e.queue) > 0 && (n == 0 || n+len(e.queue[0].spans) <= e.opt.BatchSpans) {
		it := e.queue[0]
		e.queue[0] = batchItem{}
		e.queue = e.queue[1:]
		e.queued -= len(it.spans)
		n += len(it.spans)
		out = append(out, &tracepb.ResourceSpans{
			Resource:   it.res,
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: it.spans}},
		})
		sessions = append(sessions, it.session)
	}
	if len(e.queue) == 0 {
		e.queue = nil // let the backing array go
	}
	return out, sessions
}

func (e *Exporter) run() {
	defer close(e.done)
	tick := time.NewTicker(e.opt.FlushInterval)
	defer tick.Stop()
	lastIdle := time.Now()
	for {
		select {
		case <-e.wake:
		case <-tick.C:
		}
		if now := time.Now(); now.Sub(lastIdle) >= min(e.opt.IdleFlush/4, time.Minute) {
			e.idle(now)
			lastIdle = now
		}
		e.drain(e.sendCtx)
		e.mu.Lock()
		stop := e.stopping
		e.mu.Unlock()
		if stop {
			return
		}
		e.resend(e.sendCtx)
		e.save(false)
	}
}

// drain sends everything queued, batch by batch.
func (e *Exporter) drain(ctx context.Context) {
	for {
		rs, sessions := e.take()
		if len(rs) == 0 {
			return
		}
		// The sessions are kept as owed before their spans go: a
		// collector killed during the request sends them after its
		// restart.
		e.save(false)
		n := 0
		for _, r := range rs {
			n += len(r.ScopeSpans[0].Spans)
		}
		start := time.Now()
		e.requests.Inc()
		err := e.client.Send(ctx, rs)
		e.sendTime.UpdateDuration(start)
		e.recovered(err)
		lost := err != nil && !ErrPermanent(err)
		e.settle(sessions, lost)
		switch {
		case err == nil:
			e.sent.Add(n)
		case ErrPermanent(err):
			e.requestErrors.Inc()
			if pe, ok := err.(*PartialError); ok {
				e.rejected.Add(int(pe.Rejected))
				e.sent.Add(n - int(pe.Rejected))
			} else {
				e.rejected.Add(n)
			}
			e.log.Warn("the OTLP receiver refused spans", "spans", n, "err", err)
		default:
			e.requestErrors.Inc()
			e.failed.Add(n)
			e.log.Warn("cannot send spans", "spans", n, "err", err)
			e.mu.Lock()
			stopping := e.stopping
			e.mu.Unlock()
			if stopping {
				// The receiver is away and the collector is going: the
				// rest would only wait out its retries too.
				e.drop()
				return
			}
		}
	}
}

// recovered records the outcome of a request to the receiver, and says
// once, after the warnings of the batches lost (or of Check), the first
// one it takes: the operator who saw them knows the export is back.
func (e *Exporter) recovered(err error) {
	if e.failing.Swap(err != nil) && err == nil {
		e.log.Info("the OTLP receiver takes spans again", "endpoint", e.target)
	}
}

// settle records the items of sessions delivered, or lost: their
// sessions owed.
func (e *Exporter) settle(sessions []string, lost bool) {
	if e.debts == nil {
		return
	}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range sessions {
		e.debts.settle(id, lost, now)
	}
	e.wakeSaver()
}

// owe records session id as owed. The caller holds e.mu.
func (e *Exporter) owe(id string) {
	if e.debts != nil {
		e.debts.owe(id, time.Now())
		e.wakeSaver()
	}
}

// resend sends again, from the model's rows, the spans of the sessions
// owed the longest, about ResendSpans of them (a session goes whole), when
// the receiver took the latest request; while it did not, it asks the
// receiver every ProbeInterval whether it is back. A session the store no
// longer holds (pruned), or whose spans the receiver refuses for what
// they are, is not owed any more.
func (e *Exporter) resend(ctx context.Context) {
	if e.debts == nil {
		return
	}
	if e.opt.Debts != nil && time.Since(e.lastRead) >= e.opt.ProbeInterval {
		e.lastRead = time.Now()
		e.read(ctx)
	}
	e.mu.Lock()
	owed := len(e.debts.owed) > 0
	e.mu.Unlock()
	if !owed {
		return
	}
	if e.failing.Load() {
		if time.Since(e.lastProbe) < e.opt.ProbeInterval {
			return
		}
		e.lastProbe = time.Now()
		err := e.client.Check(ctx)
		e.recovered(err)
		if err != nil {
			return
		}
	}
	var sendErr error
	send := func(ctx context.Context, rs []*tracepb.ResourceSpans) error {
		sendErr = e.client.Send(ctx, rs)
		e.recovered(sendErr)
		if sendErr == nil {
			for _, r := range rs {
				e.resent.Add(len(r.ScopeSpans[0].Spans))
			}
		}
		return sendErr
	}
	e.mu.Lock()
	ids := e.debts.oldest(e.opt.ResendSpans)
	e.mu.Unlock()
	budget := e.opt.ResendSpans
	for _, id := range ids {
		e.mu.Lock()
		stopping := e.stopping
		if !stopping && budget > 0 {
			e.debts.resending(id)
		}
		e.mu.Unlock()
		if budget <= 0 || stopping {
			return
		}
		sendErr = nil
		n, err := ExportSession(ctx, e.opt.Rows, id, send, e.opt.BatchSpans)
		budget -= max(n, 1)
		switch {
		case err == nil || errors.Is(err, store.ErrNotFound):
		case ErrPermanent(err):
			e.log.Warn("the OTLP receiver refused the spans of a session sent again", "session", id, "err", err)
		case sendErr == nil:
			// The store's error: owed still, behind the others, so
			// that a session that cannot be read holds up none.
			e.log.Warn("cannot read the spans of a session owed to the OTLP receiver", "session", id, "err", err)
			e.mu.Lock()
			e.debts.behind(id, time.Now())
			e.mu.Unlock()
			continue
		default:
			// Owed still: the receiver is away again; asked again
			// every ProbeInterval.
			e.lastProbe = time.Now()
			e.log.Warn("cannot send spans again", "session", id, "err", err)
			e.mu.Lock()
			e.debts.unpaid(id)
			e.mu.Unlock()
			return
		}
		e.mu.Lock()
		others := e.debts.paid(id)
		e.mu.Unlock()
		if len(others) > 0 {
			// What other collectors owed of it is paid: their records as
			// read, not one written since.
			if err := e.opt.Debts.PaidOTLP(ctx, others); err != nil {
				e.log.Warn("cannot take a session sent again off those owed to the OTLP receiver: it is sent again later", "session", id, "err", err)
			}
		}
	}
}

// ownerStale is how long after its last beat an owner's records are
// another's to pay: it was killed, or its machine is gone. Several
// ProbeIntervals, for a database slow to answer and clocks a little apart.
func (e *Exporter) ownerStale() time.Duration { return 6 * e.opt.ProbeInterval }

// read records that this exporter runs (its beat), and owes here too the
// sessions the other collectors on the database owe (Debts) that do not run
// any more, the longest owed first, up to MaxOwed in all.
func (e *Exporter) read(ctx context.Context) {
	now := time.Now()
	err := e.opt.Debts.OweOTLP(ctx, e.opt.Owner, map[string]time.Time{beatSession: beatSince}, now)
	var rows []store.OTLPDebt
	if err == nil {
		rows, err = e.opt.Debts.OTLPDebts(ctx, e.opt.MaxOwed)
	}
	if err != nil {
		if !e.readFailing && ctx.Err() == nil {
			e.readFailing = true
			e.log.Warn("cannot read the sessions owed to the OTLP receiver: those the collectors on the database owe are sent again once it answers", "err", err)
		}
		return
	}
	e.readFailing = false
	e.mu.Lock()
	e.debts.adopt(rows, e.opt.Owner, now, e.ownerStale(), !e.readOnce)
	e.readOnce = true
	e.mu.Unlock()
}

// wakeSaver has the sessions added written at once. The caller holds
// e.mu.
func (e *Exporter) wakeSaver() {
	if e.saveWake != nil && len(e.debts.put) > 0 {
		select {
		case e.saveWake <- struct{}{}:
		default:
		}
	}
}

// saver writes the debts when a session was added, and those taken off
// every debtWriteEvery, until Stop.
func (e *Exporter) saver() {
	defer e.saverEnd.Done()
	tick := time.NewTicker(debtWriteEvery)
	defer tick.Stop()
	for {
		select {
		case <-e.saveWake:
		case <-tick.C:
		case <-e.saverDone:
			return
		}
		e.save(false)
	}
}

// save writes the sessions owed when it is due (always with force).
func (e *Exporter) save(force bool) {
	if e.debts == nil {
		return
	}
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	now := time.Now()
	e.mu.Lock()
	w := e.debts.due(now, force)
	full := e.debts.full
	e.mu.Unlock()
	if full && !e.warnedFull {
		e.warnedFull = true // once: it would be said at every batch
		e.log.Warn("too many sessions owed to the OTLP receiver: the spans of the latest are not sent again; hookwatch export --format otlp --since sends them", "max", e.opt.MaxOwed)
	}
	if w == nil {
		return
	}
	// Its own deadline: Stop's may have passed, and what is owed at the
	// stop is what most needs recording.
	ctx, cancel := context.WithTimeout(context.Background(), debtWriteTimeout)
	defer cancel()
	err := e.opt.Debts.OweOTLP(ctx, e.opt.Owner, w.put, now)
	if err == nil {
		err = e.opt.Debts.ClearOTLP(ctx, e.opt.Owner, w.clear)
	}
	if err != nil {
		e.mu.Lock()
		e.debts.retry(w)
		e.mu.Unlock()
		if !e.writeFailing {
			e.writeFailing = true
			e.log.Warn("the sessions owed to the OTLP receiver are not kept in the database for a restart (written again at the next change)", "err", err)
		}
		return
	}
	e.writeFailing = false
}

// debtWriteTimeout bounds one write of the sessions owed.
const debtWriteTimeout = 10 * time.Second

// drop counts everything queued as lost, its sessions owed, and empties
// the queue.
func (e *Exporter) drop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed.Add(e.queued)
	now := time.Now()
	for _, it := range e.queue {
		if e.debts != nil {
			e.debts.settle(it.session, true, now)
		}
	}
	e.queue, e.queued = nil, 0
}

// Stop sends what is open in every session as it stands and what is
// queued, until ctx ends; what is left then is counted as dropped, and
// owed. It writes the sessions owed and returns once the goroutine ended.
func (e *Exporter) Stop(ctx context.Context) {
	e.stopOnce.Do(func() {
		e.mu.Lock()
		for id, t := range e.sessions {
			e.forget(id, t)
		}
		e.stopping = true
		e.mu.Unlock()
		select {
		case e.wake <- struct{}{}:
		default:
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			e.cancelSend()
			<-e.done
		}
		e.cancelSend()
		if e.saverDone != nil {
			close(e.saverDone)
			e.saverEnd.Wait()
		}
		e.drop() // what was not sent by the deadline
		e.save(true)
		if e.debts != nil && e.opt.Debts != nil {
			// Stopped: what it owes, another collector on the database
			// pays at once, without waiting for its beat to go stale.
			ctx, cancel := context.WithTimeout(context.Background(), debtWriteTimeout)
			if err := e.opt.Debts.ClearOTLP(ctx, e.opt.Owner, []string{beatSession}); err != nil {
				e.log.Warn("cannot record that this collector no longer sends spans: the others on the database send what it owes a minute later", "err", err)
			}
			cancel()
		}
	})
}
