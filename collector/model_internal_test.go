package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func TestMergeWindows(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	f := func(in [][2]int, want [][2]int) {
		t.Helper()
		var ws [][2]time.Time
		for _, w := range in {
			ws = append(ws, [2]time.Time{at(w[0]), at(w[1])})
		}
		var got [][2]int
		for _, w := range mergeWindows(ws) {
			got = append(got, [2]int{int(w[0].Unix()), int(w[1].Unix())})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("mergeWindows(%v) = %v, want %v", in, got, want)
		}
	}
	f(nil, nil)
	f([][2]int{{5, 9}}, [][2]int{{5, 9}})
	f([][2]int{{20, 30}, {0, 10}, {10, 12}, {25, 26}}, [][2]int{{0, 12}, {20, 30}})
	f([][2]int{{0, 100}, {10, 20}}, [][2]int{{0, 100}})
}

func TestGroupCache(t *testing.T) {
	// g is a group of one envelope, whose Size is unit plus n bytes of
	// payload.
	one := newGroupState("k")
	one.g.Apply(event.Envelope{ID: "e", ReceivedAt: time.Unix(1, 0), Payload: json.RawMessage(`{"session_id":"s","p":""}`)})
	unit := one.g.Size()
	g := func(n int) *groupState {
		x := newGroupState("k")
		x.g.Apply(event.Envelope{ID: fmt.Sprint("e", n), ReceivedAt: time.Unix(1, 0), Payload: json.RawMessage(`{"session_id":"s","p":"` + strings.Repeat("x", n) + `"}`)})
		if x.g.Size() != unit+n {
			t.Fatalf("group of %d bytes, want %d", x.g.Size(), unit+n)
		}
		return x
	}
	size := func(x *groupState) int {
		if x == nil {
			return 0
		}
		return x.g.Size() - unit
	}
	c := newGroupCache(3*unit + 100)
	clock := time.Unix(1000, 0)
	c.now = func() time.Time { return clock }
	idle := func() { clock = clock.Add(cacheHot) } // what was put is no longer at hand
	evicted := 0
	put := func(key string, x *groupState) { evicted += c.put(key, x) }
	put("a", g(40))
	put("b", g(40))
	if x := c.take("a"); size(x) != 40 {
		t.Fatal("a was not kept")
	}
	put("a", g(40)) // now the most recently used
	idle()
	put("c", g(40)) // evicts b, the least recently used
	if x := c.take("b"); x != nil || evicted != 1 {
		t.Fatalf("b was not evicted (%d evictions)", evicted)
	}
	if x := c.take("a"); size(x) != 40 {
		t.Fatal("a was evicted")
	}
	for i := range 10 {
		idle()
		put(fmt.Sprint(i), g(30))
	}
	if c.used > c.budget || len(c.groups) != 3 || len(c.order) != 3 || len(c.sizes) != 3 || len(c.at) != 3 {
		t.Fatalf("cache over budget: used %d, %d groups", c.used, len(c.groups))
	}

	// Groups at hand are kept over the budget, up to the ceiling, the
	// least recently used out beyond it.
	idle()
	for i := range 2 * ModelCacheCeiling {
		put(fmt.Sprint("hot", i), g(unit))
	}
	if c.used > ModelCacheCeiling*c.budget || c.used <= c.budget {
		t.Fatalf("groups at hand: used %d, want over the budget %d and within %d", c.used, c.budget, ModelCacheCeiling*c.budget)
	}
	if c.groups["hot0"] != nil || c.groups[fmt.Sprint("hot", 2*ModelCacheCeiling-1)] == nil {
		t.Fatal("the ceiling did not evict the least recently used group at hand")
	}
	idle()
	put("cold", g(30)) // what was at hand is idle now: back within budget
	if c.used > c.budget || c.groups["cold"] == nil {
		t.Fatalf("idle groups kept over the budget: used %d of %d", c.used, c.budget)
	}
	c.take("cold")

	// A group over the budget whose sessions are all at hand is kept: a
	// reload would hold as much.
	big := g(3*unit + 101)
	put("big", big)
	if c.take("big") != big {
		t.Fatal("a group at hand over the budget was not kept")
	}
	// One that holds a session idle for longer than modelWindow is dropped
	// once twice its loaded size, to be loaded with the sessions at hand.
	big.g.Apply(event.Envelope{ID: "new", ReceivedAt: time.Unix(1, 0).Add(2 * modelWindow), Payload: json.RawMessage(`{"session_id":"s2","p":""}`)})
	big.note(&store.Event{SessionID: "s", Time: time.Unix(1, 0)})
	big.note(&store.Event{SessionID: "s2", Time: time.Unix(1, 0).Add(2 * modelWindow)})
	before := evicted
	put("big", big)
	if c.groups["big"] != nil || evicted != before+1 {
		t.Fatalf("a group holding an idle session, over twice its loaded size, was kept (used %d)", c.used)
	}
	// Loaded that large, it is kept until it doubles.
	big.loaded = big.g.Size()
	put("big", big)
	if c.take("big") != big {
		t.Fatal("a group over the budget when loaded was not kept")
	}
	// Over the ceiling, nothing keeps it.
	huge := g(ModelCacheCeiling*c.budget + 1)
	huge.loaded = huge.g.Size()
	put("huge", huge)
	if c.groups["huge"] != nil {
		t.Fatalf("a group over the ceiling was kept (used %d)", c.used)
	}
}

// TestReadTailBounded: the lease holder reads at most tailBudget events of
// the log per round, however far behind it is, so that a log growing
// faster than one read empties it still moves the model on; it queues
// every event once, in seq order, those it committed itself as mark kept
// them.
func TestReadTailBounded(t *testing.T) {
	ctx := context.Background()
	db := postgres.MustOpenDB(t, pgtest.NewDatabase(t))
	events := storetest.CorpusEvents(t)
	if _, err := db.Insert(ctx, events); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	m := &modeler{st: db, log: slog.New(slog.DiscardHandler), pending: map[string]int{},
		tailBudget: 7, fromLog: set.NewCounter("read"), errors: set.NewCounter("errors")}
	// The holder committed one of them itself: mark kept it, decoded.
	var own int64
	for _, e := range events {
		if e.SessionID != "" {
			own = e.Seq
			m.mine.put(pendingEvent{ev: e, arrived: time.Unix(1, 0)})
			break
		}
	}
	reads := 0
	for more := true; more; reads++ {
		before := len(m.queue)
		more = m.readTail(ctx)
		if n := len(m.queue) - before; n > m.tailBudget {
			t.Fatalf("one read queued %d events, more than %d", n, m.tailBudget)
		}
		if reads > len(events) {
			t.Fatal("readTail does not come to the log's end")
		}
	}
	var want []int64
	for _, e := range events {
		if e.SessionID != "" {
			want = append(want, e.Seq)
		}
	}
	var got []int64
	for _, p := range m.queue {
		got = append(got, p.ev.Seq)
		if (p.ev.Seq == own) != p.arrived.Equal(time.Unix(1, 0)) {
			t.Fatalf("event %d: queued from the log rather than as committed, or the reverse", p.ev.Seq)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("queued seqs %v, want %v", got, want)
	}
	if reads < len(events)/m.tailBudget || m.mine.len() != 0 || m.tail != events[len(events)-1].Seq {
		t.Fatalf("%d reads of %d events, %d own seqs left, tail %d", reads, len(events), m.mine.len(), m.tail)
	}
}

// TestOwnCommits: a collector's own commits come out of the queue in seq
// order as the log read meets them, one marked late (two goroutines
// inserting at once) in its place; those before the start are dropped.
func TestOwnCommits(t *testing.T) {
	var o ownCommits
	put := func(seqs ...int64) {
		for _, s := range seqs {
			o.put(pendingEvent{ev: store.Event{Seq: s}})
		}
	}
	take := func(seq int64, want bool) {
		t.Helper()
		p, ok := o.take(seq)
		if ok != want || (ok && p.ev.Seq != seq) {
			t.Fatalf("take(%d) = %d, %v; want %v", seq, p.ev.Seq, ok, want)
		}
	}
	put(3, 4, 7, 5, 6)
	if n := o.dropTo(3); n != 1 || o.len() != 4 {
		t.Fatalf("dropTo(3) dropped %d, %d left", n, o.len())
	}
	take(5, false) // 4 comes first in the log
	take(4, true)
	take(5, true)
	take(6, true)
	take(8, false)
	take(7, true)
	if o.len() != 0 {
		t.Fatalf("%d left", o.len())
	}
	for s := range int64(3000) {
		put(s + 10)
	}
	for s := range int64(2999) {
		take(s+10, true)
	}
	if o.len() != 1 || len(o.evs) > 1024 {
		t.Fatalf("%d left in room of %d", o.len(), len(o.evs))
	}
	take(3009, true)
}

// TestMarkWhileRoundTimed: a commit wakes the rounds' goroutine only when
// no round is timed; while one is (armed), mark queues the events for it
// without a wake, and the goroutine, once awake, lets the next commit wake
// it again.
func TestMarkWhileRoundTimed(t *testing.T) {
	set := metrics.NewSet()
	m := &modeler{pending: map[string]int{}, pendKeys: map[string]int{}, inCommit: tally{}, inCommitKeys: tally{}, wake: make(chan struct{}, 1),
		maxBacklog: 100, spilled: set.NewCounter("spilled")}
	events := storetest.CorpusEvents(t)
	var batch []store.Event
	for i, e := range events {
		if e.SessionID != "" {
			e.Seq = int64(i + 1)
			batch = append(batch, e)
		}
	}
	if len(batch) < 4 {
		t.Fatalf("%d events with a session in the corpus", len(batch))
	}
	m.setArmed(true)
	m.mark(batch[:2], m.committing(batch[:2]))
	if len(m.wake) != 0 || len(m.queue) != 2 {
		t.Fatalf("marked while a round is timed: %d wakes, %d queued", len(m.wake), len(m.queue))
	}
	m.setArmed(false)
	m.mark(batch[2:4], m.committing(batch[2:4]))
	if len(m.wake) != 1 || len(m.queue) != 4 || m.pending[batch[0].SessionID] == 0 {
		t.Fatalf("marked with no round timed: %d wakes, %d queued", len(m.wake), len(m.queue))
	}
}
