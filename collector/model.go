package collector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// The session model (agents, tool calls, lineage, status, counts) is
// computed by package attribution and kept by the store as rows
// (store.ModelStore); the collector only schedules it and serves it.
//
// After each commit the writer hands the committed events to the modeler,
// which never makes it wait: past modelMaxBacklog events held in memory,
// the events stay in the log for the rounds to read back (spill.go).
// One goroutine applies them to the attribution.Group of their lineage group
// (host, user and project: attribution.GroupKey), kept in memory between
// commits, and stores what the Group reports as changed — the summaries of
// the sessions touched, the agents and calls that moved — in one PutModel
// per round. An event is applied without reading anything back from the
// store; a Group derives a session again only for an event that arrives
// after a later one of its group was applied (but the usage of API
// responses read from the transcripts, applied as it comes), and rebuilds
// itself for one that changes the lineage. To keep the first case rare,
// events are held back modelHold after they were committed, so that the
// hooks of parallel tool calls, which commit in whatever order they
// finish, are applied in the order they were read.
//
// A group not in memory (after a start, or evicted to stay within
// Config.ModelCacheBytes: see groupCache) is loaded from the store: the sessions of its key active
// within modelWindow of the events at hand, and the sessions their stored
// model links them to (parent, children, throwaway ids), at most
// modelMaxSessions, each with all of its events. Lineage evidence sits right
// before the child's first event (the client fires the parent's
// SessionEnd(clear), PreCompact or orphaned SessionStart(resume) and then
// the child's first event within the same process start), so the hour also
// covers a fork whose first event waits for the user's prompt.
//
// A group so loaded holds some of its key's sessions whole. A session it
// meets later may have events in the log it never read: one that was
// idle beyond the window, one a stale load's turn left out, one whose
// events a collector committed and died before modelling (no model row
// names it). Its events are never applied to the group alone, which would
// make its model of them and have its seq claim the rest: the group is
// loaded again with it (lacks).
//
// Reads: GET /v1/sessions/{id} and its /agents and /tool-calls wait up to
// Config.DeriveWait while events of that session (or of its group) are
// being committed, or committed but not applied, then answer what is
// stored. Every answer
// carries derived_seq, the session's last_seq the model reflects: it is
// current when it equals last_seq.
const (
	// modelHold is how long committed events wait before they are applied,
	// so that events committed out of order are applied in order.
	modelHold = 40 * time.Millisecond
	// modelCadence is the least time between two rounds (more under a
	// burst, see run): under load a round takes more events, writes a call
	// that started and ended in it once, and an agent's row once however
	// many events it had.
	modelCadence = 100 * time.Millisecond
	// DefaultDeriveWait is the default of Config.DeriveWait.
	DefaultDeriveWait = 2 * time.Second
	// modelWindow is how far around the events at hand the sessions of a
	// group are loaded with it.
	modelWindow = time.Hour
	// modelMaxSessions caps the sessions a group is loaded with.
	modelMaxSessions = 64
	// DefaultModelCacheBytes is the default of Config.ModelCacheBytes.
	DefaultModelCacheBytes = 128 << 20
	// staleBatch is the page size of the stale sessions read at start.
	staleBatch = 500
	// staleLoads is how many stale sessions one round loads at most.
	staleLoads = 32
	// standbyLoads is how many groups a standby loads at most in a round:
	// a collector started beside a holder meets every active group at
	// once, and loading them all in one round competes with the holder.
	standbyLoads = 4
	// maxKnownSessions bounds the session → group key memo.
	maxKnownSessions = 100_000
	// tailBudget is the most events of other collectors one round reads
	// from the log (shared.go): a round applies them before reading more.
	tailBudget = 4 * store.MaxLimit
	// sharedMaxGap bounds the pause between two rounds of a lease holder
	// (see rounds): its rows go to the database on a connection of their
	// own and do not hold up ingest, so a long round (a takeover's loads)
	// is not followed by a longer pause. The pause is most of an event's
	// lag (pause + round + modelHold): at 300 ms the lag p99 was 0.9–1.3 s
	// across a takeover at 5,000 events/s, at 150 ms 0.5–0.7 s, for ~8 %
	// more CPU per event (docs/benchmarks.md, Team server).
	sharedMaxGap = 150 * time.Millisecond
	// standbyCadence is the time between two rounds of a standby
	// (shared.go), which stores nothing and whose groups only a takeover
	// needs: it applies in rounds larger than the holder's, each reading up
	// to standbyBudget events of the log. Not much larger: a round of a
	// second at 5,000 events/s was a burst that held the holder's rounds
	// back, and at a takeover it left up to a second of the log to apply
	// and its rows to restate (groupState.restate) before the new holder
	// was current (docs/benchmarks.md, Team server).
	standbyCadence = 250 * time.Millisecond
	standbyBudget  = 5 * tailBudget
	// burstQuiet is how long after its last commit a collector sharing
	// its store still counts as ingesting (yields).
	burstQuiet = time.Second
)

// modelMaxBacklog bounds the events committed and not applied yet that the
// model holds in memory (each with its decoded payload, ~4 KiB), so that a
// long burst (an import) costs the time it takes rather than memory that
// grows with it. No commit waits for it: with a store of its own, the
// events committed past it are left in the log and read back as it has
// room (spill.go); a shared store's lease holder reads no more of the log
// than it (readTail). A variable for the tests.
var modelMaxBacklog = 20_000

// modelFlushWait bounds the last rounds at stop. A variable for the tests.
var modelFlushWait = 5 * time.Second

// pendingEvent is a committed event waiting to be applied.
type pendingEvent struct {
	ev      store.Event
	arrived time.Time
	// key is the group key ev names, made once when it is marked (and
	// counted in pendKeys under it) for settled to find again; "" when
	// not known (an event read back from the log) or when it names none.
	key string
}

// modeler keeps the session model up to date. mark is called after
// commits; one goroutine (run) applies.
type modeler struct {
	st      store.Store
	log     *slog.Logger
	hub     *hub
	maxWait time.Duration
	// audit receives each round's events and finished calls; nil when
	// the collector keeps no audit directory.
	audit *auditor
	sinks []ModelSink

	mu      sync.Mutex
	queue   []pendingEvent
	loads   []string // sessions to load whole (stale at start)
	pending tally    // session → events committed, not applied

	// rederiving is how many stale sessions markStale queued, and
	// rederiveStart when, until the rounds have loaded them all: the log
	// says when the derivation an upgrade asked for is done. Under mu.
	rederiving    int
	rederiveStart time.Time

	// inCommit and inCommitKeys count, by session and by group key, the
	// events of the commits under way (committing): another connection
	// sees a commit before the writer learns it is done, and a reader
	// that found the events stored then would answer a model without
	// them. mark moves them to pending.
	inCommit, inCommitKeys tally
	pendKeys               tally  // group key → the same, by group
	lastKey                string // the last key committing made, shared by the next events that name it
	backlog                int    // events held in memory (queued, held, in a round), not applied
	// maxBacklog is modelMaxBacklog when the modeler was made.
	maxBacklog int
	// spill are the seqs of the events committed past maxBacklog with a
	// store of its own, left in the log for readSpill (spill.go).
	spill seqRanges
	// recount is set when pending may count events that will not be
	// settled (spilled events deleted before they were read, an envelope
	// that no longer decodes): settled recounts it when nothing but the
	// loads is pending.
	recount bool
	changed chan struct{} // closed and replaced when pending shrinks
	wake    chan struct{} // buffered 1
	// armed says the run goroutine waits for a round it has timed, which
	// takes whatever is queued by then: mark then queues without waking
	// it. A wake per commit (a hundred and more a second) would cost a
	// thread's wake-up and a switch each, only for the goroutine to find
	// its round not due and wait again.
	armed   bool
	version int64 // UpdatedSeq of the latest round, stored or being stored
	// storedVersion is the UpdatedSeq of the latest round whose rows are
	// stored: where a stream that starts now starts. version runs ahead
	// of it while a round writes, and a stream starting at version then
	// would never send that round's rows.
	storedVersion int64

	// Owned by the run goroutine.
	held  []pendingEvent
	ready []pendingEvent // a round's events, its room kept (reuse)
	// bufs is the room of a round's envelopes, rows and documents, kept
	// for the next round (roundBufs).
	bufs   roundBufs
	groups *groupCache
	keys   map[string]string // session → group key

	// cached and cachedBytes are what the groups kept between rounds
	// (groupCache) hold after the latest round, for /metrics.
	cached, cachedBytes atomic.Int64
	// deferredGroups is len(deferred) after the latest round, for /metrics.
	deferredGroups atomic.Int64
	// committed is when mark last saw events committed (Unix ns).
	committed atomic.Int64
	// head is the largest seq mark saw committed, guarded by mu.
	head int64
	// spillFailed says the latest round could not read the log (readSpill);
	// owned by the run goroutine.
	spillFailed bool
	// Owned by the run goroutine: what the latest round applied, and the
	// rates yields compares (noteRates).
	roundApplied       int
	logRate, applyRate float64
	prevStart          time.Time
	prevHead           int64
	evictions          *metrics.Counter

	cancel context.CancelFunc
	flush  chan struct{} // closed by stop: a last round, then exit
	exited chan struct{}

	// shared is the store as several collectors share it, nil when this
	// collector is its only one (see shared.go).
	shared store.Shared
	tail   int64 // the last event seq read from the log, guarded by mu
	// tailRead is set once tail holds the log's end read at the start
	// (newModeler, else lead); owned by the run goroutine after New.
	tailRead bool
	// mine are the holder's own commits past tail, kept by mark as they
	// were committed, decoded: readTail queues them in their place in the
	// log instead of decoding them again. Guarded by mu.
	mine ownCommits
	// tailBudget is the most events one readTail queues.
	tailBudget int
	// leases tells the run goroutine of the lease: the context of a lease
	// taken (ended when it is lost), nil when it was lost.
	leases chan context.Context
	// lease is the lease held, nil on a standby: set by the run goroutine
	// under mu (which reads it without), read by the others under mu.
	lease context.Context
	// Owned by the run goroutine: the stale sessions a new holder restates
	// from its groups, and by group key the seq each of them the store's
	// model reflects (takeOver).
	restate     map[string]bool
	restateFrom map[string]map[string]int64
	// deferred holds, by group key, the sessions whose events a standby
	// left for the group's load (standbyLoads): read by then from the
	// store, they are applied with it.
	deferred map[string]map[string]bool
	leader   *metrics.Gauge
	fromLog  *metrics.Counter
	// deferredEvents counts the events a standby left to their group's
	// load (standbyLoads): not applied as they came.
	deferredEvents *metrics.Counter
	// restated counts the agents and calls a new lease holder wrote from
	// its groups for what the previous holder may not have stored.
	restated *metrics.Counter

	applied   *metrics.Counter
	rebuilds  *metrics.Counter
	rederived *metrics.Counter
	loadsDone *metrics.Counter
	errors    *metrics.Counter
	// down logs the store failing the model's reads and writes once per
	// outage, not once per round that retries them.
	down      outage
	roundTime *metrics.Histogram
	rows      *metrics.Counter
	lag       *metrics.Histogram
	// spilled counts the events left in the log for readSpill; fromLog
	// counts them as they are read back.
	spilled *metrics.Counter
	// stored reads the rows back, for the metrics' baseline and the
	// server's reads.
	stored modelRows
	// perAgent are the metrics per agent; nil when they are not kept.
	perAgent *agentMetrics
	// stalls are told what each session the rounds change waits on.
	stalls *stalls
	// signals are the thresholds of the signals the rounds read.
	signals attribution.Thresholds
}

func newModeler(st store.Store, log *slog.Logger, h *hub, set *metrics.Set, maxWait time.Duration, cacheBytes int, perAgent bool, a *auditor, sinks []ModelSink, signals attribution.Thresholds, stalls *stalls) *modeler {
	now := time.Now().UnixMicro()
	m := &modeler{
		st: st, log: log, hub: h, maxWait: maxWait, audit: a, sinks: sinks, stalls: stalls, signals: signals,
		down:           outage{text: &modelOutage},
		pending:        tally{},
		pendKeys:       tally{},
		inCommit:       tally{},
		inCommitKeys:   tally{},
		changed:        make(chan struct{}),
		wake:           make(chan struct{}, 1),
		groups:         newGroupCache(cacheBytes),
		maxBacklog:     modelMaxBacklog,
		evictions:      set.NewCounter(`hookwatch_model_group_evictions_total`),
		keys:           map[string]string{},
		flush:          make(chan struct{}),
		exited:         make(chan struct{}),
		version:        now,
		storedVersion:  now,
		tailBudget:     tailBudget,
		applied:        set.NewCounter(`hookwatch_model_events_applied_total`),
		rebuilds:       set.NewCounter(`hookwatch_model_rebuilds_total`),
		rederived:      set.NewCounter(`hookwatch_model_sessions_rederived_total`),
		loadsDone:      set.NewCounter(`hookwatch_model_group_loads_total`),
		errors:         set.NewCounter(`hookwatch_model_errors_total`),
		roundTime:      set.NewHistogram(`hookwatch_model_round_duration_seconds`),
		rows:           set.NewCounter(`hookwatch_model_rows_written_total`),
		lag:            set.NewHistogram(`hookwatch_model_lag_seconds`),
		fromLog:        set.NewCounter(`hookwatch_model_events_read_total`),
		deferredEvents: set.NewCounter(`hookwatch_model_events_deferred_total`),
		restated:       set.NewCounter(`hookwatch_model_restated_rows_total`),
		spilled:        set.NewCounter(`hookwatch_model_events_spilled_total`),
		stored:         newModelRows(st, set),
	}
	if perAgent {
		m.perAgent = newAgentMetrics(set)
		m.perAgent.thresholds = signals
	}
	set.NewGauge(`hookwatch_model_deferred_groups`, func() float64 { return float64(m.deferredGroups.Load()) })
	set.NewGauge(`hookwatch_model_pending_events`, func() float64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		n := 0
		for _, c := range m.pending {
			n += c
		}
		return float64(n)
	})
	set.NewGauge(`hookwatch_model_groups_cached`, func() float64 { return float64(m.cached.Load()) })
	set.NewGauge(`hookwatch_model_cache_bytes`, func() float64 { return float64(m.cachedBytes.Load()) })
	m.shared, _ = st.(store.Shared)
	if m.shared != nil {
		m.leases = make(chan context.Context)
		m.restate = map[string]bool{}
		m.restateFrom = map[string]map[string]int64{}
		m.deferred = map[string]map[string]bool{}
	}
	if m.shared == nil {
		// Before New returns, so that a read right after a start waits
		// for what is stale rather than answering it.
		m.markStale(context.Background())
	} else {
		// Before New returns too: the log from here on is this
		// collector's to follow (lead), so that an event committed
		// after a start is never taken for one committed before it. A
		// failed read is retried by lead.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = m.readEnd(ctx)
		cancel()
	}
	m.leader = set.NewGauge(`hookwatch_model_leader`, func() float64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		// The only collector on its store computes the model.
		if m.lease != nil || m.shared == nil {
			return 1
		}
		return 0
	})
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.run(ctx)
	return m
}

// stop applies what is committed and not applied yet, the events spilled
// to the log included, in last rounds that hold nothing back (call it
// after the writer stopped: nothing committed later can sort before it),
// so that the model and the audit trail have every event; then it ends the
// goroutine. After modelFlushWait it abandons the rounds (a write of the
// model under way is finished, not interrupted): what they did not
// apply is stale in the store (a session's stored model reflects its
// events up to the first one not applied: spilled events are read back
// lowest seq first) and applied on the next start (markStale). A collector
// sharing its store with others (shared.go) stops at once: the next to
// lead applies what is left.
func (m *modeler) stop() {
	if m.shared == nil {
		close(m.flush)
		t := time.NewTimer(modelFlushWait)
		defer t.Stop()
		select {
		case <-m.exited:
		case <-t.C:
		}
	}
	m.cancel()
	<-m.exited
}

// keyOf is the group key an event names, "" when it names no project.
// It returns last, a key made before, when the event names that one: the
// events of a session, and of a batch, name one key, and a new string for
// each of them would be garbage.
func keyOf(e *store.Event, last string) string {
	f := e.Facts
	if f.TranscriptPath == "" && f.CWD == "" {
		return ""
	}
	var buf [128]byte
	k := attribution.AppendGroupKey(buf[:0], f.Host, f.User, f.TranscriptPath, f.CWD)
	if string(k) == last {
		return last
	}
	return string(k)
}

// mark records that events were committed (those with a Seq), ends their
// committing (keys are the group keys it returned), and wakes the
// goroutine. It never waits for the model. With a store of its own it
// queues each event, decoded, while the backlog has room and nothing is
// spilled, and otherwise notes only its seq for readSpill (spill.go); both
// count as pending for the session's readers. On a shared store it keeps
// those past the log read, for readTail to queue in their place in the log;
// reads wait for them only on the lease holder.
func (m *modeler) mark(events []store.Event, keys []string) {
	now := time.Now()
	m.mu.Lock()
	n, spilled := 0, 0
	for i := range events {
		e := &events[i]
		if e.Seq == 0 {
			continue // not stored: a duplicate
		}
		if e.SessionID == "" {
			// Nothing to model. Noted while spilling all the same, so
			// that the burst's range stays whole: events without a
			// session would otherwise cost a range each (readSpill
			// skips them).
			if m.shared == nil && m.spilling() {
				m.head = max(m.head, e.Seq)
				m.spill.add(e.Seq, now)
			}
			continue
		}
		m.head = max(m.head, e.Seq)
		k := keys[i]
		switch {
		case m.shared != nil:
			if e.Seq <= m.tail {
				continue // read from the log already
			}
			m.mine.put(pendingEvent{ev: *e, arrived: now, key: k})
			m.backlog++
			n++
			if m.lease == nil {
				continue
			}
		case !m.spilling() && !m.full():
			m.queue = append(m.queue, pendingEvent{ev: *e, arrived: now, key: k})
			m.backlog++
			n++
		default:
			m.spill.add(e.Seq, now)
			spilled++ // its key is made again when it is read back
		}
		m.pending.add(e.SessionID)
		if k != "" {
			m.pendKeys.add(k)
		}
	}
	armed := m.armed
	if m.uncommit(events, keys) { // after pending counts what was stored
		m.wakeReaders()
	}
	m.mu.Unlock()
	if n+spilled == 0 {
		return
	}
	m.spilled.Add(spilled)
	m.committed.Store(now.UnixNano())
	if !armed {
		m.poke()
	}
}

// behind reports whether the model is behind ingest: the events held in
// memory are at their bound, or events wait in the log (spilled, or past a
// shared store's read). The rounds then run back to back unless they yield
// to ingest (yields).
func (m *modeler) behind() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.full() || m.spilling()
}

// full reports whether the events held in memory are at their bound, the
// one test of it: a commit on a store of its own then spills (mark),
// readTail reads the log no further, and the model is behind. The caller
// holds m.mu.
func (m *modeler) full() bool { return m.backlog >= m.maxBacklog }

func (m *modeler) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// settled removes applied events and loaded sessions from what readers wait
// for, and wakes them.
func (m *modeler) settled(evs []pendingEvent, loaded []string, version int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.backlog = max(m.backlog-len(evs), 0)
	for _, p := range evs {
		m.pending.drop(p.ev.SessionID)
		k := p.key
		if k == "" {
			k = keyOf(&p.ev, "")
		}
		if k != "" {
			if _, ok := m.pendKeys[k]; !ok && m.shared == nil {
				m.recount = true // counted under another key
			}
			m.pendKeys.drop(k)
		}
	}
	for _, id := range loaded {
		m.pending.drop(id)
	}
	m.recounted()
	if version > m.version {
		m.version = version
	}
	if version > m.storedVersion {
		m.storedVersion = version
	}
	m.wakeReaders()
}

// recounted recounts pending when recount says it may count events that
// will not be settled, once every event marked is applied or dropped:
// what is pending then is the loads. The caller holds m.mu.
func (m *modeler) recounted() {
	if !m.recount || m.backlog > 0 || len(m.queue) > 0 || m.spilling() {
		return
	}
	clear(m.pending)
	clear(m.pendKeys)
	for _, id := range m.loads {
		m.pending.add(id)
	}
	m.recount = false
	m.wakeReaders() // readers waiting for what was dropped
}

// currentVersion is the UpdatedSeq of the model's latest stored change.
func (m *modeler) currentVersion() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.storedVersion
}

// committing counts events as pending for the readers of their sessions
// and groups while they are being committed, and returns the group key
// each names (keyOf); mark, or abandon when the commit stored none, ends
// it.
func (m *modeler) committing(events []store.Event) []string {
	keys := make([]string, len(events))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range events {
		e := &events[i]
		if e.SessionID == "" {
			continue
		}
		m.inCommit.add(e.SessionID)
		if k := keyOf(e, m.lastKey); k != "" {
			keys[i], m.lastKey = k, k
			m.inCommitKeys.add(k)
		}
	}
	return keys
}

// abandon ends committing for a commit that stored none of events.
func (m *modeler) abandon(events []store.Event, keys []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.uncommit(events, keys) {
		m.wakeReaders()
	}
}

// uncommit ends committing for events and reports whether a session or
// group they name may no longer be pending for its readers. The caller
// holds m.mu.
func (m *modeler) uncommit(events []store.Event, keys []string) bool {
	dropped := false
	for i := range events {
		if id := events[i].SessionID; id != "" && m.inCommit.drop(id) && m.pending[id] == 0 {
			dropped = true
		}
		if k := keys[i]; k != "" && m.inCommitKeys.drop(k) && m.pendKeys[k] == 0 {
			dropped = true
		}
	}
	return dropped
}

// tally counts by name; a name counted zero times is not in it.
type tally map[string]int

func (t tally) add(name string) { t[name]++ }

// drop takes one from name's count, and reports whether that was its last.
func (t tally) drop(name string) bool {
	switch c := t[name]; {
	case c > 1:
		t[name] = c - 1
	case c == 1:
		delete(t, name)
		return true
	}
	return false
}

// wakeReaders wakes the readers that wait for pending to change. The
// caller holds m.mu.
func (m *modeler) wakeReaders() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// isPending reports whether session id, or a session of group key, has
// events not applied (with both empty: whether any session has), and
// returns the channel closed when that may have changed.
func (m *modeler) isPending(id, key string) (bool, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// A standby's readers do not wait for its commits (mark).
	standby := m.standby()
	if id == "" && key == "" {
		return len(m.pending) > 0 || !standby && len(m.inCommit) > 0, m.changed
	}
	return m.pending[id] > 0 || key != "" && m.pendKeys[key] > 0 ||
		!standby && (m.inCommit[id] > 0 || key != "" && m.inCommitKeys[key] > 0), m.changed
}

// wait blocks while session id, or a session of group key, has events not
// applied (with both empty: while any session has), at most m.maxWait and
// until ctx ends. It reports whether it waited, that is whether a caller
// should read again.
func (m *modeler) wait(ctx context.Context, id, key string) bool {
	var timeout <-chan time.Time
	for {
		pending, changed := m.isPending(id, key)
		if !pending {
			return timeout != nil
		}
		if timeout == nil {
			t := time.NewTimer(m.maxWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return true
		case <-ctx.Done():
			return true
		case <-m.exited:
			return true
		}
	}
}

// markStale queues every session whose model is missing, older than its
// events (what was committed while no modeler ran: a crash, an upgrade) or
// derived by an older attribution.ModelVersion (an upgrade).
//
// They are loaded most recently active first, staleLoads per round, so that
// after a takeover the sessions being worked on are current first and the
// events arriving meanwhile are not held behind every stale session.
func (m *modeler) markStale(ctx context.Context) {
	after := ""
	var stale []store.Session
	defer func() {
		slices.SortStableFunc(stale, func(a, b store.Session) int { return b.LastEventAt.Compare(a.LastEventAt) })
		m.mu.Lock()
		for _, s := range stale {
			m.loads = append(m.loads, s.ID)
			m.pending.add(s.ID)
		}
		if len(stale) > 0 {
			m.rederiving += len(stale)
			if m.rederiveStart.IsZero() {
				m.rederiveStart = time.Now()
			}
		}
		m.mu.Unlock()
		if len(stale) > 0 && m.shared == nil {
			// A holder of a shared store's lease says so itself
			// (takeOver).
			m.log.Info("deriving the model of stored sessions again, in the background: an upgrade, or events stored while no collector modelled them; the dashboard says modelling… until each is done",
				"sessions", len(stale))
		}
		m.poke()
	}()
	for {
		page, err := m.st.StaleModels(ctx, attribution.ModelVersion, after, staleBatch)
		if err != nil {
			if ctx.Err() == nil {
				m.down.fail(m.log, fmt.Errorf("cannot list the sessions to model: %w", err))
			}
			return
		}
		m.down.answered(m.log)
		if len(page) == 0 {
			return
		}
		stale = append(stale, page...)
		after = page[len(page)-1].ID
	}
}

func (m *modeler) run(ctx context.Context) {
	defer close(m.exited)
	if m.shared != nil {
		m.lead(ctx)
		return
	}
	m.rounds(ctx)
}

// rounds applies what is marked, round after round, until ctx ends.
func (m *modeler) rounds(ctx context.Context) {
	// due is timer's channel while a round is timed, nil otherwise; one
	// timer serves every round.
	var due <-chan time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	arm := func(d time.Duration) {
		timer.Reset(d)
		due = timer.C
	}
	var last time.Time
	var took time.Duration // the rounds' time, smoothed
	gap := modelCadence
	for {
		m.setArmed(due != nil)
		select {
		case <-ctx.Done():
			return
		case <-m.flush:
			// Everything, the spilled events included, round after
			// round: stop bounds the time it takes.
			for {
				m.round(ctx, true)
				m.mu.Lock()
				more := m.spilling()
				m.mu.Unlock()
				if !more || m.spillFailed || ctx.Err() != nil {
					return
				}
			}
		case <-m.wake:
		case <-due:
			due = nil
		case l := <-m.leases:
			if l == nil {
				m.standDown()
				continue
			}
			if !m.takeOver(ctx, l) {
				return
			}
			// The first round as holder runs at once, not a standby's
			// cadence after its last: the events since wait for it.
			gap = 0
		}
		m.setArmed(false)
		if early := gap - time.Since(last); early > 0 && (!m.behind() || m.yields()) {
			arm(early)
			continue
		}
		if due != nil {
			timer.Stop()
			due = nil
		}
		last = time.Now()
		head0 := m.logHead()
		wait, again := m.round(ctx, false)
		if m.shared != nil {
			m.noteRates(last, head0, m.roundApplied, time.Since(last))
		}
		// Under a burst rounds take longer: the next waits three times as
		// long, so that modelling takes at most a quarter of the time and
		// the rounds grow, writing each call and agent once for more
		// events, rather than competing with ingest event by event. The
		// rounds' time is smoothed (a burst shows in a few rounds): one
		// slow round of a steady stream (a garbage collection, a group
		// loaded) would otherwise hold the next one back three times as
		// long, and every event committed meanwhile with it.
		took = (3*took + time.Since(last)) / 4
		gap = max(modelCadence, 3*took)
		switch {
		case m.shared == nil:
			// Behind a burst, the rounds run back to back once it pauses
			// (yields); what waits meanwhile beyond the backlog waits in
			// the log (spill.go).
		case m.yields():
			// So on a shared store too while a burst keeps the model at
			// its bound: what waits beyond it waits in the log, not in
			// memory (readTail), and ingest does not wait for the model.
		case m.standby():
			gap = standbyCadence
		default:
			gap = min(gap, sharedMaxGap)
		}
		if again {
			arm(wait)
		}
	}
}

// setArmed records whether the run goroutine waits for a timed round
// (armed).
func (m *modeler) setArmed(armed bool) {
	m.mu.Lock()
	m.armed = armed
	m.mu.Unlock()
}

// yields reports whether the rounds of a model behind ingest (behind) keep
// yielding to it, to a quarter of the time, rather than running back to
// back to catch up; once ingest pauses (no commit for burstQuiet) they run
// back to back.
//
// With a store of its own, they yield while this collector commits: its
// commits are what the machine is busy with, rounds back to back would
// take a core from them (the handlers, the writer and the rounds share the
// machine), and what the rounds defer costs no memory (it waits in the
// log, spill.go) and no commit waits for it. A burst that never pauses
// leaves the model behind, which reads say (derived_seq).
//
// Sharing its store, a collector yields only while it commits faster than
// its rounds apply when they run back to back (a burst the model cannot
// keep up with anyway): a model behind a rate it can keep up with (after a
// takeover, a restart) catches up back to back, since the others' commits
// are not its machine's.
func (m *modeler) yields() bool {
	if !m.behind() || time.Since(time.Unix(0, m.committed.Load())) >= burstQuiet {
		return false
	}
	return m.shared == nil || m.logRate > m.applyRate
}

// noteRates updates, after a round that began at start when the log's
// head was at head0 and applied n events in took, the rates yields
// compares, smoothed as the rounds' time is: the log's growth (events of
// every collector per second, from the seqs this collector commits and
// reads) and what the rounds apply per second of their own time.
func (m *modeler) noteRates(start time.Time, head0 int64, n int, took time.Duration) {
	if !m.prevStart.IsZero() {
		if d := start.Sub(m.prevStart).Seconds(); d > 0 {
			m.logRate = (3*m.logRate + float64(head0-m.prevHead)/d) / 4
		}
	}
	m.prevStart, m.prevHead = start, head0
	if n > 0 && took > 0 {
		m.applyRate = (3*m.applyRate + float64(n)/took.Seconds()) / 4
	}
}

// logHead is the largest seq this collector committed or read.
func (m *modeler) logHead() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(m.head, m.tail)
}

// standby reports whether this collector shares its store and does not
// hold the lease: its rounds keep its groups for a takeover and store
// nothing.
func (m *modeler) standby() bool { return m.shared != nil && m.lease == nil }

// round applies the held events whose time has come (with all, every one)
// and loads the stale sessions. It returns how long until the next held
// event is due.
func (m *modeler) round(ctx context.Context, all bool) (time.Duration, bool) {
	m.roundApplied = 0
	moreLog := m.shared != nil && m.readTail(ctx)
	var spilled []pendingEvent
	if m.shared == nil {
		// The queue holds only events marked before the spill began
		// (mark), older than any read here; held sorts them all.
		var err error
		spilled, moreLog, err = m.readSpill(ctx)
		m.spillFailed = err != nil
		if err != nil && ctx.Err() == nil {
			// Retried next round; the events stay in the log, and in
			// the worst case are applied at the next start (markStale).
			m.down.fail(m.log, fmt.Errorf("cannot read the spilled events to model: %w", err))
			m.errors.Inc()
			moreLog = false
		}
	}
	m.mu.Lock()
	m.held = append(m.held, m.queue...)
	m.held = append(m.held, spilled...)
	m.queue = reuse(m.queue)
	loads := m.loads
	m.loads = nil
	if len(loads) > staleLoads && !all {
		// The rest wait for the next rounds, in order. A new holder's
		// sessions restated from memory all go in its first round: they
		// cost what changed in them, not a load.
		var now, later []string
		n := 0
		for _, id := range loads {
			switch {
			case m.restate[id]:
				now = append(now, id)
			case n < staleLoads:
				now, n = append(now, id), n+1
			default:
				later = append(later, id)
			}
		}
		loads, m.loads = now, later
	}
	moreLoads := len(m.loads) > 0
	m.mu.Unlock()

	now := time.Now()
	// Ready: everything up to the newest event held long enough, in the
	// order the events were read, so that an event committed late but read
	// early goes with it.
	slices.SortFunc(m.held, func(a, b pendingEvent) int {
		return cmp.Or(a.ev.Time.Compare(b.ev.Time), cmp.Compare(a.ev.ID, b.ev.ID))
	})
	cut := -1
	for i, p := range m.held {
		if all || now.Sub(p.arrived) >= modelHold {
			cut = i
		}
	}
	m.ready = append(m.ready, m.held[:cut+1]...)
	ready := m.ready
	defer func() { m.ready = reuse(m.ready) }()
	m.held = slices.Delete(m.held, 0, cut+1)
	var wait time.Duration
	again := false
	if len(m.held) > 0 {
		oldest := m.held[0].arrived
		for _, p := range m.held {
			oldest = minTime(oldest, p.arrived)
		}
		wait, again = max(modelHold-now.Sub(oldest), time.Millisecond), true
	}
	if moreLoads {
		wait, again = time.Millisecond, true
		loads = m.promoteLoads(ready, loads)
	}
	if moreLog {
		wait, again = time.Millisecond, true
	}
	if m.spillFailed {
		wait, again = max(wait, time.Second), true
	}
	// A standby loads the groups it left to their load a few a round
	// (apply), with or without events.
	deferredLoads := m.standby() && len(m.deferred) > 0
	if len(ready) == 0 && len(loads) == 0 && !deferredLoads {
		return wait, again
	}
	// A session's model reflects its events up to the first one still
	// held: derived_seq must not claim one that is not applied.
	heldMin := map[string]int64{}
	for _, p := range m.held {
		if cur, ok := heldMin[p.ev.SessionID]; !ok || p.ev.Seq < cur {
			heldMin[p.ev.SessionID] = p.ev.Seq
		}
	}
	start := time.Now()
	leading := !m.standby()
	version, applied, err := m.apply(ctx, ready, loads, heldMin)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false
		}
		if m.lease != nil && m.lease.Err() != nil {
			// The lease was lost in the round: the groups hold its
			// events, the next holder stores what this one did not.
			m.settled(ready, loads, 0)
			return time.Millisecond, true
		}
		m.down.fail(m.log, fmt.Errorf("cannot update the session model with %d events: %w", len(ready), err))
		m.errors.Inc()
		// What was not stored is stale and is loaded again: forget the
		// groups, whose state may be ahead of the store.
		m.groups = newGroupCache(m.groups.budget)
		m.noteCache()
		retry := slices.Clone(loads)
		for _, p := range ready {
			retry = append(retry, p.ev.SessionID)
		}
		retry = dedupe(retry)
		m.mu.Lock()
		m.loads = append(m.loads, retry...)
		for _, id := range retry {
			if leading {
				m.pending.add(id)
			}
		}
		m.mu.Unlock()
		// What this round took is settled; readers now wait for the retry.
		m.settled(ready, loads, 0)
		return max(wait, time.Second), true
	}
	m.noteCache()
	m.roundTime.UpdateDuration(start)
	m.applied.Add(applied)
	m.deferredEvents.Add(len(ready) - applied)
	m.roundApplied = len(ready) // taken from the log, deferred or not
	if leading {
		end := time.Now()
		for _, p := range ready {
			m.lag.Update(end.Sub(p.arrived).Seconds())
		}
	}
	m.settled(ready, loads, version)
	m.hub.notify()
	m.mu.Lock()
	if m.rederiving > 0 && len(m.loads) == 0 {
		m.log.Info("derived the model of stored sessions again", "sessions", m.rederiving, "took", time.Since(m.rederiveStart).Round(time.Millisecond))
		m.rederiving, m.rederiveStart = 0, time.Time{}
	}
	m.mu.Unlock()
	if m.standby() && len(m.deferred) > 0 {
		wait, again = time.Millisecond, true // the next loads (apply)
	}
	return wait, again
}

// maxReused bounds the items (events, envelopes, rows) whose room a buffer
// of the rounds keeps for the next: after a burst the room goes, not the
// memory.
const maxReused = 4096

// reuse returns the room of a buffer of the rounds, emptied (what it held
// released), for the next round: a round of a steady stream then allocates
// no buffer for the events it takes or the rows it writes. It returns nil
// when the room is larger than maxReused.
func reuse[T any](s []T) []T {
	if cap(s) > maxReused {
		return nil
	}
	clear(s) // past len, the room was cleared before
	return s[:0]
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// promoteLoads moves the stale sessions that ready has events of from the
// loads still waiting to this round's: the load reads their stored events
// with the new ones, so the session is current at once, and correct (the
// new events alone would leave out what it had before).
func (m *modeler) promoteLoads(ready []pendingEvent, loads []string) []string {
	touched := make(map[string]bool, len(ready))
	for i := range ready {
		touched[ready[i].ev.SessionID] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads = slices.DeleteFunc(m.loads, func(id string) bool {
		if touched[id] {
			loads = append(loads, id)
			return true
		}
		return false
	})
	return loads
}

// dedupe sorts ids in place and returns them without repeats.
func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// noteCache publishes what the groups kept hold, for /metrics.
func (m *modeler) noteCache() {
	m.cached.Store(int64(len(m.groups.groups)))
	m.cachedBytes.Store(int64(m.groups.used))
}

// groupState is a lineage group kept in memory between rounds: its model,
// and what the store says of the events each session id applied.
type groupState struct {
	key string
	g   *attribution.Group
	// loaded is the group's Size when load read it from the store: the
	// least a reload would hold (see groupCache.put).
	loaded int
	seq    map[string]int64 // session id → largest event seq applied
	first  map[string]time.Time
	last   map[string]time.Time
	// counted is what the metrics per agent counted of the group; nil
	// when they are not kept.
	counted *counted
	// whole are the sessions the group holds every event of, up to what
	// it applied: those whose stored events load read, and those met in
	// the group's events later whose log held none before them (lacks).
	// Events of any other session must not be applied to the group: they
	// would make a model of the session from them alone.
	whole map[string]bool
	// watches follow each session's agents and calls for its signals and
	// what it waits on, read after every round without reading every
	// call again.
	watches map[string]*attribution.Watch
	// top is the largest event seq applied to the group, seqs those of
	// each session's events applied, in order, and marks say, of each
	// session, at which top its rows last changed (follow): what a new
	// lease holder's store may lack of them (restate).
	top   int64
	seqs  map[string][]int64
	marks map[string]*rowMarks
}

// rowMarks say what groupState.top was when a session was last reported
// changed, when it was last reported whole (derived again), and when each
// of its agents and calls last changed.
type rowMarks struct {
	seen, whole   int64
	agents, calls map[string]int64
}

// markCost is what groupState.size counts per row of rowMarks, and per
// seq of groupState.seqs.
const markCost, seqCost = 64, 8

func newGroupState(key string) *groupState {
	return &groupState{key: key, g: attribution.NewGroup(), seq: map[string]int64{}, first: map[string]time.Time{}, last: map[string]time.Time{},
		whole: map[string]bool{}, watches: map[string]*attribution.Watch{}, seqs: map[string][]int64{}, marks: map[string]*rowMarks{}}
}

// follow hands a round's changes of a session to its watch (a new one
// when it has none) and returns the watch, and marks what changed at the
// group's top; groupReset is the group's Changes.Reset, which restates
// every session whole.
func (gs *groupState) follow(sc attribution.SessionChanges, groupReset bool, th attribution.Thresholds) *attribution.Watch {
	id := sc.Session.SessionID
	w := gs.watches[id]
	if w == nil {
		w = attribution.NewWatch(th)
		gs.watches[id] = w
	}
	w.Apply(sc, groupReset || sc.Reset)
	mk := gs.marks[id]
	if mk == nil || groupReset || sc.Reset {
		mk = &rowMarks{whole: gs.top, agents: map[string]int64{}, calls: map[string]int64{}}
		gs.marks[id] = mk
	}
	mk.seen = gs.top
	for _, a := range sc.Agents {
		mk.agents[a.AgentID] = gs.top
	}
	for _, c := range sc.ToolCalls {
		mk.calls[c.ToolUseID] = gs.top
	}
	return w
}

// forget drops what follow kept of every session, for a group rebuilt:
// its next changes report every session whole.
func (gs *groupState) forget() {
	clear(gs.watches)
	clear(gs.marks)
}

// storedUpTo returns the seq up to which the store holds the model of
// every event of the group when it holds that of stale sessions as of
// their seq (what their stored models reflect) and the others' whole: the
// seq before the first event of a stale session past its stored seq that
// the group applied.
func (gs *groupState) storedUpTo(stale map[string]int64) int64 {
	upTo := int64(math.MaxInt64)
	for id, stored := range stale {
		seqs := gs.seqs[id]
		if i, _ := slices.BinarySearch(seqs, stored+1); i < len(seqs) {
			upTo = min(upTo, seqs[i]-1)
		}
	}
	return upTo
}

// restate makes the group's next changes report what a store that holds
// the model of every event of the group up to seq from may lack: of each
// session reported changed since, the agents and calls that changed after
// from, or the session whole when it was reported whole after from (a row
// the store holds may have gone). The rows that last changed at or before
// from are stored as the group has them: what changed them was stored, and
// nothing applied since changed them. It returns how many agents and calls
// it reports.
func (gs *groupState) restate(from int64) int {
	n := 0
	changed := func(rows map[string]int64) func(string) bool {
		return func(row string) bool {
			if rows[row] > from {
				n++
				return true
			}
			return false
		}
	}
	for id, mk := range gs.marks {
		switch {
		case mk.seen <= from:
		case mk.whole > from:
			gs.g.Restate(id)
			n += len(mk.agents) + len(mk.calls)
		default:
			gs.g.RestateRows(id, changed(mk.agents), changed(mk.calls))
		}
	}
	return n
}

// size estimates the memory gs holds: its group's, its watches' and its
// marks'.
func (gs *groupState) size() int {
	n := gs.g.Size()
	for _, w := range gs.watches {
		n += w.Size()
	}
	for _, mk := range gs.marks {
		n += (len(mk.agents) + len(mk.calls)) * markCost
	}
	for _, seqs := range gs.seqs {
		n += cap(seqs) * seqCost
	}
	return n
}

// holdsIdle reports whether a session of gs had no event within
// modelWindow of the group's latest: one a load for the events at hand
// would leave out.
func (gs *groupState) holdsIdle() bool {
	var latest time.Time
	for _, t := range gs.last {
		if t.After(latest) {
			latest = t
		}
	}
	for _, t := range gs.last {
		if latest.Sub(t) > modelWindow {
			return true
		}
	}
	return false
}

// note records what the store says of an applied event.
func (gs *groupState) note(e *store.Event) {
	id := e.SessionID
	gs.seq[id] = max(gs.seq[id], e.Seq)
	gs.top = max(gs.top, e.Seq)
	seqs := gs.seqs[id]
	if n := len(seqs); n == 0 || seqs[n-1] < e.Seq {
		gs.seqs[id] = append(seqs, e.Seq)
	} else if i, found := slices.BinarySearch(seqs, e.Seq); !found {
		gs.seqs[id] = slices.Insert(seqs, i, e.Seq)
	}
	if f, ok := gs.first[id]; !ok || e.Time.Before(f) {
		gs.first[id] = e.Time
	}
	if l, ok := gs.last[id]; !ok || e.Time.After(l) {
		gs.last[id] = e.Time
	}
}

// apply applies ready events and loads sessions, and stores the changes in
// one PutModel; then it hands the events and the calls finished to the
// audit trail. It returns the round's version (the UpdatedSeq it stored
// them with) and how many of ready it applied: a standby leaves the events
// of groups beyond standbyLoads to their load.
func (m *modeler) apply(ctx context.Context, ready []pendingEvent, loads []string, heldMin map[string]int64) (int64, int, error) {
	// A standby (shared.go) applies to its groups and stores nothing.
	leading := !m.standby()
	restated := map[string]bool{} // group keys
	type work struct {
		gs      *groupState
		evs     []*store.Event
		touched map[string]bool // session ids with events this round
	}
	byKey := map[string]*work{}
	var order []string
	get := func(key string) *work {
		w := byKey[key]
		if w == nil {
			w = &work{touched: map[string]bool{}}
			byKey[key] = w
			order = append(order, key)
		}
		return w
	}
	for i := range ready {
		e := &ready[i].ev
		key, err := m.sessionKey(ctx, e)
		if err != nil {
			return 0, 0, err
		}
		w := get(key)
		w.evs = append(w.evs, e)
		w.touched[e.SessionID] = true
	}
	if !leading && len(m.deferred) > 0 {
		// Groups left to their load are loaded a few a round even when
		// no event comes for them, after those that have events: a
		// standby holds every group in memory a few rounds after its
		// start, ready for a takeover.
		for _, key := range slices.Sorted(maps.Keys(m.deferred))[:min(len(m.deferred), standbyLoads)] {
			get(key)
		}
	}
	for _, id := range dedupe(slices.Clone(loads)) {
		if m.restate[id] {
			// Stale in the store, current in memory: what the store
			// may lack is written (groupState.restate), and the session
			// row, which says what its model reflects.
			delete(m.restate, id)
			if key, ok := m.keys[id]; ok && m.groups.groups[key] != nil {
				get(key).touched[id] = true
				restated[key] = true
				continue
			}
			// Evicted since: loaded from the store, whole.
			delete(m.restateFrom, m.keys[id])
		}
		if gs := m.groups.groups[m.keys[id]]; gs != nil && gs.whole[id] {
			// Whole in its group: its stored events were read when it
			// was loaded (or it had none), and those since are applied
			// live.
			continue
		}
		s, err := m.st.Session(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		key := attribution.GroupKey(s.Host, s.User, s.TranscriptPath, s.CWD)
		m.remember(id, key)
		get(key).touched[id] = true
		// Its events are read with its group's, afresh.
		m.groups.take(key)
	}

	if m.perAgent != nil {
		m.perAgent.discard() // what a failed round noted
	}
	m.mu.Lock()
	m.version = max(m.version+1, time.Now().UnixMicro())
	version := m.version
	m.mu.Unlock()

	var ar *auditRound
	if m.audit != nil && leading {
		ar = newAuditRound(ready)
	}
	batch := m.bufs.batch
	defer m.bufs.reuse(&batch)
	var round []attribution.SessionChanges // for the sinks
	loadsLeft, deferred := standbyLoads, 0
	for _, key := range order {
		w := byKey[key]
		if m.groups.groups[key] == nil && m.deferred != nil {
			if !leading && loadsLeft == 0 {
				// Committed, so read from the store when the group is
				// loaded: its events wait for that, not applied now.
				d := m.deferred[key]
				if d == nil {
					d = map[string]bool{}
					m.deferred[key] = d
				}
				for id := range w.touched {
					d[id] = true
				}
				deferred += len(w.evs)
				continue
			}
			loadsLeft--
			for id := range m.deferred[key] {
				w.touched[id] = true // members of the load
			}
			delete(m.deferred, key)
		}
		gs := m.groups.take(key)
		var keep []string
		if gs != nil {
			lacks, err := m.lacks(ctx, gs, w.evs)
			if err != nil {
				return 0, 0, err
			}
			if lacks {
				// Loaded again, with the new session and every session it
				// held: each of them whole.
				keep = slices.Collect(maps.Keys(gs.whole))
				gs = nil
			}
		}
		loaded := gs == nil
		var stored storedDocs
		if loaded {
			var err error
			if gs, err = m.load(ctx, key, w.touched, keep, w.evs, leading); err != nil {
				return 0, 0, err
			}
		}
		if loaded && leading && len(m.sinks) > 0 {
			var err error
			if stored, err = m.storedRows(ctx, maps.Keys(gs.seq)); err != nil {
				return 0, 0, err
			}
		}
		if stale, ok := m.restateFrom[key]; ok && restated[key] {
			delete(m.restateFrom, key)
			m.restated.Add(gs.restate(gs.storedUpTo(stale)))
		}
		if leading && m.perAgent != nil && gs.counted == nil {
			// Kept as a standby: what it held was counted by the holder.
			gs.counted = m.countedOf(gs)
		}
		envs, payloads := m.bufs.envs[:0], m.bufs.payloads[:0]
		for _, e := range w.evs {
			if env, ok := m.envelope(e); ok {
				envs = append(envs, env)
				payloads = append(payloads, e.Payload)
			}
			gs.note(e)
		}
		rebuilds, rederived := gs.g.Rebuilds(), gs.g.Rederived()
		gs.g.ApplyDecoded(envs, payloads)
		m.bufs.envs, m.bufs.payloads = envs, payloads
		m.rebuilds.Add(gs.g.Rebuilds() - rebuilds)
		m.rederived.Add(gs.g.Rederived() - rederived)
		if !leading {
			// The holder stores the changes; the watches follow them, for
			// the day this collector takes over.
			ch := gs.g.Changes()
			if ch.Reset {
				gs.forget()
			}
			for _, sc := range ch.Sessions {
				gs.follow(sc, ch.Reset, m.signals)
			}
			m.evictions.Add(m.groups.put(key, gs))
			continue
		}
		sc, err := m.changes(gs, w.touched, version, heldMin, &batch, ar)
		if err != nil {
			return 0, 0, err
		}
		if len(m.sinks) > 0 {
			if loaded {
				// A group just loaded reports every row as changed; the
				// sinks saw the rows as stored before (before a restart,
				// or an eviction). A restated group reports what the
				// previous lease holder had not stored.
				sc = unseen(sc, stored)
			}
			round = append(round, sc...)
		}
		m.evictions.Add(m.groups.put(key, gs))
	}
	m.deferredGroups.Store(int64(len(m.deferred)))
	if !leading {
		return version, len(ready) - deferred, nil
	}
	if !batch.Empty() {
		if err := m.fillProjects(ctx, batch.Sessions); err != nil {
			return 0, 0, err
		}
		m.rows.Add(len(batch.Sessions) + len(batch.Agents) + len(batch.ToolCalls))
		// A collector alone on its store writes a round's rows whatever
		// happens meanwhile: stop waits for the write rather than cancel
		// it. Without a context that can end, the SQLite driver runs each
		// statement without a goroutine of its own to interrupt it, made
		// and woken per statement.
		wctx := context.WithoutCancel(ctx)
		if m.lease != nil {
			wctx = m.lease // a holder that lost the lease writes no more
		} else if m.shared != nil {
			wctx = ctx
		}
		if err := m.st.PutModel(wctx, batch); err != nil {
			return 0, 0, err
		}
		m.down.answered(m.log)
	}
	if m.perAgent != nil {
		m.perAgent.flush()
	}
	m.audit.enqueue(ready, ar)
	for _, s := range m.sinks {
		s.Offer(round)
	}
	return version, len(ready) - deferred, nil
}

// fillProjects sets the project of each session model whose model names
// none to the one it is listed under (listedProject), read from its stored
// session: the list's project filter selects on the stored models'. Few
// sessions need it.
func (m *modeler) fillProjects(ctx context.Context, models []store.SessionModel) error {
	for i := range models {
		if models[i].Project != "" {
			continue
		}
		sess, err := m.st.Session(ctx, models[i].SessionID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue // pruned meanwhile
		case err != nil:
			return err
		}
		models[i].Project = listedProject("", sess)
	}
	return nil
}

// ModelSink receives the session model's changes as the collector stores
// them: the way exports follow the model live without deriving any of it.
type ModelSink interface {
	// Offer is called on the modeler's goroutine after the rows of a round
	// are stored, with what that round changed (attribution.Group.Changes
	// of each group applied: copies the sink may keep). It must not block.
	Offer(changes []attribution.SessionChanges)
	// Stop is called once the collector applies no more changes; it may
	// take until ctx ends to hand on what it holds.
	Stop(ctx context.Context)
}

// storedDocs are hashes of the stored documents of a group's agents and
// calls: what the sinks were offered before the group was loaded.
type storedDocs struct{ agents, calls map[rowKey]uint64 }

// storedRows reads the storedDocs of sessions ids.
func (m *modeler) storedRows(ctx context.Context, ids iter.Seq[string]) (storedDocs, error) {
	out := storedDocs{agents: map[rowKey]uint64{}, calls: map[rowKey]uint64{}}
	for id := range ids {
		err := store.EachAgent(ctx, m.st, store.AgentFilter{SessionID: id, Limit: store.MaxLimit}, func(r store.AgentRow) error {
			out.agents[rowKey{id, r.AgentID}] = docHash(r.Doc)
			return nil
		})
		if err != nil {
			return out, err
		}
		err = store.EachToolCall(ctx, m.st, store.ToolCallFilter{SessionID: id, Limit: store.MaxLimit}, func(r store.ToolCallRow) error {
			out.calls[rowKey{id, r.ToolUseID}] = docHash(r.Doc)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

var docSeed = maphash.MakeSeed()

func docHash(doc []byte) uint64 { return maphash.Bytes(docSeed, doc) }

// unseen keeps, of each session's changes, the agents and calls whose
// document differs from the one stored, and the summary.
func unseen(sc []attribution.SessionChanges, stored storedDocs) []attribution.SessionChanges {
	same := func(docs map[rowKey]uint64, k rowKey, v any) bool {
		h, ok := docs[k]
		if !ok {
			return false
		}
		doc, err := json.Marshal(v)
		return err == nil && docHash(doc) == h
	}
	out := make([]attribution.SessionChanges, 0, len(sc))
	for _, c := range sc {
		id := c.Session.SessionID
		c.Agents = slices.DeleteFunc(slices.Clone(c.Agents), func(a *attribution.Agent) bool { return same(stored.agents, rowKey{id, a.AgentID}, a) })
		c.ToolCalls = slices.DeleteFunc(slices.Clone(c.ToolCalls), func(t *attribution.ToolCall) bool { return same(stored.calls, rowKey{id, t.ToolUseID}, t) })
		out = append(out, c)
	}
	return out
}

// changes adds to b what changed in gs since its last changes: the session
// models of the sessions touched and of those the model changed, their
// agents and calls; and the calls to ar, when not nil. It returns what
// changed, for the sinks.
func (m *modeler) changes(gs *groupState, touched map[string]bool, version int64, heldMin map[string]int64, b *store.ModelBatch, ar *auditRound) ([]attribution.SessionChanges, error) {
	ch := gs.g.Changes()
	models := map[string]*store.SessionModel{}
	model := func(id string) *store.SessionModel {
		sm := models[id]
		if sm == nil {
			sm = &store.SessionModel{
				SessionID: id, GroupKey: gs.key, Seq: gs.seq[id], Version: attribution.ModelVersion, UpdatedSeq: version,
				FirstEventAt: gs.first[id], LastEventAt: gs.last[id], AliasOf: ch.Aliases[id],
			}
			if h, ok := heldMin[id]; ok && h <= sm.Seq {
				sm.Seq = h - 1
			}
			models[id] = sm
		}
		return sm
	}
	if ch.Reset {
		gs.forget() // every session is in ch.Sessions, whole
		for id := range gs.seq {
			b.Reset = append(b.Reset, id)
			model(id)
		}
	}
	for id := range touched {
		model(id)
	}
	for _, sc := range ch.Sessions {
		id := sc.Session.SessionID
		if sc.Reset {
			b.Reset = append(b.Reset, id)
		}
		sm := model(id)
		var err error
		if sm.Summary, err = m.bufs.doc(sc.Session); err != nil {
			return nil, err
		}
		for _, a := range sc.Agents {
			doc, err := m.bufs.doc(a)
			if err != nil {
				return nil, err
			}
			b.Agents = append(b.Agents, store.AgentRow{
				SessionID: id, AgentID: a.AgentID, ParentAgentID: a.ParentAgentID, Depth: a.Depth,
				StartedAt: a.StartedAt, UpdatedSeq: version, Doc: doc,
			})
		}
		w := gs.follow(sc, ch.Reset, m.signals)
		if m.perAgent != nil {
			m.perAgent.observe(gs.counted, &sc, w)
		}
		m.stalls.note(sc.Session, w.Waiting(sc.Session))
		for _, c := range sc.ToolCalls {
			doc, err := m.bufs.call(c)
			if err != nil {
				return nil, err
			}
			b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{
				SessionID: id, ToolUseID: c.ToolUseID, AgentID: c.AgentID, ToolName: c.ToolName,
				Status: c.Status, Subtype: c.Subtype, Effect: string(c.Effect), StartedAt: c.StartedAt, MovedFrom: c.MovedFrom(),
				UpdatedSeq: version, Doc: doc,
			})
			ar.call(c)
		}
	}
	ids := make([]string, 0, len(models))
	for id := range models {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		sm := models[id]
		if sm.Summary == nil && sm.AliasOf == "" {
			// Touched without a change to its model: keep the stored
			// summary, advance what it reflects.
			sm.Summary = gs.summary(id)
		}
		if s := gs.g.Session(cmp.Or(sm.AliasOf, id)); s != nil {
			sm.Project = s.Project
		}
		b.Sessions = append(b.Sessions, *sm)
	}
	slices.Sort(b.Reset)
	return ch.Sessions, nil
}

// envelope returns the envelope of a stored event: as FromEnvelope decoded
// it, when the event was just committed, else decoded from its JSON. A
// broken one (stored envelopes are valid JSON) is logged and skipped, not
// allowed to stop every later update; its seq still counts as applied.
func (m *modeler) envelope(e *store.Event) (event.Envelope, bool) {
	env, err := store.EnvelopeOf(e)
	if err != nil {
		m.log.Warn("skipping a stored event", "seq", e.Seq, "err", err)
		return env, false
	}
	return env, true
}

// summary returns the current summary of session id as JSON, nil when the
// group has none (no event of it could be attributed).
func (gs *groupState) summary(id string) json.RawMessage {
	s := gs.g.Session(id)
	if s == nil {
		return nil
	}
	c := s.Summary()
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	return b
}

// sessionKey returns the group key of an event's session: the key of the
// first of its events that named a project, else the stored session's.
func (m *modeler) sessionKey(ctx context.Context, e *store.Event) (string, error) {
	if k, ok := m.keys[e.SessionID]; ok {
		return k, nil
	}
	if k := keyOf(e, ""); k != "" {
		m.remember(e.SessionID, k)
		return k, nil
	}
	s, err := m.st.Session(ctx, e.SessionID)
	if err != nil {
		return "", err
	}
	k := attribution.GroupKey(s.Host, s.User, s.TranscriptPath, s.CWD)
	m.remember(e.SessionID, k)
	return k, nil
}

func (m *modeler) remember(id, key string) {
	if len(m.keys) >= maxKnownSessions {
		clear(m.keys) // a miss costs one read of the session
	}
	m.keys[id] = key
}

// load reads a group not in memory from the store: the sessions touched,
// the sessions keep (those a group loaded again held), the sessions their
// stored models link them to, and the sessions of the group active within
// modelWindow of the events at hand.
//
// counting (the metrics per agent) reads what the store counted of them; a
// standby does not count.
func (m *modeler) load(ctx context.Context, key string, touched map[string]bool, keep []string, evs []*store.Event, counting bool) (*groupState, error) {
	m.loadsDone.Inc()
	members := make([]string, 0, modelMaxSessions)
	in := map[string]bool{}
	add := func(id string) {
		if id != "" && !in[id] && len(members) < max(modelMaxSessions, len(touched))+len(keep) {
			in[id] = true
			members = append(members, id)
		}
	}
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		add(id)
	}
	slices.Sort(keep)
	for _, id := range keep {
		add(id)
	}
	prev, err := m.st.SessionModels(ctx, ids)
	if err != nil {
		return nil, err
	}
	var linked []string
	var spans [][2]time.Time
	for _, id := range ids {
		p, ok := prev[id]
		if !ok {
			continue
		}
		linked = append(linked, p.AliasOf)
		var s attribution.Session
		if len(p.Summary) > 0 && json.Unmarshal(p.Summary, &s) == nil {
			linked = append(linked, s.ParentSessionID)
			linked = append(linked, s.ChildSessionIDs...)
			linked = append(linked, s.AliasSessionIDs...)
		}
		if !p.FirstEventAt.IsZero() {
			spans = append(spans, [2]time.Time{p.FirstEventAt, p.FirstEventAt}, [2]time.Time{p.LastEventAt, p.LastEventAt})
		}
	}
	if len(linked) > 0 {
		ls, err := m.st.SessionModels(ctx, linked)
		if err != nil {
			return nil, err
		}
		for _, id := range linked {
			if l, ok := ls[id]; ok && l.GroupKey == key {
				add(id)
			}
		}
	}
	for _, e := range evs {
		spans = append(spans, [2]time.Time{e.Time, e.Time})
	}
	for _, id := range ids {
		if s, err := m.st.Session(ctx, id); err == nil {
			spans = append(spans, [2]time.Time{s.FirstEventAt, s.FirstEventAt}, [2]time.Time{s.LastEventAt, s.LastEventAt})
		}
	}
	for i, w := range spans {
		spans[i] = [2]time.Time{w[0].Add(-modelWindow), w[1].Add(modelWindow)}
	}
	for _, w := range mergeWindows(spans) {
		near, err := m.st.GroupSessions(ctx, key, w[0], w[1], modelMaxSessions)
		if err != nil {
			return nil, err
		}
		for _, n := range near {
			add(n.SessionID)
		}
	}

	gs := newGroupState(key)
	if m.perAgent != nil && counting {
		gs.counted = newCounted()
		if err := m.baseline(ctx, gs.counted, members); err != nil {
			return nil, err
		}
	}
	// On a shared store, the events past the log read come through
	// readTail, in their order: read now they would be decoded twice.
	upTo := int64(-1)
	if m.shared != nil {
		m.mu.Lock()
		upTo = m.tail
		m.mu.Unlock()
	}
	var envs []event.Envelope
	for _, id := range members {
		f := store.EventFilter{SessionID: id, Limit: store.MaxLimit}
	pages:
		for {
			page, err := m.st.Events(ctx, f)
			if err != nil {
				return nil, err
			}
			for i := range page.Events {
				e := &page.Events[i]
				if upTo >= 0 && e.Seq > upTo {
					break pages
				}
				if env, ok := m.envelope(e); ok {
					envs = append(envs, env)
				}
				gs.note(e)
			}
			if page.Next == "" || len(page.Events) == 0 {
				break
			}
			f.Cursor = page.Next
		}
		m.remember(id, key)
		gs.whole[id] = true
	}
	gs.g.Apply(envs...)
	gs.loaded = gs.g.Size()
	return gs, nil
}

// lacks reports whether group gs, held in memory, lacks stored events of a
// session evs (events about to be applied to it) has: a session it is not
// whole of, whose log holds an event before the first of evs. A group is
// loaded with the sessions at hand and those the store's model links or
// dates near them, so a session it meets later may have events it never
// read: one committed by a collector that died before modelling them (no
// model row names it), or one back after more than modelWindow idle.
// Applied alone, its new events would make its model from them, which the
// session's seq would then claim current. The sessions it finds whole are
// marked so (gs.whole): each is looked up once, at its first events in the
// group.
func (m *modeler) lacks(ctx context.Context, gs *groupState, evs []*store.Event) (bool, error) {
	var first map[string]int64
	for _, e := range evs {
		if gs.whole[e.SessionID] {
			continue
		}
		if first == nil {
			first = map[string]int64{}
		}
		if s, ok := first[e.SessionID]; !ok || e.Seq < s {
			first[e.SessionID] = e.Seq
		}
	}
	for _, id := range slices.Sorted(maps.Keys(first)) {
		page, err := m.st.Events(ctx, store.EventFilter{SessionID: id, Limit: 1})
		if err != nil {
			return false, err
		}
		if len(page.Events) > 0 && page.Events[0].Seq < first[id] {
			// Possibly an event still held (applied later, once more):
			// the load reads it too.
			return true, nil
		}
		gs.whole[id] = true
	}
	return false, nil
}

// mergeWindows sorts time windows and merges those that overlap.
func mergeWindows(ws [][2]time.Time) [][2]time.Time {
	slices.SortFunc(ws, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var out [][2]time.Time
	for _, w := range ws {
		if n := len(out); n > 0 && !w[0].After(out[n-1][1]) {
			if w[1].After(out[n-1][1]) {
				out[n-1][1] = w[1]
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// groupCache keeps the groups' state between rounds within a budget of
// memory (attribution.Group.Size), the least recently used first out: an
// idle group is dropped, its rows being in the store, and loaded again
// (modeler.load) by the next round that has events of it. So the memory
// the model holds does not grow with what was stored, only with what is
// at hand.
//
// What is at hand is never dropped for the budget: a group put within
// cacheHot (one that had events in the last rounds) is kept, so that
// sessions worked on at once, each applied in its turn, do not evict each
// other round after round and each be read whole from the store again at
// its next event. The budget holds the idle groups; the groups at hand
// may go over it, up to ModelCacheCeiling times it, beyond which the least
// recently used goes whatever its age (a bound on memory whatever the
// input).
//
// A group grows as its sessions do and as new sessions join it (a
// project's sessions all share one group). One over the budget on its own
// that holds a session idle for more than modelWindow is dropped once it
// is more than twice the size it was loaded at, and loaded afresh, with
// only the sessions at hand and those lineage may link them to: so a
// project's old sessions leave memory. One whose sessions are all at hand
// would be loaded back as large as it is: it is kept, up to the ceiling.
type groupCache struct {
	budget int
	used   int
	groups map[string]*groupState
	sizes  map[string]int       // each group's Size when it was put
	at     map[string]time.Time // when each group was put
	order  []string             // least recently used first
	now    func() time.Time
}

const (
	// cacheHot is how long a group put is kept whatever the budget.
	cacheHot = 10 * time.Second
	// ModelCacheCeiling is how many times the budget the groups at hand may
	// hold (serve derives its memory limit from it).
	ModelCacheCeiling = 16
)

func newGroupCache(budget int) *groupCache {
	return &groupCache{budget: budget, groups: map[string]*groupState{}, sizes: map[string]int{},
		at: map[string]time.Time{}, now: time.Now}
}

// take removes and returns the state of key, or nil.
func (c *groupCache) take(key string) *groupState {
	g, ok := c.groups[key]
	if !ok {
		return nil
	}
	c.drop(key)
	return g
}

// drop forgets key, which the cache holds.
func (c *groupCache) drop(key string) {
	delete(c.groups, key)
	c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	c.used -= c.sizes[key]
	delete(c.sizes, key)
	delete(c.at, key)
}

// put keeps the state of key as the most recently used, evicting others
// to stay within budget, and returns how many groups it dropped (key's
// included, when it is not kept).
func (c *groupCache) put(key string, g *groupState) int {
	size := g.size()
	ceiling := ModelCacheCeiling * c.budget
	if size > c.budget && (size > ceiling || size > 2*g.loaded && g.holdsIdle()) {
		return 1
	}
	now := c.now()
	n := 0
	for c.used+size > c.budget && len(c.order) > 0 {
		old := c.order[0]
		if now.Sub(c.at[old]) < cacheHot && c.used+size <= ceiling {
			break // the rest is at hand too: more recent
		}
		c.drop(old)
		n++
	}
	c.groups[key] = g
	c.sizes[key] = size
	c.at[key] = now
	c.order = append(c.order, key)
	c.used += size
	return n
}

// modelingStore is the store as the writer sees it: every Insert that
// stores events hands them to the modeler before the writer answers the
// requests, so a client that reads after its POST returned finds them
// pending (and waits for them) rather than stale.
type modelingStore struct {
	store.Store
	m *modeler
}

func (s modelingStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	keys := s.m.committing(events)
	n, err := s.Store.Insert(ctx, events)
	s.marked(events, keys, n)
	return n, err
}

// marked hands the events of a commit that stored n of them to the
// modeler.
func (s modelingStore) marked(events []store.Event, keys []string, n int) {
	if n > 0 {
		s.m.mark(events, keys)
	} else {
		s.m.abandon(events, keys)
	}
}

// InsertOwned is Insert through store.OwnedInserter, which the Server
// asks for only of a store that implements it (commit).
func (s modelingStore) InsertOwned(ctx context.Context, user string, events []store.Event) (int, error) {
	keys := s.m.committing(events)
	n, err := s.Store.(store.OwnedInserter).InsertOwned(ctx, user, events)
	s.marked(events, keys, n)
	return n, err
}
