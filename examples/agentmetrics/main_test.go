package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCounts runs the agent tree and checks each agent's counts, the table
// and the Prometheus counters against what the program's agents did.
func TestCounts(t *testing.T) {
	m := NewMetrics()
	if err := run(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	type want struct {
		agentType                    string
		depth, calls, failed, denied int
	}
	wants := map[string]want{
		"":         {"main", 0, 3, 0, 0}, // PLAN.md, two Tasks
		"builder":  {"builder", 1, 3, 1, 1},
		"reviewer": {"reviewer", 1, 3, 0, 0},
	}
	got := m.Agents()
	if len(got) != len(wants) {
		t.Fatalf("%d agents, want %d: %+v", len(got), len(wants), got)
	}
	for _, s := range got {
		w, ok := wants[s.AgentID]
		if !ok || s.AgentType != w.agentType || s.Depth != w.depth || s.Calls != w.calls || s.Failures() != w.failed || s.ByStatus["denied"] != w.denied {
			t.Errorf("agent %q: %+v, want %+v", s.AgentID, s, w)
		}
		if s.Max > s.Total || (s.Calls > 0 && s.Total <= 0) {
			t.Errorf("agent %q: total %v, max %v", s.AgentID, s.Total, s.Max)
		}
	}

	var table bytes.Buffer
	if err := m.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "(main)") || !strings.HasPrefix(lines[2], "builder") {
		t.Fatalf("table:\n%s", table.String())
	}

	var prom bytes.Buffer
	m.WritePrometheus(&prom)
	for _, line := range []string{
		`hookwatch_tool_calls_total{agent_type="main",tool="Read",status="ok"} 1`,
		`hookwatch_tool_calls_total{agent_type="main",tool="Task",status="ok"} 2`,
		`hookwatch_tool_calls_total{agent_type="reviewer",tool="Read",status="ok"} 3`,
		`hookwatch_tool_calls_total{agent_type="builder",tool="build",status="error"} 1`,
		`hookwatch_tool_calls_total{agent_type="builder",tool="build",status="ok"} 1`,
		`hookwatch_tool_calls_total{agent_type="builder",tool="deploy",status="denied"} 1`,
	} {
		if !strings.Contains(prom.String(), line+"\n") {
			t.Errorf("no %s in:\n%s", line, prom.String())
		}
	}
}
