package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// RetentionStore is what RunRetention tests.
type RetentionStore interface {
	store.Store
	store.Retention
}

// RunRetention runs the conformance suite of store.Retention. open must
// return a new, empty store and arrange for it to be closed when the test
// ends.
func RunRetention(t *testing.T, open func(t *testing.T) RetentionStore) {
	t.Run("PruneSessions", func(t *testing.T) { testPruneSessions(t, open(t)) })
	t.Run("PruneBatches", func(t *testing.T) { testPruneBatches(t, open(t)) })
	t.Run("PruneKeepsFarFuture", func(t *testing.T) { testPruneKeepsFarFuture(t, open(t)) })
}

// testPruneKeepsFarFuture: an event received, by its sender's clock, past
// what Unix nanoseconds hold (after 2262) is stored as the latest time
// there is, not as the wrapped value (the year 1833 for the year 3000),
// which would make its session the first that retention deletes.
func testPruneKeepsFarFuture(t *testing.T, s RetentionStore) {
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	insert(t, s, []store.Event{MustEvent(t, Envelope(event.RuntimeClaudeCode, far, P("session_id", "future", "hook_event_name", "Notification")))})
	if n, evs, err := s.PruneSessions(ctx, time.Now(), 0); err != nil || n != 0 || evs != 0 {
		t.Fatalf("PruneSessions before now = %d sessions, %d events, %v; want none", n, evs, err)
	}
	if got := sessionIDs(t, s); !slices.Equal(got, []string{"future"}) {
		t.Fatalf("sessions left: %v", got)
	}
}

// retentionFixture stores sessions old-0 … old-2 with events at 0–12 ms,
// new-0 with events at 10 and 100 ms (it spans the cut at 50 ms), an event
// of no session at 1 ms and one at 200 ms, and a model row of each session.
func retentionFixture(t *testing.T, s RetentionStore) {
	var events []store.Event
	for i := range 3 {
		for j := range 3 {
			events = append(events, ev(t, i*4+j, "session_id", fmt.Sprintf("old-%d", i), "hook_event_name", "Notification"))
		}
	}
	events = append(events,
		ev(t, 10, "session_id", "new-0", "hook_event_name", "Notification"),
		ev(t, 100, "session_id", "new-0", "hook_event_name", "Stop"),
		ev(t, 1, "hook_event_name", "Notification"),
		ev(t, 200, "hook_event_name", "Notification"))
	insert(t, s, events)
	var b store.ModelBatch
	for _, id := range []string{"old-0", "old-1", "old-2", "new-0"} {
		b.Sessions = append(b.Sessions, store.SessionModel{SessionID: id, GroupKey: "k", Seq: 1, UpdatedSeq: 1, FirstEventAt: At(0), LastEventAt: At(1)})
		b.Agents = append(b.Agents, store.AgentRow{SessionID: id, AgentID: "", StartedAt: At(0), UpdatedSeq: 1})
		b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{SessionID: id, ToolUseID: "t", ToolName: "Bash", Status: "ok", StartedAt: At(0), UpdatedSeq: 1})
	}
	putModel(t, s, b)
}

func sessionIDs(t *testing.T, s RetentionStore) []string {
	t.Helper()
	page, err := s.Sessions(ctx, store.SessionFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ss := range page.Sessions {
		out = append(out, ss.ID)
	}
	slices.Sort(out)
	return out
}

func testPruneSessions(t *testing.T, s RetentionStore) {
	retentionFixture(t, s)
	// What a dry run says is what is deleted, and it deletes nothing.
	for range 2 {
		if n, evs, err := s.Prunable(ctx, At(50)); err != nil || n != 3 || evs != 10 {
			t.Fatalf("Prunable = %d sessions, %d events, %v; want 3, 10", n, evs, err)
		}
	}
	if n, evs, err := s.Prunable(ctx, At(0)); err != nil || n != 0 || evs != 0 {
		t.Fatalf("Prunable before anything = %d, %d, %v", n, evs, err)
	}
	n, evs, err := s.PruneSessions(ctx, At(50), 0)
	if err != nil || n != 3 || evs != 10 {
		t.Fatalf("PruneSessions = %d sessions, %d events, %v; want 3, 10 (9 of sessions, 1 of none)", n, evs, err)
	}
	if got := sessionIDs(t, s); !slices.Equal(got, []string{"new-0"}) {
		t.Fatalf("sessions left: %v", got)
	}
	left := all(t, s, store.EventFilter{})
	if len(left) != 3 {
		t.Fatalf("%d events left, want new-0's 2 and the recent one of no session", len(left))
	}
	for _, e := range left {
		if e.SessionID != "new-0" && e.SessionID != "" {
			t.Errorf("event of %q left", e.SessionID)
		}
	}
	models, err := s.SessionModels(ctx, []string{"old-0", "old-1", "old-2", "new-0"})
	if err != nil || len(models) != 1 || models["new-0"].SessionID != "new-0" {
		t.Fatalf("session models left: %v, %v", models, err)
	}
	calls := allCalls(t, s, store.ToolCallFilter{})
	agents := allAgents(t, s, store.AgentFilter{})
	if len(calls) != 1 || calls[0].SessionID != "new-0" || len(agents) != 1 || agents[0].SessionID != "new-0" {
		t.Fatalf("model rows left: %v %v", calls, agents)
	}
	// Nothing more is due: a second pass deletes nothing.
	if n, evs, err := s.PruneSessions(ctx, At(50), 0); err != nil || n != 0 || evs != 0 {
		t.Fatalf("second PruneSessions = %d, %d, %v", n, evs, err)
	}
	if n, evs, err := s.Prunable(ctx, At(50)); err != nil || n != 0 || evs != 0 {
		t.Fatalf("Prunable after pruning = %d, %d, %v", n, evs, err)
	}
	// New events still get new seqs.
	e := []store.Event{ev(t, 300, "session_id", "new-1", "hook_event_name", "Stop")}
	insert(t, s, e)
	if e[0].Seq <= left[len(left)-1].Seq {
		t.Fatalf("seq %d after pruning is not above %d", e[0].Seq, left[len(left)-1].Seq)
	}
}

func testPruneBatches(t *testing.T, s RetentionStore) {
	retentionFixture(t, s)
	var order []string
	before := sessionIDs(t, s)
	for range 10 {
		n, _, err := s.PruneSessions(ctx, At(50), 1)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if n != 1 {
			t.Fatalf("a batch of 1 pruned %d sessions", n)
		}
		now := sessionIDs(t, s)
		for _, id := range before {
			if !slices.Contains(now, id) {
				order = append(order, id)
			}
		}
		before = now
	}
	if !slices.Equal(order, []string{"old-0", "old-1", "old-2"}) {
		t.Fatalf("pruned in the order %v, want the least recently active first", order)
	}
}
