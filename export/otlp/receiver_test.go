package otlp

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/VictoriaMetrics/metrics"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/otelcol"
)

// rcv is the real collector the tests of this package send to, started
// once in TestMain; rcvErr says why there is none.
var (
	rcv    *otelcol.Receiver
	rcvErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "otelcol-")
	if err == nil {
		rcv, rcvErr = otelcol.Start(dir)
	} else {
		rcvErr = err
	}
	code := m.Run()
	if rcv != nil {
		rcv.Stop()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func receiver(t *testing.T) *otelcol.Receiver {
	t.Helper()
	if rcv == nil {
		otelcol.Missing(t, rcvErr)
	}
	return rcv
}

// checkReceived checks that the receiver holds exactly the spans sent, each
// once, with their names and parents.
func checkReceived(t *testing.T, r *otelcol.Receiver, want []*tracepb.Span) {
	t.Helper()
	traceID := hex.EncodeToString(want[0].TraceId)
	got, err := r.WaitSpans(traceID, len(want), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Wait a little more for any duplicate.
	time.Sleep(200 * time.Millisecond)
	if got, err = r.Spans(traceID); err != nil {
		t.Fatal(err)
	}
	byID, err := otelcol.ByID(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the receiver holds %d spans of trace %s, want %d", len(got), traceID, len(want))
	}
	for _, w := range want {
		g, ok := byID[hex.EncodeToString(w.SpanId)]
		if !ok || g.Name != w.Name || g.ParentSpanID != hex.EncodeToString(w.ParentSpanId) || g.Attr(attrToolCallID) != attr(w, attrToolCallID) {
			t.Fatalf("span %s %x: received %+v", w.Name, w.SpanId, g)
		}
	}
}

// TestClientToReceiver sends the trace of a real capture's session to the
// real collector and reads it back whole.
func TestClientToReceiver(t *testing.T) {
	r := receiver(t)
	// Not a capture TestExporterLive sends: each test has traces of its own.
	res := attribution.Build(captures(t)["codex-0.169.jsonl"])
	s := res.Sessions[0]
	spans := Spans(sessionOf(s))
	c := &Client{Endpoint: r.Endpoint}
	rs := []*tracepb.ResourceSpans{{Resource: Resource(s.Summary()), ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: spans}}}}
	if err := c.Send(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	checkReceived(t, r, spans)
	got, _ := r.Spans(hex.EncodeToString(TraceID(s.SessionID)))
	if svc := attrOfResource(got[0]); svc != "codex" {
		t.Fatalf("service.name %q", svc)
	}
}

func attrOfResource(sp otelcol.Span) string {
	for _, kv := range sp.Resource {
		if kv.Key == attrServiceName && kv.Value.String != nil {
			return *kv.Value.String
		}
	}
	return ""
}

// TestClientErrors: what the real receiver refuses is not retried; what
// cannot be reached is, Attempts times.
func TestClientErrors(t *testing.T) {
	r := receiver(t)
	ctx := context.Background()
	one := Spans(sessionOf(attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]))[:1]
	rs := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: one}}}}

	// A path the receiver does not serve: 404, permanent, one request.
	err := (&Client{Endpoint: r.Endpoint + "/traces", Attempts: 3, Backoff: time.Millisecond}).Send(ctx, rs)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 || !ErrPermanent(err) {
		t.Fatalf("wrong path: %v", err)
	}
	if want := r.Endpoint + "/traces answered 404: 404 page not found (an OTLP/HTTP receiver takes traces at /v1/traces: check the endpoint's path)"; err.Error() != want {
		t.Fatalf("wrong path: %q, want %q", err, want)
	}

	// A span the receiver cannot read (a trace id of 3 bytes): 400, with a
	// google.rpc.Status in protobuf, whose message the error reads as, on
	// one line, not its bytes.
	bad := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: []byte{1, 2, 3}, SpanId: one[0].SpanId, Name: "bad"}}}}}}
	err = (&Client{Endpoint: r.Endpoint}).Send(ctx, bad)
	if !errors.As(err, &se) || se.Code != 400 || !ErrPermanent(err) {
		t.Fatalf("a span the receiver cannot read: %v", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, r.Endpoint+"/v1/traces answered 400: ") || strings.ContainsFunc(msg, unicode.IsControl) || !strings.Contains(msg, "length") {
		t.Fatalf("a span the receiver cannot read: %q, want the one line of its Status's message", msg)
	}

	// Nobody listening: retried, then given up.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	start := time.Now()
	err = (&Client{Endpoint: dead, Attempts: 3, Backoff: 50 * time.Millisecond}).Send(ctx, rs)
	if err == nil || ErrPermanent(err) {
		t.Fatalf("dead endpoint: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("three attempts with 50 ms and 100 ms between them took %v", d)
	}

	// FailFast: refused before any request reached a receiver, final at
	// once; refused after one did (the receiver restarting midway),
	// retried as before.
	port, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	c := &Client{Endpoint: port.URL(), Attempts: 3, Backoff: time.Second, FailFast: true}
	start = time.Now()
	err = c.Send(ctx, rs)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("FailFast, nothing listening: %v, want ECONNREFUSED", err)
	}
	if d := time.Since(start); d >= time.Second {
		t.Fatalf("FailFast, nothing listening: gave up after %v, want at once", d)
	}
	c = &Client{Endpoint: r.Endpoint, Attempts: 3, Backoff: 50 * time.Millisecond, FailFast: true}
	if err := c.Send(ctx, rs); err != nil {
		t.Fatal(err)
	}
	c.Endpoint = port.URL()
	start = time.Now()
	if err := c.Send(ctx, rs); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("FailFast, refused after a request reached the receiver: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("FailFast, refused after a request reached the receiver: three attempts took %v, want them all", d)
	}

	f := func(endpoint, want string) {
		t.Helper()
		got, err := (&Client{Endpoint: endpoint}).URL()
		if want == "" {
			if err == nil {
				t.Fatalf("%q: %q, want an error", endpoint, got)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("%q: %q, %v; want %q", endpoint, got, err, want)
		}
	}
	f("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces")
	f("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces")
	f("https://otlp.example.com/otlp/v1/traces", "https://otlp.example.com/otlp/v1/traces")
	f("127.0.0.1:4318", "")
	f("ftp://example.com", "")
}

// TestClientCheck: a request of no spans tells a right endpoint from the
// wrong ones at once (not after retries), each in an error that says what
// to check.
func TestClientCheck(t *testing.T) {
	r := receiver(t)
	ctx := context.Background()
	if err := (&Client{Endpoint: r.Endpoint}).Check(ctx); err != nil {
		t.Fatalf("the receiver's endpoint: %v", err)
	}
	f := func(endpoint string, want ...string) {
		t.Helper()
		start := time.Now()
		err := (&Client{Endpoint: endpoint, Backoff: time.Second}).Check(ctx)
		if err == nil {
			t.Fatalf("%s: no error", endpoint)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: %q, want %q in it", endpoint, err, w)
			}
		}
		if d := time.Since(start); d >= time.Second {
			t.Fatalf("%s: took %v: retried", endpoint, d)
		}
	}
	f(r.Endpoint+"/v1/trace", r.Endpoint+"/v1/trace answered 404", "check the endpoint's path")
	f(strings.Replace(r.Endpoint, "http:", "https:", 1), "https://", "server gave HTTP response to HTTPS client")
	port, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	f(port.URL(), port.URL()+"/v1/traces", "connection refused")
	f("127.0.0.1:4318", "did you mean http://127.0.0.1:4318?")
}

// TestClientTLSNotRetried: a receiver whose certificate is not trusted,
// or https:// against a plain port, will not mend by waiting: the send
// fails at its first attempt, not after every backoff.
func TestClientTLSNotRetried(t *testing.T) {
	r := receiver(t)
	one := Spans(sessionOf(attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]))[:1]
	rs := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: one}}}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	f := func(endpoint, want string) {
		t.Helper()
		start := time.Now()
		err := (&Client{Endpoint: endpoint, Attempts: 3, Backoff: time.Second}).Send(context.Background(), rs)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q in it", endpoint, err, want)
		}
		if d := time.Since(start); d >= time.Second {
			t.Fatalf("%s: gave up after %v: retried", endpoint, d)
		}
	}
	f(srv.URL, "certificate")
	f(strings.Replace(r.Endpoint, "http:", "https:", 1), "server gave HTTP response to HTTPS client")
}

// TestClientURLErrors: an endpoint that is no http(s) URL (host:port,
// as a gRPC exporter takes it) is refused in one line that says the form
// wanted and, when one can be made, the URL meant.
func TestClientURLErrors(t *testing.T) {
	f := func(endpoint, want string) {
		t.Helper()
		_, err := (&Client{Endpoint: endpoint}).URL()
		if err == nil || err.Error() != want {
			t.Fatalf("%q: %v, want %q", endpoint, err, want)
		}
	}
	f("127.0.0.1:4318", `cannot use the OTLP endpoint "127.0.0.1:4318": want http(s)://host[:port][/path] (did you mean http://127.0.0.1:4318?)`)
	f("localhost:4318", `cannot use the OTLP endpoint "localhost:4318": want http(s)://host[:port][/path] (did you mean http://localhost:4318?)`)
	f("otlp.example.com", `cannot use the OTLP endpoint "otlp.example.com": want http(s)://host[:port][/path] (did you mean https://otlp.example.com?)`)
	f("http://127.0.0.1:4318 ", `cannot use the OTLP endpoint "http://127.0.0.1:4318 ": want http(s)://host[:port][/path] (parse "http://127.0.0.1:4318 ": invalid port ":4318 " after host)`)
	f("ftp://example.com", `cannot use the OTLP endpoint "ftp://example.com": want http(s)://host[:port][/path]`)
}

// TestClientNotAReceiver: a 2xx answer that is no OTLP response (the page
// of a web server, a health check's JSON) sent nothing: it is an error
// that says so, not spans counted as sent.
func TestClientNotAReceiver(t *testing.T) {
	for _, c := range []struct{ contentType, body string }{
		{"application/json", `{"status":"Server available","upSince":"2026-12-01T22:00:00Z"}`},
		{"text/html; charset=utf-8", "<html><body>It works!</body></html>\n"},
		{"", "ok"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.contentType != "" {
				w.Header().Set("Content-Type", c.contentType)
			} else {
				w.Header()["Content-Type"] = nil // not sniffed
			}
			io.WriteString(w, c.body)
		}))
		one := Spans(sessionOf(attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]))[:1]
		err := (&Client{Endpoint: srv.URL}).Send(context.Background(), []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: one}}}})
		srv.Close()
		if err == nil || !ErrPermanent(err) || !strings.Contains(err.Error(), "not an OTLP response") {
			t.Errorf("a 200 of %q: %v, want an error saying it is no OTLP response", c.contentType, err)
		}
	}
}

// TestClientRefusalOneLine: a proxy's error page before the receiver (a
// 404 of HTML, on several lines) reads as one line of its text.
func TestClientRefusalOneLine(t *testing.T) {
	page := "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, page)
	}))
	defer srv.Close()
	one := Spans(sessionOf(attribution.Build(captures(t)["codex-0.169.jsonl"]).Sessions[0]))[:1]
	err := (&Client{Endpoint: srv.URL}).Send(context.Background(), []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: one}}}})
	want := srv.URL + "/v1/traces answered 404: <html> <head><title>404 Not Found</title></head> <body> <center><h1>404 Not Found</h1></center> <hr><center>nginx</center> </body> </html>" +
		" (an OTLP/HTTP receiver takes traces at /v1/traces: check the endpoint's path)"
	if err == nil || err.Error() != want {
		t.Fatalf("a proxy's error page: %q, want %q", err, want)
	}
}

// TestExporterLive feeds the exporter the changes of a Group as a real
// capture's events arrive one at a time, as the collector does, and
// checks the receiver holds each span of the final trace exactly once.
func TestExporterLive(t *testing.T) {
	r := receiver(t)
	f := func(file string) {
		t.Helper()
		envs := captures(t)[file]
		set := metrics.NewSet()
		e := NewExporter(&Client{Endpoint: r.Endpoint}, ExporterOptions{Metrics: set, FlushInterval: 20 * time.Millisecond, BatchSpans: 7})
		g := attribution.NewGroup()
		for _, env := range envs {
			g.Apply(env)
			e.Offer(g.Changes().Sessions)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Stop(ctx)
		for _, s := range attribution.Build(envs).Sessions {
			checkReceived(t, r, Spans(sessionOf(s)))
		}
		var out strings.Builder
		set.WritePrometheus(&out)
		if !strings.Contains(out.String(), `hookwatch_otlp_spans_dropped_total{reason="send_failed"} 0`) ||
			!strings.Contains(out.String(), `hookwatch_otlp_spans_dropped_total{reason="queue_full"} 0`) {
			t.Fatalf("%s: spans lost:\n%s", file, out.String())
		}
	}
	f("claude-code-2.1.197.jsonl")
	f("claude-code-2.1.332.jsonl")
}

// TestExporterBounded: with the receiver gone, Offer still returns at once,
// the queue holds at most MaxQueueSpans, and what is lost is counted.
func TestExporterBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	set := metrics.NewSet()
	// Five attempts 100 ms apart, doubling: 1.5 s a batch.
	e := NewExporter(&Client{Endpoint: dead, Backoff: 100 * time.Millisecond}, ExporterOptions{Metrics: set, MaxQueueSpans: 5, BatchSpans: 2, FlushInterval: time.Hour})
	res := attribution.Build(captures(t)["claude-code-2.1.332.jsonl"])
	var changes []attribution.SessionChanges
	total := 0
	for _, s := range res.Sessions {
		changes = append(changes, attribution.SessionChanges{Session: s.Summary(), Agents: s.Agents, ToolCalls: s.ToolCalls})
		total += len(Spans(sessionOf(s)))
	}
	start := time.Now()
	e.Offer(changes)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Offer took %v", d)
	}
	// Offer queues under one lock: the bound was taken and the rest
	// dropped at once. The queue itself cannot be read for it: the sender,
	// woken at the second span, may have taken a batch since.
	var offered strings.Builder
	set.WritePrometheus(&offered)
	if full := metricValue(t, offered.String(), `hookwatch_otlp_spans_dropped_total{reason="queue_full"}`); full != total-5 {
		t.Fatalf("%d of %d spans dropped for a full queue, want all but the bound 5", full, total)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start = time.Now()
	e.Stop(ctx)
	// Stopping gives up on the receiver after one batch's retries, rather
	// than waiting them out for each of the three batches.
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Stop took %v with the receiver away", d)
	}
	var out strings.Builder
	set.WritePrometheus(&out)
	// Every span is lost, each counted once: full queue, or send failed.
	full, failed := metricValue(t, out.String(), `hookwatch_otlp_spans_dropped_total{reason="queue_full"}`),
		metricValue(t, out.String(), `hookwatch_otlp_spans_dropped_total{reason="send_failed"}`)
	if full+failed != total || failed < 5 {
		t.Fatalf("queue_full %d + send_failed %d, want %d in all:\n%s", full, failed, total, out.String())
	}
}

func metricValue(t *testing.T, text, name string) int {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var n int
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	t.Fatalf("no %s in:\n%s", name, text)
	return 0
}
