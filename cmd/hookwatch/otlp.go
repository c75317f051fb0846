package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/export/otlp"
)

// otlpFlags are the flags that point OTLP traces at a receiver, shared by
// serve (live push) and export --format otlp.
type otlpFlags struct {
	endpoint string
	headers  map[string]string
}

// addOTLPFlags registers --otlp-endpoint and --otlp-header on fs, with
// their defaults from HOOKWATCH_OTLP_ENDPOINT and HOOKWATCH_OTLP_HEADERS.
func addOTLPFlags(fs *flag.FlagSet) *otlpFlags {
	f := &otlpFlags{headers: map[string]string{}}
	fs.StringVar(&f.endpoint, "otlp-endpoint", os.Getenv("HOOKWATCH_OTLP_ENDPOINT"),
		"OTLP/HTTP receiver of the traces, e.g. http://127.0.0.1:4318 (env HOOKWATCH_OTLP_ENDPOINT)")
	fs.Func("otlp-header", "`key=value` header sent to the OTLP receiver, repeatable (env HOOKWATCH_OTLP_HEADERS=k=v,k=v; prefer it for secrets: flags show in ps)",
		func(s string) error {
			k, v, ok := strings.Cut(s, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("want key=value, got %q", s)
			}
			f.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			return nil
		})
	return f
}

// client returns the OTLP client the flags ask for, nil when no endpoint
// is set. Headers from the environment come first; flags override them.
func (f *otlpFlags) client() (*otlp.Client, error) {
	if f.endpoint == "" {
		return nil, nil
	}
	headers, err := parseOTLPHeaders(os.Getenv("HOOKWATCH_OTLP_HEADERS"))
	if err != nil {
		return nil, fmt.Errorf("cannot read HOOKWATCH_OTLP_HEADERS: %w", err)
	}
	for k, v := range f.headers {
		headers[k] = v
	}
	c := &otlp.Client{Endpoint: f.endpoint, Headers: headers}
	if _, err := c.URL(); err != nil {
		return nil, err
	}
	return c, nil
}

// exporter returns the live exporter of serve and the metrics it counts
// on, nil when no endpoint is set.
func (f *otlpFlags) exporter(log *slog.Logger) (*otlp.Exporter, *metrics.Set, error) {
	c, err := f.client()
	if c == nil || err != nil {
		return nil, nil, err
	}
	set := metrics.NewSet()
	return otlp.NewExporter(c, otlp.ExporterOptions{Metrics: set, Logger: log}), set, nil
}

// parseOTLPHeaders reads headers in the form of OTEL_EXPORTER_OTLP_HEADERS:
// key=value pairs separated by commas, values percent-encoded (%20, %2C).
// A '+' stays a '+', as in the OpenTelemetry SDKs: a token in base64 has
// them, and a form's decoding would make each a space.
func parseOTLPHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("want key=value, got %q", kv)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[strings.TrimSpace(k)] = val
	}
	return out, nil
}
