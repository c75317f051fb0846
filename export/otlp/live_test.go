package otlp

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
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
