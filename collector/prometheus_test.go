package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/promtest"
	"github.com/hookwatch/hookwatch/spool"
)

func TestMain(m *testing.M) {
	code := m.Run()
	promtest.Stop()
	pgtest.Stop()
	os.Exit(code)
}

// TestPrometheus: a real Prometheus scrapes a collector fed the real
// captures, half through a spool as local hooks deliver and half posted,
// and PromQL counts per agent type what the API lists. Every expression of
// the Grafana dashboard in docs/ runs on that Prometheus without an error
// and names only metrics the collector writes.
func TestPrometheus(t *testing.T) {
	prom := promtest.Get(t)
	s := newServer(t, patient)
	sp, err := spool.Open(filepath.Join(t.TempDir(), "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.DrainSpool(ctx, sp, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })

	envs := append(corpusEnvelopes(t), liveSession()...)
	half := len(envs) / 2
	for _, e := range envs[:half] {
		b, _ := json.Marshal(e)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	s.post(t, envs[half:], len(envs)-half, 0)
	deadline := time.Now().Add(20 * time.Second)
	for sum(s.scrape(t), "hookwatch_events_ingested_total") != float64(len(envs)) {
		if time.Now().After(deadline) {
			t.Fatal("the spool was not drained")
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := s.apiTotals(t)

	addr := strings.TrimPrefix(s.http.URL, "http://")
	prom.Scrape(t, addr)
	byType := map[string]int{}
	for k, n := range want.calls {
		byType[strings.SplitN(k, "/", 2)[0]] += n
	}
	if byType["Explore"] == 0 || byType["main"] == 0 {
		t.Fatalf("the captures lack Explore or main agent calls: %v", byType)
	}
	for typ, n := range byType {
		prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_tool_calls_total{instance=%q,agent_type=%q})`, addr, typ), float64(n))
	}
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_prompts_total{instance=%q})`, addr), float64(want.prompts))
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_denials_total{instance=%q,rule_id="no-rm"})`, addr), 1)
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_active_agents{instance=%q,agent_type="Explore"})`, addr), 1)
	for typ, n := range want.subagents {
		prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_subagents_started_total{instance=%q,agent_type=%q})`, addr, typ), float64(n))
	}
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_tool_call_duration_seconds_count{instance=%q}) > 0`, addr),
		sum(s.scrape(t), "hookwatch_tool_call_duration_seconds_count"))
	if _, err := prom.Query(fmt.Sprintf(`histogram_quantile(0.9, sum by (le, tool) (hookwatch_tool_call_duration_seconds_bucket{instance=%q}))`, addr)); err != nil {
		t.Fatal(err)
	}
	checkDashboard(t, prom, s.scrape(t))
	_, body := s.do(t, "GET", "/metrics", nil)
	checkMetadata(t, body)
	// Prometheus keeps what the # HELP and # TYPE lines say.
	for name, typ := range map[string]string{"hookwatch_tool_calls_total": "counter",
		"hookwatch_tool_call_duration_seconds": "histogram", "hookwatch_active_agents": "gauge"} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			md, err := prom.Metadata(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(md) == 1 && md[0].Type == typ && md[0].Help != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus' metadata of %s: %+v, want one of type %s with a help", name, md, typ)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		checkPromtool(t, promtool, s)
	}
}

// checkMetadata checks that every family of an exposition, the runtime's
// and the process's too, has a # HELP and a # TYPE before its first
// sample, but for the vmrange histograms' series, which have a # HELP each
// and no type.
func checkMetadata(t *testing.T, exposition []byte) {
	t.Helper()
	helps, types := map[string]string{}, map[string]string{}
	for line := range strings.Lines(string(exposition)) {
		line = strings.TrimSuffix(line, "\n")
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, help, _ := strings.Cut(rest, " ")
			helps[name] = help
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		if name == "" {
			continue
		}
		family := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && (types[base] == "histogram" || suffix != "_bucket" && types[base] == "summary") {
				family = base
			}
		}
		switch {
		case helps[family] == "":
			t.Errorf("%s: no # HELP before its first sample", name)
		case types[family] == "" && !strings.Contains(line, "vmrange=") && !strings.HasSuffix(name, "_sum") && !strings.HasSuffix(name, "_count"):
			t.Errorf("%s: no # TYPE before its first sample", name)
		}
	}
	for name, want := range map[string]string{"hookwatch_events_ingested_total": "counter", "hookwatch_sse_clients": "gauge",
		"hookwatch_tool_call_duration_seconds": "histogram", "hookwatch_commit_duration_seconds_bucket": "",
		"go_gc_duration_seconds": "summary", "go_goroutines": "gauge", "process_cpu_seconds_total": "counter", "go_sched_latencies_seconds": "histogram"} {
		if types[name] != want || helps[name] == "" {
			t.Errorf("%s: # TYPE %q and # HELP %q, want the type %q and a help", name, types[name], helps[name], want)
		}
	}
}

// dashboardVars stand for the Grafana variables the dashboard's
// expressions use.
var dashboardVars = strings.NewReplacer(
	"$__rate_interval", "1m", "$__range", "1h", "$__interval", "15s",
	"$agent_type", ".*", "$tool", ".*",
)

// checkDashboard runs every expression of docs/grafana-dashboard.json on
// prom and checks that the hookwatch metrics it names are in samples.
func checkDashboard(t *testing.T, prom *promtest.Server, samples map[string]float64) {
	t.Helper()
	b, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("docs/grafana-dashboard.json: %v", err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dash)
	if len(exprs) < 15 {
		t.Fatalf("the dashboard has %d expressions", len(exprs))
	}
	names := map[string]bool{}
	for series := range samples {
		name, _, _ := strings.Cut(series, "{")
		names[name] = true
	}
	metricName := regexp.MustCompile(`\bhookwatch_[a-z_]+`)
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			if !names[n] {
				t.Errorf("the dashboard names %s, which the collector does not write: %s", n, e)
			}
		}
		if strings.HasPrefix(e, "label_values(") {
			continue // a Grafana function, not PromQL
		}
		if _, err := prom.Query(dashboardVars.Replace(e)); err != nil {
			t.Errorf("dashboard: %v", err)
		}
	}
}

// checkPromtool lints the collector's /metrics with promtool. Its advice
// (exit status 3) may concern only the names of three runtime families
// the metrics package writes (docs/metrics.md), whose suffix is not the
// one a counter or a gauge should have.
func checkPromtool(t *testing.T, promtool string, s *testServer) {
	t.Helper()
	_, body := s.do(t, "GET", "/metrics", nil)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) || bytes.Contains(out, []byte("error while linting")) {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		name, advice, _ := strings.Cut(line, " ")
		if !slices.Contains([]string{"go_cgo_calls_count", "go_cpu_count", "go_gc_forced_count"}, name) || !strings.Contains(advice, "suffix") {
			t.Errorf("promtool check metrics: %s", line)
		}
	}
}
