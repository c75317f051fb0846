package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// scrape GETs /metrics and returns every sample by its series (name and
// labels as written).
func (s *testServer) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// callCounts are tool calls by "agent_type/tool/status", as the metrics
// label them.
type callCounts map[string]int

// fromMetrics reads the hookwatch_tool_calls_total series of a scrape.
func fromMetrics(t *testing.T, samples map[string]float64) callCounts {
	t.Helper()
	out := callCounts{}
	for series, v := range samples {
		labels, ok := strings.CutPrefix(series, "hookwatch_tool_calls_total{")
		if !ok {
			continue
		}
		l := parseLabels(t, strings.TrimSuffix(labels, "}"))
		out[l["agent_type"]+"/"+l["tool"]+"/"+l["status"]] += int(v)
	}
	return out
}

func parseLabels(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, `="`)
		v, rest2, ok2 := strings.Cut(rest, `"`)
		if !ok || !ok2 {
			t.Fatalf("labels %q", s)
		}
		out[k] = v
		s = strings.TrimPrefix(rest2, ",")
	}
	return out
}

// apiTotals is what the query API says of every session: its final tool
// calls by agent type, tool and status, its prompts and its subagents.
type apiTotals struct {
	calls     callCounts
	prompts   int
	subagents map[string]int // by agent type
	denials   int
	signals   map[string]int // by kind, at the server's thresholds
}

func (s *testServer) apiTotals(t *testing.T) apiTotals {
	t.Helper()
	tot := apiTotals{calls: callCounts{}, subagents: map[string]int{}, signals: map[string]int{}}
	typeOf := func(agentID string, typ *string) string {
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
	for _, v := range s.settle(t) {
		if v.AliasOf != "" {
			continue
		}
		tot.prompts += v.Counts.Prompts
		var calls collector.ToolCallsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/tool-calls", &calls)
		if calls.NextCursor != "" {
			t.Fatalf("session %s has more than a page of calls", v.ID)
		}
		for _, raw := range calls.ToolCalls {
			var c attribution.ToolCall
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			if c.Status == attribution.StatusPending {
				continue
			}
			tot.calls[typeOf(c.AgentID, c.AgentType)+"/"+c.ToolName+"/"+c.Status]++
			if c.Status == attribution.StatusDenied {
				tot.denials++
			}
		}
		var agents collector.AgentsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/agents", &agents)
		for _, raw := range agents.Agents {
			var a attribution.Agent
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			if a.AgentID != "" {
				tot.subagents[typeOf(a.AgentID, a.AgentType)]++
			}
		}
		var sig collector.SignalsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/signals", &sig)
		for _, a := range sig.Agents {
			for _, x := range a.Signals {
				tot.signals[x.Kind]++
			}
		}
	}
	return tot
}

// sum adds up the samples of one metric name whose labels contain all of
// want ("k=\"v\"" pairs).
func sum(samples map[string]float64, name string, want ...string) float64 {
	var n float64
	for series, v := range samples {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(series, w)
		}
		if ok {
			n += v
		}
	}
	return n
}

// serverOn starts a collector on an existing database, as a restart does.
func serverOn(t *testing.T, db *sqlite.DB, cfg collector.Config) *testServer {
	t.Helper()
	cfg.Store = db
	srv, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	s := &testServer{Server: srv, db: db, http: hs}
	t.Cleanup(s.stop)
	return s
}

// TestAgentMetricsCountOnce: the real captures, posted half to one
// collector and half, in reverse and in small batches (late envelopes:
// sessions derived again, the group rebuilt), to a second collector on the
// same database. Every final call the API lists is counted exactly once
// over the two, with its agent type, tool and status; so are prompts and
// subagents; and, at thresholds of one, the signals raised.
func TestAgentMetricsCountOnce(t *testing.T) {
	envs := corpusEnvelopes(t)
	patient := patient
	patient.Signals = attribution.Thresholds{FailedRepeats: 1, ReadRepeats: 1}
	// A clock before every capture: the captures' calls left pending are
	// no stall (TestStalled counts those).
	patient.Now = func() time.Time { return time.Unix(0, 0) }
	path := t.TempDir() + "/hookwatch.db"
	open := func() *sqlite.DB {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	half := len(envs) / 2

	first := serverOn(t, open(), patient)
	first.post(t, envs[:half], half, 0)
	first.settle(t)
	m1 := first.scrape(t)
	first.stop() // closes the database

	second := serverOn(t, open(), patient)
	rest := slices.Clone(envs[half:])
	slices.Reverse(rest)
	for len(rest) > 0 {
		n := min(len(rest), 7)
		second.post(t, rest[:n], n, 0)
		second.settle(t)
		rest = rest[n:]
	}
	second.post(t, envs[:10], 0, 10)
	want := second.apiTotals(t)
	m2 := second.scrape(t)
	if sum(m2, "hookwatch_model_rebuilds_total") == 0 {
		t.Fatal("no group was rebuilt: the test does not cover rebuilds")
	}

	got := fromMetrics(t, m1)
	for k, v := range fromMetrics(t, m2) {
		got[k] += v
	}
	if !maps.Equal(got, want.calls) {
		t.Errorf("tool calls counted:\n%v\nthe API lists:\n%v", got, want.calls)
	}
	if len(want.calls) < 10 || want.subagents["Explore"] == 0 {
		t.Fatalf("the captures lack variety: %v %v", want.calls, want.subagents)
	}
	both := func(name string, labels ...string) int {
		return int(sum(m1, name, labels...) + sum(m2, name, labels...))
	}
	if got := both("hookwatch_prompts_total"); got != want.prompts || got == 0 {
		t.Errorf("prompts counted %d, the API says %d", got, want.prompts)
	}
	for typ, n := range want.subagents {
		if got := both("hookwatch_subagents_started_total", fmt.Sprintf("agent_type=%q", typ)); got != n {
			t.Errorf("%s subagents counted %d, the API lists %d", typ, got, n)
		}
	}
	if want.signals[attribution.SignalLoop] == 0 {
		t.Fatalf("the captures raise no loop: %v", want.signals)
	}
	for kind, n := range want.signals {
		if got := both("hookwatch_signals_total", fmt.Sprintf("kind=%q", kind)); got != n {
			t.Errorf("%s signals counted %d, the API lists %d", kind, got, n)
		}
	}
	if got := both("hookwatch_denials_total"); got < want.denials {
		t.Errorf("denials counted %d, the API lists %d denied calls", got, want.denials)
	}
	// Every call with a duration is in the histogram of its labels.
	var timed float64
	for series, v := range m2 {
		if strings.HasPrefix(series, "hookwatch_tool_call_duration_seconds_count{") {
			timed += v
		}
		if strings.HasPrefix(series, "hookwatch_tool_call_duration_seconds_bucket{") && !strings.Contains(series, `le="`) {
			t.Errorf("a bucket without le: %s", series)
		}
	}
	if timed == 0 {
		t.Error("no call duration observed")
	}

	// A third start with nothing new counts nothing again.
	third := serverOn(t, open(), patient)
	third.settle(t)
	if m3 := third.scrape(t); sum(m3, "hookwatch_tool_calls_total") != 0 || sum(m3, "hookwatch_prompts_total") != 0 ||
		sum(m3, "hookwatch_signals_total") != 0 {
		t.Errorf("a restart counted again: %v", fromMetrics(t, m3))
	}
}

// TestAgentMetricsStaleOnStart: events stored while no collector modelled
// them are counted by the collector that models them at its start.
func TestAgentMetricsStaleOnStart(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	envs := claudeCorpus(t)
	events := make([]store.Event, len(envs))
	for i, e := range envs {
		events[i] = storetest.MustEvent(t, e)
	}
	if _, err := db.Insert(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	s := serverOn(t, db, patient)
	want := s.apiTotals(t)
	if got := fromMetrics(t, s.scrape(t)); !maps.Equal(got, want.calls) {
		t.Errorf("tool calls counted:\n%v\nthe API lists:\n%v", got, want.calls)
	}
}

// live is an event of a session in progress, "live-1", i seconds after
// start.
func live(start time.Time, i int, kv ...any) event.Envelope {
	kv = append(kv, "session_id", "live-1", "transcript_path", "/home/dev/.claude/projects/-w-live/live-1.jsonl", "cwd", "/w/live")
	return storetest.Envelope(event.RuntimeClaudeCode, start.Add(time.Duration(i)*time.Second), storetest.P(kv...))
}

// liveSession is a session started a minute ago: a prompt, an Explore
// subagent still running, and a Bash call the policy rule no-rm denied.
func liveSession() []event.Envelope {
	start := time.Now().Add(-time.Minute)
	denied := live(start, 4, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "toolu_live_1",
		"tool_input", map[string]any{"command": "rm -rf /"})
	denied.Decision = json.RawMessage(`{"action":"deny","rule_ids":["no-rm"],"reason":"no rm","enforced":true}`)
	return []event.Envelope{
		live(start, 1, "hook_event_name", "SessionStart", "source", "startup"),
		live(start, 2, "hook_event_name", "UserPromptSubmit", "prompt", "clean up"),
		live(start, 3, "hook_event_name", "SubagentStart", "agent_id", "a1", "agent_type", "Explore"),
		denied,
	}
}

// TestActiveMetrics: a session with a subagent running is active, with
// its main agent and the subagent; a stopped subagent and an ended session
// are not.
func TestActiveMetrics(t *testing.T) {
	s := newServer(t, patient)
	start := time.Now().Add(-time.Minute)
	n := 0
	send := func(kv ...any) {
		t.Helper()
		n++
		s.post(t, []event.Envelope{live(start, n, kv...)}, 1, 0)
		s.settle(t)
	}
	check := func(sessions, main, explore float64) {
		t.Helper()
		m := s.scrape(t)
		got := [3]float64{m["hookwatch_active_sessions"], m[`hookwatch_active_agents{agent_type="main"}`], m[`hookwatch_active_agents{agent_type="Explore"}`]}
		if got != [3]float64{sessions, main, explore} {
			t.Errorf("active sessions, main agents, Explore agents: %v, want %v", got, [3]float64{sessions, main, explore})
		}
	}
	if _, ok := s.scrape(t)[`hookwatch_active_agents{agent_type="main"}`]; !ok {
		t.Error("no hookwatch_active_agents series before any session: a panel on it reads no data")
	}
	send("hook_event_name", "SessionStart", "source", "startup")
	send("hook_event_name", "UserPromptSubmit", "prompt", "look around")
	check(1, 1, 0)
	send("hook_event_name", "SubagentStart", "agent_id", "a1", "agent_type", "Explore")
	check(1, 1, 1)
	send("hook_event_name", "SubagentStop", "agent_id", "a1", "agent_type", "Explore")
	check(1, 1, 0)
	send("hook_event_name", "SessionEnd", "reason", "other")
	check(0, 0, 0)
	if m := s.scrape(t); m["hookwatch_prompts_total"] != 1 || m[`hookwatch_subagents_started_total{agent_type="Explore"}`] != 1 {
		t.Errorf("prompts %v, Explore agents started %v", m["hookwatch_prompts_total"], m[`hookwatch_subagents_started_total{agent_type="Explore"}`])
	}
}

// TestDenialMetrics: a call a policy rule denied counts under its rule.
func TestDenialMetrics(t *testing.T) {
	s := newServer(t, patient)
	envs := liveSession()
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	m := s.scrape(t)
	if m[`hookwatch_denials_total{rule_id="no-rm"}`] != 1 || m[`hookwatch_tool_calls_total{agent_type="main",tool="Bash",status="denied"}`] != 1 {
		t.Errorf("denials %v", fromMetrics(t, m))
	}
	if m["hookwatch_active_sessions"] != 1 || m[`hookwatch_active_agents{agent_type="Explore"}`] != 1 {
		t.Errorf("active sessions %v, Explore agents %v", m["hookwatch_active_sessions"], m[`hookwatch_active_agents{agent_type="Explore"}`])
	}
}

// TestNoAgentMetrics: the switch leaves the metrics per agent out.
func TestNoAgentMetrics(t *testing.T) {
	s := newServer(t, collector.Config{NoAgentMetrics: true, DeriveWait: time.Minute})
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	for series := range s.scrape(t) {
		if strings.HasPrefix(series, "hookwatch_tool_calls_total") || strings.HasPrefix(series, "hookwatch_active_") {
			t.Fatalf("%s with the metrics per agent off", series)
		}
	}
}
