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
	if promtool, err := exec.LookPath("promtool"); err == nil {
		checkPromtool(t, promtool, s)
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

// checkPromtool lints the collector's /metrics with promtool. Only the
// format matters: promtool's naming advice (exit status 3: no HELP lines,
// which the metrics package does not write) is not an error here.
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
}
