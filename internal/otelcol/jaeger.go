package otelcol

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/freeport"
)

// JaegerVersion is the version of the module github.com/jaegertracing/jaeger
// that scripts/build-jaeger.sh builds: Jaeger v2.13.0 (Jaeger v2 is
// published as module versions v1.x, with an OpenTelemetry Collector v0.140
// inside).
const JaegerVersion = "1.76.0"

// JaegerBinEnv names the variable that gives the Jaeger binary's path.
const JaegerBinEnv = "HOOKWATCH_JAEGER_BIN"

// JaegerBin returns the Jaeger binary: $HOOKWATCH_JAEGER_BIN, else where
// scripts/build-jaeger.sh caches it. The error says how to get it.
func JaegerBin() (string, error) {
	return cachedBin(JaegerBinEnv, "jaeger-"+JaegerVersion, "jaeger", "Jaeger", "scripts/build-jaeger.sh")
}

// Jaeger is a running Jaeger v2 with in-memory storage: OTLP/HTTP in, its
// query API out, on loopback ports only.
type Jaeger struct {
	// Endpoint is the base URL of its OTLP/HTTP receiver
	// (http://127.0.0.1:port; traces go to /v1/traces).
	Endpoint string
	// Query is the base URL of its query API (/api/v3/…, /api/traces/…).
	Query string
	proc  process
}

// jaegerConfig keeps every listener on loopback and off the defaults (the
// built-in all-in-one configuration binds the query ports on every
// interface and a dozen more), and has no batch processor: a span is
// queryable once the OTLP request that carried it is answered.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: []
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: mem
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:${env:JAEGER_QUERY_PORT}
    grpc:
      endpoint: 127.0.0.1:${env:JAEGER_QUERY_GRPC_PORT}
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${env:JAEGER_HEALTH_PORT}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${env:JAEGER_OTLP_PORT}
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// StartJaeger runs Jaeger with its files in dir (which must exist) and
// returns once it is ready. It tries other ports when the ones it picked
// were taken before Jaeger bound them.
func StartJaeger(dir string) (*Jaeger, error) {
	bin, err := JaegerBin()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(jaegerConfig), 0o600); err != nil {
		return nil, err
	}
	return onFreePorts(func() (*Jaeger, error) { return startJaeger(bin, cfg, dir) })
}

func startJaeger(bin, cfg, dir string) (*Jaeger, error) {
	ports, err := freeport.Ports(4)
	if err != nil {
		return nil, err
	}
	port := func(i int) string { return strconv.Itoa(ports[i]) }
	j := &Jaeger{Endpoint: "http://127.0.0.1:" + port(0), Query: "http://127.0.0.1:" + port(1)}
	j.proc = process{
		what: "Jaeger", logPath: filepath.Join(dir, "jaeger.log"),
		args: []string{bin, "--config=file:" + cfg},
		env: []string{"JAEGER_OTLP_PORT=" + port(0), "JAEGER_QUERY_PORT=" + port(1),
			"JAEGER_QUERY_GRPC_PORT=" + port(2), "JAEGER_HEALTH_PORT=" + port(3)},
		health: "http://127.0.0.1:" + port(3) + "/status",
	}
	if err := j.proc.run(); err != nil {
		return nil, err
	}
	return j, nil
}

// Log returns what Jaeger wrote to stdout and stderr.
func (j *Jaeger) Log() string { return j.proc.log() }

// Stop ends Jaeger: SIGTERM, then SIGKILL after 5 s.
func (j *Jaeger) Stop() error { return j.proc.stop() }

// Spans returns the spans of trace traceID (hex) as Jaeger's query API
// answers them (GET /api/v3/traces/{id}, OTLP-JSON): none while Jaeger has
// no span of the trace.
func (j *Jaeger) Spans(traceID string) ([]Span, error) {
	res, err := http.Get(j.Query + "/api/v3/traces/" + traceID)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	switch res.StatusCode {
	case http.StatusNotFound:
		return nil, nil
	case http.StatusOK:
	default:
		return nil, fmt.Errorf("jaeger: GET /api/v3/traces/%s answered %s: %s", traceID, res.Status, body)
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("jaeger: GET /api/v3/traces/%s: %w", traceID, err)
	}
	return appendSpans(nil, answer.Result, traceID)
}

// WaitSpans polls until trace traceID has at least n spans, or timeout.
func (j *Jaeger) WaitSpans(traceID string, n int, timeout time.Duration) ([]Span, error) {
	return waitSpans(j.Spans, traceID, n, timeout)
}

var (
	sharedJaeger    *Jaeger
	sharedJaegerErr error
	sharedJaegerDir string
	sharedJaegerMu  sync.Mutex
)

// SharedJaeger returns the test binary's Jaeger, starting it on first use;
// without the binary it skips tb, or fails it in CI (Missing); a Jaeger
// that does not start fails it. The
// package's TestMain calls StopJaeger after m.Run.
func SharedJaeger(tb testing.TB) *Jaeger {
	tb.Helper()
	sharedJaegerMu.Lock()
	defer sharedJaegerMu.Unlock()
	if _, err := JaegerBin(); err != nil {
		Missing(tb, err)
	}
	if sharedJaeger == nil && sharedJaegerErr == nil {
		sharedJaegerDir, sharedJaegerErr = os.MkdirTemp("", "jaeger-")
		if sharedJaegerErr == nil {
			sharedJaeger, sharedJaegerErr = StartJaeger(sharedJaegerDir)
		}
	}
	if sharedJaeger == nil {
		// A binary that does not run is a failure, not a skip.
		tb.Fatalf("otelcol: %v", sharedJaegerErr)
	}
	return sharedJaeger
}

// StopJaeger stops the test binary's Jaeger, if a test started it, and
// removes its files.
func StopJaeger() {
	sharedJaegerMu.Lock()
	defer sharedJaegerMu.Unlock()
	if sharedJaeger != nil {
		sharedJaeger.Stop()
		sharedJaeger = nil
	}
	if sharedJaegerDir != "" {
		os.RemoveAll(sharedJaegerDir)
	}
	sharedJaegerErr = fmt.Errorf("otelcol: the tests have ended")
}
