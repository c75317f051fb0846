package storetest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// ModelStore is what RunModelStore tests: the model store, and the event
// log whose sessions StaleModels compares the model with.
type ModelStore interface {
	store.EventLog
	store.ModelStore
	// Close releases the store; calls after Close fail, and closing twice
	// is harmless.
	Close() error
}

// RunModelStore runs the conformance suite of store.ModelStore. open must
// return a new, empty store and arrange for it to be closed when the test
// ends (t.Cleanup).
func RunModelStore(t *testing.T, open func(t *testing.T) ModelStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ModelStore)
	}{
		{"ModelRoundTrip", testModelRoundTrip},
		{"ModelUpsertReplaces", testModelUpsertReplaces},
		{"ToolCallKey", testToolCallKey},
		{"ModelReset", testModelReset},
		{"ToolCallFilters", testToolCallFilters},
		{"ToolCallPagingAllFilters", testToolCallPagingAllFilters},
		{"AgentPagingAllFilters", testAgentPagingAllFilters},
		{"ByChangeRereadsChangedRows", testByChangeRereads},
		{"ModelLimits", testModelLimits},
		{"ModelCursorKinds", testModelCursorKinds},
		{"ModelFilterErrors", testModelFilterErrors},
		{"SessionModels", testSessionModels},
		{"SessionsByProject", testSessionsByProject},
		{"ChangedSessionModels", testChangedSessionModels},
		{"GroupSessions", testGroupSessions},
		{"SubagentSession", testSubagentSession},
		{"StaleModels", testStaleModels},
		{"ModelClosed", testModelClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func putModel(tb testing.TB, s store.ModelStore, b store.ModelBatch) {
	tb.Helper()
	if err := s.PutModel(ctx, b); err != nil {
		tb.Fatalf("PutModel: %v", err)
	}
}

// hostileDoc is a JSON document with the characters a naive encoder breaks.
func hostileDoc(id string) []byte {
	return P("id", id, "title", "fix \"it\" — ünïcode \u2028 <b>", "input", map[string]any{"command": "echo \u0000 'x'"})
}

// Fixture ids with what a naive cursor encoding breaks: quotes, spaces,
// separators, non-ASCII.
var (
	hostileCallID  = "toolu_\"x y:z\\"
	hostileAgentID = "agent ü:\"1\""
)

// modelFixture is a model of three sessions: s1 with many calls, s2 with a
// few, s3 with one; agents "", a1, a2 and a3 (a child of a1); start times
// that tie; and UpdatedSeqs that tie and do not follow the start order.
func modelFixture() store.ModelBatch {
	var b store.ModelBatch
	agents := []string{"", "a1", "a2", hostileAgentID}
	tools := []string{"Bash", "Read", "Task"}
	statuses := []string{"ok", "error", "running"}
	subtypes := []string{"run_test", "read_file", ""}
	effects := []string{"execute_check", "read_only", "destructive", ""}
	for si, n := range map[string]int{"s1": 40, "s2": 15, "s3": 1} {
		for i := range n {
			id := fmt.Sprintf("toolu_%s_%02d", si, i)
			if i == 3 {
				id = hostileCallID
			}
			b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{
				SessionID: si, ToolUseID: id, AgentID: agents[i%len(agents)],
				ToolName: tools[(i/2)%len(tools)], Status: statuses[(i/3)%len(statuses)],
				Subtype: subtypes[i%len(subtypes)], Effect: effects[(i/2)%len(effects)],
				StartedAt: At((i * 7) % 13), UpdatedSeq: int64(1 + (i*5)%17), Doc: hostileDoc(id),
			})
		}
	}
	for _, si := range []string{"s1", "s2"} {
		for i, a := range agents {
			row := store.AgentRow{SessionID: si, AgentID: a, Depth: 1, StartedAt: At(10 - i%2), UpdatedSeq: int64(5 - i), Doc: hostileDoc(a)}
			switch a {
			case "":
				row.Depth = 0
				row.StartedAt = At(50) // later than its subagents: still first
			case hostileAgentID:
				row.ParentAgentID, row.Depth = ptr("a1"), 2
			default:
				row.ParentAgentID = ptr("")
			}
			b.Agents = append(b.Agents, row)
		}
	}
	return b
}

// checkCall fails unless got is want as read back.
func checkCall(tb testing.TB, got, want store.ToolCallRow) {
	tb.Helper()
	if !got.StartedAt.Equal(want.StartedAt) || !bytes.Equal(got.Doc, want.Doc) {
		tb.Errorf("call %s/%s: started %v doc %s, want %v %s", want.SessionID, want.ToolUseID, got.StartedAt, got.Doc, want.StartedAt, want.Doc)
	}
	// MovedFrom tells the writer what to delete; a listing leaves it nil.
	got.StartedAt, got.Doc, want.StartedAt, want.Doc, want.MovedFrom = time.Time{}, nil, time.Time{}, nil, nil
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("call read back differs\n got %+v\nwant %+v", got, want)
	}
}

// checkAgent fails unless got is want as read back.
func checkAgent(tb testing.TB, got, want store.AgentRow) {
	tb.Helper()
	if !got.StartedAt.Equal(want.StartedAt) || !bytes.Equal(got.Doc, want.Doc) {
		tb.Errorf("agent %s/%s: started %v doc %s, want %v %s", want.SessionID, want.AgentID, got.StartedAt, got.Doc, want.StartedAt, want.Doc)
	}
	if (got.ParentAgentID == nil) != (want.ParentAgentID == nil) || got.ParentAgentID != nil && *got.ParentAgentID != *want.ParentAgentID {
		tb.Errorf("agent %s/%s: parent %v, want %v", want.SessionID, want.AgentID, got.ParentAgentID, want.ParentAgentID)
	}
	if got.SessionID != want.SessionID || got.AgentID != want.AgentID || got.Depth != want.Depth || got.UpdatedSeq != want.UpdatedSeq {
		tb.Errorf("agent read back differs\n got %+v\nwant %+v", got, want)
	}
}

// checkSessionModel fails unless got is want as read back.
func checkSessionModel(tb testing.TB, got, want store.SessionModel) {
	tb.Helper()
	if !got.FirstEventAt.Equal(want.FirstEventAt) || !got.LastEventAt.Equal(want.LastEventAt) || !bytes.Equal(got.Summary, want.Summary) {
		tb.Errorf("session model %s: span %v…%v summary %s, want %v…%v %s", want.SessionID,
			got.FirstEventAt, got.LastEventAt, got.Summary, want.FirstEventAt, want.LastEventAt, want.Summary)
	}
	got.FirstEventAt, got.LastEventAt, got.Summary = time.Time{}, time.Time{}, nil
	want.FirstEventAt, want.LastEventAt, want.Summary = time.Time{}, time.Time{}, nil
	if got.SessionID != want.SessionID || got.GroupKey != want.GroupKey || got.Seq != want.Seq ||
		got.Version != want.Version || got.UpdatedSeq != want.UpdatedSeq || got.AliasOf != want.AliasOf ||
		got.Project != want.Project {
		tb.Errorf("session model read back differs\n got %+v\nwant %+v", got, want)
	}
}

// allRows reads every row of a listing from cursor on, following cursors,
// and fails on a page larger than limit or a cursor that does not move.
func allRows[R any](tb testing.TB, name string, cursor string, limit int, page func(cursor string) ([]R, string, error)) []R {
	tb.Helper()
	var out []R
	for range 100000 {
		rows, next, err := page(cursor)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		if len(rows) > store.ClampLimit(limit) {
			tb.Fatalf("%s returned %d rows for limit %d", name, len(rows), limit)
		}
		out = append(out, rows...)
		if next == "" {
			return out
		}
		if next == cursor {
			tb.Fatalf("%s returned the cursor it was given", name)
		}
		cursor = next
	}
	tb.Fatalf("%s never returned an empty cursor", name)
	return nil
}

// allCalls reads every call matching f.
func allCalls(tb testing.TB, s store.ModelStore, f store.ToolCallFilter) []store.ToolCallRow {
	tb.Helper()
	return allRows(tb, fmt.Sprintf("ToolCalls(%+v)", f), f.Cursor, f.Limit, func(cursor string) ([]store.ToolCallRow, string, error) {
		f.Cursor = cursor
		p, err := s.ToolCalls(ctx, f)
		return p.ToolCalls, p.Next, err
	})
}

// allAgents reads every agent matching f.
func allAgents(tb testing.TB, s store.ModelStore, f store.AgentFilter) []store.AgentRow {
	tb.Helper()
	return allRows(tb, fmt.Sprintf("Agents(%+v)", f), f.Cursor, f.Limit, func(cursor string) ([]store.AgentRow, string, error) {
		f.Cursor = cursor
		p, err := s.Agents(ctx, f)
		return p.Agents, p.Next, err
	})
}

func callKeys(rows []store.ToolCallRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.SessionID + "/" + r.ToolUseID
	}
	return out
}

func agentKeys(rows []store.AgentRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.SessionID + "/" + r.AgentID
	}
	return out
}

func testModelRoundTrip(t *testing.T, s ModelStore) {
	putModel(t, s, store.ModelBatch{}) // nothing to store is not an error
	b := modelFixture()
	sm := store.SessionModel{SessionID: "s1", GroupKey: "host\x00user\x00-proj", Seq: 7, Version: 3, UpdatedSeq: 9,
		FirstEventAt: At(0), LastEventAt: At(900), Summary: hostileDoc("s1")}
	alias := store.SessionModel{SessionID: "s-throwaway", GroupKey: sm.GroupKey, Seq: 1, UpdatedSeq: 1,
		FirstEventAt: At(5), LastEventAt: At(5), AliasOf: "s1"}
	b.Sessions = []store.SessionModel{sm, alias}
	// A row without a document or start time, of a session with no
	// SessionModel: the store keeps what it is given.
	bare := store.ToolCallRow{SessionID: "s9", ToolUseID: "toolu_bare", UpdatedSeq: 1}
	b.ToolCalls = append(b.ToolCalls, bare)
	// Rows need not have events stored.
	putModel(t, s, b)

	got, err := s.SessionModels(ctx, []string{"s1", "s-throwaway", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("SessionModels = %v, want s1 and s-throwaway", got)
	}
	checkSessionModel(t, got["s1"], sm)
	checkSessionModel(t, got["s-throwaway"], alias)

	calls := allCalls(t, s, store.ToolCallFilter{Limit: 7})
	if len(calls) != len(b.ToolCalls) {
		t.Fatalf("read back %d calls, want %d", len(calls), len(b.ToolCalls))
	}
	want := map[string]store.ToolCallRow{}
	for _, c := range b.ToolCalls {
		want[c.SessionID+"/"+c.ToolUseID] = c
	}
	for _, c := range calls {
		checkCall(t, c, want[c.SessionID+"/"+c.ToolUseID])
	}
	agents := allAgents(t, s, store.AgentFilter{Limit: 3})
	if len(agents) != len(b.Agents) {
		t.Fatalf("read back %d agents, want %d", len(agents), len(b.Agents))
	}
	wantAgents := map[string]store.AgentRow{}
	for _, a := range b.Agents {
		wantAgents[a.SessionID+"/"+a.AgentID] = a
	}
	for _, a := range agents {
		checkAgent(t, a, wantAgents[a.SessionID+"/"+a.AgentID])
	}
}

func testModelUpsertReplaces(t *testing.T, s ModelStore) {
	call := store.ToolCallRow{SessionID: "s1", ToolUseID: "toolu_1", AgentID: "a1", ToolName: "Bash", Status: "running",
		StartedAt: At(10), UpdatedSeq: 3, Doc: hostileDoc("v1")}
	agent := store.AgentRow{SessionID: "s1", AgentID: "a1", ParentAgentID: ptr(""), Depth: 1, StartedAt: At(5), UpdatedSeq: 2, Doc: hostileDoc("a1")}
	sm := store.SessionModel{SessionID: "s1", GroupKey: "k", Seq: 3, Version: 1, UpdatedSeq: 3, FirstEventAt: At(0), LastEventAt: At(10), Summary: hostileDoc("s1")}
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{sm}, Agents: []store.AgentRow{agent}, ToolCalls: []store.ToolCallRow{call}})

	// Every column changes, the start too (which the writer says it
	// moves); emptied documents read back empty.
	call2 := store.ToolCallRow{SessionID: "s1", ToolUseID: "toolu_1", AgentID: "a2", ToolName: "Read", Status: "ok",
		StartedAt: At(11), MovedFrom: []time.Time{At(10)}, UpdatedSeq: 8}
	agent2 := store.AgentRow{SessionID: "s1", AgentID: "a1", ParentAgentID: ptr("a0"), Depth: 2, StartedAt: At(6), UpdatedSeq: 8}
	sm2 := store.SessionModel{SessionID: "s1", GroupKey: "k2", Seq: 8, Version: 2, UpdatedSeq: 8, FirstEventAt: At(1), LastEventAt: At(20), AliasOf: "s0"}
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{sm2}, Agents: []store.AgentRow{agent2}, ToolCalls: []store.ToolCallRow{call2}})

	calls := allCalls(t, s, store.ToolCallFilter{SessionID: "s1"})
	if len(calls) != 1 {
		t.Fatalf("%d calls after an upsert, want 1", len(calls))
	}
	checkCall(t, calls[0], call2)
	agents := allAgents(t, s, store.AgentFilter{SessionID: "s1"})
	if len(agents) != 1 {
		t.Fatalf("%d agents after an upsert, want 1", len(agents))
	}
	checkAgent(t, agents[0], agent2)
	got, err := s.SessionModels(ctx, []string{"s1"})
	if err != nil {
		t.Fatal(err)
	}
	checkSessionModel(t, got["s1"], sm2)
	// The old values no longer match a filter.
	if got := allCalls(t, s, store.ToolCallFilter{Tool: "Bash"}); len(got) != 0 {
		t.Errorf("the replaced tool name still matches: %v", callKeys(got))
	}
	if got := allCalls(t, s, store.ToolCallFilter{AgentIDs: []string{"a1"}}); len(got) != 0 {
		t.Errorf("the replaced agent still matches: %v", callKeys(got))
	}

	// A key given twice in a batch is the last row given, whatever
	// changed between them.
	a, b, c := call2, call2, call2
	a.Status, b.AgentID, b.Status, c.AgentID, c.Status, c.UpdatedSeq = "x", "a7", "y", "a8", "z", 12
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{a, b, a, c}})
	if got := allCalls(t, s, store.ToolCallFilter{SessionID: "s1"}); len(got) != 1 {
		t.Errorf("a key given four times: %v", callKeys(got))
	} else {
		checkCall(t, got[0], c)
	}

	// Many rows at once, of which some change only their status and some
	// more, read back as given.
	var many []store.ToolCallRow
	for i := range 250 {
		many = append(many, store.ToolCallRow{SessionID: "s2", ToolUseID: fmt.Sprintf("t%03d", i), AgentID: "a1", ToolName: "Bash",
			Status: "running", StartedAt: At(i), UpdatedSeq: int64(i), Doc: hostileDoc("running")})
	}
	putModel(t, s, store.ModelBatch{ToolCalls: many})
	for i := range many {
		many[i].Status, many[i].UpdatedSeq, many[i].Doc = "ok", int64(1000+i), hostileDoc("ok")
		switch i % 4 {
		case 1:
			many[i].AgentID = "a2"
		case 2:
			many[i].ToolName = "Read"
		case 3:
			many[i].StartedAt, many[i].MovedFrom = At(-i), []time.Time{many[i].StartedAt}
		}
	}
	putModel(t, s, store.ModelBatch{ToolCalls: many})
	back := allCalls(t, s, store.ToolCallFilter{SessionID: "s2", Order: store.ByChange, Limit: store.MaxLimit})
	if len(back) != len(many) {
		t.Fatalf("%d calls read back, want %d", len(back), len(many))
	}
	for i := range back {
		checkCall(t, back[i], many[i])
	}
}

func testToolCallKey(t *testing.T, s ModelStore) {
	row := func(id string, start int, status string, seq int64, movedFrom ...int) store.ToolCallRow {
		r := store.ToolCallRow{SessionID: "s1", ToolUseID: id, AgentID: "a1", ToolName: "Bash", Status: status,
			StartedAt: At(start), UpdatedSeq: seq, Doc: hostileDoc(status)}
		for _, ms := range movedFrom {
			r.MovedFrom = append(r.MovedFrom, At(ms))
		}
		return r
	}
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{row("a", 10, "running", 1), row("b", 20, "running", 1), row("d", 15, "running", 1)}})
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{row("d", 16, "running", 2, 15)}})

	// a moves from 10 to 30, past b: its place in start order changes; b
	// names its own start among those it moves from, which keeps it; c
	// names a start it was never stored at; d moves a second time, naming
	// both starts it had.
	a, b, c, d := row("a", 30, "ok", 3, 10), row("b", 20, "ok", 3, 5, 20), row("c", 25, "running", 3, 7), row("d", 17, "ok", 3, 15, 16)
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{a, b, c, d}})
	got := allCalls(t, s, store.ToolCallFilter{SessionID: "s1"})
	if want := []string{"s1/d", "s1/b", "s1/c", "s1/a"}; !slices.Equal(callKeys(got), want) {
		t.Fatalf("calls after a move %v, want %v", callKeys(got), want)
	}
	for i, want := range []store.ToolCallRow{d, b, c, a} {
		checkCall(t, got[i], want)
	}

	// Without MovedFrom, a call given at another start is a row of its
	// own: the writer names the start it moves from.
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{row("a", 40, "ok", 4)}})
	if got, want := callKeys(allCalls(t, s, store.ToolCallFilter{SessionID: "s1", Status: "ok"})), []string{"s1/d", "s1/b", "s1/a", "s1/a"}; !slices.Equal(got, want) {
		t.Errorf("calls after an unnamed move %v, want %v", got, want)
	}
}

func testModelReset(t *testing.T, s ModelStore) {
	b := modelFixture()
	sm := func(id string, seq int64) store.SessionModel {
		return store.SessionModel{SessionID: id, GroupKey: "k", Seq: seq, UpdatedSeq: seq, FirstEventAt: At(0), LastEventAt: At(1)}
	}
	b.Sessions = []store.SessionModel{sm("s1", 1), sm("s2", 1)}
	putModel(t, s, b)
	before2 := callKeys(allCalls(t, s, store.ToolCallFilter{SessionID: "s2"}))

	// A rebuild of s1: its rows are replaced by the batch's, in one
	// transaction; s2 keeps its rows and s1 its SessionModel.
	rebuilt := store.ToolCallRow{SessionID: "s1", ToolUseID: "toolu_new", AgentID: "a9", ToolName: "Bash", Status: "ok", StartedAt: At(1), UpdatedSeq: 20}
	putModel(t, s, store.ModelBatch{
		Reset:     []string{"s1", "unknown"},
		Agents:    []store.AgentRow{{SessionID: "s1", AgentID: "", StartedAt: At(0), UpdatedSeq: 20}},
		ToolCalls: []store.ToolCallRow{rebuilt},
	})
	if got := callKeys(allCalls(t, s, store.ToolCallFilter{SessionID: "s1"})); !slices.Equal(got, []string{"s1/toolu_new"}) {
		t.Errorf("calls of s1 after a reset: %v", got)
	}
	if got := agentKeys(allAgents(t, s, store.AgentFilter{SessionID: "s1"})); !slices.Equal(got, []string{"s1/"}) {
		t.Errorf("agents of s1 after a reset: %v", got)
	}
	if got := callKeys(allCalls(t, s, store.ToolCallFilter{SessionID: "s2"})); !slices.Equal(got, before2) || len(got) == 0 {
		t.Errorf("calls of s2 after a reset of s1: %v, want %v", got, before2)
	}
	if got := allAgents(t, s, store.AgentFilter{SessionID: "s2"}); len(got) != 4 {
		t.Errorf("agents of s2 after a reset of s1: %v", agentKeys(got))
	}
	if got, err := s.SessionModels(ctx, []string{"s1"}); err != nil || len(got) != 1 {
		t.Errorf("the SessionModel of a reset session: %v, %v", got, err)
	}
	// A reset alone empties the session.
	putModel(t, s, store.ModelBatch{Reset: []string{"s1"}})
	if got := allCalls(t, s, store.ToolCallFilter{SessionID: "s1"}); len(got) != 0 {
		t.Errorf("calls of s1 after a bare reset: %v", callKeys(got))
	}
}

func testToolCallFilters(t *testing.T, s ModelStore) {
	// The cases spelled out; testToolCallPagingAllFilters checks every
	// combination against a reference.
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{
		{SessionID: "s1", ToolUseID: "c", AgentID: "", ToolName: "Bash", Status: "ok", Subtype: "run_test", Effect: "execute_check", StartedAt: At(30), UpdatedSeq: 1},
		{SessionID: "s1", ToolUseID: "b", AgentID: "a1", ToolName: "Read", Status: "error", StartedAt: At(10), UpdatedSeq: 5},
		{SessionID: "s1", ToolUseID: "a", AgentID: "a2", ToolName: "Bash", Status: "ok", Subtype: "delete_file", Effect: "destructive", StartedAt: At(10), UpdatedSeq: 3},
		{SessionID: "s1", ToolUseID: "d", AgentID: "a1", ToolName: "Task", Status: "running", StartedAt: At(40), UpdatedSeq: 5},
		{SessionID: "s2", ToolUseID: "a", AgentID: "", ToolName: "Bash", Status: "ok", StartedAt: At(0), UpdatedSeq: 2},
	}})
	f := func(filter store.ToolCallFilter, want ...string) {
		t.Helper()
		if got := callKeys(allCalls(t, s, filter)); !slices.Equal(got, want) {
			t.Errorf("ToolCalls(%+v) = %v, want %v", filter, got, want)
		}
	}
	f(store.ToolCallFilter{SessionID: "s1"}, "s1/a", "s1/b", "s1/c", "s1/d") // ties on start break on id
	f(store.ToolCallFilter{}, "s1/a", "s1/b", "s1/c", "s1/d", "s2/a")
	f(store.ToolCallFilter{SessionID: "s1", Tool: "Bash"}, "s1/a", "s1/c")
	f(store.ToolCallFilter{SessionID: "s1", Status: "ok", Tool: "Bash"}, "s1/a", "s1/c")
	f(store.ToolCallFilter{SessionID: "s1", Effect: "destructive"}, "s1/a")
	f(store.ToolCallFilter{SessionID: "s1", Subtype: "run_test", Tool: "Bash"}, "s1/c")
	f(store.ToolCallFilter{Subtype: "read_file"})
	f(store.ToolCallFilter{SessionID: "s1", AgentIDs: []string{"a1"}}, "s1/b", "s1/d")
	f(store.ToolCallFilter{SessionID: "s1", AgentIDs: []string{""}}, "s1/c")
	f(store.ToolCallFilter{SessionID: "s1", AgentIDs: []string{}})
	f(store.ToolCallFilter{SessionID: "s1", ToolUseIDs: []string{"d", "a", "x"}}, "s1/a", "s1/d")
	f(store.ToolCallFilter{ToolUseIDs: []string{"a"}}, "s1/a", "s2/a")
	f(store.ToolCallFilter{SessionID: "s1", ToolUseIDs: []string{"b", "c"}, AgentIDs: []string{"a1"}}, "s1/b")
	f(store.ToolCallFilter{SessionID: "s1", ToolUseIDs: []string{}})
	f(store.ToolCallFilter{SessionID: "s1", Since: At(30)}, "s1/c", "s1/d") // since is inclusive
	f(store.ToolCallFilter{UpdatedAfter: 3}, "s1/b", "s1/d")
	f(store.ToolCallFilter{Order: store.ByChange}, "s1/c", "s2/a", "s1/a", "s1/b", "s1/d")
	f(store.ToolCallFilter{Order: store.ByChange, SessionID: "s1", UpdatedAfter: 1, Limit: 1}, "s1/a", "s1/b", "s1/d")
	f(store.ToolCallFilter{SessionID: "nope"})
}

// The reference the paging tests compare with.

// expected returns the rows keep keeps, sorted by order.
func expected[R any](rows []R, keep func(R) bool, order func(a, b R) int) []R {
	var out []R
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, order)
	return out
}

func matchCall(c store.ToolCallRow, f store.ToolCallFilter) bool {
	return (f.SessionID == "" || c.SessionID == f.SessionID) &&
		(f.AgentIDs == nil || slices.Contains(f.AgentIDs, c.AgentID)) &&
		(f.ToolUseIDs == nil || slices.Contains(f.ToolUseIDs, c.ToolUseID)) &&
		(f.Tool == "" || c.ToolName == f.Tool) &&
		(f.Status == "" || c.Status == f.Status) &&
		(f.Subtype == "" || c.Subtype == f.Subtype) &&
		(f.Effect == "" || c.Effect == f.Effect) &&
		(f.Since.IsZero() || !c.StartedAt.Before(f.Since)) &&
		c.UpdatedSeq > f.UpdatedAfter
}

func compareCalls(order store.ModelOrder) func(a, b store.ToolCallRow) int {
	if order == store.ByChange {
		return func(a, b store.ToolCallRow) int {
			return cmp.Or(cmp.Compare(a.UpdatedSeq, b.UpdatedSeq), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.ToolUseID, b.ToolUseID))
		}
	}
	return func(a, b store.ToolCallRow) int {
		return cmp.Or(cmp.Compare(a.SessionID, b.SessionID), a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ToolUseID, b.ToolUseID))
	}
}

func testToolCallPagingAllFilters(t *testing.T, s ModelStore) {
	b := modelFixture()
	putModel(t, s, b)
	n := 0
	for _, session := range []string{"", "s1", "s2", "nope"} {
		for _, agents := range [][]string{nil, {}, {""}, {"a1", hostileAgentID}} {
			for _, ids := range [][]string{nil, {"toolu_s1_01", "toolu_s1_05", hostileCallID, "toolu_s2_05", "toolu_s1_30"}} {
				for _, tool := range []string{"", "Bash", "Task"} {
					for _, status := range []string{"", "error"} {
						for _, since := range []time.Time{{}, At(6)} {
							for _, after := range []int64{0, 9} {
								for _, order := range []store.ModelOrder{store.ByStart, store.ByChange} {
									for _, limit := range []int{0, 4} {
										f := store.ToolCallFilter{SessionID: session, AgentIDs: agents, ToolUseIDs: ids, Tool: tool, Status: status,
											Since: since, UpdatedAfter: after, Order: order, Limit: limit}
										want := expected(b.ToolCalls, func(c store.ToolCallRow) bool { return matchCall(c, f) }, compareCalls(order))
										if got := callKeys(allCalls(t, s, f)); !slices.Equal(got, callKeys(want)) {
											t.Fatalf("ToolCalls(%+v)\n got %v\nwant %v", f, got, callKeys(want))
										}
										n += len(want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no filter matched anything")
	}
}

func matchAgent(a store.AgentRow, f store.AgentFilter) bool {
	return (f.SessionID == "" || a.SessionID == f.SessionID) &&
		(f.AgentIDs == nil || slices.Contains(f.AgentIDs, a.AgentID)) &&
		a.UpdatedSeq > f.UpdatedAfter
}

func compareAgents(order store.ModelOrder) func(a, b store.AgentRow) int {
	if order == store.ByChange {
		return func(a, b store.AgentRow) int {
			return cmp.Or(cmp.Compare(a.UpdatedSeq, b.UpdatedSeq), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.AgentID, b.AgentID))
		}
	}
	sub := func(a store.AgentRow) bool { return a.AgentID != "" }
	return func(a, b store.AgentRow) int {
		return cmp.Or(cmp.Compare(a.SessionID, b.SessionID), compareBool(sub(a), sub(b)),
			a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.AgentID, b.AgentID))
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func testAgentPagingAllFilters(t *testing.T, s ModelStore) {
	b := modelFixture()
	putModel(t, s, b)
	// The main agent comes first although it started last.
	f := func(session string, want ...string) {
		t.Helper()
		if got := agentKeys(allAgents(t, s, store.AgentFilter{SessionID: session, Limit: 1})); !slices.Equal(got, want) {
			t.Errorf("agents of %q = %v, want %v", session, got, want)
		}
	}
	f("s1", "s1/", "s1/a1", "s1/"+hostileAgentID, "s1/a2") // start ties break on id
	f("s3")
	n := 0
	for _, session := range []string{"", "s1", "s2", "nope"} {
		for _, agents := range [][]string{nil, {}, {""}, {"a1", hostileAgentID}} {
			for _, after := range []int64{0, 2} {
				for _, order := range []store.ModelOrder{store.ByStart, store.ByChange} {
					for _, limit := range []int{0, 1, 3} {
						f := store.AgentFilter{SessionID: session, AgentIDs: agents, UpdatedAfter: after, Order: order, Limit: limit}
						want := expected(b.Agents, func(a store.AgentRow) bool { return matchAgent(a, f) }, compareAgents(order))
						if got := agentKeys(allAgents(t, s, f)); !slices.Equal(got, agentKeys(want)) {
							t.Fatalf("Agents(%+v)\n got %v\nwant %v", f, got, agentKeys(want))
						}
						n += len(want)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no filter matched anything")
	}
}

func testByChangeRereads(t *testing.T, s ModelStore) {
	var calls []store.ToolCallRow
	for i := range 10 {
		calls = append(calls, store.ToolCallRow{SessionID: "s1", ToolUseID: fmt.Sprintf("t%d", i), Status: "running",
			StartedAt: At(i), UpdatedSeq: int64(i + 1)})
	}
	putModel(t, s, store.ModelBatch{ToolCalls: calls})
	f := store.ToolCallFilter{Order: store.ByChange, UpdatedAfter: 2, Limit: 3}
	p, err := s.ToolCalls(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := callKeys(p.ToolCalls); !slices.Equal(got, []string{"s1/t2", "s1/t3", "s1/t4"}) {
		t.Fatalf("first page %v", got)
	}
	// A row already read changes while the reader pages: it comes again,
	// with its new state, after the rows it had not read.
	changed := calls[3]
	changed.Status, changed.UpdatedSeq = "ok", 11
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{changed}})
	f.Cursor = p.Next
	rest := allCalls(t, s, f)
	if got := callKeys(rest); !slices.Equal(got, []string{"s1/t5", "s1/t6", "s1/t7", "s1/t8", "s1/t9", "s1/t3"}) {
		t.Fatalf("after a change: %v", got)
	}
	if last := rest[len(rest)-1]; last.Status != "ok" {
		t.Errorf("the changed row read back with status %q", last.Status)
	}

	// The same for agents.
	var agents []store.AgentRow
	for i := range 5 {
		agents = append(agents, store.AgentRow{SessionID: "s1", AgentID: fmt.Sprintf("a%d", i), UpdatedSeq: int64(i + 1)})
	}
	putModel(t, s, store.ModelBatch{Agents: agents})
	af := store.AgentFilter{Order: store.ByChange, Limit: 2}
	ap, err := s.Agents(ctx, af)
	if err != nil {
		t.Fatal(err)
	}
	agents[0].UpdatedSeq = 9
	putModel(t, s, store.ModelBatch{Agents: agents[:1]})
	af.Cursor = ap.Next
	if got := agentKeys(allAgents(t, s, af)); !slices.Equal(got, []string{"s1/a2", "s1/a3", "s1/a4", "s1/a0"}) {
		t.Errorf("agents after a change: %v", got)
	}
}

func testModelLimits(t *testing.T, s ModelStore) {
	var b store.ModelBatch
	for i := range store.MaxLimit + 10 {
		id := fmt.Sprintf("t%05d", i)
		b.ToolCalls = append(b.ToolCalls, store.ToolCallRow{SessionID: "s1", ToolUseID: id, StartedAt: At(i), UpdatedSeq: 1})
		b.Agents = append(b.Agents, store.AgentRow{SessionID: "s1", AgentID: id, StartedAt: At(i), UpdatedSeq: 1})
	}
	putModel(t, s, b)
	f := func(limit, want int) {
		t.Helper()
		p, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.ToolCalls) != want || p.Next == "" {
			t.Errorf("limit %d: %d calls (next %q), want %d and a next cursor", limit, len(p.ToolCalls), p.Next, want)
		}
		a, err := s.Agents(ctx, store.AgentFilter{SessionID: "s1", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Agents) != want || a.Next == "" {
			t.Errorf("limit %d: %d agents (next %q), want %d and a next cursor", limit, len(a.Agents), a.Next, want)
		}
	}
	f(0, store.DefaultLimit)
	f(-5, store.DefaultLimit)
	f(1, 1)
	f(store.MaxLimit, store.MaxLimit)
	f(store.MaxLimit*10, store.MaxLimit)
	// The last page has no next cursor.
	p, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Limit: len(b.ToolCalls) - store.MaxLimit, Since: At(store.MaxLimit)})
	if err != nil || len(p.ToolCalls) != len(b.ToolCalls)-store.MaxLimit || p.Next != "" {
		t.Errorf("an exactly full last page: %d calls, next %q, %v", len(p.ToolCalls), p.Next, err)
	}
}

func testModelCursorKinds(t *testing.T, s ModelStore) {
	b := modelFixture()
	b.Sessions = []store.SessionModel{{SessionID: "s1", UpdatedSeq: 1}, {SessionID: "s2", UpdatedSeq: 2}}
	putModel(t, s, b)
	insert(t, s, []store.Event{ev(t, 1, "session_id", "s1", "hook_event_name", "Stop"), ev(t, 2, "session_id", "s1", "hook_event_name", "Stop")})
	cursors := map[string]string{}
	if p, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Limit: 1}); err == nil {
		cursors["calls by start"] = p.Next
	}
	if p, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Limit: 1, Order: store.ByChange}); err == nil {
		cursors["calls by change"] = p.Next
	}
	if p, err := s.Agents(ctx, store.AgentFilter{SessionID: "s1", Limit: 1}); err == nil {
		cursors["agents by start"] = p.Next
	}
	if p, err := s.Agents(ctx, store.AgentFilter{SessionID: "s1", Limit: 1, Order: store.ByChange}); err == nil {
		cursors["agents by change"] = p.Next
	}
	if p, err := s.ChangedSessionModels(ctx, store.SessionModelFilter{Limit: 1}); err == nil {
		cursors["session models"] = p.Next
	}
	if p, err := s.Events(ctx, store.EventFilter{Limit: 1}); err == nil {
		cursors["events"] = p.Next
	}
	cursors["sessions"] = store.SessionCursor(At(0), "s1")
	listings := map[string]func(cursor string) error{
		"calls by start": func(c string) error {
			_, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Cursor: c})
			return err
		},
		"calls by change": func(c string) error {
			_, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s1", Cursor: c, Order: store.ByChange})
			return err
		},
		"agents by start": func(c string) error {
			_, err := s.Agents(ctx, store.AgentFilter{SessionID: "s1", Cursor: c})
			return err
		},
		"agents by change": func(c string) error {
			_, err := s.Agents(ctx, store.AgentFilter{SessionID: "s1", Cursor: c, Order: store.ByChange})
			return err
		},
		"session models": func(c string) error {
			_, err := s.ChangedSessionModels(ctx, store.SessionModelFilter{Cursor: c})
			return err
		},
	}
	for name, list := range listings {
		for kind, c := range cursors {
			if c == "" {
				t.Fatalf("no %s cursor", kind)
			}
			err := list(c)
			if kind == name && err != nil {
				t.Errorf("%s with its own cursor: %v", name, err)
			}
			if kind != name && !errors.Is(err, store.ErrInvalidCursor) {
				t.Errorf("%s with a cursor of %s: %v, want ErrInvalidCursor", name, kind, err)
			}
		}
		for _, c := range []string{"!!", "Yw", "YzEy", cursors[name][:len(cursors[name])-2]} {
			if err := list(c); !errors.Is(err, store.ErrInvalidCursor) {
				t.Errorf("%s with cursor %q: %v, want ErrInvalidCursor", name, c, err)
			}
		}
	}
	// A cursor of one session does not continue another's listing.
	if _, err := s.ToolCalls(ctx, store.ToolCallFilter{SessionID: "s2", Cursor: cursors["calls by start"]}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("a cursor of s1 for the calls of s2: %v", err)
	}
	if _, err := s.Agents(ctx, store.AgentFilter{SessionID: "s2", Cursor: cursors["agents by start"]}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("a cursor of s1 for the agents of s2: %v", err)
	}
}

func testModelFilterErrors(t *testing.T, s ModelStore) {
	many := make([]string, store.MaxFilterIDs+1)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	if _, err := s.ToolCalls(ctx, store.ToolCallFilter{AgentIDs: many}); err == nil {
		t.Error("ToolCalls with more than MaxFilterIDs agents succeeded")
	}
	if _, err := s.ToolCalls(ctx, store.ToolCallFilter{ToolUseIDs: many}); err == nil {
		t.Error("ToolCalls with more than MaxFilterIDs tool use ids succeeded")
	}
	if _, err := s.Agents(ctx, store.AgentFilter{AgentIDs: many}); err == nil {
		t.Error("Agents with more than MaxFilterIDs agents succeeded")
	}
	if _, err := s.ToolCalls(ctx, store.ToolCallFilter{AgentIDs: many[:store.MaxFilterIDs]}); err != nil {
		t.Errorf("ToolCalls with MaxFilterIDs agents: %v", err)
	}
	if _, err := s.ToolCalls(ctx, store.ToolCallFilter{Order: 7}); err == nil {
		t.Error("ToolCalls in an unknown order succeeded")
	}
	if _, err := s.Agents(ctx, store.AgentFilter{Order: -1}); err == nil {
		t.Error("Agents in an unknown order succeeded")
	}
}

func testSessionModels(t *testing.T, s ModelStore) {
	var b store.ModelBatch
	var ids []string
	for i := range 1200 { // more than one query's worth of ids
		id := fmt.Sprintf("s%04d", i)
		ids = append(ids, id)
		if i%3 != 0 {
			b.Sessions = append(b.Sessions, store.SessionModel{SessionID: id, GroupKey: "k", Seq: int64(i), UpdatedSeq: int64(i),
				FirstEventAt: At(i), LastEventAt: At(i + 1), Summary: hostileDoc(id)})
		}
	}
	putModel(t, s, b)
	got, err := s.SessionModels(ctx, append(ids, "unknown"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(b.Sessions) {
		t.Fatalf("%d session models, want %d", len(got), len(b.Sessions))
	}
	for _, want := range b.Sessions {
		checkSessionModel(t, got[want.SessionID], want)
	}
	if got, err := s.SessionModels(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("SessionModels(nil) = %v, %v", got, err)
	}
}

// testSessionsByProject: the session list's project filter selects on the
// project of each session's model, pages within it, combines with the
// other filters, and leaves out the sessions not modelled yet; a model
// written again with another project moves its session.
func testSessionsByProject(t *testing.T, s ModelStore) {
	const p1, p2 = "-home-dev-src-demo", `-tmp-it's "quoted"-%_`
	var events []store.Event
	project := map[string]string{}
	for i := range 12 {
		id := fmt.Sprintf("s%02d", i)
		user := "ann"
		if i%4 == 0 {
			user = "bob"
		}
		env := Envelope(event.RuntimeClaudeCode, At(i*10), P("session_id", id, "hook_event_name", "SessionStart"))
		env.User = user
		events = append(events, MustEvent(t, env))
		switch {
		case i%3 == 0:
			project[id] = p1
		case i%3 == 1:
			project[id] = p2
		} // i%3 == 2: not modelled
	}
	insert(t, s, events)
	var b store.ModelBatch
	for id, p := range project {
		b.Sessions = append(b.Sessions, store.SessionModel{SessionID: id, GroupKey: "k", Seq: 1, UpdatedSeq: 1,
			FirstEventAt: At(0), LastEventAt: At(1), Project: p})
	}
	putModel(t, s, b)
	list := func(f store.SessionFilter) []string {
		t.Helper()
		var got []string
		for {
			page, err := s.Sessions(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if f.Limit > 0 && len(page.Sessions) > f.Limit {
				t.Fatalf("a page of %d, limit %d", len(page.Sessions), f.Limit)
			}
			for _, sess := range page.Sessions {
				got = append(got, sess.ID)
			}
			if page.Next == "" {
				return got
			}
			f.Cursor = page.Next
		}
	}
	if got := list(store.SessionFilter{Project: p1, Limit: 2}); !slices.Equal(got, []string{"s09", "s06", "s03", "s00"}) {
		t.Errorf("project %q: %v", p1, got)
	}
	if got := list(store.SessionFilter{Project: p2}); !slices.Equal(got, []string{"s10", "s07", "s04", "s01"}) {
		t.Errorf("project %q: %v", p2, got)
	}
	if got := list(store.SessionFilter{Project: p1, Users: []string{"bob"}}); !slices.Equal(got, []string{"s00"}) {
		t.Errorf("project %q of bob: %v", p1, got)
	}
	if got := list(store.SessionFilter{Project: p1, Runtime: event.RuntimeCodex}); len(got) != 0 {
		t.Errorf("project %q of codex: %v", p1, got)
	}
	for _, p := range []string{"-home-dev-src-%", "-home-dev-src-demo ", "nope"} {
		if got := list(store.SessionFilter{Project: p}); len(got) != 0 {
			t.Errorf("project %q: %v, want none (exact match)", p, got)
		}
	}
	if got := list(store.SessionFilter{}); len(got) != 12 {
		t.Errorf("no project filter: %d sessions, want 12", len(got))
	}
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{{SessionID: "s09", GroupKey: "k", Seq: 2, UpdatedSeq: 2,
		FirstEventAt: At(0), LastEventAt: At(1), Project: p2}}})
	if got := list(store.SessionFilter{Project: p1}); !slices.Equal(got, []string{"s06", "s03", "s00"}) {
		t.Errorf("project %q after s09 moved: %v", p1, got)
	}
	if got, err := s.SessionModels(ctx, []string{"s09"}); err != nil || got["s09"].Project != p2 {
		t.Errorf("SessionModels(s09) = %+v, %v: want project %q", got["s09"], err, p2)
	}
}

func testChangedSessionModels(t *testing.T, s ModelStore) {
	var b store.ModelBatch
	for i, seq := range []int64{5, 3, 5, 9, 1, 5} {
		b.Sessions = append(b.Sessions, store.SessionModel{SessionID: fmt.Sprintf("s%d", i), GroupKey: "k", Seq: seq, UpdatedSeq: seq,
			Summary: hostileDoc("x")})
	}
	putModel(t, s, b)
	f := func(after int64, limit int, want ...string) {
		t.Helper()
		filter := store.SessionModelFilter{UpdatedAfter: after, Limit: limit}
		var got []string
		for _, m := range allRows(t, fmt.Sprintf("ChangedSessionModels(%+v)", filter), "", limit,
			func(cursor string) ([]store.SessionModel, string, error) {
				filter.Cursor = cursor
				p, err := s.ChangedSessionModels(ctx, filter)
				return p.Sessions, p.Next, err
			}) {
			got = append(got, m.SessionID)
			if len(m.Summary) == 0 {
				t.Errorf("session model %s without its summary", m.SessionID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("ChangedSessionModels(after %d, limit %d) = %v, want %v", after, limit, got, want)
		}
	}
	f(0, 0, "s4", "s1", "s0", "s2", "s5", "s3")
	f(0, 1, "s4", "s1", "s0", "s2", "s5", "s3")
	f(3, 2, "s0", "s2", "s5", "s3")
	f(9, 0)
}

func testGroupSessions(t *testing.T, s ModelStore) {
	// Spans in ms: a [0,100] b [50,60] c [200,300] d [400,500]; e in
	// another group.
	m := func(id, key string, first, last int) store.SessionModel {
		return store.SessionModel{SessionID: id, GroupKey: key, Seq: 1, UpdatedSeq: 1, FirstEventAt: At(first), LastEventAt: At(last), Summary: hostileDoc(id)}
	}
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{
		m("a", "g", 0, 100), m("b", "g", 50, 60), m("c", "g", 200, 300), m("d", "g", 400, 500), m("e", "other", 0, 1000),
	}})
	f := func(from, to, limit int, want ...string) {
		t.Helper()
		got, err := s.GroupSessions(ctx, "g", At(from), At(to), limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range got {
			ids = append(ids, d.SessionID)
			if d.GroupKey != "g" || len(d.Summary) != 0 || d.Seq == 0 || d.LastEventAt.IsZero() {
				t.Errorf("group member %+v", d)
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("GroupSessions(%d…%d, limit %d) = %v, want %v", from, to, limit, ids, want)
		}
	}
	f(0, 1000, 0, "d", "c", "a", "b")
	f(60, 60, 0, "a", "b")   // touching a span's end counts
	f(101, 199, 0)           // a gap
	f(300, 400, 0, "d", "c") // both ends touch
	f(0, 1000, 2, "d", "c")
	f(-5000, -1, 0)
	if got, err := s.GroupSessions(ctx, "none", At(0), At(1000), 0); err != nil || len(got) != 0 {
		t.Fatalf("unknown group: %v, %v", got, err)
	}
}

func testSubagentSession(t *testing.T, s ModelStore) {
	agent := func(session, id string) store.AgentRow {
		return store.AgentRow{SessionID: session, AgentID: id, UpdatedSeq: 1}
	}
	putModel(t, s, store.ModelBatch{Agents: []store.AgentRow{
		agent("s2", ""), agent("s2", "a1"), agent("s2", "shared"), agent("s1", ""), agent("s1", "shared"), agent("s3", "dropped"),
	}})
	f := func(agent, want string) {
		t.Helper()
		got, err := s.SubagentSession(ctx, agent)
		if want == "" {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("SubagentSession(%q) = %q, %v; want ErrNotFound", agent, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("SubagentSession(%q) = %q, %v; want %q", agent, got, err, want)
		}
	}
	f("a1", "s2")
	f("shared", "s1") // hostile input can repeat an id: the least session wins
	f("dropped", "s3")
	f("", "") // the main agent is everywhere, so nowhere in particular
	f("nope", "")
	// An agent a rebuild no longer has does not resolve.
	putModel(t, s, store.ModelBatch{Reset: []string{"s3"}})
	f("dropped", "")
}

// modelVersion is the version of the models the suite stores, and of the
// StaleModels it asks but where it says otherwise.
const modelVersion = 4

// staleIDs returns the ids of StaleModels(modelVersion, after, limit),
// checking that each session comes with its summary.
func staleIDs(tb testing.TB, s ModelStore, after string, limit int) []string {
	tb.Helper()
	return staleOfVersion(tb, s, modelVersion, after, limit)
}

// staleOfVersion returns the ids of StaleModels(version, after, limit),
// checking that each session comes with its summary.
func staleOfVersion(tb testing.TB, s ModelStore, version int, after string, limit int) []string {
	tb.Helper()
	got, err := s.StaleModels(ctx, version, after, limit)
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, sess := range got {
		ids = append(ids, sess.ID)
		if sess.LastSeq == 0 || sess.EventCount == 0 {
			tb.Errorf("stale session read back without its summary: %+v", sess)
		}
	}
	return ids
}

func testStaleModels(t *testing.T, s ModelStore) {
	stale := func(after string, limit int) []string {
		t.Helper()
		return staleIDs(t, s, after, limit)
	}
	if got := stale("", 0); len(got) != 0 {
		t.Fatalf("stale sessions of an empty store: %v", got)
	}
	var events []store.Event
	for i, id := range []string{"s3", "s1", "s2", "s4"} {
		events = append(events, ev(t, i, "session_id", id, "hook_event_name", "Stop"))
	}
	insert(t, s, events)
	f := func(after string, limit int, want ...string) {
		t.Helper()
		if got := stale(after, limit); !slices.Equal(got, want) {
			t.Errorf("StaleModels(%q, %d) = %v, want %v", after, limit, got, want)
		}
	}
	f("", 0, "s1", "s2", "s3", "s4")
	f("", 2, "s1", "s2")
	f("s2", 2, "s3", "s4")
	fresh := func(id string, seq int64) store.SessionModel {
		return store.SessionModel{SessionID: id, GroupKey: "k", Seq: seq, Version: modelVersion, UpdatedSeq: seq, FirstEventAt: At(0), LastEventAt: At(1)}
	}
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{
		fresh("s1", session(t, s, "s1").LastSeq), fresh("s3", session(t, s, "s3").LastSeq-1), fresh("s4", session(t, s, "s4").LastSeq+5),
	}})
	f("", 0, "s2", "s3")
	// A new event makes a fresh session stale again.
	insert(t, s, []store.Event{ev(t, 10, "session_id", "s1", "hook_event_name", "SessionEnd", "reason", "other")})
	f("", 0, "s1", "s2", "s3")
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{
		fresh("s1", session(t, s, "s1").LastSeq), fresh("s2", session(t, s, "s2").LastSeq), fresh("s3", session(t, s, "s3").LastSeq),
	}})
	f("", 0)

	// A model of an older version is stale however current its seq; one
	// of a later version (a newer collector's, on a shared store) is not.
	older, newer := fresh("s2", session(t, s, "s2").LastSeq), fresh("s3", session(t, s, "s3").LastSeq)
	older.Version, newer.Version = modelVersion-1, modelVersion+1
	putModel(t, s, store.ModelBatch{Sessions: []store.SessionModel{older, newer}})
	f("", 0, "s2")
	f("s2", 0)
	for version, want := range map[int][]string{0: nil, modelVersion - 1: nil, modelVersion + 1: {"s1", "s2", "s4"}, modelVersion + 2: {"s1", "s2", "s3", "s4"}} {
		if got := staleOfVersion(t, s, version, "", 0); !slices.Equal(got, want) {
			t.Errorf("StaleModels(%d, \"\", 0) = %v, want %v", version, got, want)
		}
	}
}

func testModelClosed(t *testing.T, s ModelStore) {
	putModel(t, s, modelFixture())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s after Close succeeded", name)
		}
	}
	f("PutModel", s.PutModel(ctx, modelFixture()))
	_, err := s.SessionModels(ctx, []string{"s1"})
	f("SessionModels", err)
	_, err = s.ChangedSessionModels(ctx, store.SessionModelFilter{})
	f("ChangedSessionModels", err)
	_, err = s.GroupSessions(ctx, "k", At(0), At(1), 0)
	f("GroupSessions", err)
	_, err = s.StaleModels(ctx, modelVersion, "", 0)
	f("StaleModels", err)
	_, err = s.SubagentSession(ctx, "a1")
	f("SubagentSession", err)
	_, err = s.Agents(ctx, store.AgentFilter{})
	f("Agents", err)
	_, err = s.ToolCalls(ctx, store.ToolCallFilter{})
	f("ToolCalls", err)
}

// PreKeyCalls are tool call rows as a store kept them before calls were
// keyed by their start: a backend's migration test writes them with its own
// SQL into a database of that schema, migrates it, and checks them with
// CheckMigratedCalls.
var PreKeyCalls = []store.ToolCallRow{
	{SessionID: "s1", ToolUseID: "toolu_b", AgentID: "a1", ToolName: "Bash", Status: "ok", Subtype: "run_test",
		Effect: "execute_check", StartedAt: At(30), UpdatedSeq: 1, Doc: []byte(`{"id":"toolu_b"}`)},
	{SessionID: "s1", ToolUseID: "toolu_a", AgentID: "a1", ToolName: "Bash", Status: "running", Subtype: "run_test",
		Effect: "execute_check", StartedAt: At(20), UpdatedSeq: 2, Doc: []byte(`{"id":"toolu_a"}`)},
	{SessionID: "s1", ToolUseID: "toolu_c", AgentID: "a1", ToolName: "Bash", Status: "error", Subtype: "run_test",
		Effect: "execute_check", StartedAt: At(10), UpdatedSeq: 3, Doc: []byte(`{"id":"toolu_c"}`)},
}

// CheckMigratedCalls checks that s, migrated from a database holding
// PreKeyCalls, reads them back as they were, in start order, and that a
// call then moves its start as store.ModelBatch.ToolCalls says.
func CheckMigratedCalls(t *testing.T, s ModelStore) {
	t.Helper()
	got := allCalls(t, s, store.ToolCallFilter{SessionID: "s1", Subtype: "run_test"})
	if want := []string{"s1/toolu_c", "s1/toolu_a", "s1/toolu_b"}; !slices.Equal(callKeys(got), want) {
		t.Fatalf("calls after the migration %v, want %v", callKeys(got), want)
	}
	for i, want := range []store.ToolCallRow{PreKeyCalls[2], PreKeyCalls[1], PreKeyCalls[0]} {
		checkCall(t, got[i], want)
	}
	moved := PreKeyCalls[1]
	moved.Status, moved.StartedAt, moved.MovedFrom, moved.UpdatedSeq = "ok", At(40), []time.Time{At(20)}, 4
	putModel(t, s, store.ModelBatch{ToolCalls: []store.ToolCallRow{moved}})
	if got, want := callKeys(allCalls(t, s, store.ToolCallFilter{SessionID: "s1"})), []string{"s1/toolu_c", "s1/toolu_b", "s1/toolu_a"}; !slices.Equal(got, want) {
		t.Errorf("calls after a move %v, want %v", got, want)
	}
}

// SeedCurrentModels fills s with two sessions of events whose models are
// current (StaleModels lists neither), for a backend's test of a migration
// that makes every stored model older than its events: the test seeds a
// store, takes the migration back, opens the store again and checks with
// CheckAllStale. It returns the sessions' ids.
func SeedCurrentModels(t *testing.T, s ModelStore) []string {
	t.Helper()
	ids := []string{"s1", "s2"}
	var events []store.Event
	for i, id := range ids {
		events = append(events, ev(t, i, "session_id", id, "hook_event_name", "Stop"))
	}
	insert(t, s, events)
	var models []store.SessionModel
	for _, id := range ids {
		seq := session(t, s, id).LastSeq
		models = append(models, store.SessionModel{SessionID: id, GroupKey: "k", Seq: seq, Version: modelVersion, UpdatedSeq: seq, FirstEventAt: At(0), LastEventAt: At(1)})
	}
	putModel(t, s, store.ModelBatch{Sessions: models})
	if stale := staleIDs(t, s, "", 0); len(stale) != 0 {
		t.Fatalf("StaleModels of current models: %v", stale)
	}
	return ids
}

// CheckAllStale checks that StaleModels lists every one of ids.
func CheckAllStale(t *testing.T, s ModelStore, ids []string) {
	t.Helper()
	if stale := staleIDs(t, s, "", 0); !slices.Equal(stale, ids) {
		t.Fatalf("stale after the migration: %v, want %v", stale, ids)
	}
}
