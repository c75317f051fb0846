package collector_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/store"
)

// TestUndecodableRows: a stored agent or call whose document cannot be
// decoded is read as if it were not stored, and counted, by every endpoint
// that reads a session's rows back: each answers as it did before the damage.
func TestUndecodableRows(t *testing.T) {
	s := newServer(t, collector.Config{})
	envs := corpusEnvelopes(t)
	s.post(t, envs, len(envs), 0)
	sessions := s.settle(t)
	if len(sessions) < 2 {
		t.Fatalf("%d sessions, want 2 at least", len(sessions))
	}
	// a: a session with a subagent, whose virtual session is read too.
	var a, sub string
	var aStart = sessions[0].FirstEventAt
	for _, v := range sessions {
		var agents collector.AgentsResponse
		s.getJSON(t, "/v1/sessions/"+v.ID+"/agents", &agents)
		for _, raw := range agents.Agents {
			var ag struct {
				AgentID string `json:"agent_id"`
			}
			if json.Unmarshal(raw, &ag) == nil && ag.AgentID != "" {
				a, sub, aStart = v.ID, ag.AgentID, v.FirstEventAt
				break
			}
		}
		if a != "" {
			break
		}
	}
	if a == "" {
		t.Fatal("no session of the captures has a subagent")
	}
	b := sessions[0].ID
	if b == a {
		b = sessions[1].ID
	}
	paths := []string{
		"/v1/sessions/" + a + "/signals",
		"/v1/sessions/" + a + "/files",
		"/v1/sessions/" + a + "/compare/" + b + "?unrelated=1",
		"/v1/sessions/sub--" + sub,
		"/v1/sessions/sub--" + sub + "/signals",
	}
	before := map[string]string{}
	for _, p := range paths {
		code, body := s.do(t, http.MethodGet, p, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, code, body)
		}
		before[p] = string(body)
	}

	damaged := json.RawMessage(`{"agent_id":7,"tool_use_id":7,"started_at":"not a time"}`)
	err := s.db.PutModel(t.Context(), store.ModelBatch{
		Agents:    []store.AgentRow{{SessionID: a, AgentID: "agent-damaged", Depth: 1, StartedAt: aStart, UpdatedSeq: 1 << 40, Doc: damaged}},
		ToolCalls: []store.ToolCallRow{{SessionID: a, ToolUseID: "toolu_damaged", Status: "pending", StartedAt: aStart, UpdatedSeq: 1 << 40, Doc: damaged}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		code, body := s.do(t, http.MethodGet, p, nil)
		if code != http.StatusOK || string(body) != before[p] {
			t.Errorf("GET %s with damaged rows: %d %s\nwant 200 %s", p, code, body, before[p])
		}
	}
	if n := s.scrape(t)["hookwatch_model_rows_undecodable_total"]; n < float64(len(paths)) {
		t.Errorf("hookwatch_model_rows_undecodable_total = %v, want %d at least", n, len(paths))
	}
}
