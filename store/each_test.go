package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestEach: EachToolCall and EachAgent visit every row a filter selects,
// across pages, in the listing's order, and stop at fn's error.
func TestEach(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var b store.ModelBatch
	const n = 2*store.MaxLimit + 7
	for i := range n {
		b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{SessionID: "s", ToolUseID: fmt.Sprintf("t%05d", i), StartedAt: t0.Add(time.Duration(i) * time.Millisecond), UpdatedSeq: 1, Doc: []byte(`{}`)})
	}
	b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{SessionID: "other", ToolUseID: "x", StartedAt: t0, UpdatedSeq: 1, Doc: []byte(`{}`)})
	b.Agents = append(b.Agents, store.AgentRow{SessionID: "s", AgentID: "", StartedAt: t0, UpdatedSeq: 1, Doc: []byte(`{}`)})
	for i := range 3 {
		parent := ""
		b.Agents = append(b.Agents, store.AgentRow{SessionID: "s", AgentID: fmt.Sprint("a", i), ParentAgentID: &parent, Depth: 1, StartedAt: t0.Add(time.Duration(i) * time.Second), UpdatedSeq: 1, Doc: []byte(`{}`)})
	}
	if err := db.PutModel(ctx, b); err != nil {
		t.Fatal(err)
	}

	var ids []string
	err := store.EachToolCall(ctx, db, store.ToolCallFilter{SessionID: "s", Limit: store.MaxLimit}, func(r store.ToolCallRow) error {
		ids = append(ids, r.ToolUseID)
		return nil
	})
	if err != nil || len(ids) != n {
		t.Fatalf("%d calls, %v; want %d", len(ids), err, n)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("t%05d", i) {
			t.Fatalf("call %d is %s", i, id)
		}
	}
	stop := errors.New("stop")
	seen := 0
	err = store.EachToolCall(ctx, db, store.ToolCallFilter{SessionID: "s", Limit: 10}, func(store.ToolCallRow) error {
		if seen++; seen == 15 {
			return stop
		}
		return nil
	})
	if err != stop || seen != 15 {
		t.Fatalf("stopped after %d with %v", seen, err)
	}
	var agents []string
	err = store.EachAgent(ctx, db, store.AgentFilter{SessionID: "s", Limit: 2}, func(r store.AgentRow) error {
		agents = append(agents, r.AgentID)
		return nil
	})
	if err != nil || fmt.Sprint(agents) != "[ a0 a1 a2]" {
		t.Fatalf("agents %q, %v", agents, err)
	}
}
