package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/promtest"
)

// TestMetricsOnPrometheus: the real client runs parallel subagents, a
// three-deep chain, a failing Bash and a rejected call through the real
// hook into `hookwatch serve`; a real Prometheus scrapes its /metrics, and
// PromQL counts, per agent type, the tool calls the API lists for those
// sessions, and the subagents and prompts.
func TestMetricsOnPrometheus(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	prom := promtest.Get(t)
	EachClient(t, func(t *testing.T, cl Client) { testMetricsOnPrometheus(t, prom, cl) })
}

// testMetricsOnPrometheus plays the scenarios with client cl into a
// collector of its own, which prom scrapes as an instance of its own.
func testMetricsOnPrometheus(t *testing.T, prom *promtest.Server, cl Client) {
	c := startCollector(t)

	calls := map[string]int{} // by agent type, "main" for the main agent
	subagents := map[string]int{}
	prompts := 0
	for _, sc := range []func(a *attrEnv) Scenario{
		func(a *attrEnv) Scenario { return ParallelSubagents(a.Project) },
		func(*attrEnv) Scenario { return NestedSubagents() },
		func(*attrEnv) Scenario { return FailingBash() },
		func(*attrEnv) Scenario { return RejectedCall() },
	} {
		a := c.newEnv(t, cl)
		res := a.Play(sc(a))
		for _, id := range a.settle() {
			s := c.session(t, id)
			if s.AliasOf != "" {
				continue
			}
			prompts += s.Counts["prompts"]
			for _, call := range c.toolCalls(t, id) {
				if call.Status == "pending" {
					continue
				}
				calls[typeLabel(call.AgentID, call.AgentType)]++
			}
			for _, ag := range c.agents(t, id) {
				if ag.AgentID != "" {
					subagents[typeLabel(ag.AgentID, ag.AgentType)]++
				}
			}
		}
		if res.SessionID == "" {
			t.Fatalf("%s: no session", sc(a).Name)
		}
	}
	if calls["Explore"] == 0 || calls["general-purpose"] == 0 || subagents["general-purpose"] < 2+NestedDepth {
		t.Fatalf("the client's sessions lack subagent calls: calls %v, subagents %v", calls, subagents)
	}

	addr := strings.TrimPrefix(c.url, "http://")
	prom.Scrape(t, addr)
	for typ, n := range calls {
		prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_tool_calls_total{instance=%q,agent_type=%q})`, addr, typ), float64(n))
	}
	for typ, n := range subagents {
		prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_subagents_started_total{instance=%q,agent_type=%q})`, addr, typ), float64(n))
	}
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_prompts_total{instance=%q})`, addr), float64(prompts))
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_tool_calls_total{instance=%q,status="error"})`, addr), 1)
	prom.WaitValue(t, fmt.Sprintf(`sum(hookwatch_tool_calls_total{instance=%q,status="rejected"})`, addr), 1)
	t.Logf("PromQL per agent type, equal to the API: tool calls %v, subagents %v, prompts %d", calls, subagents, prompts)
}

// typeLabel is the agent_type label of an agent (docs/metrics.md).
func typeLabel(agentID string, typ *string) string {
	switch {
	case agentID == "":
		return "main"
	case typ == nil:
		return "unknown"
	case *typ == "":
		return "compaction"
	}
	return *typ
}
