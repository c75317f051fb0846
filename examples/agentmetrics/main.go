// Command agentmetrics counts an agent tree's tool calls per agent — calls,
// failures, refusals, time spent — with a toolhook.Recorder beside the
// audit trail, prints them as a table, and writes the collector's
// hookwatch_tool_calls_total{agent_type,tool,status} counter
// (docs/metrics.md) in Prometheus' text format, so that a dashboard built
// on a collector's metrics reads an agent in Go the same way.
//
//	go run ./examples/agentmetrics
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/toolhook"
)

// AgentStats are the counts of one agent's calls.
type AgentStats struct {
	AgentID, AgentType string // "" and attribution.RoleMain for the main agent
	Depth              int
	Calls              int
	// ByStatus counts the calls by attribution's status (ok, error,
	// interrupted, denied).
	ByStatus map[string]int
	// Total and Max are the time the calls took.
	Total, Max time.Duration
}

// Failures are the calls that failed or were aborted.
func (s *AgentStats) Failures() int {
	n := 0
	for status, k := range s.ByStatus {
		if attribution.Failed(status) {
			n += k
		}
	}
	return n
}

// Metrics is a toolhook.Recorder that counts calls per agent. It is safe
// for concurrent use.
type Metrics struct {
	set *metrics.Set

	mu     sync.Mutex
	agents map[string]*AgentStats
}

// NewMetrics returns empty Metrics.
func NewMetrics() *Metrics {
	return &Metrics{set: metrics.NewSet(), agents: map[string]*AgentStats{}}
}

// Record counts c.
func (m *Metrics) Record(c *toolhook.Call) {
	agentType := c.AgentType
	if c.AgentID == "" {
		agentType = attribution.RoleMain // the collector's label for the main agent
	}
	m.set.GetOrCreateCounter(fmt.Sprintf(`hookwatch_tool_calls_total{agent_type=%q,tool=%q,status=%q}`, agentType, c.ToolName, c.Status)).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.agents[c.AgentID]
	if s == nil {
		s = &AgentStats{AgentID: c.AgentID, AgentType: agentType, Depth: c.Depth, ByStatus: map[string]int{}}
		m.agents[c.AgentID] = s
	}
	s.Calls++
	s.ByStatus[c.Status]++
	s.Total += c.Duration
	s.Max = max(s.Max, c.Duration)
}

// Agents returns a copy of the counts, by depth, then agent id.
func (m *Metrics) Agents() []AgentStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]AgentStats, 0, len(m.agents))
	for _, s := range m.agents {
		c := *s
		c.ByStatus = make(map[string]int, len(s.ByStatus))
		for k, v := range s.ByStatus {
			c.ByStatus[k] = v
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b AgentStats) int {
		if a.Depth != b.Depth {
			return a.Depth - b.Depth
		}
		return strings.Compare(a.AgentID, b.AgentID)
	})
	return out
}

// WriteTable writes one line per agent.
func (m *Metrics) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tTYPE\tDEPTH\tCALLS\tFAILED\tDENIED\tTOTAL\tMAX")
	for _, s := range m.Agents() {
		id := s.AgentID
		if id == "" {
			id = "(main)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", id, s.AgentType, s.Depth, s.Calls, s.Failures(),
			s.ByStatus[attribution.StatusDenied], s.Total.Round(time.Microsecond), s.Max.Round(time.Microsecond))
	}
	return tw.Flush()
}

// WritePrometheus writes the counters in Prometheus' text format.
func (m *Metrics) WritePrometheus(w io.Writer) { m.set.WritePrometheus(w) }

// run is the agent tree: a main agent that reads its plan and spawns a
// reviewer and a builder; the builder's build fails once, and its deploy is
// refused by a hook.
func run(ctx context.Context, rec toolhook.Recorder) error {
	var hooks toolhook.Registry
	if err := hooks.Pre("deploy", func(context.Context, *toolhook.Call) toolhook.PreResult {
		return toolhook.PreResult{Decision: decision.Decision{Verdict: decision.Deny, Reasons: []string{"deploys need a human"}}}
	}); err != nil {
		return err
	}
	builds := 0
	x := &toolhook.Executor{Registry: &hooks, SessionID: "agentmetrics-demo", Recorder: rec}
	x.Tools = map[string]toolhook.Tool{
		"Read": func(_ context.Context, in map[string]any) (any, error) {
			return "contents of " + fmt.Sprint(in["file_path"]), nil
		},
		"build": func(context.Context, map[string]any) (any, error) {
			builds++ // the builder calls it in turn
			if builds == 1 {
				return nil, errors.New("compile error")
			}
			return "ok", nil
		},
		"deploy": func(context.Context, map[string]any) (any, error) { return "deployed", nil },
		"Task": func(ctx context.Context, in map[string]any) (any, error) {
			name, _ := in["agent"].(string)
			wctx := toolhook.SpawnAgent(ctx, name, name)
			switch name {
			case "reviewer":
				for _, f := range []string{"a.go", "b.go", "c.go"} {
					if _, err := x.Call(wctx, "Read", map[string]any{"file_path": f}); err != nil {
						return nil, err
					}
				}
			case "builder":
				x.Call(wctx, "build", nil)
				if _, err := x.Call(wctx, "build", nil); err != nil {
					return nil, err
				}
				x.Call(wctx, "deploy", map[string]any{"env": "prod"})
			}
			return name + " done", nil
		},
	}
	if _, err := x.Call(ctx, "Read", map[string]any{"file_path": "PLAN.md"}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, agent := range []string{"reviewer", "builder"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = x.Call(ctx, "Task", map[string]any{"agent": agent})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func main() {
	m := NewMetrics()
	if err := run(context.Background(), m); err != nil {
		fmt.Fprintln(os.Stderr, "agentmetrics:", err)
		os.Exit(1)
	}
	m.WriteTable(os.Stdout)
	fmt.Println()
	m.WritePrometheus(os.Stdout)
}
