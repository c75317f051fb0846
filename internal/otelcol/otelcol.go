// Package otelcol runs a real OpenTelemetry Collector (built by
// scripts/build-otelcol.sh: OTLP/HTTP receiver, file exporter, health check)
// for tests, and reads back the spans it received.
//
// Tests start one Receiver per test package, in TestMain; without the
// binary they skip, saying how to build it, except in CI (CI=true), where
// they fail: CI must run them.
package otelcol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Version is the collector version scripts/build-otelcol.sh builds.
const Version = "0.162.0"

// BinEnv names the variable that gives the collector binary's path.
const BinEnv = "HOOKWATCH_OTELCOL_BIN"

// Bin returns the collector binary: $HOOKWATCH_OTELCOL_BIN, else where
// scripts/build-otelcol.sh caches it. The error says how to get it.
func Bin() (string, error) {
	path := os.Getenv(BinEnv)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find the collector binary: %w", err)
			}
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "hookwatch", "otelcol-"+Version, "otelcol-hookwatch")
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("no OpenTelemetry Collector at %s (build it with scripts/build-otelcol.sh, or set %s)", path, BinEnv)
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
	logPath  string
	bin, cfg string
	ports    []int
	cmd      *exec.Cmd
	exited   chan error
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
	for try := 0; ; try++ {
		r, err := start(bin, cfg, dir)
		if err == nil || try == 2 {
			return r, err
		}
	}
}

func start(bin, cfg, dir string) (*Receiver, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	r := &Receiver{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		dir:      dir, out: filepath.Join(dir, "traces.jsonl"), logPath: filepath.Join(dir, "otelcol.log"),
		bin: bin, cfg: cfg, ports: ports,
	}
	os.Remove(r.out)
	if err := r.run(); err != nil {
		return nil, err
	}
	return r, nil
}

// run starts the collector's process on r's ports and returns once it is
// ready.
func (r *Receiver) run() error {
	r.exited = make(chan error, 1)
	log, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	r.cmd = exec.Command(r.bin, "--config=file:"+r.cfg)
	r.cmd.Env = append(os.Environ(), "OTELCOL_OTLP_PORT="+strconv.Itoa(r.ports[0]),
		"OTELCOL_HEALTH_PORT="+strconv.Itoa(r.ports[1]), "OTELCOL_FILE_OUT="+r.out)
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the collector: %w", err)
	}
	exited := r.exited
	cmd := r.cmd
	go func() { exited <- cmd.Wait() }()
	health := "http://127.0.0.1:" + strconv.Itoa(r.ports[1]) + "/"
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-r.exited:
			r.exited <- err
			return fmt.Errorf("the collector exited before it was ready (%v):\n%s", err, r.Log())
		default:
		}
		if res, err := http.Get(health); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Stop()
	return fmt.Errorf("the collector was not ready within 15 s:\n%s", r.Log())
}

// Restart starts a stopped collector again at the same Endpoint, its
// output file kept: a receiver that was away and comes back. The ports
// were free while it was stopped; another program taking one meanwhile
// fails the restart.
func (r *Receiver) Restart() error {
	return r.run()
}

// freePorts returns n loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Log returns what the collector wrote to stdout and stderr.
func (r *Receiver) Log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// Stop ends the collector: SIGTERM, then SIGKILL after 5 s.
func (r *Receiver) Stop() error {
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil // ended by the signal
		}
		return err
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		return errors.New("the collector did not stop within 5 s of SIGTERM")
	}
}

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
		if err := json.Unmarshal(line, &req); err != nil {
			// The exporter may be mid-line; the next read sees it whole.
			continue
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
	}
	return out, sc.Err()
}

// WaitSpans polls until trace traceID has at least n spans, or timeout.
func (r *Receiver) WaitSpans(traceID string, n int, timeout time.Duration) ([]Span, error) {
	deadline := time.Now().Add(timeout)
	for {
		spans, err := r.Spans(traceID)
		if err != nil || len(spans) >= n || time.Now().After(deadline) {
			return spans, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
