package collector_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/store"
)

// TestClaudeHookRemoteReadsNoFile: an http hook from another machine
// names that machine's paths, so the collector reads none of the files
// they name here (a subagent's sidecar), while one from its own machine
// does.
func TestClaudeHookRemoteReadsNoFile(t *testing.T) {
	dir := t.TempDir()
	sidecar := filepath.Join(dir, "s1", "subagents", "agent-a1.meta.json")
	if err := os.MkdirAll(filepath.Dir(sidecar), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sidecar, []byte(`{"agentType":"Explore","description":"this machine's file","toolUseId":"toolu_spawn"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, collector.Config{})
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	post := func(remote, id string) {
		t.Helper()
		payload := `{"session_id":"s1","transcript_path":"` + filepath.Join(dir, "s1.jsonl") + `","cwd":"` + dir +
			`","hook_event_name":"PreToolUse","agent_id":"a1","agent_type":"Explore","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}`
		r := httptest.NewRequest("POST", "/v1/hooks/claude", strings.NewReader(payload))
		r.RemoteAddr = remote
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.Server.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("from %s: HTTP %d %s", remote, w.Code, w.Body)
		}
	}
	post("127.0.0.1:5555", "toolu_local")
	post("192.0.2.7:5555", "toolu_remote")
	events, err := s.db.Events(t.Context(), store.EventFilter{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range events.Events {
		var env struct {
			Subagent json.RawMessage `json:"subagent"`
		}
		if err := json.Unmarshal(e.Envelope, &env); err != nil {
			t.Fatal(err)
		}
		got[e.ToolUseID] = strings.Contains(string(env.Subagent), "this machine's file")
	}
	if len(got) != 2 || !got["toolu_local"] || got["toolu_remote"] {
		t.Fatalf("sidecar read for each call: %v (want the local one's only)", got)
	}
}
