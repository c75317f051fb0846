package collector_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/store"
)

// TestClaudeHook: an http hook's payload is answered with the policy's
// decision, and stored, redacted, with the decision's audit record.
func TestClaudeHook(t *testing.T) {
	s := newServer(t, collector.Config{})
	home := t.TempDir()
	pol := `rules:
  - id: no-rm-rf
    description: never delete recursively
    tool: Bash
    when: 'tool_input.command contains "rm -rf"'
    action: deny
    reason: use git clean -n first
`
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: home}))

	f := func(payload string, wantCode int, wantAnswer string) {
		t.Helper()
		code, body := s.do(t, "POST", "/v1/hooks/claude", []byte(payload), "Content-Type", "application/json")
		if code != wantCode || !strings.Contains(string(body), wantAnswer) || (wantAnswer == "" && len(body) != 0) {
			t.Errorf("POST %s = %d %s, want %d containing %q", payload, code, body, wantCode, wantAnswer)
		}
	}
	f(`{"session_id":"http-1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf / --token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"},"tool_use_id":"toolu_1"}`,
		200, `"permissionDecision":"deny"`)
	f(`{"session_id":"http-1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_2"}`,
		200, "")
	f(`not json`, 400, "JSON object")
	f(`[1]`, 400, "JSON object")

	page, err := s.db.Events(context.Background(), store.EventFilter{SessionID: "http-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 {
		t.Fatalf("stored %d events, want 2", len(page.Events))
	}
	first := string(page.Events[0].Envelope)
	if !strings.Contains(first, `"no-rm-rf"`) || strings.Contains(first, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Errorf("stored envelope lacks the decision or keeps the secret: %s", first)
	}
	var env struct{ Decision json.RawMessage }
	if err := json.Unmarshal(page.Events[1].Envelope, &env); err != nil || len(env.Decision) != 0 {
		t.Errorf("an event no rule answered carries a decision: %s", env.Decision)
	}
}
