package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMetricsParsed: Metrics reads every kind of row of metrics.md as the
// page means it, in plain text.
func TestMetricsParsed(t *testing.T) {
	byName := map[string]Metric{}
	for _, m := range Metrics() {
		if _, twice := byName[m.Name]; twice {
			t.Errorf("%s is described twice", m.Name)
		}
		byName[m.Name] = m
		if m.Help == "" || strings.ContainsAny(m.Help, "`[]") || strings.Contains(m.Help, "**") || strings.HasSuffix(m.Help, "|") {
			t.Errorf("%s: the help is not plain text: %q", m.Name, m.Help)
		}
	}
	for name, want := range map[string]Metric{
		"hookwatch_events_ingested_total": {Type: "counter", Help: "events stored"},
		// le buckets, a link reduced to its text, one row of two families.
		"hookwatch_tool_call_duration_seconds":   {Type: "histogram"},
		"hookwatch_commit_duration_seconds":      {Type: "vmrange", Help: "events per group commit, and its duration"},
		"hookwatch_commit_events":                {Type: "vmrange", Help: "events per group commit, and its duration"},
		"hookwatch_sse_clients":                  {Type: "gauge", Help: "open /v1/stream connections"},
		"hookwatch_otlp_queue_spans":             {Type: "gauge", Help: "spans waiting to be sent"},
		"go_gc_heap_live_bytes":                  {Type: "gauge"},
		"go_gc_duration_seconds":                 {Type: "summary"},
		"process_io_storage_written_bytes_total": {Type: "counter"},
	} {
		got, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("%s: not read from the page", name)
		case got.Type != want.Type:
			t.Errorf("%s: type %q, want %q", name, got.Type, want.Type)
		case want.Help != "" && got.Help != want.Help:
			t.Errorf("%s: help %q, want %q", name, got.Help, want.Help)
		}
	}
	if h := byName["hookwatch_http_hook_events_refused_total"].Help; !strings.Contains(h, "(team-server.md)") || !strings.Contains(h, "POST /v1/hooks/claude") {
		t.Errorf("a link or a code span lost its text: %q", h)
	}
	if _, ok := byName["agent_type"]; ok {
		t.Error("a label of the bounded labels' table was read as a metric")
	}
}

// registration is a metric name where the code makes or writes a metric
// (the metrics package's New*, GetOrCreate*, Write* and the per-agent
// metrics' counter and write helpers).
var registration = regexp.MustCompile("(?:New\\w*|GetOrCreate\\w*|Write\\w*|counter|write)\\(.*?[`\"]((?:hookwatch|go)_[a-z0-9_]+)")

// TestEveryMetricDocumented: every metric the shipped code makes is
// described in metrics.md, so /metrics gives each a # HELP and # TYPE.
func TestEveryMetricDocumented(t *testing.T) {
	documented := map[string]bool{}
	for _, m := range Metrics() {
		documented[m.Name] = true
	}
	var made []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		// The benchmarks and examples read metrics; they make none of
		// the collector's.
		if d.IsDir() && (path == filepath.Join("..", "internal", "bench") || path == filepath.Join("..", "examples")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range registration.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(made, m[1]) {
				made = append(made, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(made) < 50 {
		t.Fatalf("found %d metrics in the code: the search is broken", len(made))
	}
	for _, name := range made {
		if !documented[name] {
			t.Errorf("%s is made by the code and not described in docs/metrics.md", name)
		}
	}
}
