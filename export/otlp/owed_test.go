package otlp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/docs"
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

// owedFile reads the sessions the file keeps as owed.
func owedFile(t *testing.T, path string) map[string]time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var f debtFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return f.Sessions
}

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
	owed := filepath.Join(t.TempDir(), "otlp-owed.json")
	set := metrics.NewSet()
	var log syncbuf.Buffer
	e := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 1}, ExporterOptions{
		Rows: st, OwedFile: owed, Metrics: set, FlushInterval: 10 * time.Millisecond,
		ProbeInterval: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer e.Stop(context.Background())
	e.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	waitFor(t, "the spans lost and their session owed", func() bool {
		text := metricsText(set)
		return strings.Contains(text, `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`) &&
			metricValue(t, text, `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`) > 0 &&
			metricValue(t, text, "hookwatch_otlp_sessions_owed") == 1
	})
	if got := owedFile(t, owed); len(got) != 1 || got[s.SessionID].IsZero() {
		t.Fatalf("the file keeps %v, want session %s", got, s.SessionID)
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
	if got := owedFile(t, owed); len(got) != 0 {
		t.Fatalf("the file keeps %v once they were sent", got)
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
// their session in the file, before any request carried them; the next
// collector reads it and sends the session's spans once the receiver is
// back. And one stopped while it owes spans keeps them in the file alike.
func TestExporterResendsOwedAfterRestart(t *testing.T) {
	r := ownReceiver(t)
	st, s, want := owedSession(t)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	owed := filepath.Join(dir, "otlp-owed.json")
	// Retries long enough that the first request is still under way when
	// the file is read: what a SIGKILL then leaves.
	e := NewExporter(&Client{Endpoint: r.Endpoint, Attempts: 100, Backoff: 50 * time.Millisecond},
		ExporterOptions{Rows: st, OwedFile: owed, FlushInterval: 10 * time.Millisecond})
	e.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	waitFor(t, "the session in the file", func() bool { return len(owedFile(t, owed)) == 1 })
	// A session queued while the request waits out its retries is in the
	// file at once, not once the request gives up. (Not in the store: the
	// next collector takes it off.)
	other := attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]
	e.Offer([]attribution.SessionChanges{{Session: other.Summary(), Agents: other.Agents, ToolCalls: other.ToolCalls}})
	deadline := time.Now().Add(2 * time.Second)
	for len(owedFile(t, owed)) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("a session queued during a request's retries is not in the file: %v", owedFile(t, owed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed, err := os.ReadFile(owed)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	e.Stop(ctx)
	cancel()
	if got := owedFile(t, owed); len(got) != 2 || got[s.SessionID].IsZero() {
		t.Fatalf("a collector stopped owing spans keeps %v, want session %s and another", got, s.SessionID)
	}
	if err := os.WriteFile(owed, killed, 0o600); err != nil {
		t.Fatal(err)
	}

	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	e = NewExporter(&Client{Endpoint: r.Endpoint},
		ExporterOptions{Rows: st, OwedFile: owed, Metrics: set, FlushInterval: 10 * time.Millisecond})
	defer e.Stop(context.Background())
	checkReceived(t, r, want)
	waitFor(t, "the file emptied", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") == 0
	})
	e.Stop(context.Background())
	if got := owedFile(t, owed); len(got) != 0 {
		t.Fatalf("the file keeps %v once they were sent", got)
	}
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
	f := &debtFile{Sessions: map[string]time.Time{"pruned-meanwhile": time.Unix(0, 0)}}
	t0 := time.Now().Add(-time.Hour)
	for i, s := range sessions {
		f.Sessions[s.SessionID] = t0.Add(time.Duration(i) * time.Minute)
	}
	owed := filepath.Join(t.TempDir(), "otlp-owed.json")
	if err := save(owed, f); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	const interval = 300 * time.Millisecond
	e := NewExporter(&Client{Endpoint: r.Endpoint},
		ExporterOptions{Rows: st, OwedFile: owed, Metrics: set, FlushInterval: interval, ResendSpans: 1})
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
	waitFor(t, "all paid", func() bool {
		return metricValue(t, metricsText(set), "hookwatch_otlp_sessions_owed") == 0
	})
}

// TestDebtsBound: the sessions kept, in flight or owed, each counted once,
// stay within the bound; what is beyond is not kept and said; a session
// delivered makes room; a file written and read back keeps the owed and
// those in flight, as owed.
func TestDebtsBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "otlp-owed.json")
	d, err := loadDebts(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	d.queue("a")
	d.queue("a")
	d.owe("a", now) // in flight and owed: one session
	d.queue("b")
	d.queue("c") // beyond the bound
	d.owe("c", now)
	if d.kept != 2 || !d.full || len(d.owed) != 1 || d.inflight["c"] != 0 {
		t.Fatalf("kept %d, full %v, owed %v, in flight %v", d.kept, d.full, d.owed, d.inflight)
	}
	if err := save(path, d.snapshot(now, true)); err != nil {
		t.Fatal(err)
	}
	back, err := loadDebts(path, 10)
	if err != nil || len(back.owed) != 2 || back.kept != 2 || back.owed["a"].IsZero() || back.owed["b"].IsZero() {
		t.Fatalf("read back %v (%v)", back.owed, err)
	}
	d.settle("b", false, now) // delivered: room for c
	d.owe("c", now)
	d.settle("a", false, now)
	d.settle("a", false, now) // a is still owed
	if d.kept != 2 || len(d.owed) != 2 || len(d.inflight) != 0 {
		t.Fatalf("kept %d, owed %v, in flight %v", d.kept, d.owed, d.inflight)
	}
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
	d.snapshot(now, true) // written
	d.paid("a")
	d.paid("c")
	// Taken off alone: written again debtWriteEvery after the last write.
	if d.kept != 0 || d.snapshot(now, false) != nil || len(d.snapshot(now.Add(debtWriteEvery), false).Sessions) != 0 {
		t.Fatalf("kept %d once all paid", d.kept)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, err := loadDebts(path, 2); err == nil || d == nil || d.kept != 0 {
		t.Fatalf("a file that does not decode: %v", err)
	}
}
