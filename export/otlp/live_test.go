package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
)

// TestExporterCountsBatches pins what docs/otlp.md says the request
// metrics count: a batch once however many attempts it takes, an error
// per batch given up on, and the send's duration with its retries.
func TestExporterCountsBatches(t *testing.T) {
	f := func(failures int, wantErrors bool) {
		t.Helper()
		var mu sync.Mutex
		tries := map[[32]byte]int{} // attempts per batch, by body
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			k := sha256.Sum256(body)
			tries[k]++
			n := tries[k]
			mu.Unlock()
			if n <= failures {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		defer srv.Close()
		const backoff = 20 * time.Millisecond
		set := metrics.NewSet()
		e := NewExporter(&Client{Endpoint: srv.URL, Attempts: 3, Backoff: backoff},
			ExporterOptions{Metrics: set, FlushInterval: 10 * time.Millisecond})
		var changes []attribution.SessionChanges
		for _, s := range attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions {
			changes = append(changes, attribution.SessionChanges{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
		}
		e.Offer(changes)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Stop(ctx)

		var out strings.Builder
		set.WritePrometheus(&out)
		text := out.String()
		mu.Lock()
		batches, attempts := len(tries), 0
		for _, n := range tries {
			attempts += n
		}
		mu.Unlock()
		if batches == 0 || attempts != batches*min(failures+1, 3) {
			t.Fatalf("%d failures: the receiver had %d attempts of %d batches", failures, attempts, batches)
		}
		requests := metricValue(t, text, "hookwatch_otlp_requests_total")
		errs := metricValue(t, text, "hookwatch_otlp_request_errors_total")
		sends := metricValue(t, text, "hookwatch_otlp_send_duration_seconds_count")
		if requests != batches || sends != batches {
			t.Errorf("%d failures: requests_total %d, send_duration_seconds_count %d, want %d (the batches, not the %d attempts)", failures, requests, sends, batches, attempts)
		}
		if want := map[bool]int{false: 0, true: batches}[wantErrors]; errs != want {
			t.Errorf("%d failures: request_errors_total %d, want %d", failures, errs, want)
		}
		sum := metricFloat(t, text, "hookwatch_otlp_send_duration_seconds_sum")
		if retries := min(failures, 2); retries > 0 && sum < float64(batches)*backoff.Seconds()*float64(retries) {
			t.Errorf("%d failures: send_duration_seconds_sum %v, want the waits between the attempts in it", failures, sum)
		}
	}
	f(0, false) // accepted at once
	f(2, false) // accepted at the third attempt
	f(5, true)  // given up after three
}

func metricFloat(t *testing.T, text, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in:\n%s", name, text)
	return 0
}

// TestExporterSaysRecovered: after batches the receiver did not take, the
// first one it takes is said once in the log, naming the endpoint, so
// that the warnings of the losses are not the log's last word.
func TestExporterSaysRecovered(t *testing.T) {
	var mu sync.Mutex
	down := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var log syncbuf.Buffer
	e := NewExporter(&Client{Endpoint: srv.URL, Attempts: 1},
		ExporterOptions{FlushInterval: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	offer := func(s *attribution.Session) {
		e.Offer([]attribution.SessionChanges{{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls}})
	}
	wait := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(log.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", what, log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := e.Check(context.Background()); err == nil {
		t.Fatal("Check of a receiver answering 503: no error")
	}
	if strings.Contains(log.String(), "again") {
		t.Fatalf("recovery said before any batch was taken:\n%s", log.String())
	}
	offer(attribution.Build(captures(t)["claude-code-2.1.332.jsonl"]).Sessions[0])
	wait("cannot send spans")
	if strings.Contains(log.String(), "again") {
		t.Fatalf("recovery said before any batch was taken:\n%s", log.String())
	}
	mu.Lock()
	down = false
	mu.Unlock()
	offer(attribution.Build(captures(t)["claude-code-2.1.197.jsonl"]).Sessions[0])
	wait(`msg="the OTLP receiver takes spans again" endpoint=` + srv.URL + "/v1/traces")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Stop(ctx)
	if n := strings.Count(log.String(), "again"); n != 1 {
		t.Fatalf("recovery said %d times:\n%s", n, log.String())
	}

	// A receiver away at Check only (not up yet at start): its first
	// batch taken is said too.
	mu.Lock()
	down = true
	mu.Unlock()
	log = syncbuf.Buffer{}
	e = NewExporter(&Client{Endpoint: srv.URL, Attempts: 1},
		ExporterOptions{FlushInterval: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer e.Stop(ctx)
	if err := e.Check(context.Background()); err == nil {
		t.Fatal("Check of a receiver answering 503: no error")
	}
	mu.Lock()
	down = false
	mu.Unlock()
	offer(attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0])
	wait("the OTLP receiver takes spans again")
}

// TestExporterResendsUsage: the live push sends each agent's span when it
// ends, before the transcripts were read; each time the model's usage of
// the agent changes (here one response at a time), the span is sent again
// with the same id and the usage. The last version the real collector
// received of each span is the final model's.
func TestExporterResendsUsage(t *testing.T) {
	// A receiver of its own: TestAgentUsageSpans sends the same trace.
	r := ownReceiver(t)
	hooks, imported := transcriptRun(t)
	s, _ := usageSession(t)
	set := metrics.NewSet()
	e := NewExporter(&Client{Endpoint: r.Endpoint}, ExporterOptions{Metrics: set, FlushInterval: 20 * time.Millisecond, BatchSpans: 7})
	g := attribution.NewGroup()
	for _, env := range hooks {
		g.Apply(env)
		e.Offer(g.Changes().Sessions)
	}
	// The hooks ended every agent: their spans are out, without usage.
	traceID := hex.EncodeToString(TraceID(s.SessionID))
	want := Spans(sessionOf(s))
	if _, err := r.WaitSpans(traceID, len(want), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, env := range imported {
		g.Apply(env)
		e.Offer(g.Changes().Sessions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Stop(ctx)

	// The receiver took every request before Stop returned; its file
	// exporter may write the latest a little later.
	var last map[string]otelcol.Span
	var times map[string]int
	final := func() bool {
		got, err := r.Spans(traceID)
		if err != nil {
			t.Fatal(err)
		}
		last, times = map[string]otelcol.Span{}, map[string]int{}
		for _, sp := range got {
			last[sp.SpanID] = sp
			times[sp.SpanID]++
		}
		for _, a := range s.Agents {
			if last[hex.EncodeToString(usageSpanID(s, a))].Attr(attrUsageResponses) != strconv.Itoa(a.Usage.Responses) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !final() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	var ids, wantIDs []string
	for id := range last {
		ids = append(ids, id)
	}
	for _, sp := range want {
		wantIDs = append(wantIDs, hex.EncodeToString(sp.SpanId))
	}
	slices.Sort(ids)
	slices.Sort(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("the receiver holds spans %v, want %v", ids, wantIDs)
	}
	for _, a := range s.Agents {
		id := hex.EncodeToString(usageSpanID(s, a))
		// At its end without usage, then with each response read.
		if times[id] != 1+a.Usage.Responses {
			t.Errorf("agent %q: its span was received %d times, want %d", a.AgentID, times[id], 1+a.Usage.Responses)
		}
		checkUsage(t, "agent "+a.AgentID, last[id].Attr, wantUsage(a.Usage))
	}
	// Calls do not change with usage: each went out once.
	for _, c := range s.ToolCalls {
		if n := times[hex.EncodeToString(CallSpanID(s.SessionID, c.ToolUseID))]; n != 1 {
			t.Errorf("call %s received %d times", c.ToolUseID, n)
		}
	}
	var out strings.Builder
	set.WritePrometheus(&out)
	if !strings.Contains(out.String(), `hookwatch_otlp_spans_dropped_total{reason="send_failed"} 0`) {
		t.Fatalf("spans lost:\n%s", out.String())
	}
}
