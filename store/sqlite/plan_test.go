package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/internal/sqlq"
)

// TestToolCallPlans: each listing of tool calls reads the index that
// serves its filters, so that a large session's page costs its rows, not
// the session's: a subtree's calls in start order by the index by start,
// which holds the agents beside the order; one agent's, a tool's and a
// status's by their own; the others by the key.
func TestToolCallPlans(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "hookwatch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		f     store.ToolCallFilter
		index string
	}{
		{store.ToolCallFilter{SessionID: "s"}, "sqlite_autoindex_model_tool_calls_1"},
		{store.ToolCallFilter{SessionID: "s", AgentIDs: []string{"a", "b"}}, "model_tool_calls_start"},
		{store.ToolCallFilter{SessionID: "s", ToolUseIDs: []string{"toolu_1", "toolu_2"}}, "model_tool_calls_start"},
		{store.ToolCallFilter{SessionID: "s", Subtype: "run_test"}, "sqlite_autoindex_model_tool_calls_1"},
		{store.ToolCallFilter{AgentIDs: []string{"a", "b"}}, "model_tool_calls_start"},
		{store.ToolCallFilter{SessionID: "s", AgentIDs: []string{"a"}}, "model_tool_calls_agent"},
		{store.ToolCallFilter{SessionID: "s", Tool: "Bash", AgentIDs: []string{"a", "b"}}, "model_tool_calls_tool"},
		{store.ToolCallFilter{SessionID: "s", Status: "ok"}, "model_tool_calls_status"},
		{store.ToolCallFilter{SessionID: "s", Order: store.ByChange, UpdatedAfter: 5}, "model_tool_calls_session_changed"},
	} {
		q, err := sqlq.ToolCalls(c.f, toolCallsFrom(c.f))
		if err != nil {
			t.Fatal(err)
		}
		if got := queryPlan(t, db, q); !strings.Contains(got, "USING INDEX "+c.index+" ") && !strings.HasSuffix(got, "USING INDEX "+c.index) ||
			strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%+v: plan %q, want index %s and no sort", c.f, got, c.index)
		}
	}
}

// TestSessionPlans: a page of the session list, the first or one after a
// cursor, is a seek in an index in the list's order (latest activity
// first), whatever its filters: a team server's 50,000 sessions are read
// in 50 pages, each of which costs its rows, never a sort of the whole
// table or a scan to the cursor. (A project's page is read through the
// project's sessions, sorted: it costs the project's size.)
func TestSessionPlans(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "hookwatch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cursor := store.SessionCursor(time.Unix(1700000000, 5), "s1")
	for _, c := range []struct {
		f     store.SessionFilter
		index string
	}{
		{store.SessionFilter{}, "sessions_recent"},
		{store.SessionFilter{Cursor: cursor}, "sessions_recent"},
		{store.SessionFilter{Probes: true, Cursor: cursor}, "sessions_recent"},
		{store.SessionFilter{Runtime: "codex", Cursor: cursor}, "sessions_runtime_recent"},
		{store.SessionFilter{Users: []string{"ana"}, Cursor: cursor}, "sessions_user_recent"},
	} {
		q, err := sqlq.Sessions(c.f)
		if err != nil {
			t.Fatal(err)
		}
		got := queryPlan(t, db, q)
		seek := "SEARCH sessions USING INDEX " + c.index + " ("
		if c.f.Cursor == "" && c.index == "sessions_recent" {
			seek = "SCAN sessions USING INDEX " + c.index
		}
		if !strings.Contains(got, seek) || strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%+v: plan %q, want %s… and no sort", c.f, got, seek)
		}
	}
}

// queryPlan is SQLite's plan of q on db's readers, its steps joined by
// "; ".
func queryPlan(t *testing.T, db *DB, q sqlq.Query) string {
	t.Helper()
	rows, err := db.reader.Query("EXPLAIN QUERY PLAN "+q.SQL, q.Args...)
	if err != nil {
		t.Fatalf("%s: %v", q.SQL, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}
