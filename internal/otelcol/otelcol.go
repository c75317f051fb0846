// Package otelcol runs a real OpenTelemetry Collector (built by
// scripts/build-otelcol.sh: OTLP/HTTP receiver, file exporter, health check)
// and a real Jaeger v2 (scripts/build-jaeger.sh: an OpenTelemetry Collector
// distribution with in-memory storage and a query API) for tests, and reads
// back the spans they received.
//
// Tests start one Receiver per test package, in TestMain, and one Jaeger
// per test binary (SharedJaeger); without the binary they skip, saying how
// to build it, except in CI (CI=true), where they fail: CI must run them.
package otelcol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/freeport"
)

// Version is the collector version scripts/build-otelcol.sh builds.
const Version = "0.162.0"

// BinEnv names the variable that gives the collector binary's path.
const BinEnv = "HOOKWATCH_OTELCOL_BIN"

// Bin returns the collector binary: $HOOKWATCH_OTELCOL_BIN, else where
// scripts/build-otelcol.sh caches it. The error says how to get it.
func Bin() (string, error) {
	return cachedBin(BinEnv, "otelcol-"+Version, "otelcol-hookwatch", "OpenTelemetry Collector", "scripts/build-otelcol.sh")
}

// cachedBin returns $env, else file in dir under where the build scripts
// cache their binaries; the error names what is missing and how to get it.
func cachedBin(env, dir, file, what, script string) (string, error) {
	path := os.Getenv(env)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find the %s binary: %w", what, err)
			}
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "hookwatch", dir, file)
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("no %s at %s (build it with %s, or set %s)", what, path, script, env)
	}
	return path, nil
}

// Missing skips tb because the receiver could not be had (err says why),
// or fails it in CI.
func Missing(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("otelcol: %v; in CI the receiver tests must run", err)
	}
	tb.Skipf("otelcol: %v", err)
}

// Receiver is a running collector.
type Receiver struct {
	// Endpoint is the base URL of its OTLP/HTTP receiver
	// (http://127.0.0.1:port; traces go to /v1/traces).
	Endpoint string
	dir      string
	out      string // the file exporter's output
	ports    []int
	proc     process
}

const config = `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${env:OTELCOL_OTLP_PORT}
exporters:
  file:
    path: ${env:OTELCOL_FILE_OUT}
    flush_interval: 50ms
extensions:
  health_check:
    endpoint: 127.0.0.1:${env:OTELCOL_HEALTH_PORT}
service:
  extensions: [health_check]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
  telemetry:
    metrics:
      level: none
`

// Start runs the collector with its files in dir (which must exist) and
// returns once it is ready. It tries other ports when the ones it picked
// were taken before the collector bound them.
func Start(dir string) (*Receiver, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return nil, err
	}
	return onFreePorts(func() (*Receiver, error) { return start(bin, cfg, dir) })
}

func start(bin, cfg, dir string) (*Receiver, error) {
	ports, err := freeport.Ports(2)
	if err != nil {
		return nil, err
	}
	r := &Receiver{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		dir:      dir, out: filepath.Join(dir, "traces.jsonl"), ports: ports,
	}
	r.proc = process{
		what: "the collector", logPath: filepath.Join(dir, "otelcol.log"),
		args: []string{bin, "--config=file:" + cfg},
		env: []string{"OTELCOL_OTLP_PORT=" + strconv.Itoa(ports[0]),
			"OTELCOL_HEALTH_PORT=" + strconv.Itoa(ports[1]), "OTELCOL_FILE_OUT=" + r.out},
		health: "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/",
	}
	os.Remove(r.out)
	if err := r.proc.run(); err != nil {
		return nil, err
	}
	return r, nil
}

// Restart starts a stopped collector again at the same Endpoint, its
// output file kept: a receiver that was away and comes back. The ports
// were free while it was stopped; another program taking one meanwhile
// fails the restart.
func (r *Receiver) Restart() error {
	return r.proc.run()
}

// Log returns what the collector wrote to stdout and stderr.
func (r *Receiver) Log() string { return r.proc.log() }

// Stop ends the collector: SIGTERM, then SIGKILL after 5 s.
func (r *Receiver) Stop() error { return r.proc.stop() }

// Span is a span as the file exporter wrote it (OTLP-JSON: ids in hex,
// 64-bit integers as strings).
type Span struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Name         string     `json:"name"`
	Kind         int        `json:"kind"`
	Start        string     `json:"startTimeUnixNano"`
	End          string     `json:"endTimeUnixNano"`
	Attributes   []KeyValue `json:"attributes"`
	Status       struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Links []struct {
		TraceID    string     `json:"traceId"`
		SpanID     string     `json:"spanId"`
		Attributes []KeyValue `json:"attributes"`
	} `json:"links"`
	// Resource holds the attributes of the resource the span came with.
	Resource []KeyValue `json:"-"`
}

// ByID indexes spans by span id; an id held twice is an error that shows
// both spans, for the checks of a trace each of whose spans was sent once.
func ByID(spans []Span) (map[string]Span, error) {
	byID := make(map[string]Span, len(spans))
	for _, sp := range spans {
		if prev, dup := byID[sp.SpanID]; dup {
			return nil, fmt.Errorf("span %s (%s) received twice:\n%+v\n%+v", sp.SpanID, sp.Name, prev, sp)
		}
		byID[sp.SpanID] = sp
	}
	return byID, nil
}

// KeyValue is an attribute.
type KeyValue struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// Value is an attribute's value: one of its fields is set.
type Value struct {
	String *string  `json:"stringValue"`
	Int    *string  `json:"intValue"`
	Bool   *bool    `json:"boolValue"`
	Double *float64 `json:"doubleValue"`
	Array  *struct {
		Values []Value `json:"values"`
	} `json:"arrayValue"`
}

// Attr returns an attribute of the span as text, "" when absent.
func (s Span) Attr(key string) string { return attrOf(s.Attributes, key) }

func attrOf(kvs []KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value.Text()
		}
	}
	return ""
}

// Text returns the value as text: a double in the shortest form that
// reads back the same (strconv 'g'), an array as its values' texts in
// brackets, separated by spaces.
func (v Value) Text() string {
	switch {
	case v.String != nil:
		return *v.String
	case v.Int != nil:
		return *v.Int
	case v.Bool != nil:
		return strconv.FormatBool(*v.Bool)
	case v.Double != nil:
		return strconv.FormatFloat(*v.Double, 'g', -1, 64)
	case v.Array != nil:
		texts := make([]string, len(v.Array.Values))
		for i, x := range v.Array.Values {
			texts[i] = x.Text()
		}
		return "[" + strings.Join(texts, " ") + "]"
	}
	return ""
}

// Spans returns every span of trace traceID (hex) the collector wrote so
// far, in the order received.
func (r *Receiver) Spans(traceID string) ([]Span, error) {
	f, err := os.Open(r.out)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Span
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(traceID)) {
			continue
		}
		spans, err := appendSpans(out, line, traceID)
		if err != nil {
			// The exporter may be mid-line; the next read sees it whole.
			continue
		}
		out = spans
	}
	return out, sc.Err()
}

// appendSpans appends to out the spans of trace traceID (hex) in data, an
// OTLP-JSON TracesData (the file exporter's lines, the body of a Jaeger v3
// API's answer), each with its resource's attributes.
func appendSpans(out []Span, data []byte, traceID string) ([]Span, error) {
	var req struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []KeyValue `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Spans []Span `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return out, err
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if strings.EqualFold(sp.TraceID, traceID) {
					sp.Resource = rs.Resource.Attributes
					out = append(out, sp)
				}
			}
		}
	}
	return out, nil
}

// WaitSpans polls until trace traceID has at least n spans, or timeout.
func (r *Receiver) WaitSpans(traceID string, n int, timeout time.Duration) ([]Span, error) {
	return waitSpans(r.Spans, traceID, n, timeout)
}

// waitSpans polls spans until trace traceID has at least n, or timeout.
func waitSpans(spans func(traceID string) ([]Span, error), traceID string, n int, timeout time.Duration) ([]Span, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := spans(traceID)
		if err != nil || len(got) >= n || time.Now().After(deadline) {
			return got, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
