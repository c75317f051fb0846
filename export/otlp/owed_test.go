package otlp

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/docs"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
)

// ownReceiver starts a real collector for one test, which the test may
// stop and start again.
func ownReceiver(t *testing.T) *otelcol.Receiver {
	t.Helper()
	receiver(t) // skips (or fails in CI) without the binary
	r, err := otelcol.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop() })
	return r
}

// owedSession stores a real capture's session through a real collector,
// and returns the store, the session and the spans its rows give.
func owedSession(t *testing.T) (store.Store, *attribution.Session, []*tracepb.Span) {
	t.Helper()
	envs := captures(t)["claude-code-2.1.332.jsonl"]
	st := storeCapture(t, envs)
	s := attribution.Build(envs).Sessions[0]
	return st, s, Spans(sessionOf(s))
}

// recorded returns the sessions the store records as owed, each once,
// with the earliest since of its records.
func recorded(t *testing.T, st store.Store) map[string]time.Time {
	t.Helper()
	rows, err := st.(store.OTLPDebtStore).OTLPDebts(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, r := range rows {
		if r.SessionID == beatSession {
			continue
		}
		if was, ok := out[r.SessionID]; !ok || r.Since.Before(was) {
			out[r.SessionID] = r.Since
		}
	}
	return out
}

// debtsOf is the store's store.OTLPDebtStore.
func debtsOf(st store.Store) store.OTLPDebtStore { return st.(store.OTLPDebtStore) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func metricsText(set *metrics.Set) string {
	var b strings.Builder
	set.WritePrometheus(&b)
	return b.String()
}

// TestExporterResendsOwed: spans the live push could not deliver to a
// receiver that was away are sent again, by themselves, once it is back:
// the real collector, stopped while a session's spans are offered, started
// again at the same endpoint, receives each span of the session once, with
// its ids, made from the stored rows.
func TestExporterResendsOwed(t *testing.T) {
	r := ownReceiver(t)
	st, s, want := owedSession(t)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	var log syncbuf.Buffer
	e := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 1}, ExporterOptions{
		Rows: st, Debts: debtsOf(st), Metrics: set, FlushInterval: 10 * time.Millisecond,
		ProbeInterval: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer e.Stop(context.Background())
	e.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	waitFor(t, "the spans lost and their session owed", func() bool {
		text := metricsText(set)
		return strings.Contains(text, `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`) &&
			metricValue(t, text, `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`) > 0 &&
			metricValue(t, text, "hookwatch_otlp_sessions_owed") == 1
	})
	if got := recorded(t, st); len(got) != 1 || got[s.SessionID].IsZero() {
		t.Fatalf("the store records %v, want session %s", got, s.SessionID)
	}
	// Asked while away: still owed.
	time.Sleep(200 * time.Millisecond)
	if n := metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed"); n != 1 {
		t.Fatalf("%d sessions owed while the receiver is away, want 1", n)
	}

	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	checkReceived(t, r, want)
	waitFor(t, "the session paid", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") == 0
	})
	if n := metricValue(t, metricsText(set), "hookwatch_otlp_spans_resent_total"); n != len(want) {
		t.Errorf("hookwatch_otlp_spans_resent_total %d, want %d", n, len(want))
	}
	if !strings.Contains(log.String(), "the OTLP receiver takes spans again") {
		t.Errorf("no recovery in the log:\n%s", log.String())
	}
	e.Stop(context.Background())
	if got := recorded(t, st); len(got) != 0 {
		t.Fatalf("the store records %v once they were sent", got)
	}
	// /metrics has their # HELP from docs/metrics.md.
	documented := map[string]string{}
	for _, m := range docs.Metrics() {
		documented[m.Name] = m.Type
	}
	for name, typ := range map[string]string{"hookwatch_otlp_sessions_owed": "gauge", "hookwatch_otlp_spans_resent_total": "counter"} {
		if documented[name] != typ {
			t.Errorf("docs/metrics.md: %s is %q, want a %s", name, documented[name], typ)
		}
	}
}

// TestExporterResendsOwedAfterRestart: a collector killed while its spans
// wait (in the queue, or in a request to a receiver that is away) leaves
// their session recorded in the store, before any request carried them;
// the next collector (another exporter, on the same database) reads it and
// sends the session's spans once the receiver is back. And one stopped
// while it owes spans leaves them recorded alike.
func TestExporterResendsOwedAfterRestart(t *testing.T) {
	r := ownReceiver(t)
	st, s, want := owedSession(t)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	// Retries long enough that the first request is still under way when
	// the store is read: what a SIGKILL then leaves.
	e := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 100, Backoff: 50 * time.Millisecond},
		ExporterOptions{Rows: st, Debts: debtsOf(st), FlushInterval: 10 * time.Millisecond})
	e.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	waitFor(t, "the session recorded", func() bool { return len(recorded(t, st)) == 1 })
	// A session queued while the request waits out its retries is
	// recorded at once, not once the request gives up. (Not in the store:
	// the next collector takes it off.)
	other := attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]
	e.Offer([]attribution.SessionChanges{{Session: other.Summary(), Agents: other.Agents, ToolCalls: other.ToolCalls}})
	deadline := time.Now().Add(2 * time.Second)
	for len(recorded(t, st)) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("a session queued during a request's retries is not recorded: %v", recorded(t, st))
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed, err := debtsOf(st).OTLPDebts(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	e.Stop(ctx)
	cancel()
	if got := recorded(t, st); len(got) != 2 || got[s.SessionID].IsZero() {
		t.Fatalf("a collector stopped owing spans leaves %v, want session %s and another", got, s.SessionID)
	}
	// What the kill would have left: the records as they were, its beat
	// gone stale (killed a while ago).
	now, _ := debtsOf(st).OTLPDebts(context.Background(), 10)
	if err := debtsOf(st).PaidOTLP(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	for _, k := range killed {
		if k.SessionID == beatSession {
			k.Touched = k.Touched.Add(-time.Hour)
		}
		if err := debtsOf(st).OweOTLP(context.Background(), k.Owner, map[string]time.Time{k.SessionID: k.Since}, k.Touched); err != nil {
			t.Fatal(err)
		}
	}

	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	e = NewExporter(&Client{Endpoint: r.Endpoint},
		ExporterOptions{Rows: st, Debts: debtsOf(st), Metrics: set, FlushInterval: 10 * time.Millisecond})
	defer e.Stop(context.Background())
	checkReceived(t, r, want)
	waitFor(t, "the records taken off", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") == 0 && len(recorded(t, st)) == 0
	})
}

// TestExporterResendPaced: a receiver back after long is sent what it
// missed about ResendSpans per FlushInterval, the sessions owed the
// longest first; a session the store does not hold is not owed any more.
func TestExporterResendPaced(t *testing.T) {
	r := ownReceiver(t)
	envs := captures(t)["public-captures.jsonl"]
	st := storeCapture(t, envs)
	sessions := attribution.Build(envs).Sessions
	if len(sessions) < 3 {
		t.Fatalf("%d sessions in the capture", len(sessions))
	}
	owed := map[string]time.Time{"pruned-meanwhile": time.Unix(0, 1)}
	t0 := time.Now().Add(-time.Hour)
	for i, s := range sessions {
		owed[s.SessionID] = t0.Add(time.Duration(i) * time.Minute)
	}
	if err := debtsOf(st).OweOTLP(context.Background(), "another", owed, time.Now()); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	const interval = 300 * time.Millisecond
	e := NewExporter(&Client{Endpoint: r.Endpoint},
		ExporterOptions{Rows: st, Debts: debtsOf(st), Metrics: set, FlushInterval: interval, ResendSpans: 1})
	defer e.Stop(context.Background())
	// One session a turn (each has more than one span), the unknown one
	// (owed the longest) first, then the oldest.
	waitFor(t, "a session sent again", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") < len(sessions)
	})
	if n := metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed"); n != len(sessions)-1 {
		t.Fatalf("%d sessions owed after the second turn, want %d", n, len(sessions)-1)
	}
	if got, err := r.Spans(hex.EncodeToString(TraceID(sessions[len(sessions)-1].SessionID))); err != nil || len(got) != 0 {
		t.Fatalf("the session owed the least was sent first (%d spans, %v)", len(got), err)
	}
	for _, s := range sessions {
		checkReceived(t, r, Spans(sessionOf(s)))
	}
	waitFor(t, "all paid, the records taken off", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") == 0 && len(recorded(t, st)) == 0
	})
}

// TestDebtsBound: the sessions kept, in flight or owed, each counted once,
// stay within the bound; what is beyond is not kept and said; a session
// delivered makes room; a write records the owed and those in flight, and
// clears those no longer kept; a write that failed is made again.
func TestDebtsBound(t *testing.T) {
	d := newDebts(2, true)
	now := time.Now()
	d.queue("a", now)
	d.queue("a", now)
	d.owe("a", now) // in flight and owed: one session
	d.queue("b", now)
	d.queue("c", now) // beyond the bound
	d.owe("c", now)
	if d.kept != 2 || !d.full || len(d.owed) != 1 || d.inflight["c"] != 0 {
		t.Fatalf("kept %d, full %v, owed %v, in flight %v", d.kept, d.full, d.owed, d.inflight)
	}
	w := d.due(now, false)
	if w == nil || len(w.put) != 2 || w.put["a"].IsZero() || w.put["b"].IsZero() || len(w.clear) != 0 {
		t.Fatalf("the first write is %+v, want a and b recorded", w)
	}
	if d.due(now, false) != nil {
		t.Fatal("a write due with nothing changed")
	}
	d.settle("b", false, now) // delivered: room for c
	d.owe("c", now)
	d.settle("a", false, now)
	d.settle("a", false, now) // a is still owed
	if d.kept != 2 || len(d.owed) != 2 || len(d.inflight) != 0 {
		t.Fatalf("kept %d, owed %v, in flight %v", d.kept, d.owed, d.inflight)
	}
	// The write fails: made again, with what changed meanwhile.
	w = d.due(now, false)
	if w == nil || len(w.put) != 1 || w.put["c"].IsZero() || !slices.Equal(w.clear, []string{"b"}) {
		t.Fatalf("the second write is %+v, want c recorded and b cleared", w)
	}
	d.max = 3
	d.queue("b", now) // kept again: not to be cleared
	d.retry(w)
	if w = d.due(now, true); w == nil || len(w.put) != 2 || len(w.clear) != 0 {
		t.Fatalf("the write made again is %+v, want b and c recorded, none cleared", w)
	}
	d.settle("b", false, now)
	if got := d.oldest(5); len(got) != 2 || got[0] != "a" {
		t.Fatalf("oldest %v", got)
	}
	// Lost again while being sent again: the sending does not pay it.
	d.resending("a")
	d.settle("a", true, now)
	d.paid("a")
	if _, ok := d.owed["a"]; !ok || len(d.sending) != 0 {
		t.Fatalf("a session lost while sent again was paid: owed %v", d.owed)
	}
	d.paid("a")
	d.paid("c")
	// Taken off alone: written debtWriteEvery after the last write.
	if d.kept != 0 || d.due(now, false) != nil {
		t.Fatalf("kept %d once all paid, or a write due at once", d.kept)
	}
	if w := d.due(now.Add(debtWriteEvery), false); w == nil || len(w.clear) != 3 {
		t.Fatalf("the write after all paid is %+v, want a, b and c cleared", w)
	}
	// Another collector's records: owed here too, within the bound, and
	// given back to take off when paid; but not those of a collector that
	// runs (its beat fresh), which pays them itself.
	theirs := []store.OTLPDebt{{SessionID: "x", Owner: "them", Since: now}, {SessionID: "y", Owner: "me", Since: now},
		{SessionID: "x", Owner: "others", Since: now.Add(-time.Second)}, {SessionID: "z", Owner: "them", Since: now}}
	d.max = 2
	d.queue("q", now)
	beats := []store.OTLPDebt{{SessionID: beatSession, Owner: "running", Touched: now.Add(-time.Second)},
		{SessionID: beatSession, Owner: "them", Touched: now.Add(-time.Hour)}}
	theirs = append(theirs, store.OTLPDebt{SessionID: "r", Owner: "running", Since: now.Add(-time.Hour)})
	d.adopt(append(beats, theirs...), "me", now, time.Minute, false)
	_, y := d.owed["y"]
	_, z := d.owed["z"] // beyond the bound
	_, running := d.owed["r"]
	if d.kept != 2 || y || z || running || !d.owed["x"].Equal(now.Add(-time.Second)) {
		t.Fatalf("adopted: kept %d, owed %v", d.kept, d.owed)
	}
	if got := d.paid("x"); len(got) != 2 || d.kept != 1 {
		t.Fatalf("paying x gives %v to take off, kept %d", got, d.kept)
	}
	// Of x this one clears only its own records (it has none).
	if w := d.due(now, true); w == nil || len(w.put) != 1 || w.put["x"] != (time.Time{}) || !slices.Equal(w.clear, []string{"x"}) {
		t.Fatalf("another's session was recorded as this one's: %+v", w)
	}
	// At the first read, what a collector of the same name left (the same
	// home, killed and restarted) is owed at once; at the later reads its
	// own records are what it keeps in memory.
	for _, first := range []bool{true, false} {
		d := newDebts(10, true)
		d.adopt([]store.OTLPDebt{{SessionID: beatSession, Owner: "me", Touched: now}, {SessionID: "k", Owner: "me", Since: now}}, "me", now, time.Minute, first)
		if _, k := d.owed["k"]; k != first || d.kept != len(d.owed) {
			t.Fatalf("first read %v: owed %v, kept %d", first, d.owed, d.kept)
		}
	}
}

// TestReadOwedFile: the file of the collectors before the store is read
// back; a missing file holds none; one that does not decode is an error.
func TestReadOwedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "otlp-owed.json")
	if got, err := ReadOwedFile(path); got != nil || err != nil {
		t.Fatalf("no file: %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"sessions":{"s1":"2026-05-01T10:00:00.5Z"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadOwedFile(path); err != nil || len(got) != 1 || !got["s1"].Equal(time.Date(2026, 5, 1, 10, 0, 0, 5e8, time.UTC)) {
		t.Fatalf("read %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOwedFile(path); err == nil {
		t.Fatal("a file that does not decode read without an error")
	}
}

// TestExporterPaysStoppedOwners: two collectors on one database; what the
// one that runs has in flight or owes is its own to send, not the other's
// (which would send it twice); once it stopped, the other owes it.
func TestExporterPaysStoppedOwners(t *testing.T) {
	r := ownReceiver(t)
	st, s, _ := owedSession(t)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	a := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 1},
		ExporterOptions{Rows: st, Debts: debtsOf(st), FlushInterval: 10 * time.Millisecond, ProbeInterval: 50 * time.Millisecond})
	defer a.Stop(context.Background())
	setB := metrics.NewSet()
	b := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 1},
		ExporterOptions{Rows: st, Debts: debtsOf(st), Metrics: setB, FlushInterval: 10 * time.Millisecond, ProbeInterval: 50 * time.Millisecond})
	defer b.Stop(context.Background())
	a.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	waitFor(t, "the session recorded", func() bool { return len(recorded(t, st)) == 1 })
	// Several of b's reads while a runs.
	time.Sleep(300 * time.Millisecond)
	if n := metricValue(t, metricsText(setB), "hookwatch_otlp_sessions_owed"); n != 0 {
		t.Fatalf("b owes %d sessions of a collector that runs, want none", n)
	}
	a.Stop(context.Background())
	waitFor(t, "b owing what a owed", func() bool {
		return metricValue(t, metricsText(setB), "hookwatch_otlp_sessions_owed") == 1
	})
}

// writeCounter is a store's OTLPDebtStore that counts, per session, the
// writes that record it.
type writeCounter struct {
	store.OTLPDebtStore
	mu     sync.Mutex
	writes map[string]int
}

func (c *writeCounter) OweOTLP(ctx context.Context, owner string, sessions map[string]time.Time, at time.Time) error {
	c.mu.Lock()
	for id := range sessions {
		c.writes[id]++
	}
	c.mu.Unlock()
	return c.OTLPDebtStore.OweOTLP(ctx, owner, sessions, at)
}

// TestExporterRecordsOwedSessionOnce: while the receiver is down, a session
// whose spans keep coming is written to the store as owed a bounded number
// of times (when its first spans are queued, and when they are lost), not
// once per batch lost: on SQLite those writes share the one writer with
// ingest, and a receiver away for a day must not make them grow with the
// events.
func TestExporterRecordsOwedSessionOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: every request refused
	st, _, _ := owedSession(t)
	counted := &writeCounter{OTLPDebtStore: debtsOf(st), writes: map[string]int{}}
	set := metrics.NewSet()
	e := NewExporter(&Client{Endpoint: down, Attempts: 1}, ExporterOptions{
		Rows: st, Debts: counted, Metrics: set, FlushInterval: time.Millisecond, BatchSpans: 16})
	defer e.Stop(context.Background())

	const id = "session-down"
	envs := demo.Big(demo.BigSpec{SessionID: id, Start: time.Now().Add(-time.Hour), Events: 5000, Agents: 10, Ended: true, Seed: 3})
	g := attribution.NewGroup()
	for chunk := range slices.Chunk(envs, 50) {
		g.Apply(chunk...)
		e.Offer(g.Changes().Sessions)
		time.Sleep(time.Millisecond) // let batches fail between rounds
	}
	e.Stop(context.Background())
	text := metricsText(set)
	failed := metricValue(t, text, `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`)
	requests := metricValue(t, text, "hookwatch_otlp_requests_total")
	if failed == 0 || requests < 20 {
		t.Fatalf("%d spans lost in %d requests: want many batches lost", failed, requests)
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if n := counted.writes[id]; n == 0 || n > 2 {
		t.Errorf("the session owed was written %d times for %d requests lost, want 1 or 2", n, requests)
	}
	if got := recorded(t, st); got[id].IsZero() {
		t.Errorf("the store records %v, want session %s owed", got, id)
	}
}
