package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// benchAgents is the number of subagents of the benchmark session.
const benchAgents = 50

var benchTools = []string{"Bash", "Read", "Edit", "Grep", "Glob", "Write", "Task", "WebFetch", "mcp__github__get_issue"}

// benchCall is tool call i of session, with a document the size of a real
// one (a Bash command of a few hundred bytes, a decision, timings).
func benchCall(session string, i int, status string, seq int64) store.ToolCallRow {
	agent := ""
	if i%3 != 0 {
		agent = fmt.Sprintf("a%016x", i%benchAgents)
	}
	id := fmt.Sprintf("toolu_01%022d", i)
	started := storetest.At(i * 10)
	doc, _ := json.Marshal(map[string]any{
		"tool_use_id": id, "agent_id": agent, "tool_name": benchTools[i%len(benchTools)], "status": status,
		"started_at": started, "ended_at": started.Add(1500 * time.Millisecond), "duration_ms": 1500,
		"parent_tool_use_id": "toolu_01parent", "classification": "run_test",
		"input": map[string]any{
			"command":     "cd /home/dev/project && go test ./... -run 'TestSomething|TestOther' -count=1 2>&1 | tail -n 50 # " + strings.Repeat("x", 150),
			"description": "Run the tests of the package",
		},
		"decision": map[string]any{"behavior": "allow", "reason": "no rule matched"},
	})
	return store.ToolCallRow{SessionID: session, ToolUseID: id, AgentID: agent, ToolName: benchTools[i%len(benchTools)],
		Status: status, StartedAt: started, UpdatedSeq: seq, Doc: doc}
}

// BenchmarkPutModel measures PutModel of 1,000 tool call rows: new calls
// (a session being rebuilt) and the same calls ending (an update of every
// row's status and document).
func BenchmarkPutModel(b *testing.B) {
	const rows = 1000
	ctx := context.Background()
	for _, name := range []string{"insert", "update"} {
		b.Run(fmt.Sprintf("%s/calls=%d", name, rows), func(b *testing.B) {
			db := sqlite.MustOpenDB(b)
			batch := store.ModelBatch{ToolCalls: make([]store.ToolCallRow, rows)}
			fill := func(n int, status string) {
				for j := range batch.ToolCalls {
					batch.ToolCalls[j] = benchCall("bench", n*rows+j, status, int64(n*rows+j))
				}
			}
			if name == "update" {
				fill(0, "running")
				if err := db.PutModel(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			var took []time.Duration
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if name == "insert" {
					fill(i, "running")
				} else {
					fill(0, []string{"ok", "error"}[i%2])
				}
				b.StartTimer()
				start, cpu0 := time.Now(), cputime.Self()
				if err := db.PutModel(ctx, batch); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				cpu += cputime.Self() - cpu0
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*rows), "cpu-µs/row")
			reportMedian(b, took)
		})
	}
}

// BenchmarkToolCallsFirstPage measures the first page of a session's tool
// calls, of a session with 100,000 calls by 50 subagents, under each
// filter; the goal is 20 ms median (the HTTP figure is in internal/bench).
func BenchmarkToolCallsFirstPage(b *testing.B) {
	const calls = 100_000
	db := sqlite.MustOpenDB(b)
	ctx := context.Background()
	statuses := []string{"ok", "ok", "ok", "ok", "error", "denied", "ok", "interrupted", "ok", "ok"}
	// Another session beside it, so that the session filter matters.
	for _, session := range []string{"big", "other"} {
		n := calls
		if session == "other" {
			n = calls / 10
		}
		for start := 0; start < n; start += 1000 {
			var batch store.ModelBatch
			for i := start; i < min(start+1000, n); i++ {
				status := statuses[i%len(statuses)]
				if i >= n-5 {
					status = "running"
				}
				c := benchCall(session, i, status, int64(i+1))
				// One call in 5,000 is of an agent and a tool no other
				// call has: the first page a narrow index keeps short.
				if i%5000 == 17 {
					c.AgentID, c.ToolName = "a-rare", "WebSearch"
				}
				batch.ToolCalls = append(batch.ToolCalls, c)
			}
			if err := db.PutModel(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	subtree := []string{}
	for i := range 10 {
		subtree = append(subtree, fmt.Sprintf("a%016x", i))
	}
	cases := []struct {
		name string
		f    store.ToolCallFilter
	}{
		{"all", store.ToolCallFilter{SessionID: "big"}},
		{"all/limit=1000", store.ToolCallFilter{SessionID: "big", Limit: store.MaxLimit}},
		{"main-agent", store.ToolCallFilter{SessionID: "big", AgentIDs: []string{""}}},
		{"subtree-of-10", store.ToolCallFilter{SessionID: "big", AgentIDs: subtree}},
		{"agent-rare", store.ToolCallFilter{SessionID: "big", AgentIDs: []string{"a-rare"}}},
		{"tool-rare", store.ToolCallFilter{SessionID: "big", Tool: "WebSearch"}},
		{"tool", store.ToolCallFilter{SessionID: "big", Tool: "Write"}},
		{"status-rare", store.ToolCallFilter{SessionID: "big", Status: "running"}},
		{"status-error", store.ToolCallFilter{SessionID: "big", Status: "error"}},
		{"tool+status", store.ToolCallFilter{SessionID: "big", Tool: "Bash", Status: "error"}},
		{"since-late", store.ToolCallFilter{SessionID: "big", Since: storetest.At((calls - 500) * 10)}},
		{"updated-after", store.ToolCallFilter{SessionID: "big", UpdatedAfter: calls - 50, Order: store.ByChange}},
		{"every-session/updated-after", store.ToolCallFilter{UpdatedAfter: calls - 50, Order: store.ByChange}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			cpu0 := cputime.Self()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				p, err := db.ToolCalls(ctx, c.f)
				if err != nil || len(p.ToolCalls) == 0 {
					b.Fatal(err, len(p.ToolCalls))
				}
				took = append(took, time.Since(start))
			}
			b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
			reportMedian(b, took)
		})
	}
	// A page deep in the listing costs what the first does.
	b.Run("page-500", func(b *testing.B) {
		f := store.ToolCallFilter{SessionID: "big"}
		for range 499 {
			p, err := db.ToolCalls(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			f.Cursor = p.Next
		}
		b.ResetTimer()
		took := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if p, err := db.ToolCalls(ctx, f); err != nil || len(p.ToolCalls) == 0 {
				b.Fatal(err, len(p.ToolCalls))
			}
			took = append(took, time.Since(start))
		}
		reportMedian(b, took)
	})
}

// reportMedian reports the median of took in milliseconds, the figure the
// goals are stated in.
func reportMedian(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "ms-median")
}
