package collector_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// The 2.1.197 capture: one session with two subagents, a failing Bash and
// rejected calls, then resumed, forked, compacted and continued.
const (
	corpusMain      = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
	corpusFork      = "2af3b205-0ad6-4144-83bd-a05f3815b70a"
	corpusThrowaway = "08917e0d-8e81-4ba9-b524-2c426dcc0aa6"
	corpusExplore   = "a43b7af849cd70f20"
	corpusCompactor = "a5ff9c41ec0e40b8a"
)

// patient is a collector configuration whose reads wait for pending
// rebuilds as long as a slow test machine may need: the tests that read
// right after a write check the waiting, not the bound.
var patient = collector.Config{DeriveWait: time.Minute}

// claudeCorpus is the 2.1.197 capture in envelopes, 250 ms apart.
func claudeCorpus(t testing.TB) []event.Envelope {
	t.Helper()
	var out []event.Envelope
	for _, p := range storetest.Corpus(t) {
		if strings.HasPrefix(p.Label, "claude-code-2.1.197.jsonl:") {
			out = append(out, storetest.Envelope(p.Runtime, storetest.At(250*len(out)), p.JSON))
		}
	}
	if len(out) < 50 {
		t.Fatalf("the 2.1.197 corpus has %d payloads", len(out))
	}
	return out
}

// settle waits until every session's derived state reflects all its
// events (derived_seq == last_seq), and returns the session list.
func (s *testServer) settle(t *testing.T) []collector.SessionView {
	t.Helper()
	// A liveness bound, not a speed one: the test fails when the model
	// stops making progress (a lost wake-up, a round stuck), not when it
	// is slow (the race detector, a busy machine), so the deadline moves
	// on whenever a session's derived_seq or the events applied do.
	// The whole wait is capped too: a model that keeps applying and never
	// settles (a rebuild loop) fails here, not at the package's timeout.
	const stall, most = 30 * time.Second, 5 * time.Minute
	deadline, limit := time.Now().Add(stall), time.Now().Add(most)
	var progress float64 = -1
	for {
		var page collector.SessionsResponse
		code, body := s.do(t, http.MethodGet, "/v1/sessions?limit=1000", nil)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/sessions: %d %s", code, body)
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		fresh := true
		var derived int64
		for _, v := range page.Sessions {
			if v.DerivedSeq != v.LastSeq {
				fresh = false
			}
			derived += v.DerivedSeq
		}
		// The rows are readable as soon as they are stored; the round
		// that stored them has settled (its metrics counted) once no
		// event is pending.
		m := s.scrape(t)
		if fresh && m["hookwatch_model_pending_events"] == 0 {
			return page.Sessions
		}
		if p := float64(derived) + m["hookwatch_model_events_applied_total"]; p != progress {
			progress, deadline = p, time.Now().Add(stall)
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions not derived, and no progress for %v: %s", stall, body)
		}
		if time.Now().After(limit) {
			t.Fatalf("sessions not derived after %v: %s", most, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantRows checks the agents and tool calls the API lists of session id
// against ws, attribution's, and returns the calls' response.
func (s *testServer) wantRows(t *testing.T, id string, ws *attribution.Session) collector.ToolCallsResponse {
	t.Helper()
	var agents collector.AgentsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/agents", &agents)
	if got, w := jsonOf(t, agents.Agents), jsonOf(t, ws.Agents); got != w {
		t.Errorf("agents of %s:\n%s\nwant:\n%s", id, got, w)
	}
	var calls collector.ToolCallsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/tool-calls", &calls)
	if got, w := jsonOf(t, calls.ToolCalls), jsonOf(t, ws.ToolCalls); got != w {
		t.Errorf("tool calls of %s:\n%s\nwant:\n%s", id, got, w)
	}
	return calls
}

// jsonOf is the canonical JSON of v (decoded and encoded again, so that
// raw documents compare by value).
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.MarshalIndent(x, "", " ")
	return string(b)
}

func TestDerivedAPI(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	want := attribution.Build(envs)

	// Read after write: the POST returned, so the session is pending and
	// the read waits for its derivation.
	var agents collector.AgentsResponse
	s.getJSON(t, "/v1/sessions/"+corpusMain+"/agents", &agents)
	var main collector.SessionView
	s.getJSON(t, "/v1/sessions/"+corpusMain, &main)
	if agents.DerivedSeq != main.LastSeq || main.DerivedSeq != main.LastSeq || main.LastSeq == 0 {
		t.Fatalf("read after write: agents derived at %d, session at %d, last_seq %d", agents.DerivedSeq, main.DerivedSeq, main.LastSeq)
	}

	// Every session's agents and tool calls are what attribution derives
	// from everything stored.
	views := s.settle(t)
	if len(views) != 3 {
		t.Fatalf("%d sessions listed, want 3", len(views))
	}
	for _, v := range views {
		if v.ID == corpusThrowaway {
			continue
		}
		ws := want.Session(v.ID)
		calls := s.wantRows(t, v.ID, ws)
		if calls.NextCursor != "" || calls.DerivedSeq != v.LastSeq {
			t.Errorf("tool calls of %s: next %q, derived at %d of %d", v.ID, calls.NextCursor, calls.DerivedSeq, v.LastSeq)
		}
		if v.Counts != ws.Counts || v.Title != ws.Title || v.Project != ws.Project {
			t.Errorf("session %s: counts %+v title %q project %q, want %+v %q %q", v.ID, v.Counts, v.Title, v.Project, ws.Counts, ws.Title, ws.Project)
		}
	}

	// Lineage and status, in the list and in the detail.
	byID := map[string]collector.SessionView{}
	for _, v := range views {
		byID[v.ID] = v
	}
	f := func(id, parent, lineage, status, aliasOf string, children ...string) {
		t.Helper()
		var detail collector.SessionView
		s.getJSON(t, "/v1/sessions/"+id, &detail)
		for _, v := range []collector.SessionView{byID[id], detail} {
			if v.ParentSessionID != parent || v.Lineage != lineage || v.Status != status || v.AliasOf != aliasOf ||
				!slices.Equal(v.ChildSessionIDs, children) {
				t.Errorf("session %s: parent %q lineage %q status %q alias_of %q children %v; want %q %q %q %q %v",
					id, v.ParentSessionID, v.Lineage, v.Status, v.AliasOf, v.ChildSessionIDs, parent, lineage, status, aliasOf, children)
			}
		}
	}
	f(corpusMain, "", "", attribution.SessionEnded, "", corpusFork)
	f(corpusFork, corpusMain, attribution.LineageFork, attribution.SessionEnded, "")
	f(corpusThrowaway, "", "", attribution.SessionEnded, corpusMain)
	if m := byID[corpusMain]; !slices.Equal(m.AliasSessionIDs, []string{corpusThrowaway}) || len(m.Runs) != 5 ||
		m.Runs[2].ForkedTo != corpusFork || len(m.Compactions) != 1 || m.Compactions[0].AgentID != corpusCompactor {
		t.Errorf("main session runs %+v compactions %+v aliases %v", m.Runs, m.Compactions, m.AliasSessionIDs)
	}
	// A throwaway id answers for the session it was folded into.
	var thrown collector.AgentsResponse
	s.getJSON(t, "/v1/sessions/"+corpusThrowaway+"/agents", &thrown)
	if len(thrown.Agents) != len(want.Session(corpusMain).Agents) {
		t.Errorf("the throwaway id has %d agents, want its session's", len(thrown.Agents))
	}

	// The compaction agent keeps its empty type.
	var compactor map[string]any
	for _, raw := range agents.Agents {
		var a map[string]any
		json.Unmarshal(raw, &a)
		if a["agent_id"] == corpusCompactor {
			compactor = a
		}
	}
	if compactor == nil || compactor["agent_type"] != "" || compactor["role"] != attribution.RoleCompaction {
		t.Errorf("compaction agent %v", compactor)
	}
}

func TestVirtualSession(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	id := attribution.VirtualPrefix + corpusMain + "--" + corpusExplore
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/"+id, &v)
	if v.ID != id || v.ParentSessionID != corpusMain || v.Lineage != "subagent" || v.AgentID == nil ||
		*v.AgentID != corpusExplore || v.Agent == nil || v.Status != attribution.SessionEnded || v.Counts.ToolCalls != 2 || v.Counts.Rejected != 1 || v.Title == "" {
		t.Fatalf("virtual session %s: %s", id, jsonOf(t, v))
	}
	// The form without the session finds the same subagent, under the id
	// its agent gives it.
	var old collector.SessionView
	s.getJSON(t, "/v1/sessions/"+attribution.VirtualPrefix+corpusExplore, &old)
	if jsonOf(t, old) != jsonOf(t, v) {
		t.Fatalf("sub--%s: %s, want %s", corpusExplore, jsonOf(t, old), jsonOf(t, v))
	}
	// Its transcript is the subagent's own, not its parent's.
	if v.TranscriptPath == "" || v.TranscriptPath != v.Agent.TranscriptPath {
		t.Fatalf("virtual session %s: transcript %q, the agent's %q", id, v.TranscriptPath, v.Agent.TranscriptPath)
	}
	var events collector.EventsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/events", &events)
	if len(events.Events) != v.Agent.Events || len(events.Events) == 0 {
		t.Fatalf("%d events of the virtual session, want %d", len(events.Events), v.Agent.Events)
	}
	for _, e := range events.Events {
		if e.SessionID != corpusMain || e.AgentID != corpusExplore {
			t.Fatalf("event of another agent: %+v", e)
		}
	}
	// Its own agent only, whatever agent_id asks for.
	s.getJSON(t, "/v1/sessions/"+id+"/events?agent_id=", &events)
	if len(events.Events) != 0 {
		t.Fatalf("agent_id= on a virtual session gave %d events", len(events.Events))
	}
	var calls collector.ToolCallsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/tool-calls", &calls)
	if len(calls.ToolCalls) != 2 {
		t.Fatalf("tool calls of the virtual session: %s", jsonOf(t, calls.ToolCalls))
	}
	for _, raw := range calls.ToolCalls {
		var call map[string]any
		if json.Unmarshal(raw, &call) != nil || call["agent_id"] != corpusExplore ||
			call["parent_tool_use_id"] != "toolu_00000013" || call["depth"] != 1.0 {
			t.Fatalf("tool call of the virtual session: %s", raw)
		}
	}
	var agents collector.AgentsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/agents", &agents)
	if len(agents.Agents) != 1 || !bytes.Contains(agents.Agents[0], []byte(corpusExplore)) {
		t.Fatalf("agents of the virtual session: %s", jsonOf(t, agents.Agents))
	}

	f := func(path string, code int) {
		t.Helper()
		if got, body := s.do(t, http.MethodGet, path, nil); got != code {
			t.Errorf("GET %s: %d %s, want %d", path, got, body, code)
		}
	}
	for _, sub := range []string{"", "/events", "/agents", "/tool-calls"} {
		f("/v1/sessions/"+attribution.VirtualPrefix+"nope"+sub, http.StatusNotFound)
		f("/v1/sessions/"+attribution.VirtualPrefix+sub, http.StatusNotFound)
		f("/v1/sessions/nope"+sub, http.StatusNotFound)
	}
	// A real session whose id looks virtual is itself.
	s.post(t, []event.Envelope{synth(0, "session_id", "sub--x", "hook_event_name", "Stop")}, 1, 0)
	var real collector.SessionView
	s.getJSON(t, "/v1/sessions/sub--x", &real)
	if real.ID != "sub--x" || real.AgentID != nil || real.EventCount != 1 {
		t.Fatalf("a session named sub--x: %s", jsonOf(t, real))
	}
}

func TestToolCallFilters(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	ws := attribution.Build(envs).Session(corpusMain)
	path := "/v1/sessions/" + corpusMain + "/tool-calls"
	get := func(query string) []map[string]any {
		t.Helper()
		var all []map[string]any
		cursor := ""
		for range 100 {
			var page collector.ToolCallsResponse
			s.getJSON(t, path+"?"+query+"&cursor="+url.QueryEscape(cursor), &page)
			for _, raw := range page.ToolCalls {
				var c map[string]any
				json.Unmarshal(raw, &c)
				all = append(all, c)
			}
			if page.NextCursor == "" {
				return all
			}
			cursor = page.NextCursor
		}
		t.Fatal("paging never ended")
		return nil
	}
	f := func(query string, keep func(c *attribution.ToolCall) bool) {
		t.Helper()
		var want []string
		for _, c := range ws.ToolCalls {
			if keep(c) {
				want = append(want, c.ToolUseID)
			}
		}
		var got []string
		for _, c := range get(query) {
			got = append(got, c["tool_use_id"].(string))
		}
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("?%s: %v, want %v", query, got, want)
		}
	}
	all := func(*attribution.ToolCall) bool { return true }
	f("", all)
	f("limit=1", all)
	f("limit=5", all)
	f("status=rejected", func(c *attribution.ToolCall) bool { return c.Status == attribution.StatusRejected })
	f("status=error&limit=1", func(c *attribution.ToolCall) bool { return c.Status == attribution.StatusError })
	f("tool=Read", func(c *attribution.ToolCall) bool { return c.ToolName == "Read" })
	f("agent_id=", func(c *attribution.ToolCall) bool { return c.AgentID == "" })
	f("agent_id="+corpusExplore, func(c *attribution.ToolCall) bool { return c.AgentID == corpusExplore })
	f("agent_id=&tool=Agent&limit=1", func(c *attribution.ToolCall) bool { return c.AgentID == "" && c.ToolName == "Agent" })
	if got := get("tool=Nothing"); len(got) != 0 {
		t.Errorf("tool=Nothing: %v", got)
	}

	g := func(query string, code int, msg string) {
		t.Helper()
		got, body := s.do(t, http.MethodGet, path+"?"+query, nil)
		if got != code || !strings.Contains(string(body), msg) {
			t.Errorf("?%s: %d %s, want %d %q", query, got, body, code, msg)
		}
	}
	g("cursor=garbage", 400, "invalid cursor")
	g("cursor="+store.EventCursor(3), 400, "invalid cursor")
	g("limit=0", 400, "limit")
	g("status=failed", 400, `status must be one of pending, ok, error, interrupted, denied, rejected, got \"failed\"`)
	g("effect=delete", 400, `effect must be one of read_only, execute_check, network, write, destructive, got \"delete\"`)
	g("subtype=bogus", 400, `subtype must be one of read_file, `)
	g("subtype=run_test", 200, `"tool_calls":[`)
	g("since=yesterday", 400, "since must be an RFC 3339 time")
	g("status=denied&effect=destructive", 200, `"tool_calls":[`)
}

func TestSessionStatus(t *testing.T) {
	s := newServer(t, patient)
	status := func(id string) string {
		t.Helper()
		var v collector.SessionView
		s.getJSON(t, "/v1/sessions/"+id, &v)
		if v.DerivedSeq != v.LastSeq {
			t.Fatalf("session %s derived at %d of %d", id, v.DerivedSeq, v.LastSeq)
		}
		return v.Status
	}
	f := func(id string, want string, kv ...[]any) {
		t.Helper()
		var envs []event.Envelope
		for i, p := range kv {
			envs = append(envs, synth(i, append([]any{"session_id", id, "cwd", "/src/" + id}, p...)...))
		}
		s.post(t, envs, len(envs), 0)
		if got := status(id); got != want {
			t.Errorf("session %s: status %q, want %q", id, got, want)
		}
	}
	start := []any{"hook_event_name", "SessionStart", "source", "startup"}
	prompt := []any{"hook_event_name", "UserPromptSubmit", "prompt", "go"}
	f("running", attribution.SessionRunning, start, prompt)
	f("ended", attribution.SessionEnded, start, prompt, []any{"hook_event_name", "Stop"}, []any{"hook_event_name", "SessionEnd", "reason", "other"})
	f("failed", attribution.SessionFailed, start, prompt, []any{"hook_event_name", "StopFailure", "error", "rate_limit"}, []any{"hook_event_name", "SessionEnd", "reason", "other"})
	// A subagent's failure is not the session's.
	f("sub", attribution.SessionRunning, start, prompt, []any{"hook_event_name", "StopFailure", "agent_id", "a1", "agent_type", "Explore"})
	// A prompt after the failure: running again.
	var more []event.Envelope
	for i, p := range [][]any{start, prompt} {
		more = append(more, synth(5000+i, append([]any{"session_id", "failed", "cwd", "/src/failed"}, p...)...))
	}
	s.post(t, more, 2, 0)
	if got := status("failed"); got != attribution.SessionRunning {
		t.Errorf("resumed failed session: %q", got)
	}
}

// TestDeriveStaleOnStart: events stored while no collector derived them
// (a crash, an upgrade) are derived when one starts, and a read right after
// the start waits for them.
func TestDeriveStaleOnStart(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	envs := claudeCorpus(t)
	events := make([]store.Event, len(envs))
	for i, e := range envs {
		events[i] = storetest.MustEvent(t, e)
	}
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	cfg := patient
	cfg.Store = db
	srv, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	s := &testServer{Server: srv, db: db, http: httptest.NewServer(srv.Handler())}
	t.Cleanup(s.http.Close)
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/"+corpusFork, &v)
	if v.DerivedSeq != v.LastSeq || v.ParentSessionID != corpusMain || v.Lineage != attribution.LineageFork {
		t.Fatalf("fork after a start: %s", jsonOf(t, v))
	}
	s.settle(t)
}

// TestDeriveOlderVersionOnStart: a model stored by an older derivation
// (attribution.ModelVersion) is derived again when a collector starts, as
// one older than its events is; a model of this version is served as
// stored.
func TestDeriveOlderVersionOnStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	open := func() *sqlite.DB {
		t.Helper()
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	s := newServerOn(t, patient, open())
	postAll(t, s, claudeCorpus(t), 50, 1)
	want := derivedView(t, s)
	s.stop() // closes the store
	// What a derivation that kept no agents would have stored, of version.
	storedAs := func(version int) *testServer {
		t.Helper()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`DELETE FROM model_agents`, fmt.Sprintf(`UPDATE model_sessions SET version = %d`, version)} {
			if _, err := raw.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}
		return newServerOn(t, patient, open())
	}
	s = storedAs(attribution.ModelVersion)
	if derivedView(t, s) == want {
		t.Fatal("the models of this version, their agents deleted, read back whole: the store was not changed")
	}
	s.stop()
	s = storedAs(attribution.ModelVersion - 1)
	if got := derivedView(t, s); got != want {
		t.Fatalf("models of an older version after a start:\n%s\nwant:\n%s", got, want)
	}
	s.stop()
	db := open()
	defer db.Close()
	if stale, err := db.StaleModels(context.Background(), attribution.ModelVersion, "", 1000); err != nil || len(stale) != 0 {
		t.Fatalf("stale after the start: %v, %v", stale, err)
	}
}

// derivedView is what must not depend on arrival order: every derived
// field of every session, its agents and its tool calls.
func derivedView(t *testing.T, s *testServer) string {
	t.Helper()
	views := s.settle(t)
	slices.SortFunc(views, func(a, b collector.SessionView) int { return strings.Compare(a.ID, b.ID) })
	var b strings.Builder
	for _, v := range views {
		var agents collector.AgentsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/agents", &agents)
		var calls collector.ToolCallsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/tool-calls", &calls)
		fmt.Fprintf(&b, "%s\n", jsonOf(t, map[string]any{
			"id": v.ID, "title": v.Title, "project": v.Project, "status": v.Status,
			"parent_session_id": v.ParentSessionID, "lineage": v.Lineage, "child_session_ids": v.ChildSessionIDs,
			"alias_session_ids": v.AliasSessionIDs, "alias_of": v.AliasOf, "phantom": v.Phantom, "runs": v.Runs,
			"compactions": v.Compactions, "counts": v.Counts, "agents": agents.Agents, "tool_calls": calls.ToolCalls,
		}))
	}
	return b.String()
}

// TestDerivedOrderIndependence posts the 2.1.197 capture in 50 random
// orders, in random batches, with duplicates (some with received_at in
// another zone: the same instant), each into a fresh collector, and wants
// the same derived state from the API every time.
func TestDerivedOrderIndependence(t *testing.T) {
	envs := claudeCorpus(t)
	ref := newServer(t, collector.Config{})
	ref.post(t, envs, len(envs), 0)
	want := derivedView(t, ref)
	if !strings.Contains(want, `"lineage": "fork"`) || !strings.Contains(want, corpusCompactor) {
		t.Fatalf("the reference lacks the fork or the compaction agent:\n%s", want)
	}

	// t.Run from several goroutines: the collectors mostly wait for their
	// debounce, so more of them at once than -parallel allows is faster.
	orders := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range orders {
				t.Run(fmt.Sprint(i), func(t *testing.T) { checkOrder(t, i, envs, want) })
			}
		}()
	}
	for i := range 50 {
		orders <- i
	}
	close(orders)
	wg.Wait()
}

// TestMovedCallStoredOnce: a call whose PostToolUse was read before its
// PreToolUse (a clock that went back) is stored at the PostToolUse's time,
// then moved to the PreToolUse's when that comes: the store holds it once,
// as in a collector given every event at once.
func TestMovedCallStoredOnce(t *testing.T) {
	envs := claudeCorpus(t)
	type call struct {
		Event     string `json:"hook_event_name"`
		ToolUseID string `json:"tool_use_id"`
	}
	var payloads []call
	for _, e := range envs {
		var p call
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, p)
	}
	pre, post := -1, -1
	for i, p := range payloads {
		if p.Event == "PreToolUse" && pre < 0 {
			pre = i
		}
		if pre >= 0 && p.Event == "PostToolUse" && p.ToolUseID == payloads[pre].ToolUseID {
			post = i
			break
		}
	}
	if post < 0 {
		t.Fatal("the corpus has no PreToolUse and PostToolUse of one call")
	}
	envs[pre], envs[post] = envs[post], envs[pre]
	envs[pre].ReceivedAt, envs[post].ReceivedAt = envs[post].ReceivedAt, envs[pre].ReceivedAt

	envs = envs[:post+1]
	ref := newServer(t, collector.Config{})
	ref.post(t, envs, len(envs), 0)
	want := derivedView(t, ref)

	s := newServer(t, collector.Config{})
	s.post(t, envs[:pre+1], pre+1, 0)
	first := derivedView(t, s) // the call stored at the PostToolUse's time
	if !strings.Contains(first, payloads[pre].ToolUseID) {
		t.Fatalf("the call %s is not stored before its PreToolUse", payloads[pre].ToolUseID)
	}
	for _, e := range envs[pre+1:] { // one at a time: the model follows them
		s.post(t, []event.Envelope{e}, 1, 0)
	}
	if got := derivedView(t, s); got != want {
		t.Fatalf("derived state differs:\n%s\nwant:\n%s", got, want)
	}
}

// TestDerivedLateEvent: an event that arrives after later ones of its
// session were modelled (a hook that delivered late) derives that session
// again, counted in /metrics, and the model equals that of a collector
// given every event at once.
func TestDerivedLateEvent(t *testing.T) {
	envs := demo.Big(demo.BigSpec{SessionID: "late-1", Start: time.Now().Add(-time.Hour), Events: 600, Agents: 4})
	late := -1
	for i, e := range envs[len(envs)/3:] {
		p, err := event.Decode(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name() == event.PostToolUse {
			late = len(envs)/3 + i
			break
		}
	}
	if late < 0 {
		t.Fatal("the session has no PostToolUse past its first third")
	}
	ref := newServer(t, collector.Config{})
	ref.post(t, envs, len(envs), 0)
	want := derivedView(t, ref)

	s := newServer(t, collector.Config{})
	rest := slices.Delete(slices.Clone(envs), late, late+1)
	s.post(t, rest, len(rest), 0)
	derivedView(t, s) // modelled without it
	before := sum(s.scrape(t), "hookwatch_model_sessions_rederived_total")
	s.post(t, envs[late:late+1], 1, 0)
	if got := derivedView(t, s); got != want {
		t.Fatalf("derived state differs:\n%s\nwant:\n%s", got, want)
	}
	if n := sum(s.scrape(t), "hookwatch_model_sessions_rederived_total") - before; n != 1 {
		t.Fatalf("hookwatch_model_sessions_rederived_total grew by %v for one late event, want 1", n)
	}
}

// checkOrder posts envs in the random order i, in random batches with
// duplicates, into a fresh collector and wants the derived state want.
func checkOrder(t *testing.T, i int, envs []event.Envelope, want string) {
	rng := rand.New(rand.NewPCG(uint64(i), 2197))
	input := slices.Clone(envs)
	for range rng.IntN(len(envs)) + 1 {
		d := envs[rng.IntN(len(envs))]
		if rng.IntN(2) == 0 {
			d.ReceivedAt = d.ReceivedAt.In(time.FixedZone("X", 3600))
		}
		input = append(input, d)
	}
	rng.Shuffle(len(input), func(a, b int) { input[a], input[b] = input[b], input[a] })
	s := newServer(t, collector.Config{})
	for len(input) > 0 {
		n := min(len(input), 1+rng.IntN(12))
		if code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, input[:n])); code != http.StatusOK {
			t.Fatalf("POST: %d %s", code, body)
		}
		input = input[n:]
	}
	if got := derivedView(t, s); got != want {
		t.Fatalf("derived state differs:\n%s\nwant:\n%s", got, want)
	}
}

// TestReadBound: a read that finds a rebuild pending past its bound answers
// the state derived so far, and says which events it reflects.
func TestReadBound(t *testing.T) {
	s := newServer(t, collector.Config{DeriveWait: time.Nanosecond})
	envs := claudeCorpus(t)
	s.post(t, envs[:20], 20, 0)
	views := s.settle(t)
	if len(views) != 1 || views[0].Counts.Events != 20 {
		t.Fatalf("after 20 events: %+v", views)
	}
	s.post(t, envs[20:], len(envs)-20, 0)
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/"+corpusMain, &v)
	// Either what was derived before (most likely: the rebuild waits for
	// its debounce) or everything, never a mix.
	switch {
	case v.DerivedSeq == v.LastSeq:
	case v.DerivedSeq == views[0].LastSeq && v.Counts.Events == 20:
	default:
		t.Fatalf("derived at %d with %d events; last_seq %d, earlier %d", v.DerivedSeq, v.Counts.Events, v.LastSeq, views[0].LastSeq)
	}
	for _, v := range s.settle(t) {
		if v.ID == corpusMain && v.Counts.Events != 53 {
			t.Fatalf("settled with %d events", v.Counts.Events)
		}
	}
}

// TestDeriveManyStaleOnStart: more stale sessions than one round loads are
// derived over several rounds, the most recently active first, and an event
// arriving for a stale session still waiting its turn makes it current with
// everything it had before: the model equals the one a collector derived
// live from the same events.
func TestDeriveManyStaleOnStart(t *testing.T) {
	const sessions = 100
	var old []event.Envelope
	for i := range sessions {
		sid := fmt.Sprintf("stale-%03d", i)
		cwd := fmt.Sprintf("/work/p%d", i%3) // groups of many sessions
		ms := i * 10_000
		old = append(old,
			synth(ms, "session_id", sid, "cwd", cwd, "hook_event_name", "SessionStart", "source", "startup"),
			synth(ms+1, "session_id", sid, "cwd", cwd, "hook_event_name", "UserPromptSubmit", "prompt", "list the files"),
			synth(ms+2, "session_id", sid, "cwd", cwd, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}),
			synth(ms+3, "session_id", sid, "cwd", cwd, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a\nb"}))
	}
	// The least recently active session goes on after the restart.
	late := []event.Envelope{
		synth(sessions*10_000, "session_id", "stale-000", "cwd", "/work/p0", "hook_event_name", "PreToolUse", "tool_name", "Read", "tool_use_id", "toolu_late", "tool_input", map[string]any{"file_path": "/work/p0/a"}),
		synth(sessions*10_000+1, "session_id", "stale-000", "cwd", "/work/p0", "hook_event_name", "Stop"),
	}
	ref := newServer(t, collector.Config{})
	ref.post(t, append(slices.Clone(old), late...), len(old)+len(late), 0)
	want := derivedView(t, ref)

	db := sqlite.MustOpenDB(t)
	events := make([]store.Event, len(old))
	for i, e := range old {
		events[i] = storetest.MustEvent(t, e)
	}
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, collector.Config{}, db)
	s.db = db
	s.post(t, late, len(late), 0)
	if got := derivedView(t, s); got != want {
		t.Fatalf("after a start on %d stale sessions:\n%s\nwant, as derived live:\n%s", sessions, got, want)
	}
}

// TestDeriveStaleOnStartLogged: a collector started on sessions whose
// model is stale (an upgrade, events stored while none ran) says in its
// log how many it derives again in the background, and when it is done,
// with the time it took: the dashboard meanwhile reads "modelling…".
func TestDeriveStaleOnStartLogged(t *testing.T) {
	const sessions = 40
	db := sqlite.MustOpenDB(t)
	var events []store.Event
	for i := range sessions {
		sid := fmt.Sprintf("stale-%03d", i)
		events = append(events,
			storetest.MustEvent(t, synth(i*10, "session_id", sid, "cwd", "/work/p", "hook_event_name", "SessionStart", "source", "startup")),
			storetest.MustEvent(t, synth(i*10+1, "session_id", sid, "cwd", "/work/p", "hook_event_name", "Stop")))
	}
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	s := newServerOn(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, db)
	s.db = db
	s.settle(t)
	if got := logs.Lines("deriving the model of stored sessions again", fmt.Sprintf("sessions=%d", sessions)); len(got) != 1 {
		t.Errorf("no line says the start derives %d sessions again:\n%s", sessions, logs.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(logs.Lines("derived the model of stored sessions again", fmt.Sprintf("sessions=%d", sessions), "took=")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no line says the derivation is done:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A start with nothing stale says nothing of it.
	s.stop()
	var again syncbuf.Buffer
	db2, err := sqlite.Open(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	s = newServerOn(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&again, nil))}, db2)
	s.settle(t)
	if got := again.Lines("stored sessions again"); len(got) != 0 {
		t.Errorf("a start with no stale model logged %q", got)
	}
}

// TestDerivedWithEviction: with a model cache too small to keep any group
// beyond the round that applies it, every group is dropped and loaded
// again from the store round after round, and the model equals the one a
// collector that kept every group derived: the 2.1.197 capture (a resume,
// a fork, a compaction, a continue) beside sessions of three other
// projects, posted in order and in random orders, in small batches over
// many rounds, with duplicates.
func TestDerivedWithEviction(t *testing.T) {
	envs := claudeCorpus(t)
	for i := range 12 {
		sid := fmt.Sprintf("other-%02d", i)
		cwd := fmt.Sprintf("/work/p%d", i%3)
		ms := i * 1000
		envs = append(envs,
			synth(ms, "session_id", sid, "cwd", cwd, "hook_event_name", "SessionStart", "source", "startup"),
			synth(ms+1, "session_id", sid, "cwd", cwd, "hook_event_name", "UserPromptSubmit", "prompt", "list the files"),
			synth(ms+2, "session_id", sid, "cwd", cwd, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}),
			synth(ms+3, "session_id", sid, "cwd", cwd, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a\nb"}),
			synth(ms+4, "session_id", sid, "cwd", cwd, "hook_event_name", "Stop"))
	}
	ref := newServer(t, collector.Config{})
	ref.post(t, envs, len(envs), 0)
	want := derivedView(t, ref)
	if !strings.Contains(want, `"lineage": "fork"`) || !strings.Contains(want, "other-11") {
		t.Fatalf("the reference lacks the fork or the other projects:\n%s", want)
	}
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			input := slices.Clone(envs)
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			if i > 0 {
				for range rng.IntN(len(envs)/4) + 1 {
					input = append(input, envs[rng.IntN(len(envs))])
				}
				rng.Shuffle(len(input), func(a, b int) { input[a], input[b] = input[b], input[a] })
			}
			s := newServer(t, collector.Config{ModelCacheBytes: 1})
			for k := 0; len(input) > 0; k++ {
				n := min(len(input), 1+rng.IntN(8))
				if code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, input[:n])); code != http.StatusOK {
					t.Fatalf("POST: %d %s", code, body)
				}
				input = input[n:]
				if k%3 == 0 {
					time.Sleep(60 * time.Millisecond) // a round between
				}
			}
			if got := derivedView(t, s); got != want {
				t.Fatalf("derived state with groups evicted differs:\n%s\nwant, with every group kept:\n%s", got, want)
			}
			m := s.scrape(t)
			if m["hookwatch_model_group_evictions_total"] == 0 || m["hookwatch_model_group_loads_total"] <= 4 {
				t.Fatalf("groups were not evicted and loaded again: %v evictions, %v loads",
					m["hookwatch_model_group_evictions_total"], m["hookwatch_model_group_loads_total"])
			}
			if m["hookwatch_model_groups_cached"] > 1 {
				t.Fatalf("%v groups kept over a budget of 1 byte", m["hookwatch_model_groups_cached"])
			}
		})
	}
}

// TestDerivedNeverPastLastSeq: a session read while its events keep coming
// never answers a derived_seq past its last_seq, though a round of the
// model may store events committed after the session was read (a read that
// waits for the model waits for such a round).
func TestDerivedNeverPastLastSeq(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := claudeCorpus(t)
	posted := make(chan error, 1)
	go func() {
		for i := range envs {
			body, err := json.Marshal(map[string]any{"envelopes": envs[i : i+1]})
			if err == nil {
				var res *http.Response
				if res, err = http.Post(s.http.URL+"/v1/events", "application/json", bytes.NewReader(body)); err == nil {
					res.Body.Close()
				}
			}
			if err != nil {
				posted <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		posted <- nil
	}()
	reads := 0
	check := func(v collector.SessionView) {
		reads++
		if v.DerivedSeq > v.LastSeq {
			t.Fatalf("session %s: derived_seq %d past last_seq %d", v.ID, v.DerivedSeq, v.LastSeq)
		}
	}
	for done := false; !done; {
		select {
		case err := <-posted:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		if code, body := s.do(t, http.MethodGet, "/v1/sessions/"+corpusMain, nil); code == http.StatusOK {
			var v collector.SessionView
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			check(v)
		}
		var page collector.SessionsResponse
		s.getJSON(t, "/v1/sessions?limit=10", &page)
		for _, v := range page.Sessions {
			check(v)
		}
	}
	if reads == 0 {
		t.Fatal("no session read while the events came")
	}
	for _, v := range s.settle(t) {
		check(v)
	}
}

// cancelWatch is a SQLite store that records whether the contexts the
// model is written with can end.
type cancelWatch struct {
	*sqlite.DB
	mu             sync.Mutex
	writes, canEnd int
}

func (c *cancelWatch) PutModel(ctx context.Context, b store.ModelBatch) error {
	c.mu.Lock()
	c.writes++
	if ctx.Done() != nil {
		c.canEnd++
	}
	c.mu.Unlock()
	return c.DB.PutModel(ctx, b)
}

// TestModelWriteNotCanceled: a collector alone on its store writes the
// model with a context that cannot end, so that the SQLite driver runs no
// goroutine per statement to interrupt it; the model is written all the
// same.
func TestModelWriteNotCanceled(t *testing.T) {
	st := &cancelWatch{DB: sqlite.MustOpenDB(t)}
	s := newServerOn(t, collector.Config{}, st)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.writes == 0 || st.canEnd != 0 {
		t.Fatalf("%d model writes, %d of them with a context that can end", st.writes, st.canEnd)
	}
}

// TestProbeSessionMarked: a session of hookwatch's own check is marked as
// one in its view and in the stream's model messages, so that the
// dashboard need not know its ids; any other session is not.
func TestProbeSessionMarked(t *testing.T) {
	s := newServer(t, collector.Config{})
	stream := s.openStream(t, "")
	probe := event.ProbeSessionPrefix + "0194f1a2-0000-7000-8000-000000000001"
	s.post(t, []event.Envelope{synth(1, "session_id", probe, "hook_event_name", "Notification")}, 1, 0)
	_, m := stream.nextModel()
	if m.Session == nil || m.Session.ID != probe || !m.Session.Probe {
		t.Fatalf("model message of the probe session: %+v", m.Session)
	}
	s.post(t, []event.Envelope{synth(2, "session_id", "s1", "hook_event_name", "Notification")}, 1, 0)
	var v collector.SessionView
	s.getJSON(t, "/v1/sessions/"+probe, &v)
	if !v.Probe {
		t.Errorf("view of the probe session: not marked")
	}
	var other collector.SessionView
	s.getJSON(t, "/v1/sessions/s1", &other)
	if other.Probe {
		t.Errorf("view of session s1: marked a probe")
	}
}

// TestDerivedSessionBackAfterIdle: a session that goes on after more than
// modelWindow idle, while its project's group is held in memory without it
// (loaded, after a restart, for a session that began meanwhile), is made
// current with everything it had before: the model equals the one a
// collector that was given every event derives.
func TestDerivedSessionBackAfterIdle(t *testing.T) {
	const hours = 2 * 3600 * 1000
	old, other, back := goesOn("idle-a", "idle-b", hours, hours+10_000)
	ref := newServer(t, collector.Config{})
	ref.post(t, slices.Concat(old, other, back), len(old)+len(other)+len(back), 0)
	want := derivedView(t, ref)

	path := filepath.Join(t.TempDir(), "hookwatch.db")
	open := func() *testServer {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s := newServerOn(t, patient, db)
		s.db = db
		return s
	}
	s := open()
	s.post(t, old, len(old), 0)
	s.settle(t)
	s.stop()
	s = open()
	s.post(t, other, len(other), 0)
	s.settle(t)
	s.post(t, back, len(back), 0)
	if got := derivedView(t, s); got != want {
		t.Fatalf("a session back after an idle hour:\n%s\nwant, given every event:\n%s", got, want)
	}
}

// TestDeriveStaleThenLive: more stale sessions of one project than a round
// loads (a crash: events committed, never modelled) are loaded over
// several rounds, each loading the project's group again with the
// sessions of its turn; then sessions loaded in the earlier rounds go on.
// Their model has every event, those committed before the start included,
// as a collector given every event derives it.
func TestDeriveStaleThenLive(t *testing.T) {
	checkStaleThenLive(t, sqlite.MustOpenDB(t))
}

// checkStaleThenLive runs TestDeriveStaleThenLive on db, an empty store.
func checkStaleThenLive(t *testing.T, db store.Store) {
	const sessions = 100
	var old []event.Envelope
	for i := range sessions {
		sid := fmt.Sprintf("stale-%03d", i)
		ms := i * 10_000 // the newest first: stale-099 loads first
		old = append(old,
			synth(ms, "session_id", sid, "cwd", "/work/p", "hook_event_name", "SessionStart", "source", "startup"),
			synth(ms+1, "session_id", sid, "cwd", "/work/p", "hook_event_name", "UserPromptSubmit", "prompt", "first "+sid),
			synth(ms+2, "session_id", sid, "cwd", "/work/p", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}),
			synth(ms+3, "session_id", sid, "cwd", "/work/p", "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "toolu_"+sid, "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a\nb"}))
	}
	var late []event.Envelope
	for k, sid := range []string{"stale-090", "stale-050", "stale-030"} { // loaded in the first, second and third round
		ms := sessions*10_000 + k*10
		late = append(late,
			synth(ms, "session_id", sid, "cwd", "/work/p", "hook_event_name", "UserPromptSubmit", "prompt", "second "+sid),
			synth(ms+1, "session_id", sid, "cwd", "/work/p", "hook_event_name", "Stop"))
	}
	ref := newServer(t, collector.Config{})
	ref.post(t, slices.Concat(old, late), len(old)+len(late), 0)
	want := derivedView(t, ref)

	events := make([]store.Event, len(old))
	for i, e := range old {
		events[i] = storetest.MustEvent(t, e)
	}
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, patient, db)
	s.settle(t)
	s.post(t, late, len(late), 0)
	if got := derivedView(t, s); got != want {
		t.Fatalf("after a start on %d stale sessions, then live:\n%s\nwant, given every event:\n%s", sessions, got, want)
	}
}

// TestVirtualSessionsOfOneAgentID: two sessions whose subagents have the
// same id, as a program on the Go SDK names its agents (worker-1 in every
// session), each have a virtual session of their own subagent, with its
// own calls; the id without the session still finds one of them.
func TestVirtualSessionsOfOneAgentID(t *testing.T) {
	s := newServer(t, patient)
	var envs []event.Envelope
	for i, sid := range []string{"sdk-a", "sdk-b"} {
		ms := i * 1000
		ev := func(d int, kv ...any) event.Envelope {
			return synth(ms+d, append([]any{"session_id", sid, "cwd", "/work/p"}, kv...)...)
		}
		file := "/work/p/" + sid + ".txt"
		envs = append(envs,
			ev(0, "hook_event_name", "SessionStart", "source", "startup"),
			ev(10, "hook_event_name", "PreToolUse", "tool_name", "Task", "tool_use_id", "task-"+sid, "tool_input", map[string]any{"subagent_type": "checker", "prompt": "check"}),
			ev(20, "hook_event_name", "SubagentStart", "agent_id", "worker-1", "agent_type", "checker"),
			ev(30, "hook_event_name", "PreToolUse", "agent_id", "worker-1", "agent_type", "checker", "tool_name", "Read", "tool_use_id", "read-"+sid, "tool_input", map[string]any{"file_path": file}),
			ev(40, "hook_event_name", "PostToolUse", "agent_id", "worker-1", "agent_type", "checker", "tool_name", "Read", "tool_use_id", "read-"+sid, "tool_input", map[string]any{"file_path": file}, "tool_response", "ok"),
			ev(50, "hook_event_name", "SubagentStop", "agent_id", "worker-1", "agent_type", "checker"),
			ev(60, "hook_event_name", "PostToolUse", "tool_name", "Task", "tool_use_id", "task-"+sid, "tool_input", map[string]any{"subagent_type": "checker", "prompt": "check"}, "tool_response", "done"),
		)
	}
	s.post(t, envs, len(envs), 0)
	for _, sid := range []string{"sdk-a", "sdk-b"} {
		var agents struct {
			Agents []attribution.Agent `json:"agents"`
		}
		s.getJSON(t, "/v1/sessions/"+sid+"/agents", &agents)
		var vid string
		for _, a := range agents.Agents {
			if a.AgentID == "worker-1" {
				vid = a.VirtualSessionID
			}
		}
		if vid != attribution.VirtualPrefix+sid+"--worker-1" {
			t.Fatalf("%s: worker-1's virtual session %q", sid, vid)
		}
		var view collector.SessionView
		s.getJSON(t, "/v1/sessions/"+vid, &view)
		if view.ID != vid || view.ParentSessionID != sid || view.AgentID == nil || *view.AgentID != "worker-1" || view.Counts.ToolCalls != 1 {
			t.Errorf("%s: %s", vid, jsonOf(t, view))
		}
		var calls collector.ToolCallsResponse
		s.getJSON(t, "/v1/sessions/"+vid+"/tool-calls", &calls)
		if len(calls.ToolCalls) != 1 || !bytes.Contains(calls.ToolCalls[0], []byte(`"read-`+sid+`"`)) {
			t.Errorf("%s: calls %s", vid, jsonOf(t, calls.ToolCalls))
		}
		var events collector.EventsResponse
		s.getJSON(t, "/v1/sessions/"+vid+"/events", &events)
		for _, e := range events.Events {
			if e.SessionID != sid || e.AgentID != "worker-1" {
				t.Errorf("%s: an event of another session or agent: %+v", vid, e)
			}
		}
		if len(events.Events) != 4 {
			t.Errorf("%s: %d events, want 4", vid, len(events.Events))
		}
	}
	// The form without the session: one of them, a subagent all the same.
	var old collector.SessionView
	s.getJSON(t, "/v1/sessions/"+attribution.VirtualPrefix+"worker-1", &old)
	if old.AgentID == nil || *old.AgentID != "worker-1" || old.ParentSessionID != "sdk-a" && old.ParentSessionID != "sdk-b" {
		t.Errorf("sub--worker-1: %s", jsonOf(t, old))
	}
	// A session id that is not there, or one without the agent.
	for _, id := range []string{"sdk-c--worker-1", "sdk-a--worker-2"} {
		if code, body := s.do(t, http.MethodGet, "/v1/sessions/"+attribution.VirtualPrefix+id, nil); code != http.StatusNotFound {
			t.Errorf("%s: %d %s", id, code, body)
		}
	}
}

// modelDownStore is a SQLite store whose model writes fail while down is
// set, as those of a database that stopped answering do.
type modelDownStore struct {
	store.Store
	down   atomic.Bool
	failed atomic.Int32
}

func (d *modelDownStore) PutModel(ctx context.Context, b store.ModelBatch) error {
	if d.down.Load() {
		d.failed.Add(1)
		return errors.New("connection refused")
	}
	return d.Store.PutModel(ctx, b)
}

// TestModelStoreDown: while the store fails the model's writes, which the
// modeler retries round after round, the log says so once, not once per
// round; when the store takes them again the log says that too, and the
// model catches up.
func TestModelStoreDown(t *testing.T) {
	st := &modelDownStore{Store: sqlite.MustOpenDB(t)}
	var logs syncbuf.Buffer
	s := newServerOn(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, st)
	st.down.Store(true)
	s.post(t, []event.Envelope{synth(0, "session_id", "s-down", "hook_event_name", "SessionStart")}, 1, 0)
	for deadline := time.Now().Add(10 * time.Second); st.failed.Load() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the modeler tried its write %d times in 10 s, want it retried", st.failed.Load())
		}
	}
	var errs []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			errs = append(errs, line)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "database does not answer") || !strings.Contains(errs[0], "connection refused") {
		t.Errorf("%d failed model writes logged %d errors, want 1 saying the database does not answer, and why:\n%s", st.failed.Load(), len(errs), strings.Join(errs, "\n"))
	}
	st.down.Store(false)
	s.settle(t)
	if !strings.Contains(logs.String(), "the database answers the session model again") {
		t.Errorf("no word of the database answering again:\n%s", logs.String())
	}
}
