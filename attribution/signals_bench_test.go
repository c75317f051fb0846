package attribution

import "testing"

// BenchmarkSignals reads the signals of a synthetic session of 5,000
// events and 20 subagents (in five fan-outs of siblings), as the
// collector does after each model round that changed its calls or agents.
func BenchmarkSignals(b *testing.B) {
	s := only(b, Build(syntheticSession(b, 5000, 20)))
	b.ReportAllocs()
	for b.Loop() {
		Signals(s.Agents, s.ToolCalls, Thresholds{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.ToolCalls)), "ns/call")
}
