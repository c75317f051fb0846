package collector

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	runtimemetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/docs"
	"github.com/hookwatch/hookwatch/spool"
)

// metrics are the server's own metrics. They live in a Set of their own, not
// in the package-global one, so that several servers (tests, benchmarks) in
// one process do not share counters.
type serverMetrics struct {
	set            *metrics.Set
	ingested       *metrics.Counter
	prunedSessions *metrics.Counter
	prunedEvents   *metrics.Counter
	duplicates     *metrics.Counter
	rejected       *metrics.Counter
	hookRefused    *metrics.Counter
	requestBatch   *metrics.Histogram
	commitEvents   *metrics.Histogram
	commitDuration *metrics.Histogram
	commitErrors   *metrics.Counter
	sseClients     *metrics.Gauge
	bodiesRefused  *metrics.Counter
	streamsStalled *metrics.Counter
	// followedLost counts the lines the followers passed over for what
	// they held, by source (lostSource*).
	followedLost map[string]*metrics.Counter
	// spool is the local spool the server drains (DrainSpool), nil until
	// it drains one; its counters are read at each scrape.
	spool atomic.Pointer[spool.Spool]
}

func newMetrics() *serverMetrics {
	s := metrics.NewSet()
	return &serverMetrics{
		set:            s,
		ingested:       s.NewCounter(`hookwatch_events_ingested_total`),
		prunedSessions: s.NewCounter(`hookwatch_pruned_sessions_total`),
		prunedEvents:   s.NewCounter(`hookwatch_pruned_events_total`),
		duplicates:     s.NewCounter(`hookwatch_events_duplicate_total`),
		rejected:       s.NewCounter(`hookwatch_batches_rejected_total`),
		hookRefused:    s.NewCounter(`hookwatch_http_hook_events_refused_total`),
		requestBatch:   s.NewHistogram(`hookwatch_ingest_batch_envelopes`),
		commitEvents:   s.NewHistogram(`hookwatch_commit_events`),
		commitDuration: s.NewHistogram(`hookwatch_commit_duration_seconds`),
		commitErrors:   s.NewCounter(`hookwatch_commit_errors_total`),
		sseClients:     s.NewGauge(`hookwatch_sse_clients`, nil),
		bodiesRefused:  s.NewCounter(`hookwatch_requests_busy_total`),
		streamsStalled: s.NewCounter(`hookwatch_sse_stalled_total`),
		followedLost: map[string]*metrics.Counter{
			lostSourceTranscript: s.NewCounter(`hookwatch_followed_lines_lost_total{source="transcript"}`),
			lostSourceRollout:    s.NewCounter(`hookwatch_followed_lines_lost_total{source="rollout"}`),
		},
	}
}

// route returns the pattern that served r, a bounded label value (the raw
// path would make one series per session id).
func route(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	return r.Pattern
}

// statusWriter records the status code of a response. It forwards Unwrap
// so that http.ResponseController still reaches the connection (flushes for
// SSE, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument wraps the mux: it counts and times requests per route and
// status, and turns a panic in a handler into a 500 instead of a dropped
// connection.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				if sw.code == 0 {
					writeError(sw, http.StatusInternalServerError, "internal error")
				}
			}
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			rt := route(r)
			s.metrics.set.GetOrCreateCounter(fmt.Sprintf(`hookwatch_http_requests_total{route=%q,code="%d"}`, rt, code)).Inc()
			s.metrics.set.GetOrCreateHistogram(fmt.Sprintf(`hookwatch_http_request_duration_seconds{route=%q}`, rt)).UpdateDuration(start)
		}()
		next.ServeHTTP(sw, r)
	})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b bytes.Buffer
	s.writeMetrics(&b)
	writeMetadata(w, b.Bytes())
}

// writeMetrics writes every sample /metrics serves, without metadata.
func (s *Server) writeMetrics(w io.Writer) {
	s.metrics.set.WritePrometheus(w)
	for _, set := range s.cfg.MetricSets {
		set.WritePrometheus(w)
	}
	if sp := s.metrics.spool.Load(); sp != nil {
		// Read from the spool's files at each scrape: hooks in other
		// processes count its drops, and the counts survive restarts.
		if st, err := sp.Stats(); err == nil {
			metrics.WriteCounterUint64(w, "hookwatch_spool_dropped_total", uint64(st.Dropped))
			metrics.WriteCounterUint64(w, "hookwatch_spool_corrupt_total", uint64(st.Corrupt))
			metrics.WriteGaugeUint64(w, "hookwatch_spool_losses_unacknowledged", uint64(st.Unacknowledged()))
			metrics.WriteGaugeUint64(w, "hookwatch_spool_pending_bytes", uint64(st.PendingBytes))
			metrics.WriteGaugeUint64(w, "hookwatch_spool_pending_segments", uint64(st.Segments))
		}
	}
	if pa := s.modeler.perAgent; pa != nil {
		pa.write(w, time.Now())
	}
	metrics.WriteProcessMetrics(w)
	metrics.WriteGaugeUint64(w, "go_gc_heap_live_bytes", liveHeapBytes())
}

// liveHeapBytes is the heap the latest collection found reachable: what
// the next one marks again (mostly the session model's groups), which
// WriteProcessMetrics does not give.
func liveHeapBytes() uint64 {
	s := []runtimemetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// metricDocs are docs/metrics.md's families by name, and for each
// histogram (le or vmrange) its _bucket, _sum and _count series too, for
// each summary its _sum and _count.
var metricDocs = sync.OnceValue(func() map[string]docs.Metric {
	byName := map[string]docs.Metric{}
	for _, m := range docs.Metrics() {
		byName[m.Name] = m
		var suffixes []string
		switch m.Type {
		case "histogram", "vmrange":
			suffixes = []string{"_bucket", "_sum", "_count"}
		case "summary":
			suffixes = []string{"_sum", "_count"}
		}
		for _, suffix := range suffixes {
			byName[m.Name+suffix] = m
		}
	}
	return byName
})

// writeMetadata copies the exposition samples to w with, before the first
// sample of each family docs/metrics.md describes, its # HELP and # TYPE
// lines. A vmrange histogram's _bucket, _sum and _count are three untyped
// families with a # HELP each: Prometheus' histogram type needs le buckets.
// A family written in two places (two metric sets) gets its metadata once,
// before the first.
func writeMetadata(w io.Writer, samples []byte) {
	byName := metricDocs()
	done := map[string]bool{}
	out := make([]byte, 0, len(samples)+len(samples)/4)
	for line := range bytes.Lines(samples) {
		name := line
		if i := bytes.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if m, ok := byName[string(name)]; ok {
			family := m.Name
			if m.Type == "vmrange" {
				family = string(name)
			}
			if !done[family] {
				done[family] = true
				out = append(out, "# HELP "...)
				out = append(out, family...)
				out = append(out, ' ')
				out = append(out, helpEscaper.Replace(m.Help)...)
				out = append(out, '\n')
				if m.Type != "vmrange" {
					out = append(out, "# TYPE "...)
					out = append(out, family...)
					out = append(out, ' ')
					out = append(out, m.Type...)
					out = append(out, '\n')
				}
			}
		}
		out = append(out, line...)
	}
	w.Write(out)
}

// helpEscaper escapes a # HELP text as the text format asks.
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
