package collector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/label"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestLabelBounds: the metrics bound their labels by package label (whose
// tests hold the details); the rule ids, by a set of their own.
func TestLabelBounds(t *testing.T) {
	am := newAgentMetrics(metrics.NewSet())
	f := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for i := range label.MaxAgentTypes {
		f(am.agentTypes.Bound(fmt.Sprint("type-", i)), fmt.Sprint("type-", i))
	}
	f(am.agentTypes.Bound("one-too-many"), label.Other)
	f(am.agentTypes.Bound(labelMain), labelMain)
	f(am.agentTypes.Bound("general-purpose"), "general-purpose")

	for i := range label.MaxTools {
		f(am.tools.Bound(fmt.Sprint("Tool", i)), fmt.Sprint("Tool", i))
	}
	f(am.tools.Bound("one-too-many"), label.Other)
	f(am.tools.Bound("mcp__s__t"), "mcp_call")
	f(am.tools.Bound("Read"), "Read")

	for i := range maxRuleLabels {
		f(am.rules.Bound(fmt.Sprint("rule-", i)), fmt.Sprint("rule-", i))
	}
	f(am.rules.Bound("one-too-many"), label.Other)
	f(am.rules.Bound(labelClient), labelClient)
}

func TestLeHistogram(t *testing.T) {
	var h leHistogram
	for _, v := range []float64{0.001, 0.01, 0.3, 7, 1e6} {
		h.update(v)
	}
	var b strings.Builder
	h.write(&b, "d", `k="v"`)
	for _, want := range []string{
		`d_bucket{k="v",le="0.01"} 2`, `d_bucket{k="v",le="0.25"} 2`, `d_bucket{k="v",le="0.5"} 3`,
		`d_bucket{k="v",le="10"} 4`, `d_bucket{k="v",le="600"} 4`, `d_bucket{k="v",le="+Inf"} 5`,
		`d_sum{k="v"} 1.000007311e+06`, `d_count{k="v"} 5`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}

// BenchmarkAgentMetrics measures what the metrics per agent add to a model
// round: observing every session of the real captures as changed, as a
// rebuild reports them, then counting them. It reports the cost per call.
func BenchmarkAgentMetrics(b *testing.B) {
	var envs []event.Envelope
	for i, p := range storetest.Corpus(b) {
		envs = append(envs, storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
	}
	res := attribution.Build(envs)
	calls := 0
	for _, s := range res.Sessions {
		calls += len(s.ToolCalls)
	}
	am := newAgentMetrics(metrics.NewSet())
	for b.Loop() {
		c := newCounted()
		for _, s := range res.Sessions {
			sc := attribution.SessionChanges{Session: s, Agents: s.Agents, ToolCalls: s.ToolCalls}
			w := attribution.NewWatch(am.thresholds)
			w.Apply(sc, true)
			am.observe(c, &sc, w)
		}
		am.flush()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}
