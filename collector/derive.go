package collector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// The derived state (agents, tool calls, lineage, status) is computed by
// package attribution from the stored events and kept beside them
// (store.Derived), so the query API reads it instead of deriving on every
// request. It is recomputed from what is stored, never updated from what
// arrives, so it does not depend on the order or the repetition of the
// events: after each commit the sessions it touched are marked dirty, and
// one background goroutine rebuilds them.
//
// A rebuild covers a group of sessions, because lineage needs neighbours (a
// fork shows up as the old session's SessionStart followed by the new
// session's events): the dirty sessions of one group key (host, user and
// project, as attribution groups them: a fork, resume, clear, compaction or
// -c continue stays in its project) together with
//
//   - the derived sessions of that key active within deriveWindow of the
//     first event, the last event or the newly committed events of a dirty
//     session, and
//   - the sessions a dirty one was linked to by its last derivation (its
//     parent, children and folded throwaway ids), however long ago,
//
// at most deriveMaxSessions sessions, each with all of its events. The
// window is an hour because lineage evidence always sits right before the
// child's first event — the client fires the parent's SessionEnd(clear),
// PreCompact or orphaned SessionStart(resume) and then the child's first
// event within the same process start, in practice within a second; an hour
// also covers a fork whose first event waits for the user's prompt. The cap
// keeps a project with hundreds of sessions in one hour (a script looping
// claude -p) from making each rebuild load them all; a session that only its
// own window or links would reach is then left out, and its lineage is
// recomputed when it is itself rebuilt.
//
// Each group keeps an attribution.Builder between rebuilds (up to
// deriveCacheBytes of envelopes in all), so a rebuild only reads and decodes
// the events committed since the last one. A group is rebuilt at most once
// per max(deriveDelay, 4 × its last rebuild's duration), which bounds the
// share of the machine rebuilding takes however fast events arrive.
//
// Reads: GET /v1/sessions/{id} and its /agents and /tool-calls wait up to
// Config.DeriveWait while a rebuild of that session (or of a session its group
// shares) is pending, then answer what is derived. Every answer carries
// derived_seq, the session's last_seq the derived fields reflect: they are
// current when it equals last_seq. The session list never waits: it shows
// the latest derived state with each session's derived_seq.
const (
	// deriveDelay is how long the deriver lets a burst of commits gather
	// before it rebuilds.
	deriveDelay = 150 * time.Millisecond
	// DefaultDeriveWait is the default of Config.DeriveWait.
	DefaultDeriveWait = 2 * time.Second
	// deriveWindow is how far around a dirty session's events the sessions
	// of its group are taken into a rebuild.
	deriveWindow = time.Hour
	// deriveMaxSessions caps the sessions of one rebuild.
	deriveMaxSessions = 64
	// deriveMaxDirty is the most dirty sessions one rebuild takes; the rest
	// of a group (a backlog after a restart) waits for the next.
	deriveMaxDirty = 32
	// deriveCacheBytes bounds the envelopes the groups' Builders keep.
	deriveCacheBytes = 64 << 20
	// staleBatch is the page size of the stale sessions read at start.
	staleBatch = 500
)

// Session status (SessionView.Status).
const (
	StatusRunning = "running"
	StatusEnded   = "ended"
	// StatusFailed: the main agent's latest turn ended with StopFailure
	// (an API error, a rate limit) and no prompt came after it.
	StatusFailed = "failed"
)

// VirtualPrefix starts the id of a virtual session: sub--<agent_id>
// addresses one subagent like a session.
const VirtualPrefix = "sub--"

// derivedSummary is the JSON of store.Derived.Summary: attribution's
// session summary with the session's status.
type derivedSummary struct {
	*attribution.Session
	Status string `json:"status"`
}

// pendingSession is a session with committed events not yet derived.
type pendingSession struct {
	gen uint64 // the mark that last touched it
	// hint is the group key its events named: readers decide with it
	// whether to wait, and rounds pick what to rebuild by it; the rebuild
	// itself takes the key from the stored session.
	hint string
	// hinted reports whether hint names a project (events without a
	// transcript path or cwd name none).
	hinted bool
	// from and to bound the times of the events committed since its last
	// rebuild (the span, after a restart).
	from, to time.Time
}

// deriver owns the derived state. mark is called after commits; one
// goroutine (run) rebuilds.
type deriver struct {
	st      store.Store
	log     *slog.Logger
	maxWait time.Duration

	mu      sync.Mutex
	gen     uint64
	pending map[string]*pendingSession
	hints   map[string]int // group key → pending sessions hinting it
	changed chan struct{}  // closed and replaced when pending shrinks
	wake    chan struct{}  // buffered 1

	// Owned by the run goroutine.
	next  map[string]time.Time // group key → earliest next rebuild
	cache *groupCache

	cancel context.CancelFunc
	exited chan struct{}

	rebuilds      *metrics.Counter
	rebuildErrors *metrics.Counter
	rebuildTime   *metrics.Histogram
	rebuildEvents *metrics.Counter
}

func newDeriver(st store.Store, log *slog.Logger, set *metrics.Set, maxWait time.Duration) *deriver {
	d := &deriver{
		st:            st,
		log:           log,
		maxWait:       maxWait,
		pending:       map[string]*pendingSession{},
		hints:         map[string]int{},
		changed:       make(chan struct{}),
		wake:          make(chan struct{}, 1),
		next:          map[string]time.Time{},
		cache:         newGroupCache(deriveCacheBytes),
		exited:        make(chan struct{}),
		rebuilds:      set.NewCounter(`hookwatch_derive_rebuilds_total`),
		rebuildErrors: set.NewCounter(`hookwatch_derive_errors_total`),
		rebuildTime:   set.NewHistogram(`hookwatch_derive_rebuild_duration_seconds`),
		rebuildEvents: set.NewCounter(`hookwatch_derive_events_loaded_total`),
	}
	set.NewGauge(`hookwatch_derive_pending_sessions`, func() float64 {
		d.mu.Lock()
		defer d.mu.Unlock()
		return float64(len(d.pending))
	})
	// Before New returns, so that a read right after a start waits for
	// what is stale rather than answering it.
	d.markStale(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go d.run(ctx)
	return d
}

// stop ends the goroutine, abandoning a rebuild in progress: what is not
// derived is stale in the store and rebuilt on the next start.
func (d *deriver) stop() {
	d.cancel()
	<-d.exited
}

// groupKey is the key of the sessions lineage can link.
func groupKey(host, user, transcriptPath, cwd string) string {
	return host + "\x00" + user + "\x00" + attribution.Project(transcriptPath, cwd)
}

// mark records that events were committed (those with a Seq) and wakes the
// goroutine.
func (d *deriver) mark(events []store.Event) {
	d.mu.Lock()
	marked := false
	for i := range events {
		e := &events[i]
		if e.Seq == 0 || e.SessionID == "" {
			continue
		}
		if !marked {
			d.gen++
			marked = true
		}
		f := e.Facts
		p := d.pending[e.SessionID]
		if p == nil {
			p = &pendingSession{from: e.Time, to: e.Time}
			d.pending[e.SessionID] = p
			d.setHint(p, groupKey(f.Host, f.User, f.TranscriptPath, f.CWD))
		}
		if !p.hinted && (f.TranscriptPath != "" || f.CWD != "") {
			d.setHint(p, groupKey(f.Host, f.User, f.TranscriptPath, f.CWD))
			p.hinted = true
		}
		p.gen = d.gen
		if e.Time.Before(p.from) {
			p.from = e.Time
		}
		if e.Time.After(p.to) {
			p.to = e.Time
		}
	}
	d.mu.Unlock()
	if marked {
		d.poke()
	}
}

// setHint sets the hint of a pending session; d.mu is held.
func (d *deriver) setHint(p *pendingSession, key string) {
	if p.hint != "" { // a group key is never "": it holds separators
		d.unhint(p)
	}
	p.hint = key
	d.hints[key]++
}

// unhint forgets the hint of a pending session; d.mu is held.
func (d *deriver) unhint(p *pendingSession) {
	if d.hints[p.hint]--; d.hints[p.hint] <= 0 {
		delete(d.hints, p.hint)
	}
}

func (d *deriver) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// done removes the sessions derived from events read after mark generation
// gen, and wakes the readers waiting for them.
func (d *deriver) done(ids []string, gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.pending)
	for _, id := range ids {
		p := d.pending[id]
		if p == nil || p.gen > gen {
			continue
		}
		d.unhint(p)
		delete(d.pending, id)
	}
	if len(d.pending) != n {
		close(d.changed)
		d.changed = make(chan struct{})
	}
}

// isPending reports whether session id, or a session of group key, awaits
// a rebuild (with both empty: whether any session does), and returns the
// channel closed when that may have changed.
func (d *deriver) isPending(id, key string) (bool, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id == "" && key == "" {
		return len(d.pending) > 0, d.changed
	}
	_, ok := d.pending[id]
	return ok || key != "" && d.hints[key] > 0, d.changed
}

// wait blocks while session id, or a session of group key, has a pending
// rebuild (with both empty: while any session has), at most d.maxWait and
// until ctx ends. It reports whether it waited, that is whether a caller
// should read again.
func (d *deriver) wait(ctx context.Context, id, key string) bool {
	var timeout <-chan time.Time
	for {
		pending, changed := d.isPending(id, key)
		if !pending {
			return timeout != nil
		}
		if timeout == nil {
			t := time.NewTimer(d.maxWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return true
		case <-ctx.Done():
			return true
		case <-d.exited:
			return true
		}
	}
}

func (d *deriver) run(ctx context.Context) {
	defer close(d.exited)
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
			// Let the rest of a burst commit first.
			t := time.NewTimer(deriveDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		case <-due:
		}
		due = nil
		if after, ok := d.round(ctx); ok {
			due = time.After(after)
		}
	}
}

// markStale marks every session whose derived state is missing or older
// than its events: what was committed while no deriver ran (a crash, an
// upgrade from a store without derived state).
func (d *deriver) markStale(ctx context.Context) {
	after := ""
	for {
		page, err := d.st.StaleSessions(ctx, after, staleBatch)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("cannot list the sessions to derive", "err", err)
			}
			return
		}
		if len(page) == 0 {
			return
		}
		d.mu.Lock()
		d.gen++
		for _, s := range page {
			if _, ok := d.pending[s.ID]; ok {
				continue
			}
			p := &pendingSession{gen: d.gen, from: s.FirstEventAt, to: s.LastEventAt, hinted: true}
			d.setHint(p, groupKey(s.Host, s.User, s.TranscriptPath, s.CWD))
			d.pending[s.ID] = p
		}
		d.mu.Unlock()
		d.poke()
		after = page[len(page)-1].ID
	}
}

// round rebuilds the groups with pending sessions whose turn has come, at
// most deriveMaxDirty of each group's sessions (earliest first). It returns
// how long until the next rebuild is due, if one is.
func (d *deriver) round(ctx context.Context) (time.Duration, bool) {
	type cand struct {
		id   string
		from time.Time
	}
	d.mu.Lock()
	gen := d.gen
	byHint := map[string][]cand{}
	spans := make(map[string][2]time.Time, len(d.pending))
	for id, p := range d.pending {
		byHint[p.hint] = append(byHint[p.hint], cand{id, p.from})
		spans[id] = [2]time.Time{p.from, p.to}
	}
	d.mu.Unlock()

	var soonest time.Duration
	var again bool
	due := func(wait time.Duration) {
		if !again || wait < soonest {
			soonest, again = max(wait, 0), true
		}
	}
	now := time.Now()
	hints := make([]string, 0, len(byHint))
	for h := range byHint {
		hints = append(hints, h)
	}
	slices.Sort(hints)
	for _, hint := range hints {
		if ctx.Err() != nil {
			return 0, false
		}
		if at, ok := d.next[hint]; ok && now.Before(at) {
			due(at.Sub(now))
			continue
		}
		cands := byHint[hint]
		slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(a.from.Compare(b.from), cmp.Compare(a.id, b.id)) })
		if len(cands) > deriveMaxDirty {
			cands = cands[:deriveMaxDirty]
			due(0)
		}
		// The stored sessions say which group each really belongs to.
		groups := map[string][]store.Session{}
		for _, c := range cands {
			s, err := d.st.Session(ctx, c.id)
			if errors.Is(err, store.ErrNotFound) {
				d.done([]string{c.id}, gen) // nothing to derive
				continue
			}
			if err != nil {
				if ctx.Err() != nil {
					return 0, false
				}
				d.log.Error("cannot read a session to derive", "session", c.id, "err", err)
				d.rebuildErrors.Inc()
				d.next[hint] = time.Now().Add(time.Second)
				due(time.Second)
				break
			}
			key := groupKey(s.Host, s.User, s.TranscriptPath, s.CWD)
			groups[key] = append(groups[key], s)
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, key := range keys {
			dirty := groups[key]
			start := time.Now()
			written, err := d.rebuild(ctx, key, dirty, spans, gen)
			took := time.Since(start)
			// At most a fifth of the time goes to rebuilding one group.
			next := time.Now().Add(max(deriveDelay, 4*took))
			if err != nil {
				if ctx.Err() != nil {
					return 0, false
				}
				d.log.Error("cannot derive sessions", "sessions", len(dirty), "err", err)
				d.rebuildErrors.Inc()
				next = time.Now().Add(max(time.Second, 4*took))
			} else {
				d.rebuilds.Inc()
				d.rebuildTime.Update(took.Seconds())
				d.done(written, gen)
			}
			for _, k := range []string{hint, key} {
				if next.After(d.next[k]) {
					d.next[k] = next
				}
			}
		}
	}
	// Forget throttles that have passed, so the map stays small.
	for k, at := range d.next {
		if now.After(at.Add(time.Minute)) {
			delete(d.next, k)
		}
	}
	// Whatever is still pending (marked during the round, throttled, or
	// left for the next chunk) is due when its throttle ends.
	d.mu.Lock()
	left := len(d.pending)
	d.mu.Unlock()
	if left > 0 {
		due(deriveDelay)
	}
	return soonest, again
}

// rebuild derives the group of dirty sessions (all of key) and stores the
// state of every session it covers. It returns the ids stored.
func (d *deriver) rebuild(ctx context.Context, key string, dirty []store.Session, spans map[string][2]time.Time, gen uint64) ([]string, error) {
	members := make([]string, 0, deriveMaxSessions)
	in := map[string]bool{}
	add := func(id string) {
		if !in[id] && len(members) < max(deriveMaxSessions, len(dirty)) {
			in[id] = true
			members = append(members, id)
		}
	}
	dirtyIDs := make([]string, len(dirty))
	for i, s := range dirty {
		dirtyIDs[i] = s.ID
		add(s.ID)
	}
	// The sessions the dirty ones were linked to, however long ago.
	prev, err := d.st.DerivedSummaries(ctx, dirtyIDs)
	if err != nil {
		return nil, err
	}
	var linked []string
	for _, id := range dirtyIDs {
		p, ok := prev[id]
		if !ok {
			continue
		}
		if p.AliasOf != "" {
			linked = append(linked, p.AliasOf)
		}
		var sum derivedSummary
		if len(p.Summary) > 0 && json.Unmarshal(p.Summary, &sum) == nil && sum.Session != nil {
			linked = append(linked, sum.ParentSessionID)
			linked = append(linked, sum.ChildSessionIDs...)
			linked = append(linked, sum.AliasSessionIDs...)
		}
	}
	if len(linked) > 0 {
		ls, err := d.st.DerivedSummaries(ctx, linked)
		if err != nil {
			return nil, err
		}
		for _, id := range linked {
			if l, ok := ls[id]; ok && l.GroupKey == key {
				add(id)
			}
		}
	}
	// The sessions of the group active around the dirty ones' events.
	var windows [][2]time.Time
	for _, s := range dirty {
		sp := spans[s.ID]
		for _, at := range [][2]time.Time{{s.FirstEventAt, s.FirstEventAt}, {s.LastEventAt, s.LastEventAt}, sp} {
			if !at[0].IsZero() {
				windows = append(windows, [2]time.Time{at[0].Add(-deriveWindow), at[1].Add(deriveWindow)})
			}
		}
	}
	for _, w := range mergeWindows(windows) {
		near, err := d.st.DerivedGroup(ctx, key, w[0], w[1], deriveMaxSessions)
		if err != nil {
			return nil, err
		}
		for _, n := range near {
			add(n.SessionID)
		}
	}

	g := d.cache.take(key)
	for _, id := range members {
		if err := d.load(ctx, g, id); err != nil {
			return nil, err
		}
	}
	res := g.b.Result()
	out := make([]store.Derived, 0, len(members))
	written := make([]string, 0, len(members))
	for _, id := range members {
		dv, err := g.derived(res, key, id)
		if err != nil {
			return nil, err
		}
		h := hashDerived(dv)
		written = append(written, id)
		if g.hash[id] == h {
			continue // unchanged: the stored state is this one
		}
		g.hash[id] = h
		out = append(out, dv)
	}
	if err := d.st.PutDerived(ctx, out); err != nil {
		g.hash = map[string]uint64{} // unsure what is stored now
		return nil, err
	}
	d.cache.put(key, g)
	return written, nil
}

// mergeWindows sorts time windows and merges those that overlap.
func mergeWindows(ws [][2]time.Time) [][2]time.Time {
	sort.Slice(ws, func(i, j int) bool { return ws[i][0].Before(ws[j][0]) })
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

// load adds the events of session id committed since the group last read
// it.
func (d *deriver) load(ctx context.Context, g *group, id string) error {
	f := store.EventFilter{SessionID: id, Cursor: store.EventCursor(g.loaded[id]), Limit: store.MaxLimit}
	for {
		page, err := d.st.Events(ctx, f)
		if err != nil {
			return err
		}
		envs := make([]event.Envelope, 0, len(page.Events))
		for i := range page.Events {
			e := &page.Events[i]
			var env event.Envelope
			if err := json.Unmarshal(e.Envelope, &env); err != nil {
				// Stored envelopes are valid JSON; a broken one is skipped,
				// not allowed to stop every later derivation.
				d.log.Warn("cannot decode a stored envelope", "seq", e.Seq, "err", err)
			} else {
				envs = append(envs, env)
			}
			g.note(e)
		}
		g.b.Add(envs...)
		d.rebuildEvents.Add(len(page.Events))
		if page.Next == "" || len(page.Events) == 0 {
			return nil
		}
		f.Cursor = page.Next
	}
}

// turn is the latest main-agent event that starts or ends a turn.
type turn struct {
	at      time.Time
	id      string
	failure bool // StopFailure
}

// group is the state kept between rebuilds of one group key.
type group struct {
	b      *attribution.Builder
	loaded map[string]int64 // session → largest seq read
	first  map[string]time.Time
	last   map[string]time.Time
	turns  map[string]turn
	hash   map[string]uint64 // session → hash of the state last stored
	bytes  int
}

func newGroup() *group {
	return &group{
		b: attribution.NewBuilder(), loaded: map[string]int64{}, first: map[string]time.Time{},
		last: map[string]time.Time{}, turns: map[string]turn{}, hash: map[string]uint64{},
	}
}

// note records what the group tracks itself about a stored event.
func (g *group) note(e *store.Event) {
	id := e.SessionID
	g.loaded[id] = max(g.loaded[id], e.Seq)
	g.bytes += len(e.Envelope)
	if f, ok := g.first[id]; !ok || e.Time.Before(f) {
		g.first[id] = e.Time
	}
	if l, ok := g.last[id]; !ok || e.Time.After(l) {
		g.last[id] = e.Time
	}
	if e.AgentID != "" {
		return
	}
	switch e.Event {
	case event.UserPromptSubmit, event.Stop, event.StopFailure:
		// The latest by (time, id), so that arrival order does not matter.
		t := turn{at: e.Time, id: e.ID, failure: e.Event == event.StopFailure}
		cur, ok := g.turns[id]
		if !ok || t.at.After(cur.at) || t.at.Equal(cur.at) && t.id > cur.id {
			g.turns[id] = t
		}
	}
}

// derived is the state of session id in res.
func (g *group) derived(res *attribution.Result, key, id string) (store.Derived, error) {
	dv := store.Derived{SessionID: id, GroupKey: key, Seq: g.loaded[id], FirstEventAt: g.first[id], LastEventAt: g.last[id]}
	if to, ok := res.Aliases[id]; ok {
		dv.AliasOf = to
		return dv, nil
	}
	s := res.Session(id)
	if s == nil {
		return dv, nil // no event of it could be attributed
	}
	status := StatusRunning
	switch {
	case g.turns[id].failure:
		status = StatusFailed
	case s.EndedAt != nil:
		status = StatusEnded
	}
	var err error
	if dv.Summary, err = json.Marshal(derivedSummary{Session: s.Summary(), Status: status}); err != nil {
		return dv, err
	}
	if dv.Agents, err = json.Marshal(s.Agents); err != nil {
		return dv, err
	}
	if dv.ToolCalls, err = json.Marshal(s.ToolCalls); err != nil {
		return dv, err
	}
	for _, a := range s.Agents {
		if a.AgentID != "" {
			dv.AgentIDs = append(dv.AgentIDs, a.AgentID)
		}
	}
	return dv, nil
}

// hashDerived fingerprints a derived state, to skip storing it unchanged.
func hashDerived(d store.Derived) uint64 {
	h := fnv.New64a()
	for _, s := range []string{d.GroupKey, d.AliasOf, d.FirstEventAt.String(), d.LastEventAt.String()} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var seq [8]byte
	for i := range seq {
		seq[i] = byte(d.Seq >> (8 * i))
	}
	h.Write(seq[:])
	for _, b := range [][]byte{d.Summary, d.Agents, d.ToolCalls} {
		h.Write(b)
		h.Write([]byte{0})
	}
	for _, a := range d.AgentIDs {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// groupCache keeps the groups' state between rebuilds, least recently used
// first out, within a budget of envelope bytes.
type groupCache struct {
	budget int
	used   int
	groups map[string]*group
	order  []string // least recently used first
}

func newGroupCache(budget int) *groupCache {
	return &groupCache{budget: budget, groups: map[string]*group{}}
}

// take removes and returns the state of key, or a new one.
func (c *groupCache) take(key string) *group {
	g, ok := c.groups[key]
	if !ok {
		return newGroup()
	}
	delete(c.groups, key)
	c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	c.used -= g.bytes
	return g
}

// put keeps the state of key as the most recently used, evicting others
// to stay within budget. A group larger than the budget is not kept.
func (c *groupCache) put(key string, g *group) {
	if g.bytes > c.budget {
		return
	}
	for c.used+g.bytes > c.budget && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.used -= c.groups[old].bytes
		delete(c.groups, old)
	}
	c.groups[key] = g
	c.order = append(c.order, key)
	c.used += g.bytes
}

// derivingStore is the store as the writer sees it: every Insert that
// stores events marks their sessions for the deriver before the writer
// answers the requests, so a client that reads after its POST returned
// finds them pending (and waits for them) rather than stale.
type derivingStore struct {
	store.Store
	d *deriver
}

func (s derivingStore) Insert(ctx context.Context, events []store.Event) (int, error) {
	n, err := s.Store.Insert(ctx, events)
	if n > 0 {
		s.d.mark(events)
	}
	return n, err
}
